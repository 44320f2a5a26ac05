package connectors_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/apptest"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/connectortest"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/passkeytest"
)

// cityKey is the owner's key for the city's API: long enough to show its last four, and findable.
const cityKey = "city-KEY-7f3a9c21e0b4-secret"

var owner = box.Actor{Who: "owner", Via: "cli", Trust: "own"}

var ownerCLI = connectors.Caller{Actor: owner, Asker: gate.Asker{Owner: true, Via: "cli"}}

type fx struct {
	a     *app.App
	api   *connectortest.BusAPI
	site  *connectortest.Site
	vault string
	clock *passkeytest.Clock // the box's clock, for a second root on the same box
}

// newFx is a box composed by the root whose connectors reach the city's API (a local server mapped in
// as api.example.com), with the Bus times connector sent by Claude and approved by the owner.
func newFx(t *testing.T) *fx {
	t.Helper()
	f := &fx{api: &connectortest.BusAPI{Key: cityKey}, vault: filepath.Join(t.TempDir(), "vault"), clock: passkeytest.NewClock()}
	f.site = connectortest.NewSite(t, f.api, connectortest.BusHost)
	a := apptest.Open(t, app.Options{Now: f.clock.Now, VaultDir: f.vault, ConnectorNet: f.site.Net})
	t.Cleanup(func() {
		if d := f.site.Dials(); len(d) > 0 {
			t.Errorf("connections were attempted to %v", d)
		}
	})
	f.a = a
	b := connectortest.Install(t, a.Builds, a.Gate, connector.Options{BoxCanBuild: true}, connectortest.BusManifest, connectortest.BusFiles())
	if b.Status != builds.StatusFailed {
		t.Fatalf("without its key the connector passed its tests: %+v", b)
	}
	return f
}

// on sets the owner's key and switches the connector on: its tests pass now.
func (f *fx) on(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.a.Connectors.SetKey(ctx, owner, "bus-times", "API_KEY", cityKey); err != nil {
		t.Fatal(err)
	}
	b, err := f.a.Builds.SetOn(ctx, owner, "bus-times", true)
	if err != nil || b.Status != builds.StatusOn {
		t.Fatalf("on: %+v %v", b, err)
	}
}

func (f *fx) call(t *testing.T, who connectors.Caller, tool, args string) (connectors.Answer, error) {
	t.Helper()
	return f.a.Connectors.Call(context.Background(), who, "bus-times", tool, json.RawMessage(args))
}

// diary is the box's diary lines whose op is op.
func (f *fx) diary(t *testing.T, op string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(f.a.Root, "_bookkeeping", "diary"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, `"op":"`+op+`"`) {
				out = append(out, l)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The seed's Bus times connector end to end: installed through Claude's proposal and the owner's yes,
// failed until the owner's key is set, then on; each call runs boxed with the key filled in on the
// city's host, keeps its own store under .box/connectors (never in git), and writes one diary line
// naming the host it reached. The key is nowhere but the vault.
func TestBusTimesCalls(t *testing.T) {
	f := newFx(t)
	ctx := context.Background()
	if _, err := f.call(t, ownerCLI, "next_buses", `{"stop": "12"}`); !errs.Is(err, errs.Refused) || !strings.Contains(errs.Sentence(err), "failed its tests") {
		t.Fatalf("a failed connector ran: %v", err)
	}
	f.on(t)
	for n := 1; n <= 2; n++ {
		ans, err := f.call(t, ownerCLI, "next_buses", `{"stop": "12"}`)
		if err != nil {
			t.Fatalf("call %d: %v", n, err)
		}
		var v struct {
			Stop  string
			Buses []struct{ Line, In string }
			Calls int
		}
		if err := json.Unmarshal(ans.Value, &v); err != nil || v.Stop != "12" || len(v.Buses) != 2 || v.Buses[0].Line != "4" || v.Calls != n {
			t.Fatalf("call %d: %s %v", n, ans.Value, err)
		}
		if !slices.Equal(ans.Hosts, []string{connectortest.BusHost}) || len(ans.Blocked) != 0 || ans.Card != "" {
			t.Fatalf("call %d: %+v", n, ans)
		}
	}
	// Its store is the box's private state, outside the tree git keeps.
	store := filepath.Join(f.a.Root, ".box", "connectors", "bus-times", "store.json")
	if data, err := os.ReadFile(store); err != nil || !strings.Contains(string(data), `"calls":2`) {
		t.Fatalf("store: %s %v", data, err)
	}
	if out := git(t, f.a.Root, "status", "--porcelain", "--ignored=no"); out != "" {
		t.Fatalf("the calls left the tree changed:\n%s", out)
	}
	if out := git(t, f.a.Root, "ls-files", ".box"); strings.Contains(out, "connectors") {
		t.Fatalf("git keeps the connector's store: %s", out)
	}
	lines := f.diary(t, "connector-call")
	if len(lines) != 2 || !strings.Contains(lines[0], "owner called Bus times → next_buses: reached api.example.com") {
		t.Fatalf("diary: %q", lines)
	}
	if strings.Contains(strings.Join(lines, ""), `"12"`) {
		t.Errorf("the diary keeps a call's arguments: %q", lines)
	}
	keyLines := f.diary(t, "connector-key")
	if len(keyLines) != 1 || !strings.Contains(keyLines[0], "set the key API_KEY of the connector Bus times") {
		t.Fatalf("key diary: %q", keyLines)
	}
	// Arguments that do not fit, an unknown tool or connector: refused before anything runs.
	if _, err := f.call(t, ownerCLI, "next_buses", `{"stop": 12}`); !errs.Is(err, errs.Invalid) {
		t.Errorf("bad args: %v", err)
	}
	if _, err := f.call(t, ownerCLI, "leave", `{}`); !errs.Is(err, errs.NotFound) || !strings.Contains(errs.Sentence(err), "next_buses, report_delay") {
		t.Errorf("unknown tool: %v", err)
	}
	if _, err := f.a.Connectors.Call(ctx, ownerCLI, "trains", "next", nil); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown connector: %v", err)
	}
	// A stop the city does not know: the tool throws, the call says so, and the diary says only that
	// it failed (the tool's words may carry what it was asked).
	if _, err := f.call(t, ownerCLI, "next_buses", `{"stop": "99"}`); errs.KindOf(err) != errs.Other || !strings.Contains(errs.Sentence(err), "the city answered 404") {
		t.Errorf("a failing tool: %v", err)
	}
	if l := f.diary(t, "connector-call"); len(l) != 3 || !strings.Contains(l[2], "it failed") || strings.Contains(l[2], "404") {
		t.Errorf("a failed call's diary line: %q", l)
	}
	assertKeyNowhere(t, f, cityKey)
}

// A write tool acts as the owner: "Send as me" at Ask me (the default) makes a "Send as you" card that
// runs it on the owner's yes; Never refuses it without reaching the city; a turn that read outside
// content makes a card even at Just do it; a page (not the owner) always makes a card.
func TestWriteToolGoesThroughTheGate(t *testing.T) {
	f := newFx(t)
	f.on(t)
	ctx := context.Background()
	ans, err := f.call(t, ownerCLI, "report_delay", `{"line": "4"}`)
	if err != nil || ans.Card == "" || ans.Value != nil {
		t.Fatalf("at Ask me: %+v %v", ans, err)
	}
	c, err := f.a.Gate.Get(ctx, ans.Card)
	if err != nil || c.Kind != "send" || c.Switch != gate.Send || !strings.Contains(c.Title, `Send as you: Bus times → report_delay, with the 1 argument shown in full below`) {
		t.Fatalf("card: %+v %v", c, err)
	}
	if r := f.api.Reports(); len(r) != 0 {
		t.Fatalf("the city heard of it before the owner's yes: %v", r)
	}
	ok, err := f.a.Gate.Approve(ctx, ans.Card, gate.By{Via: "cli", Local: true})
	if err != nil || !strings.Contains(ok.Text, `it answered {"reported":true,"calls":1}`) {
		t.Fatalf("approve: %+v %v", ok, err)
	}
	if r := f.api.Reports(); !slices.Equal(r, []string{"4"}) {
		t.Fatalf("the city heard %v", r)
	}

	if _, err := f.a.Gate.SetSwitch(ctx, gate.By{Via: "cli", Local: true}, gate.Send, gate.JustDoIt); err != nil {
		t.Fatal(err)
	}
	if ans, err := f.call(t, ownerCLI, "report_delay", `{"line": "31"}`); err != nil || ans.Card != "" || !strings.Contains(string(ans.Value), `"reported":true`) {
		t.Fatalf("at Just do it: %+v %v", ans, err)
	}
	afterOutside := connectors.Caller{Actor: owner, Asker: gate.Asker{Owner: true, Via: "chat", OutsideRead: true}}
	if ans, err := f.call(t, afterOutside, "report_delay", `{"line": "5"}`); err != nil || ans.Card == "" {
		t.Fatalf("after outside content: %+v %v", ans, err)
	}
	page := connectors.Caller{Actor: builds.PageActor("trips"), Asker: gate.Asker{Connection: "page trips", Via: "page", Conn: "page:trips"}}
	if ans, err := f.call(t, page, "report_delay", `{"line": "6"}`); err != nil || ans.Card == "" {
		t.Fatalf("from a page: %+v %v", ans, err)
	}

	if _, err := f.a.Gate.SetSwitch(ctx, gate.By{Via: "cli", Local: true}, gate.Send, gate.Never); err != nil {
		t.Fatal(err)
	}
	if _, err := f.call(t, ownerCLI, "report_delay", `{"line": "7"}`); !errs.Is(err, errs.Refused) || !strings.Contains(errs.Sentence(err), `"Send as me" is set to Never`) {
		t.Fatalf("at Never: %v", err)
	}
	if r := f.api.Reports(); !slices.Equal(r, []string{"4", "31"}) {
		t.Fatalf("the city heard %v", r)
	}
	// Reads still run: Never covers acting as the owner, not looking.
	if _, err := f.call(t, ownerCLI, "next_buses", `{"stop": "12"}`); err != nil {
		t.Fatalf("a read at Never: %v", err)
	}
	assertKeyNowhere(t, f, cityKey)
}

// Off, safe mode and a frozen box refuse a call with a sentence saying what to do.
func TestRefusals(t *testing.T) {
	f := newFx(t)
	f.on(t)
	ctx := context.Background()
	read := func() error {
		_, err := f.call(t, ownerCLI, "next_buses", `{"stop": "12"}`)
		return err
	}
	if _, err := f.a.Builds.SetOn(ctx, owner, "bus-times", false); err != nil {
		t.Fatal(err)
	}
	if err := read(); !errs.Is(err, errs.Refused) || !strings.Contains(errs.Sentence(err), "switched off") {
		t.Fatalf("off: %v", err)
	}
	if _, err := f.a.Builds.SetOn(ctx, owner, "bus-times", true); err != nil {
		t.Fatal(err)
	}
	if err := f.a.Builds.SetSafeMode(ctx, owner, true); err != nil {
		t.Fatal(err)
	}
	if err := read(); !errs.Is(err, errs.Refused) || !strings.Contains(errs.Sentence(err), "Safe mode is on") {
		t.Fatalf("safe mode: %v", err)
	}
	if tools, err := f.a.Connectors.ChatTools(ctx); err != nil || len(tools) != 0 {
		t.Fatalf("the chat is offered %d tools in safe mode (%v)", len(tools), err)
	}
	if err := f.a.Builds.SetSafeMode(ctx, owner, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.a.Freeze(ctx, gate.By{Via: "cli", Local: true}, true); err != nil {
		t.Fatal(err)
	}
	if err := read(); !errs.Is(err, errs.Frozen) {
		t.Fatalf("frozen: %v", err)
	}
	if _, err := f.a.Freeze(ctx, gate.By{Via: "cli", Local: true}, false); err != nil {
		t.Fatal(err)
	}
	if err := read(); err != nil {
		t.Fatal(err)
	}
	if r := f.api.Reports(); len(r) != 0 {
		t.Fatal(r)
	}
}

// A key is set only for a key the connector declares, as one line; an error never repeats it; the
// owner sees its last four characters, and a new one replaces it.
func TestKeys(t *testing.T) {
	f := newFx(t)
	ctx := context.Background()
	ks, err := f.a.Connectors.Keys(ctx, "bus-times")
	if err != nil || len(ks) != 1 || ks[0] != (connectors.KeyStatus{Name: "API_KEY", Host: connectortest.BusHost, What: "Your key from the city's developer page"}) {
		t.Fatalf("keys: %+v %v", ks, err)
	}
	bad := "two-lines-KEY-0b9f\nsecond-line-of-it"
	for _, c := range []struct {
		name, key string
		kind      errs.Kind
	}{
		{"OTHER", cityKey, errs.NotFound},
		{"API_KEY", "   ", errs.Invalid},
		{"API_KEY", bad, errs.Invalid},
		{"API_KEY", strings.Repeat("k", connectors.MaxKey+1), errs.Invalid},
	} {
		_, err := f.a.Connectors.SetKey(ctx, owner, "bus-times", c.name, c.key)
		if !errs.Is(err, c.kind) || strings.Contains(err.Error(), "KEY-") || strings.Contains(err.Error(), "kkkk") {
			t.Errorf("%s %.20q: %v", c.name, c.key, err)
		}
	}
	if _, err := f.a.Connectors.SetKey(ctx, owner, "trains", "API_KEY", cityKey); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown connector: %v", err)
	}
	k, err := f.a.Connectors.SetKey(ctx, owner, "bus-times", "API_KEY", "  "+cityKey+"\n")
	if err != nil || !k.Set || k.Last4 != "…cret" {
		t.Fatalf("set: %+v %v", k, err)
	}
	if ks, _ := f.a.Connectors.Keys(ctx, "bus-times"); !ks[0].Set || ks[0].Last4 != "…cret" {
		t.Fatalf("keys after: %+v", ks)
	}
	v, err := f.a.Vault()
	if err != nil {
		t.Fatal(err)
	}
	if s, err := v.Get(connectors.KeyName("bus-times", "API_KEY")); err != nil || s.Reveal() != connectors.SealKey("api.example.com", cityKey) {
		t.Fatalf("the vault holds %v %v", s, err)
	}
	// A key whose diary line cannot be written (the caller gone before the commit) is not set: the vault
	// keeps the key it had.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.a.Connectors.SetKey(gone, owner, "bus-times", "API_KEY", "sk-never-recorded-7f3a"); err == nil {
		t.Fatal("a key was set without its diary line")
	}
	if s, err := v.Get(connectors.KeyName("bus-times", "API_KEY")); err != nil || s.Reveal() != connectors.SealKey("api.example.com", cityKey) {
		t.Fatalf("after a key that was not recorded, the vault holds %v %v", s, err)
	}
	assertKeyNowhere(t, f, cityKey)
}

func git(t *testing.T, root string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// assertKeyNowhere fails if key is anywhere in the box: its files (the diary, cards, .box), or any
// version of any file in git's history.
func assertKeyNowhere(t *testing.T, f *fx, key string) {
	t.Helper()
	err := filepath.WalkDir(f.a.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if bytes.Contains(data, []byte(key)) {
			t.Errorf("the key is in %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if out := git(t, f.a.Root, "log", "--all", "-p", "--format=%B"); strings.Contains(out, key) {
		t.Error("the key is in git's history")
	}
	if !strings.HasPrefix(f.vault, os.TempDir()) || strings.HasPrefix(f.vault, f.a.Root) {
		t.Errorf("the vault %s is inside the box %s", f.vault, f.a.Root)
	}
}

// A connector that may reach any website sends the owner's words wherever it is told: while "Share
// outside my box" is at Never none of its tools runs, a read included; a write of it is under Share.
func TestAnyWebsiteCallsUnderShare(t *testing.T) {
	ctx := context.Background()
	api := &connectortest.BusAPI{}
	site := connectortest.NewSite(t, api, connectortest.BusHost)
	a := apptest.Open(t, app.Options{Now: passkeytest.NewClock().Now, ConnectorNet: site.Net})
	manifest := `{"name": "Reader", "what": "Reads a page the owner sends.", "egress": ["*"],
	  "tools": [{"name": "read", "description": "Read a page", "effect": "read", "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}},
	            {"name": "post", "description": "Post to a page", "effect": "write", "inputSchema": {"type": "object"}}],
	  "test": [{"tool": "read", "args": {"url": "https://api.example.com/stops/12"}, "expect": "nonempty"}]}`
	files, _ := json.Marshal(map[string]string{"index.mjs": `export const tools = {
	  read: async ({ url }, ctx) => (await ctx.fetch(url)).json(),
	  post: async (args, ctx) => (await ctx.fetch('https://api.example.com/delays', { method: 'POST', body: '{"line": "9"}' })).json() };`})
	b := connectortest.Install(t, a.Builds, a.Gate, a.Connectors.CheckOptions(ctx), manifest, files)
	if b.Status != builds.StatusOn {
		t.Fatalf("not on: %+v", b)
	}
	read := func() error {
		_, err := a.Connectors.Call(ctx, ownerCLI, "reader", "read", json.RawMessage(`{"url": "https://api.example.com/stops/12"}`))
		return err
	}
	if err := read(); err != nil {
		t.Fatal(err)
	}
	ans, err := a.Connectors.Call(ctx, ownerCLI, "reader", "post", nil)
	if err != nil || ans.Card == "" {
		t.Fatalf("a write: %+v %v", ans, err)
	}
	if c, _ := a.Gate.Get(ctx, ans.Card); c.Switch != gate.Share {
		t.Fatalf("the write of an any-website connector is under %q", c.Switch)
	}
	// A read after outside content, or asked by a page, carries whatever the turn was steered to put in
	// its URL: at Ask me it waits on a card, which runs that very read on the owner's yes.
	steered := `{"url": "https://api.example.com/stops/12?q=the-owners-notes"}`
	afterOutside := connectors.Caller{Actor: owner, Asker: gate.Asker{Owner: true, Via: "chat", OutsideRead: true}}
	page := connectors.Caller{Actor: builds.PageActor("trips"), Asker: gate.Asker{Connection: "page trips", Via: "page", Conn: "page:trips"}}
	for _, who := range []connectors.Caller{afterOutside, page} {
		ans, err := a.Connectors.Call(ctx, who, "reader", "read", json.RawMessage(steered))
		if err != nil || ans.Card == "" || ans.Value != nil || len(ans.Hosts) != 0 {
			t.Fatalf("a read by %s at Ask me: %+v %v", who.Asker.Who(), ans, err)
		}
		c, _ := a.Gate.Get(ctx, ans.Card)
		if c.Switch != gate.Share || c.Kind != "send" || !slices.Contains(connectors.CallArgs(c.Action), connectors.Arg{Key: "url", Value: "https://api.example.com/stops/12?q=the-owners-notes"}) {
			t.Fatalf("the read's card: %+v", c)
		}
		if who.Asker.Owner {
			ok, err := a.Gate.Approve(ctx, ans.Card, gate.By{Via: "cli", Local: true})
			if err != nil || !strings.Contains(ok.Text, "Reader → read ran") {
				t.Fatalf("approve: %+v %v", ok, err)
			}
		}
	}
	if _, err := a.Gate.SetSwitch(ctx, gate.By{Via: "cli", Local: true}, gate.Share, gate.Never); err != nil {
		t.Fatal(err)
	}
	if err := read(); !errs.Is(err, errs.Refused) || !strings.Contains(errs.Sentence(err), "Share outside my box") {
		t.Fatalf("a read at Never: %v", err)
	}
	if _, err := a.Connectors.Call(ctx, afterOutside, "reader", "read", json.RawMessage(steered)); !errs.Is(err, errs.Refused) {
		t.Fatalf("a read after outside content at Never: %v", err)
	}
	if len(api.Reports()) != 0 {
		t.Fatal(api.Reports())
	}
}

// Calls of one connector take turns across the box's processes (box serve beside the owner's CLI: here
// two roots composed on one box), so none loses what another kept in its store.
func TestCallsTakeTurns(t *testing.T) {
	f := newFx(t)
	f.on(t)
	ctx := context.Background()
	other, err := app.Open(ctx, f.a.Root, app.Options{Now: f.clock.Now, VaultDir: f.vault, ConnectorNet: f.site.Net})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const each = 3
	errc := make(chan error, 2*each)
	for i := 0; i < each; i++ {
		for _, a := range []*app.App{f.a, other} {
			go func() {
				_, err := a.Connectors.Call(ctx, ownerCLI, "bus-times", "next_buses", json.RawMessage(`{"stop": "12"}`))
				errc <- err
			}()
		}
	}
	for i := 0; i < 2*each; i++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	ans, err := f.call(t, ownerCLI, "next_buses", `{"stop": "12"}`)
	if err != nil || !strings.Contains(string(ans.Value), `"calls":7`) {
		t.Fatalf("after %d calls at once the store counted %s (%v)", 2*each, ans.Value, err)
	}
}
