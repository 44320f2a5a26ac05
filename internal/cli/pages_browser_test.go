package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcptest"
	"github.com/boxmem/box/internal/passkeytest"
)

// The pages journey through `box serve` itself, in a real browser with a virtual passkey: an assistant
// with a build key proposes the Garden page over MCP, the owner approves its card with the passkey, the
// page opens in its sandboxed frame, its heartbeat turns it on, it lists and remembers through the
// bridge; an update that throws on load is rolled back; a look applies and ?plain=1 removes it; a layout
// makes the page the home screen; a probe page's attacks from inside the frame are each refused; safe
// mode pauses it all.
func TestPagesJourney(t *testing.T) {
	passkeytest.Chromium(t)
	srv := startServe(t)
	bctx, cancel := passkeytest.Browser(t)
	t.Cleanup(cancel)
	ctx, stop := context.WithTimeout(bctx, 150*time.Second)
	t.Cleanup(stop)
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 25*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("%s: %v\nat %s\n%.1500s\nserver stderr:\n%.3000s", name, err, loc, body, srv.stderr.String())
		}
	}
	eval := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return s
	}
	approve := func(proposal, says string) {
		t.Helper()
		step("approve "+proposal, chromedp.Navigate(srv.owner+"/today"),
			chromedp.WaitVisible(chromedp.CSS(`button.approve[data-card="`+proposal+`"]`)),
			passkeytest.Tap(`button.approve[data-card="`+proposal+`"]`),
			passkeytest.Poll(`document.querySelector(".note.live") && document.querySelector(".note.live").innerText.includes(`+jsString(says)+`)`))
	}

	step("setup", chromedp.Navigate(srv.setupLink), chromedp.WaitVisible(chromedp.CSS("#setup")),
		passkeytest.Tap("#setup"), chromedp.WaitVisible(chromedp.CSS("#did")))
	step("make a build key", chromedp.Navigate(srv.owner+"/settings"), chromedp.SendKeys(chromedp.CSS("#keyname"), "Claude Code"),
		passkeytest.Tap(`input[name="build"]`), passkeytest.Tap("#makekey"), chromedp.WaitVisible(chromedp.CSS("button.approve")))
	step("approve the key", passkeytest.Tap("button.approve"), chromedp.WaitVisible(chromedp.CSS("#secret-value")))
	key := strings.TrimSpace(eval(`document.getElementById("secret-value").textContent`))
	if !strings.HasPrefix(key, keys.Prefix) {
		t.Fatalf("key shown: %q", key)
	}
	cs := connectMCP(t, srv.mcp, key)

	// The Garden page, proposed over MCP: a card that says who sent it, at the top.
	p := mcptest.Propose(t, cs, "propose_section", map[string]any{"name": "Garden", "emoji": "🌱", "own": "garden", "read": []any{}, "uses": []any{},
		"what": "What I planted where, what needs doing this week, and the harvest log.", "html": pageFile(t, "garden.html")})
	step("the card", chromedp.Navigate(srv.owner+"/today"), chromedp.WaitVisible(chromedp.CSS(`#card-`+p)))
	card := eval(`document.getElementById("card-` + p + `").textContent`)
	first := eval(`document.getElementById("card-` + p + `").firstElementChild.className`)
	for _, want := range []string{"Sent by Claude Code (127.0.0.1)", "New page", "Garden", "moc-garden", "_content/pages/garden/", "It can't reach the internet.", "SHA-256"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	if first != "sender" {
		t.Errorf("the card's first line is %q, not who sent it", first)
	}
	approve(p, "Installed the page Garden")
	if st := status(t, cs, p); st.Card != "approved" || st.Section.Status != "pending" {
		t.Fatalf("after the yes: %+v", st)
	}

	// Opened once: it loads boxed, lists its map, remembers through the bridge, and its heartbeat turns it on.
	step("open the page", chromedp.Navigate(srv.owner+"/pages/garden"), chromedp.WaitVisible(chromedp.CSS("#pageframe")))
	if sb := eval(`document.getElementById("pageframe").getAttribute("sandbox")`); sb != "allow-scripts allow-forms" {
		t.Fatalf("sandbox: %q", sb)
	}
	waitFor(t, "the heartbeat", func() bool { return status(t, cs, p).Section.Status == "on" })
	var seen struct {
		Maps       []string
		Remembered string
	}
	readData(t, srv.dir, "garden", "seen", &seen)
	if len(seen.Maps) != 1 || seen.Maps[0] != "moc-garden" || !strings.Contains(seen.Remembered, "Planted tomatoes by the fence.") {
		t.Fatalf("what the page saw through the bridge: %+v", seen)
	}
	if out, _ := mcptest.Call(t, cs, "memory_search", map[string]any{"words": "tomatoes fence"}); !strings.Contains(out, "page garden") {
		t.Fatalf("the page's line is not in memory under its name: %s", out)
	}

	// An update that throws on load: approved, opened, and rolled back to version 1.
	u := mcptest.Propose(t, cs, "update_section", map[string]any{"section": "garden", "html": pageFile(t, "broken.html"), "what": "Adds a watering list."})
	approve(u, "new version of the page Garden")
	step("open the update", chromedp.Navigate(srv.owner+"/pages/garden"), chromedp.WaitVisible(chromedp.CSS("#pageframe")))
	waitFor(t, "the rollback", func() bool {
		s := status(t, cs, u)
		return s.Section.Version == 1 && s.Section.Status == "on" && strings.Contains(s.Section.Problem, "version 2")
	})

	// A look change applies to the UI; ?plain=1 shows it without.
	l := mcptest.Propose(t, cs, "propose_ui_change", map[string]any{"name": "Plum headings", "what": "Headings in plum.", "css": "h1 { color: #7a1f5c; }"})
	approve(l, "The look Plum headings is on")
	plum := `getComputedStyle(document.querySelector("h1")).color === "rgb(122, 31, 92)"`
	step("the look", chromedp.Navigate(srv.owner+"/memory"), passkeytest.Poll(plum))
	step("plain", chromedp.Navigate(srv.owner+"/memory?plain=1"), chromedp.WaitVisible(chromedp.CSS("h1")))
	if eval(`String(`+plum+`)`) != "false" || eval(`String(!!document.getElementById("look"))`) != "false" {
		t.Fatal("?plain=1 still shows the look")
	}
	step("no look on Today", chromedp.Navigate(srv.owner+"/today"), chromedp.WaitVisible(chromedp.CSS("#did")))
	if eval(`String(!!document.getElementById("look"))`) != "false" {
		t.Fatal("the look applies on the card screen")
	}

	// A layout makes the page the home screen.
	lay := mcptest.Propose(t, cs, "propose_layout", map[string]any{"what": "Garden first, as the home screen",
		"layout": map[string]any{"items": []any{"page:garden", "today", "todo", "chat", "pages", "memory", "diary", "settings"}, "home": "page:garden"}})
	approve(lay, "arrangement of the tabs is on")
	step("home", chromedp.Navigate(srv.owner+"/"), chromedp.WaitVisible(chromedp.CSS("#pageframe")))
	if loc := eval(`location.pathname`); loc != "/pages/garden" {
		t.Fatalf("home is %s", loc)
	}
	if tab := eval(`document.querySelector("nav.tabs a").dataset.tab`); tab != "page:garden" {
		t.Fatalf("first tab: %s", tab)
	}

	// Attacks from inside a running page, each refused (docs/SECURITY.md, "Pages").
	pr := mcptest.Propose(t, cs, "propose_section", map[string]any{"name": "Probe", "own": "probe", "what": "Tries every door.", "html": pageFile(t, "probe.html")})
	approve(pr, "Installed the page Probe")
	step("open the probe", chromedp.Navigate(srv.owner+"/pages/probe"), chromedp.WaitVisible(chromedp.CSS("#pageframe")))
	var probe map[string]any
	for deadline := time.Now().Add(20 * time.Second); !readDataOK(srv.dir, "probe", "probe", &probe); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the probe's report did not come in 20s: %+v", status(t, cs, pr))
		}
	}
	for k, want := range map[string]string{
		"otherOrigin": "refused", "ownUI": "refused", "ownSearch": "refused", "otherPage": "read 401", "otherPageCookies": "refused", "otherMap": "refused 403",
		"approve": "refused", "cookie": "refused", "storage": "refused", "open": "undefined", "socket": "undefined", "rtc": "undefined",
		"frame": "refused", "top": "refused",
	} {
		if got, _ := probe[k].(string); !strings.HasPrefix(got, want) {
			t.Errorf("probe %s: %q, want %q…", k, got, want)
		}
	}
	if c, _ := probe["card"].(string); c == "" {
		t.Error("the probe's forget made no card")
	} else if st := eval(`fetch("/today").then(r => r.text()).then(t => String(t.includes("card-` + c + `")))`); st != "true" { // still waiting for the owner
		t.Errorf("the probe's card is not waiting for the owner any more")
	}
	if v := strings.Join(toStrings(probe["violations"]), ","); !strings.Contains(v, "connect-src") {
		t.Errorf("the CSP reported %q", v)
	}
	time.Sleep(500 * time.Millisecond) // the probe's last act, the form posted outside
	if strings.Contains(srv.stderr.String(), "path=/signout") {
		t.Error("the probe's form posted outside the frame")
	}

	// The box's page holding the frame moves only when that frame's own window asks, to a path it knows.
	step("a message from the holder itself", chromedp.Navigate(srv.owner+"/pages/garden"), chromedp.WaitVisible(chromedp.CSS("#pageframe")))
	eval(`window.postMessage({type: "box:open", url: "/diary"}, "*"); new Promise(ok => setTimeout(() => ok(location.pathname), 300))`)
	if loc := eval(`location.pathname`); loc != "/pages/garden" {
		t.Fatalf("a message not from the frame moved the holder to %s", loc)
	}
	op := mcptest.Propose(t, cs, "propose_section", map[string]any{"name": "Opener", "own": "opener", "what": "Opens the diary.", "html": pageFile(t, "opener.html")})
	approve(op, "Installed the page Opener")
	step("open the opener", chromedp.Navigate(srv.owner+"/pages/opener"))
	waitFor(t, "box.ui.open moving the holder to the diary", func() bool {
		loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`)) // the page navigates meanwhile: errors are retried
		return err == nil && loc == "/diary"
	})

	// Safe mode pauses every page, look and layout; off needs the passkey.
	step("safe mode on", chromedp.Navigate(srv.owner+"/settings/builds"), passkeytest.Tap("#safemode-on"), chromedp.WaitVisible(chromedp.CSS("#safemode-off")))
	step("paused", chromedp.Navigate(srv.owner+"/pages/garden"), chromedp.WaitVisible(chromedp.CSS(".banner")))
	if eval(`String(!!document.getElementById("pageframe"))`) != "false" || eval(`fetch("/s/garden/").then(r => String(r.status))`) != "423" {
		t.Fatal("safe mode did not pause the page")
	}
	if eval(`document.querySelector("nav.tabs a").dataset.tab`) != "today" {
		t.Fatal("safe mode kept the layout")
	}
	step("safe mode off", chromedp.Navigate(srv.owner+"/settings/builds"), passkeytest.Tap("#safemode-off"), chromedp.WaitVisible(chromedp.CSS("#safemode-on")))
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

func pageFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "pages", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

type buildStatus struct {
	Card    string
	Section struct {
		Status  string
		Version int
		Problem string
	}
}

func status(t *testing.T, cs *sdk.ClientSession, id string) buildStatus {
	t.Helper()
	out, isErr := mcptest.Call(t, cs, "build_status", map[string]any{"id": id})
	var s buildStatus
	if isErr || json.Unmarshal([]byte(out), &s) != nil {
		t.Fatalf("build_status: isError=%v %s", isErr, out)
	}
	return s
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen in 20s", what)
		}
	}
}

func readDataOK(dir, slug, key string, v any) bool {
	data, err := os.ReadFile(filepath.Join(dir, "_content", "pages", slug, "data.json"))
	if err != nil {
		return false
	}
	var store map[string]json.RawMessage
	if json.Unmarshal(data, &store) != nil || store[key] == nil {
		return false
	}
	return json.Unmarshal(store[key], v) == nil
}

func readData(t *testing.T, dir, slug, key string, v any) {
	t.Helper()
	if !readDataOK(dir, slug, key, v) {
		t.Fatalf("the page %s saved no %q", slug, key)
	}
}

func toStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			s, _ := x.(string)
			out = append(out, s)
		}
	}
	return out
}
