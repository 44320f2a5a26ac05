package connectors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/apptest"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/connectortest"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcp"
	"github.com/boxmem/box/internal/mcptest"
	"github.com/boxmem/box/internal/passkeytest"
	"github.com/boxmem/box/internal/sandbox"
)

// The test binary is its own sandbox child, as the box binary is in production.
func TestMain(m *testing.M) {
	if sandbox.IsChild() {
		os.Exit(sandbox.ChildMain())
	}
	os.Exit(m.Run())
}

// city is the city's bus API of the seed's Bus times connector (internal/connector/testdata), served by
// connectortest.NewSite as api.example.com: what /stops/ answers can change, and it keeps the
// Authorization header of every request. A dial anywhere else fails the test.
type city struct {
	site    *connectortest.Site
	mu      sync.Mutex
	answers string // what /stops/12 answers; "" is a 500
	auth    []string
}

func newCity(t testing.TB) *city {
	t.Helper()
	c := &city{answers: `[{"line": "7", "in": "3 min"}]`}
	c.site = connectortest.NewSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		ans := c.answers
		c.auth = append(c.auth, r.Header.Get("Authorization"))
		c.mu.Unlock()
		if ans == "" || !strings.HasPrefix(r.URL.Path, "/stops/") {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, ans)
	}), connectortest.BusHost)
	t.Cleanup(func() {
		if d := c.site.Dials(); len(d) > 0 {
			t.Errorf("connections were attempted to %v", d)
		}
	})
	return c
}

func (c *city) set(answer string) {
	c.mu.Lock()
	c.answers = answer
	c.mu.Unlock()
}

// openApp is a box composed by the root whose connectors reach only the city.
func openApp(t testing.TB, c *city) *app.App {
	t.Helper()
	return apptest.Open(t, app.Options{Now: passkeytest.NewClock().Now, ConnectorNet: c.site.Net})
}

// bundle is the seed's Bus times connector (internal/connector/testdata), with manifest fields replaced.
func bundle(t testing.TB, change map[string]any, files map[string]string) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../connector/testdata/bus-times.json")
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		Manifest map[string]any    `json:"manifest"`
		Files    map[string]string `json:"files"`
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	for k, v := range change {
		b.Manifest[k] = v
	}
	if files != nil {
		b.Files = files
	}
	return map[string]any{"manifest": b.Manifest, "files": b.Files}
}

func client(t *testing.T, a *app.App) *sdk.ClientSession {
	t.Helper()
	svc := a.MCP("https://box.example.org", "test")
	ct, st := sdk.NewInMemoryTransports()
	ss, err := svc.Server(mcp.Conn{Who: "Claude", Host: "claude.ai", KeyID: "k-claude", Caps: keys.Caps{Build: true}}).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "claude", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

var local = gate.By{Via: "cli", Local: true}

// The seed's Bus times connector end to end: checked over MCP, proposed, shown on a card that says
// everything it reaches, approved; its test runs boxed against the city's API mapped in as
// api.example.com, and it turns on. Nothing dialled anywhere else.
func TestBusTimesProposedApprovedAndOn(t *testing.T) {
	ctx := context.Background()
	c := newCity(t)
	a := openApp(t, c)
	cs := client(t, a)

	out, isErr := mcptest.Call(t, cs, "validate_build", bundle(t, nil, nil))
	var rep struct {
		OK, BoxCanBuild bool
		Problems        []struct{ Where, Why string }
	}
	if isErr || json.Unmarshal([]byte(out), &rep) != nil || !rep.OK || !rep.BoxCanBuild || len(rep.Problems) != 0 {
		t.Fatalf("validate_build: %v %s", isErr, out)
	}
	id := mcptest.Propose(t, cs, "propose_connector", bundle(t, nil, nil))
	card, err := a.Gate.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if card.Title != "Add a connector: Bus times" || card.ProposedBy.Who != "Claude" || card.Switch != gate.Share {
		t.Fatalf("card: %q by %q under %q", card.Title, card.ProposedBy.Who, card.Switch)
	}
	facts := fmt.Sprint(card.Action.Payload.(map[string]any)["facts"])
	for _, want := range []string{"api.example.com, and nowhere else", "Keys it needs: none", "Tool next_buses: reads", "The code was written by Claude; it runs boxed"} {
		if !strings.Contains(facts, want) {
			t.Errorf("the card does not say %q: %s", want, facts)
		}
	}
	if w, _ := a.Builds.Connectors(ctx); len(w) != 0 {
		t.Fatalf("installed before approval: %+v", w)
	}

	done, err := a.Gate.Approve(ctx, id, local)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(done.Text, "its tests passed, so it is on") {
		t.Errorf("approval said %q", done.Text)
	}
	b, err := a.Builds.Connector(ctx, "bus-times")
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != builds.StatusOn || b.Health == nil || !b.Health.OK || b.Version != 1 || strings.Join(b.Health.Hosts, ",") != "api.example.com" {
		t.Fatalf("after approval: %s, health %+v", b.Status, b.Health)
	}
	if _, err := a.Builds.Runnable(ctx, "bus-times"); err != nil {
		t.Errorf("runnable: %v", err)
	}
	if d := c.site.Dials(); d != nil {
		t.Errorf("dialled %v", d)
	}
	// The version file is one bundle, bound to the SHA-256 the registry keeps, and runs as approved.
	bun, err := a.Builds.Bundle(b, 1)
	if err != nil || bun.Manifest.ID != "bus-times" || bun.EnvelopeHash != card.Action.Payload.(map[string]any)["envelopeHash"] {
		t.Fatalf("bundle: %v", err)
	}

	// list_builds and build_status show it, never its data or keys.
	out, _ = mcptest.Call(t, cs, "build_status", map[string]any{"id": id})
	var st struct {
		Card  string
		Build builds.Summary
	}
	if json.Unmarshal([]byte(out), &st) != nil || st.Card != gate.StatusApproved || st.Build.Status != builds.StatusOn || st.Build.Kind != builds.KindConnector || st.Build.Health == nil {
		t.Fatalf("build_status: %s", out)
	}
	out, _ = mcptest.Call(t, cs, "list_builds", nil)
	if !strings.Contains(out, `"id":"bus-times"`) || strings.Contains(out, "index.mjs") || strings.Contains(out, "3 min") {
		t.Fatalf("list_builds: %s", out)
	}

	// Switched off, it does not come back on by the diary's undo, which would skip its tests: on tests it.
	if _, err := a.Builds.SetOn(ctx, box.Actor{Who: "owner", Via: "cli"}, "bus-times", false); err != nil {
		t.Fatal(err)
	}
	off, _ := a.Box.Diary(ctx, 1, nil)
	if _, err := a.Box.Undo(ctx, off[0].ID, box.Actor{Who: "owner", Via: "web"}); !errs.Is(err, errs.Refused) {
		t.Fatalf("the diary's undo of switching it off: %v", err)
	}
	if _, err := a.Builds.Runnable(ctx, "bus-times"); !errs.Is(err, errs.Refused) {
		t.Fatalf("after the refused undo it runs: %v", err)
	}
	if b, err := a.Builds.SetOn(ctx, box.Actor{Who: "owner", Via: "cli"}, "bus-times", true); err != nil || b.Status != builds.StatusOn {
		t.Fatalf("on again, tested: %v %+v", err, b)
	}

	// Safe mode pauses it; off, it runs again.
	if err := a.Builds.SetSafeMode(ctx, box.Actor{Who: "owner", Via: "cli"}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Builds.Runnable(ctx, "bus-times"); !errs.Is(err, errs.Refused) || !strings.Contains(errs.Sentence(err), "Safe mode") {
		t.Errorf("in safe mode: %v", err)
	}
	if err := a.Builds.SetSafeMode(ctx, box.Actor{Who: "owner", Via: "cli"}, false); err != nil {
		t.Fatal(err)
	}

	// A second version whose test fails puts version 1 back, with why; undo to it reruns the tests.
	c.set("")
	id2 := mcptest.Propose(t, cs, "update_build", func() map[string]any {
		m := bundle(t, map[string]any{"what": "The next buses, sooner."}, nil)
		m["id"] = "bus-times"
		return m
	}())
	if card, _ := a.Gate.Get(ctx, id2); card.Kind != "add-connector" || card.Switch != gate.Change {
		t.Errorf("an update that reaches no further: %s under %s", card.Kind, card.Switch)
	}
	if _, err := a.Gate.Approve(ctx, id2, local); err != nil {
		t.Fatal(err)
	}
	b, _ = a.Builds.Connector(ctx, "bus-times")
	if b.Status != builds.StatusOn || b.Version != 1 || b.Health.OK || !strings.Contains(b.Health.Why, "the call failed") || !b.Versions[1].Failed {
		t.Fatalf("a failing update: %s v%d health %+v", b.Status, b.Version, b.Health)
	}
	if rep, err := a.Connectors.LastTest("bus-times"); err != nil || !strings.Contains(rep.Detail, "500") {
		t.Fatalf("the owner's report of a failing update: %+v %v", rep, err)
	}
	// Switched off, it goes back to the version that failed and stays off, nothing run: on runs the tests.
	owner := box.Actor{Who: "owner", Via: "cli"}
	calls := func() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.auth) }
	before := calls()
	if _, err := a.Builds.SetOn(ctx, owner, "bus-times", false); err != nil {
		t.Fatal(err)
	}
	if b, err = a.Builds.Undo(ctx, owner, "bus-times", 2); err != nil || b.Status != builds.StatusOff || b.Version != 2 {
		t.Fatalf("an off connector back to the version that failed: %v %s v%d", err, b.Status, b.Version)
	}
	if _, err := a.Builds.Runnable(ctx, "bus-times"); !errs.Is(err, errs.Refused) || !strings.Contains(errs.Sentence(err), "switched off") {
		t.Errorf("runnable after going back while off: %v", err)
	}
	if b, err = a.Builds.Undo(ctx, owner, "bus-times", 1); err != nil || b.Status != builds.StatusOff || b.Version != 1 || calls() != before {
		t.Fatalf("an off connector back to version 1: %v %s v%d, %d requests to its site", err, b.Status, b.Version, calls()-before)
	}
	if b, err = a.Builds.SetOn(ctx, owner, "bus-times", true); err != nil || b.Status != builds.StatusFailed || b.Version != 1 || calls() == before {
		t.Fatalf("on again, the site still failing: %v %s v%d, %d requests to its site", err, b.Status, b.Version, calls()-before)
	}
	if b, err = a.Builds.Undo(ctx, owner, "bus-times", 2); err != nil || b.Status != builds.StatusFailed || b.Version != 2 {
		t.Fatalf("undo to the failing version: %v %s v%d", err, b.Status, b.Version)
	}
	// A version that reaches one more host is "Let a connector reach more", under Share, saying what it adds.
	wider := bundle(t, map[string]any{"egress": []any{"api.example.com", "cdn.example.com"}}, nil)
	wider["id"] = "bus-times"
	card3, err := a.Gate.Get(ctx, mcptest.Propose(t, cs, "update_build", wider))
	if err != nil || card3.Title != "Let a connector reach more: Bus times" || card3.Switch != gate.Share ||
		!strings.Contains(fmt.Sprint(card3.Action.Payload.(map[string]any)["facts"]), "What it adds: reaches cdn.example.com") {
		t.Fatalf("a wider version: %v %q under %q: %v", err, card3.Title, card3.Switch, card3.Action.Payload.(map[string]any)["facts"])
	}
	other := bundle(t, map[string]any{"name": "Tram times"}, nil)
	other["id"] = "bus-times"
	if out, isErr := mcptest.Call(t, cs, "update_build", other); !isErr || !strings.Contains(out, `"tram-times"`) {
		t.Errorf("an update naming another connector: %v %s", isErr, out)
	}
	c.set(`[{"line": "9"}]`)
	if b, err = a.Builds.SetOn(ctx, box.Actor{Who: "owner", Via: "cli"}, "bus-times", true); err != nil || b.Status != builds.StatusOn || !b.Health.OK {
		t.Fatalf("switched on once the site answers: %v %s %+v", err, b.Status, b.Health)
	}
	if b, err = a.Builds.SetOn(ctx, box.Actor{Who: "owner", Via: "cli"}, "bus-times", false); err != nil || b.Status != builds.StatusOff {
		t.Fatalf("switched off: %v %s", err, b.Status)
	}
	if _, err := a.Builds.Runnable(ctx, "bus-times"); !errs.Is(err, errs.Refused) || !strings.Contains(errs.Sentence(err), "switched off") {
		t.Errorf("switched off, it runs: %v", err)
	}
}

// A connector whose test fails ends failed, off, with health.why and the tail of its own output.
func TestFailingTestsLeaveItFailed(t *testing.T) {
	ctx := context.Background()
	a := openApp(t, newCity(t))
	cs := client(t, a)
	files := map[string]string{"index.mjs": `export const tools = { next_buses: async ({ stop }, ctx) => { ctx.log("looking up stop " + stop); return []; } };`}
	id := mcptest.Propose(t, cs, "propose_connector", bundle(t, map[string]any{"name": "Empty buses"}, files))
	done, err := a.Gate.Approve(ctx, id, local)
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.Builds.Connector(ctx, "empty-buses")
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != builds.StatusFailed || b.Health == nil || b.Health.OK || !strings.Contains(b.Health.Why, "empty") ||
		!strings.Contains(done.Text, "its tests failed") {
		t.Fatalf("status %s, health %+v, said %q", b.Status, b.Health, done.Text)
	}
	if rep, err := a.Connectors.LastTest("empty-buses"); err != nil || rep.OK || !strings.Contains(rep.TestOutputTail, "looking up stop 12") {
		t.Fatalf("the owner's test report: %+v %v", rep, err)
	}
	if _, err := a.Builds.Runnable(ctx, "empty-buses"); !errs.Is(err, errs.Refused) {
		t.Errorf("a failed connector runs: %v", err)
	}
	s := builds.Summarize(b)
	if s.Problem == "" || s.Health.Why == "" {
		t.Errorf("summary: %+v", s)
	}
}

// Safe mode pauses every connector, its tests included (docs/CONNECTORS.md): an approved version is
// written but stays pending, and switching it on or going back refuses, with nothing run, until safe
// mode is off.
func TestSafeModeRunsNoTests(t *testing.T) {
	ctx := context.Background()
	c := newCity(t)
	a := openApp(t, c)
	cs := client(t, a)
	owner := box.Actor{Who: "owner", Via: "cli"}
	if _, err := a.Gate.Approve(ctx, mcptest.Propose(t, cs, "propose_connector", bundle(t, nil, nil)), local); err != nil {
		t.Fatal(err)
	}
	calls := func() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.auth) }
	before := calls()
	if before == 0 {
		t.Fatal("the first version's tests reached nothing")
	}
	if err := a.Builds.SetSafeMode(ctx, owner, true); err != nil {
		t.Fatal(err)
	}
	up := bundle(t, map[string]any{"what": "The next buses, sooner."}, nil)
	up["id"] = "bus-times"
	done, err := a.Gate.Approve(ctx, mcptest.Propose(t, cs, "update_build", up), local)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(done.Text, "safe mode is on, so its tests wait") {
		t.Errorf("approval in safe mode said %q", done.Text)
	}
	if b, _ := a.Builds.Connector(ctx, "bus-times"); b.Version != 2 || b.Status != builds.StatusPending {
		t.Errorf("approved in safe mode: version %d %s", b.Version, b.Status)
	}
	if _, err := a.Builds.SetOn(ctx, owner, "bus-times", true); !errs.Is(err, errs.Refused) || !strings.Contains(errs.Sentence(err), "Safe mode is on") {
		t.Errorf("builds on in safe mode: %v", err)
	}
	if _, err := a.Builds.Undo(ctx, owner, "bus-times", 1); !errs.Is(err, errs.Refused) || !strings.Contains(errs.Sentence(err), "Safe mode is on") {
		t.Errorf("builds undo in safe mode: %v", err)
	}
	if n := calls(); n != before {
		t.Fatalf("the connector ran in safe mode: %d requests to its site", n-before)
	}
	if b, _ := a.Builds.Connector(ctx, "bus-times"); b.Version != 2 || b.Status != builds.StatusPending {
		t.Errorf("after the refusals: version %d %s", b.Version, b.Status)
	}

	// Safe mode off, switching it on runs its tests and it turns on.
	if err := a.Builds.SetSafeMode(ctx, owner, false); err != nil {
		t.Fatal(err)
	}
	b, err := a.Builds.SetOn(ctx, owner, "bus-times", true)
	if err != nil || b.Status != builds.StatusOn || b.Version != 2 || calls() == before {
		t.Fatalf("on after safe mode: %v, version %d %s", err, b.Version, b.Status)
	}
}

// The card binds the envelope hash and the files' SHA-256: a card whose files were changed after it was
// made runs nothing and expires.
func TestChangedFilesAreRefused(t *testing.T) {
	ctx := context.Background()
	a := openApp(t, newCity(t))
	cs := client(t, a)
	id := mcptest.Propose(t, cs, "propose_connector", bundle(t, nil, nil))
	card, err := a.Gate.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(a.Root, filepath.FromSlash(card.Path))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Swap the code inside the card's recorded action (a JSON string inside the bundle JSON).
	changed := strings.Replace(string(data), "encodeURIComponent(stop)", "stop + '?k=' + 1", 1)
	if changed == string(data) {
		t.Fatal("the card does not hold the code")
	}
	if err := os.WriteFile(p, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Gate.Approve(ctx, id, local); !errs.Is(err, errs.Conflict) {
		t.Fatalf("approved a changed card: %v", err)
	}
	if all, _ := a.Builds.Connectors(ctx); len(all) != 0 {
		t.Fatalf("installed: %+v", all)
	}
}

// A connector that may reach any website is under "Share outside my box": at Never it is refused before
// any card, with the switch named. A bad bundle is an answer from validate_build, an isError from
// propose_connector, and never a card.
func TestAnyWebsiteUnderNeverIsRefused(t *testing.T) {
	ctx := context.Background()
	a := openApp(t, newCity(t))
	cs := client(t, a)
	if _, err := a.Gate.SetSwitch(ctx, gate.By{Via: "cli", Local: true}, gate.Share, gate.Never); err != nil {
		t.Fatal(err)
	}
	out, isErr := mcptest.Call(t, cs, "propose_connector", bundle(t, map[string]any{"egress": []any{"*"}}, nil))
	if !isErr || !strings.HasPrefix(out, "Not proposed: ") || !strings.Contains(out, "Share outside my box") {
		t.Fatalf("any website under Never: %v %s", isErr, out)
	}
	bad := bundle(t, map[string]any{"egress": []any{"169.254.169.254", "box.example.org"}}, nil)
	out, isErr = mcptest.Call(t, cs, "validate_build", bad)
	if isErr || !strings.Contains(out, `"ok":false`) || !strings.Contains(out, "169.254.169.254") || !strings.Contains(out, "box.example.org") {
		t.Fatalf("validate_build of a bad bundle: %v %s", isErr, out)
	}
	if out, isErr = mcptest.Call(t, cs, "propose_connector", bad); !isErr || !strings.Contains(out, "manifest.egress") {
		t.Fatalf("propose_connector of a bad bundle: %v %s", isErr, out)
	}
	if w, _ := a.Gate.Waiting(ctx); len(w) != 0 {
		t.Fatalf("refusals made %d cards", len(w))
	}
}

// Removing a connector offers its keys and data on a Delete for good card; approved, the keys leave
// the vault.
func TestRemoveOffersItsKeysForGood(t *testing.T) {
	ctx := context.Background()
	c := newCity(t)
	a := openApp(t, c)
	cs := client(t, a)
	keyed := bundle(t, map[string]any{"credentials": []any{map[string]any{"name": "API_KEY", "host": "api.example.com"}}},
		map[string]string{"index.mjs": `export const tools = { next_buses: async ({ stop }, ctx) => { const r = await ctx.fetch('https://api.example.com/stops/' + stop, {headers: {Authorization: 'Bearer {{key:API_KEY}}'}}); return await r.json(); } };`})
	id := mcptest.Propose(t, cs, "propose_connector", keyed)
	card, _ := a.Gate.Get(ctx, id)
	if facts := fmt.Sprint(card.Action.Payload.(map[string]any)["facts"]); !strings.Contains(facts, "Key it needs: API_KEY, sent only to api.example.com (add the key in Settings → Things I built)") {
		t.Errorf("facts: %s", facts)
	}
	v, err := a.Vault()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Put(connectors.KeyName("bus-times", "API_KEY"), connectors.SealKey("api.example.com", "sk-city-0123456789")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Gate.Approve(ctx, id, local); err != nil {
		t.Fatal(err)
	}
	if b, _ := a.Builds.Connector(ctx, "bus-times"); b.Status != builds.StatusOn {
		t.Fatalf("with its key: %s %+v", b.Status, b.Health)
	}
	// The sandbox of the installed version: its key from the vault, its store outside the tree, the
	// box's own public name never reached; a test run's has no store.
	b, _ := a.Builds.Connector(ctx, "bus-times")
	a.Connectors.AddBoxHost("box.example.org")
	cfg, err := a.Connectors.Config(b, 1, false)
	if err != nil || cfg.Keys["API_KEY"] != "sk-city-0123456789" || cfg.StoreDir != filepath.Join(a.Root, ".box", "connectors", "bus-times") ||
		strings.Join(cfg.BoxHosts, ",") != "box.example.org" || cfg.Bundle.Manifest.ID != "bus-times" {
		t.Fatalf("config: %v, store %q, hosts %v", err, cfg.StoreDir, cfg.BoxHosts)
	}
	if cfg, _ := a.Connectors.Config(b, 1, true); cfg.StoreDir != "" {
		t.Errorf("a fresh config keeps its store in %s", cfg.StoreDir)
	}
	// The owner's key reached its host, and nothing of it is in the tree or its history.
	if strings.Join(c.auth, ",") != "Bearer sk-city-0123456789" {
		t.Errorf("the site saw %q", c.auth)
	}
	if out, _ := exec.Command("git", "-C", a.Root, "log", "-p", "--all").Output(); strings.Contains(string(out), "sk-city") {
		t.Error("the key is in the box's history")
	}
	rm, err := a.Builds.Remove(ctx, box.Actor{Who: "owner", Via: "cli"}, "bus-times", gate.Asker{Owner: true, Via: "cli"})
	if err != nil || rm.Card == nil || rm.Card.Kind != "delete" {
		t.Fatalf("remove: %v %+v", err, rm)
	}
	if _, err := v.Get(connectors.KeyName("bus-times", "API_KEY")); err != nil {
		t.Fatalf("the key went before the owner said yes: %v", err)
	}
	if _, err := a.Gate.Approve(ctx, rm.Card.ID, local); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Get(connectors.KeyName("bus-times", "API_KEY")); !errs.Is(err, errs.NotFound) {
		t.Fatalf("the key stayed: %v", err)
	}
}

// The connector tools are listed for a connection with "Can build for my box", and only for it.
func TestConnectorToolsNeedTheBuildCheckbox(t *testing.T) {
	a := openApp(t, newCity(t))
	svc := a.MCP("https://box.example.org", "test")
	for _, caps := range []keys.Caps{{Memory: true}, {Build: true}} {
		ct, st := sdk.NewInMemoryTransports()
		ss, err := svc.Server(mcp.Conn{Who: "Claude", KeyID: fmt.Sprint(caps.Build), Caps: caps}).Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]bool{}
		for _, tl := range res.Tools {
			listed[tl.Name] = true
		}
		for _, name := range []string{"validate_build", "propose_connector", "update_build"} {
			if listed[name] != caps.Build {
				t.Errorf("%s listed %v with %+v", name, listed[name], caps)
			}
		}
		if !caps.Build {
			if out, isErr := mcptest.Call(t, cs, "propose_connector", bundle(t, nil, nil)); !isErr || !strings.Contains(out, "Can build for my box") {
				t.Errorf("without the checkbox: %v %s", isErr, out)
			}
		}
		cs.Close()
		ss.Wait()
	}
}

// What a connector's test run fetched with the owner's keys (its log, a message it threw) stays with the
// owner: outside the tree and git, out of the diary, and out of what assistants see (build_status,
// list_builds), which get only the box's own why. box builds status shows it (the owner's report).
func TestTestOutputStaysWithTheOwner(t *testing.T) {
	ctx := context.Background()
	c := newCity(t)
	c.set(`[{"line": "7", "in": "3 min", "mail": "SECRET-MAIL-from-the-site"}]`)
	a := openApp(t, c)
	cs := client(t, a)
	files := map[string]string{"index.mjs": `export const tools = { next_buses: async ({ stop }, ctx) => {
		const r = await ctx.fetch('https://api.example.com/stops/' + stop); const got = await r.text();
		ctx.log("fetched " + got); throw new Error("look: " + got); } };`}
	id := mcptest.Propose(t, cs, "propose_connector", bundle(t, map[string]any{"name": "Leaky buses"}, files))
	if _, err := a.Gate.Approve(ctx, id, local); err != nil {
		t.Fatal(err)
	}
	b, err := a.Builds.Connector(ctx, "leaky-buses")
	if err != nil || b.Status != builds.StatusFailed || b.Health == nil || b.Health.Why == "" {
		t.Fatalf("%+v %v", b, err)
	}
	const leak = "SECRET-MAIL"
	rep, err := a.Connectors.LastTest("leaky-buses")
	if err != nil || !strings.Contains(rep.TestOutputTail, "fetched") || !strings.Contains(rep.TestOutputTail, leak) || !strings.Contains(rep.Detail, leak) {
		t.Fatalf("the owner's report lacks the output: %+v %v", rep, err)
	}
	for tool, args := range map[string]map[string]any{"build_status": {"id": "leaky-buses"}, "list_builds": nil} {
		out, _ := mcptest.Call(t, cs, tool, args)
		if strings.Contains(out, leak) || strings.Contains(out, "testOutputTail") || !strings.Contains(out, "failed") {
			t.Errorf("%s shows the test output: %s", tool, out)
		}
	}
	grep := exec.Command("git", "-C", a.Root, "log", "-p", "--all", "--format=%B")
	hist, err := grep.Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hist), leak) {
		t.Error("the test output is in git")
	}
	diary, err := a.Box.Diary(ctx, 200, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range diary {
		if strings.Contains(fmt.Sprint(e), leak) {
			t.Errorf("the diary holds the test output: %+v", e)
		}
	}
}

// A key is sealed with the host it was pasted for: a new connector that reuses a removed one's id, or an
// update, whose credential names another host never gets it, and nothing reaches that host with it.
func TestKeyStaysWithItsHost(t *testing.T) {
	ctx := context.Background()
	c := newCity(t)
	a := openApp(t, c)
	cs := client(t, a)
	v, err := a.Vault()
	if err != nil {
		t.Fatal(err)
	}
	// The removed connector's key, left in the vault (its Delete for good card never approved).
	if err := v.Put(connectors.KeyName("bus-times", "API_KEY"), connectors.SealKey("api.example.com", "sk-city-0123456789")); err != nil {
		t.Fatal(err)
	}
	other := bundle(t, map[string]any{"egress": []any{"api.example.com", "evil.example.com"},
		"credentials": []any{map[string]any{"name": "API_KEY", "host": "evil.example.com"}}},
		map[string]string{"index.mjs": `export const tools = { next_buses: async ({ stop }, ctx) => { const r = await ctx.fetch('https://api.example.com/stops/' + stop, {headers: {Authorization: 'Bearer {{key:API_KEY}}'}}); return await r.json(); } };`})
	id := mcptest.Propose(t, cs, "propose_connector", other)
	if _, err := a.Gate.Approve(ctx, id, local); err != nil {
		t.Fatal(err)
	}
	b, err := a.Builds.Connector(ctx, "bus-times")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := a.Connectors.Config(b, b.Version, true)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := cfg.Keys["API_KEY"]; ok {
		t.Errorf("the new connector got the old key: %q", k)
	}
	for _, h := range c.auth {
		if strings.Contains(h, "sk-city") {
			t.Errorf("a request carried the old key: %q", h)
		}
	}
	// A key kept without its host (sealed before keys carried one) is filled for no host either.
	if err := v.Put(connectors.KeyName("bus-times", "API_KEY"), "sk-city-0123456789"); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := a.Connectors.Config(b, b.Version, true); cfg.Keys["API_KEY"] != "" {
		t.Error("a key with no host was filled")
	}
}

// A version's bundle is checked once per process and kept by the SHA-256 of its bytes; bytes changed on
// disk since approval are still refused before anything kept is used.
func TestBundleIsCheckedOnceAndChangedBytesStillRefused(t *testing.T) {
	ctx := context.Background()
	c := newCity(t)
	a := openApp(t, c)
	cs := client(t, a)
	if _, err := a.Gate.Approve(ctx, mcptest.Propose(t, cs, "propose_connector", bundle(t, nil, nil)), local); err != nil {
		t.Fatal(err)
	}
	b, err := a.Builds.Connector(ctx, "bus-times")
	if err != nil {
		t.Fatal(err)
	}
	first, err := a.Builds.Bundle(b, b.Version)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := a.Builds.Bundle(b, b.Version); err != nil || again != first {
		t.Fatalf("checked again: %p %p %v", first, again, err)
	}
	p := filepath.Join(a.Root, filepath.FromSlash(builds.VersionPath(builds.KindConnector, "bus-times", b.Version)))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(data, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Builds.Bundle(b, b.Version); !errs.Is(err, errs.Conflict) {
		t.Fatalf("changed bytes: %v", err)
	}
}
