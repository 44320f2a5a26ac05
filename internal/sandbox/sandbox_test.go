package sandbox

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/errs"
)

const busTimesManifest = `{
  "name": "Bus times", "what": "The next buses at the owner's stop, from the city's public API.", "emoji": "🚌",
  "egress": ["api.example.com"],
  "tools": [{ "name": "next_buses", "description": "The next buses at a stop",
              "inputSchema": { "type": "object", "properties": { "stop": { "type": "string" } }, "required": ["stop"] },
              "effect": "read" }],
  "test": [{ "tool": "next_buses", "args": { "stop": "12" }, "expect": "nonempty" }],
  "limits": { "timeoutS": 10 }
}`

const busTimesIndex = `export const tools = { next_buses: async ({ stop }, ctx) => { const r = await ctx.fetch('https://api.example.com/stops/' + encodeURIComponent(stop)); if (!r.ok) throw new Error('the site answered ' + r.status); return await r.json(); } };`

func busAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stops/{stop}", func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "api.example.com" {
			http.Error(w, "wrong host "+r.Host, 400)
			return
		}
		if r.PathValue("stop") != "12" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"line": "4", "in": "3 min"}, {"line": "31", "in": "9 min"}]`))
	})
	return mux
}

// The seed's Bus times connector, end to end: validated, run boxed against the city's API (a local
// server mapped in as api.example.com), its tests passing.
func TestBusTimes(t *testing.T) {
	s := newSite(t, busAPI())
	var fetches []Fetch
	r := runner(t, Config{Bundle: bundle(t, busTimesManifest, busTimesIndex), Test: s.net, OnFetch: func(f Fetch) { fetches = append(fetches, f) }})
	res, err := r.Call(context.Background(), "next_buses", json.RawMessage(`{"stop": "12"}`))
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Log)
	}
	if string(res.Value) != `[{"line":"4","in":"3 min"},{"line":"31","in":"9 min"}]` {
		t.Errorf("value = %s", res.Value)
	}
	if !slices.Equal(res.Hosts, []string{"api.example.com"}) || len(res.Blocked) != 0 || res.Fetches != 1 {
		t.Errorf("hosts %v blocked %v fetches %d", res.Hosts, res.Blocked, res.Fetches)
	}
	if len(fetches) != 1 || fetches[0] != (Fetch{Host: "api.example.com", Status: 200}) {
		t.Errorf("OnFetch heard %+v", fetches)
	}
	if !slices.Equal(res.Tools, []string{"next_buses"}) {
		t.Errorf("tools %v", res.Tools)
	}
	t.Logf("confinement here: Landlock ABI %d (kernel has %d), namespaces %v; %s", res.Confinement.Landlock, landlockABI(), res.Confinement.Namespaces, res.Elapsed)
	if landlockABI() > 0 && res.Confinement.Landlock == 0 {
		t.Error("the kernel has Landlock but the child is not held by it")
	}

	// A stop the site does not know: the tool throws, and the call says so.
	res, err = r.Call(context.Background(), "next_buses", json.RawMessage(`{"stop": "99"}`))
	if err == nil || !strings.Contains(err.Error(), "the site answered 404") || !strings.Contains(res.Log, "the site answered 404") {
		t.Errorf("err %v log %q", err, res.Log)
	}
	// Arguments that do not fit the schema never start a child.
	if _, err := r.Call(context.Background(), "next_buses", json.RawMessage(`{"stop": 12}`)); !errs.Is(err, errs.Invalid) {
		t.Errorf("bad args: %v", err)
	}
	h := r.RunTests(context.Background())
	if !h.OK || h.Why != "" || len(h.Tests) != 1 || !h.Tests[0].OK {
		t.Errorf("health %+v", h)
	}
	s.checkNoDials(t)
}

func TestStore(t *testing.T) {
	index := `export const tools = { t: async (args, ctx) => {
		const n = ((await ctx.store.get("count")) || 0) + 1;
		await ctx.store.set("count", n);
		await ctx.store.set("last", { at: "now", list: [1, 2] });
		await ctx.store.set("gone", "x");
		await ctx.store.delete("gone");
		return { n, keys: await ctx.store.keys(), last: await ctx.store.get("last"), missing: await ctx.store.get("nope") };
	} };`
	dir := t.TempDir()
	r := runner(t, Config{Bundle: bundle(t, manifest(`[]`, ""), index), StoreDir: dir})
	for want := 1; want <= 2; want++ {
		res, err := r.Call(context.Background(), "t", nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, res.Log)
		}
		if got := `{"n":` + string(rune('0'+want)) + `,"keys":["count","last"],"last":{"at":"now","list":[1,2]},"missing":null}`; string(res.Value) != got {
			t.Fatalf("call %d: %s, want %s", want, res.Value, got)
		}
	}
	// Kept on disk, read again by a new runner.
	if b, err := os.ReadFile(filepath.Join(dir, "store.json")); err != nil || !strings.Contains(string(b), `"count":2`) {
		t.Fatalf("store.json: %s %v", b, err)
	}
	r2 := runner(t, Config{Bundle: r.cfg.Bundle, StoreDir: dir})
	if res, err := r2.Call(context.Background(), "t", nil); err != nil || !strings.HasPrefix(string(res.Value), `{"n":3`) {
		t.Fatalf("reopened: %s %v", res.Value, err)
	}
	// Tests run on fresh, empty state: never what the connector kept.
	h := r2.RunTests(context.Background())
	if !h.OK {
		t.Fatalf("%+v", h)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "store.json")); !strings.Contains(string(b), `"count":3`) {
		t.Errorf("the health run touched the kept store: %s", b)
	}
	// A call that fails keeps none of its writes: not half an update.
	half := `export const tools = { t: async (args, ctx) => { await ctx.store.set("count", 100); await ctx.store.set("step", "one"); throw new Error("failed half way"); } };`
	r4 := runner(t, Config{Bundle: bundle(t, manifest(`[]`, ""), half), StoreDir: dir})
	if _, err := r4.Call(context.Background(), "t", nil); err == nil || !strings.Contains(err.Error(), "failed half way") {
		t.Fatalf("the failing call: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "store.json")); !strings.Contains(string(b), `"count":3`) || strings.Contains(string(b), "step") {
		t.Errorf("a failed call's writes were kept: %s", b)
	}
	if data, _ := r4.store.snapshot(); string(data["count"]) != "3" || data["step"] != nil {
		t.Errorf("a failed call's writes stay in memory: %v", data)
	}
	// Limits of the store.
	big := `export const tools = { t: async (args, ctx) => { try { await ctx.store.set("k", "x".repeat(70000)); } catch (e) { return String(e.message); } return "stored"; } };`
	r3 := runner(t, Config{Bundle: bundle(t, manifest(`[]`, ""), big)})
	if res, err := r3.Call(context.Background(), "t", nil); err != nil || !strings.Contains(string(res.Value), "at most 64 KB") {
		t.Errorf("big value: %s %v", res.Value, err)
	}
}

func TestLogAndHealth(t *testing.T) {
	index := `export const tools = { t: async (args, ctx) => {
		for (let i = 0; i < 200; i++) ctx.log("line", i, { i });
		ctx.log("the key is", "{{key:TOKEN}}");
		throw new Error("no buses today");
	} };`
	m := `{"name": "Failing", "what": "fails", "egress": ["api.example.com"],
		"credentials": [{"name": "TOKEN", "host": "api.example.com"}],
		"tools": [{"name": "t", "description": "t", "effect": "read", "inputSchema": {"type": "object"}}],
		"test": [{"tool": "t", "expect": "nonempty"}]}`
	r := runner(t, Config{Bundle: bundle(t, m, index), Keys: map[string]string{"TOKEN": "sk-live-abcdef123456"}})
	h := r.RunTests(context.Background())
	if h.OK || !strings.Contains(h.Detail, "no buses today") || len(h.TestOutputTail) > TailBytes {
		t.Fatalf("health %+v", h)
	}
	if strings.Contains(h.Why, "no buses") || !strings.Contains(h.Why, "test 1 (t): the call failed") {
		t.Errorf("the why quotes the connector: %q", h.Why)
	}
	if !strings.Contains(h.TestOutputTail, "line 199 {\"i\":199}") || strings.Contains(h.TestOutputTail, "line 0 ") || !strings.Contains(h.TestOutputTail, "no buses today") {
		t.Errorf("tail:\n%s", h.TestOutputTail)
	}
	if strings.Contains(h.TestOutputTail, "sk-live") {
		t.Error("the tail carries the key")
	}

	// A declared tool the code does not export fails the health run.
	r2 := runner(t, Config{Bundle: bundle(t, manifest(`[]`, ""), `export const tools = { other: async () => 1 };`)})
	if h := r2.RunTests(context.Background()); h.OK || !strings.Contains(h.Why, "exports no tool t") {
		t.Errorf("missing export: %+v", h)
	}
	// An expectation that fails names what came back.
	r3 := runner(t, Config{Bundle: bundle(t, strings.Replace(manifest(`[]`, ""), `"expect": "ok"`, `"expect": "nonempty"`, 1), `export const tools = { t: async () => [] };`)})
	if h := r3.RunTests(context.Background()); h.OK || !strings.Contains(h.Why, "empty") {
		t.Errorf("empty result: %+v", h)
	}
}

func TestKeysGoOnlyToTheirHost(t *testing.T) {
	var got []string
	s := newSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Host+" "+r.URL.RawQuery+" auth="+r.Header.Get("Authorization")+" x="+r.Header.Get("X-Key"))
		// The site echoes the key back: the code must still never see it.
		w.Write([]byte(`{"echo": "` + r.Header.Get("Authorization") + `", "q": "` + r.Header.Get("X-Key") + `"}`))
	}))
	m := `{"name": "Keys", "what": "k", "egress": ["api.example.com", "cdn.example.com"],
		"credentials": [{"name": "TOKEN", "host": "api.example.com"}],
		"tools": [{"name": "t", "description": "t", "effect": "read", "inputSchema": {"type": "object"}}],
		"test": [{"tool": "t", "expect": "ok"}]}`
	index := `export const tools = { t: async (args, ctx) => {
		const r = await ctx.fetch("https://api.example.com/v1", { headers: { Authorization: "Bearer {{key:TOKEN}}", "X-Key": "{{key:TOKEN}}" } });
		const body = await r.json();
		ctx.log("echo", body.echo);
		let second = "";
		try { await ctx.fetch("https://cdn.example.com/", { headers: { Authorization: "Bearer {{key:TOKEN}}" } }); second = "sent"; } catch (e) { second = e.message; }
		let third = "";
		try { await ctx.fetch("https://cdn.example.com/", { headers: { "X-Key": body.echo } }); third = "sent"; } catch (e) { third = e.message; }
		return { body, second, third };
	} };`
	const secret = "sk-live-abcdef123456"
	r := runner(t, Config{Bundle: bundle(t, m, index), Keys: map[string]string{"TOKEN": secret}, Test: s.net})
	res, err := r.Call(context.Background(), "t", nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Log)
	}
	var out struct {
		Body          struct{ Echo, Q string }
		Second, Third string
	}
	json.Unmarshal(res.Value, &out)
	if len(got) < 1 || got[0] != "api.example.com  auth=Bearer "+secret+" x="+secret {
		t.Fatalf("the declared host got %q", got)
	}
	if out.Body.Echo != "Bearer {{key:TOKEN}}" || out.Body.Q != "{{key:TOKEN}}" || strings.Contains(string(res.Value)+res.Log, secret) {
		t.Errorf("the code saw the key: %s / %s", res.Value, res.Log)
	}
	if !strings.Contains(out.Second, "goes only to api.example.com") {
		t.Errorf("a key to a second host: %q", out.Second)
	}
	// The echoed placeholder is still a placeholder: refused on its way to the second host.
	if !strings.Contains(out.Third, "goes only to api.example.com") || len(got) != 1 {
		t.Errorf("third %q, the site got %q", out.Third, got)
	}
	if !slices.ContainsFunc(res.Blocked, func(b Blocked) bool { return b.Host == "cdn.example.com" }) {
		t.Errorf("blocked %v", res.Blocked)
	}
}
