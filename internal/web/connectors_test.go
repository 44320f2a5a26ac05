package web_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectortest"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/sandbox"
)

// The test binary is its own connectors' sandbox child, as the box binary is in production.
func TestMain(m *testing.M) {
	if sandbox.IsChild() {
		os.Exit(sandbox.ChildMain())
	}
	os.Exit(m.Run())
}

// The owner pastes a connector's key in Settings → Things I built (shown never again, only its last
// four), and a page whose card named the connector in uses calls it through its bridge: the value comes
// back as data, a write tool waits on the owner's card, and a page that did not name it is refused.
func TestPageCallsAConnector(t *testing.T) {
	ctx := context.Background()
	const key = "city-KEY-web-51b07e9a4c2e"
	api := &connectortest.BusAPI{Key: key}
	site := connectortest.NewSite(t, api, connectortest.BusHost)
	f := newFxWith(t, app.Options{ConnectorNet: site.Net})
	connectortest.Install(t, f.a.Builds, f.g, f.a.Connectors.CheckOptions(ctx), connectortest.BusManifest, connectortest.BusFiles())
	csrf := f.signedIn()

	_, body := f.get(f.c, "/settings/builds")
	if !strings.Contains(body, `id="key-connector:bus-times-API_KEY"`) || !strings.Contains(body, "not set") || !strings.Contains(body, `type="password"`) {
		t.Fatalf("no key form in Things I built:\n%.2000s", body)
	}
	post := func(path string, v url.Values) string {
		t.Helper()
		v.Set("csrf", csrf)
		res := f.form(f.c, path, v)
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
		return res.Header.Get("Location")
	}
	if to := post("/settings/builds/connector:bus-times/key", url.Values{"name": {"NOPE"}, "key": {key}}); strings.Contains(to, "KEY-web") || !strings.Contains(to, "has+no+key") {
		t.Fatalf("an undeclared key: %s", to)
	}
	if to := post("/settings/builds/connector:bus-times/key", url.Values{"name": {"API_KEY"}, "key": {key}}); strings.Contains(to, "KEY-web") || !strings.Contains(to, "4c2e") {
		t.Fatalf("the key: %s", to)
	}
	_, body = f.get(f.c, "/settings/builds")
	if !strings.Contains(body, "set (…4c2e)") || strings.Contains(body, "KEY-web") {
		t.Fatalf("Things I built after the key:\n%.2000s", body)
	}
	post("/settings/builds/connector:bus-times/on", url.Values{})
	if b, _ := f.a.Builds.Connector(ctx, "bus-times"); b.Status != builds.StatusOn {
		t.Fatalf("not on with its key: %+v", b)
	}

	p, err := f.a.Builds.ProposePage(ctx, builds.PageInput{Name: "Trips", Own: "trips", What: "My buses.", Uses: []string{"bus-times"}, HTML: "<p>trips</p>"}, claudeAsker)
	if err != nil {
		t.Fatal(err)
	}
	if _, today := f.get(f.c, "/today"); !strings.Contains(today, "Bus times (the connector bus-times)") {
		t.Errorf("the page's card does not name the connector it uses:\n%.3000s", today)
	}
	if _, err := f.g.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
		t.Fatal(err)
	}
	install(t, f, "garden", "<p>garden</p>")
	_, _, trips := f.served(f.c, "trips")
	_, _, garden := f.served(f.c, "garden")

	st, out, _ := f.bridge("POST", "trips", "connector", trips, `{"id": "bus-times", "tool": "next_buses", "args": {"stop": "12"}}`)
	res, _ := out["result"].(map[string]any)
	if st != 200 || res["stop"] != "12" || len(res["buses"].([]any)) != 2 {
		t.Fatalf("a read: %d %v", st, out)
	}
	if st, out, _ := f.bridge("POST", "garden", "connector", garden, `{"id": "bus-times", "tool": "next_buses", "args": {"stop": "12"}}`); st != 403 || !strings.Contains(out["error"].(string), "doesn't use the connector") {
		t.Fatalf("a page without it in uses: %d %v", st, out)
	}
	st, out, _ = f.bridge("POST", "trips", "connector", trips, `{"id": "bus-times", "tool": "report_delay", "args": {"line": "4"}}`)
	if st != 200 || out["result"] != nil || out["card"] == "" || len(api.Reports()) != 0 {
		t.Fatalf("a write from a page: %d %v %v", st, out, api.Reports())
	}
	// Its "Send as you" card shows every argument whole, one row per key (docs/SECURITY.md).
	if _, today := f.get(f.c, "/today"); !strings.Contains(today, "<dt>line</dt><dd><pre>4</pre></dd>") {
		t.Errorf("the call's card does not show its arguments:\n%.4000s", today)
	}
	for body, want := range map[string]int{
		`{"id": "bus-times", "tool": "next_buses", "args": {"stop": 12}}`: 400,
		`{"id": "bus-times", "tool": "leave"}`:                            404,
		`{"id": "bus-times", "tool": "next_buses", "extra": 1}`:           400,
	} {
		if st, out, _ := f.bridge("POST", "trips", "connector", trips, body); st != want {
			t.Errorf("%s: %d %v, want %d", body, st, out, want)
		}
	}
	post("/settings/builds/connector:bus-times/off", url.Values{})
	if st, out, _ := f.bridge("POST", "trips", "connector", trips, `{"id": "bus-times", "tool": "next_buses", "args": {"stop": "12"}}`); st != 403 || !strings.Contains(out["error"].(string), "switched off") {
		t.Fatalf("an off connector: %d %v", st, out)
	}
	// The page's own diary holds its calls; the key is in none of it.
	_, out, _ = f.bridge("GET", "trips", "diary?n=50", trips, "")
	entries, _ := out["entries"].([]any)
	calls := 0
	for _, e := range entries {
		if a := e.(map[string]any)["action"].(string); strings.Contains(a, "page trips called Bus times → next_buses: reached api.example.com") {
			calls++
		}
	}
	if calls != 1 {
		t.Errorf("the page's diary: %v", entries)
	}
	err = filepath.WalkDir(f.a.Root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), key) {
				t.Errorf("the key is in %s", p)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := site.Dials(); len(d) > 0 {
		t.Fatalf("connections were attempted to %v", d)
	}
}
