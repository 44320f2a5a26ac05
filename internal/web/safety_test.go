package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/gate"
)

// A stolen session cookie (with the CSRF token any signed-in page shows) cannot turn the gate off: a
// switch set to let the box do more without asking, and an unfreeze, each need an assertion of the owner's
// passkey made for that change, one use; saying less (a tighter switch, a freeze) needs none
// (docs/GATE.md, "The five switches").
func TestLooseningOrUnfreezingNeedsAFreshAssertion(t *testing.T) {
	f := newImportFx(t, 1<<20)
	csrf := f.signedIn()
	ctx := context.Background()
	share := func() string {
		t.Helper()
		sw, err := f.g.Switches(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return sw.Of(gate.Share)
	}
	setShare := func(choice string, v url.Values) string {
		t.Helper()
		v.Set("csrf", csrf)
		v.Set("switch", gate.Share)
		v.Set("choice", choice)
		res := f.post("/settings/switch", v)
		res.Body.Close()
		return note(t, res)
	}
	if share() != gate.AskMe {
		t.Fatalf("share starts at %q", share())
	}
	for name, v := range map[string]url.Values{
		"no assertion":           {},
		"made for unfreezing":    f.withPasskey(url.Values{}, csrf, "unfreeze"),
		"made for another value": f.withPasskeyFor(url.Values{}, csrf, "switch", "share=never"),
		"made for another one":   f.withPasskeyFor(url.Values{}, csrf, "switch", "send=just-do-it"),
		"a forged credential":    {"ceremony": {"x"}, "credential": {"{}"}},
	} {
		s := setShare(gate.JustDoIt, v)
		if share() != gate.AskMe || strings.Contains(s, "is now") {
			t.Errorf("%s: share is %q after %q", name, share(), s)
		}
		if name == "no assertion" && !strings.Contains(s, "needs your passkey; nothing changed") {
			t.Errorf("%s: %q", name, s)
		}
	}
	once := f.withPasskeyFor(url.Values{}, csrf, "switch", "share=just-do-it")
	if s := setShare(gate.JustDoIt, once); share() != gate.JustDoIt {
		t.Fatalf("with the passkey: share is %q after %q", share(), s)
	}
	if s := setShare(gate.Never, url.Values{}); share() != gate.Never { // tighter: no passkey
		t.Fatalf("to Never: share is %q after %q", share(), s)
	}
	if s := setShare(gate.JustDoIt, once); share() != gate.Never { // one assertion is one change
		t.Fatalf("the assertion again: share is %q after %q", share(), s)
	}
	if es, _ := f.b.Diary(ctx, 2, nil); es[1].Actor != "owner" || es[1].Via != "web" || !strings.Contains(es[1].Summary, "Just do it") {
		t.Errorf("the loosening's diary line: %+v", es[1])
	}

	frozen := func() bool {
		t.Helper()
		on, err := f.st.Frozen(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return on
	}
	freeze := func(on string, v url.Values) string {
		t.Helper()
		v.Set("csrf", csrf)
		v.Set("on", on)
		res := f.post("/settings/freeze", v)
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("freeze %s: HTTP %d", on, res.StatusCode)
		}
		return note(t, res)
	}
	if s := freeze("1", url.Values{}); !frozen() {
		t.Fatalf("a freeze needs no passkey: %q", s)
	}
	for name, v := range map[string]url.Values{
		"no assertion":         {},
		"made for a switch":    f.withPasskeyFor(url.Values{}, csrf, "switch", "share=just-do-it"),
		"made for the brain":   f.withPasskey(url.Values{}, csrf, "brain-set"),
		"a forged credential":  {"ceremony": {"x"}, "credential": {"{}"}},
		"a ceremony, no proof": {"ceremony": {"x"}},
	} {
		s := freeze("0", v)
		if !frozen() {
			t.Fatalf("%s unfroze the box: %q", name, s)
		}
		if name == "no assertion" && s != "Unfreezing the box needs your passkey; it stays frozen." {
			t.Errorf("%s: %q", name, s)
		}
	}
	if s := freeze("0", f.withPasskey(url.Values{}, csrf, "unfreeze")); frozen() {
		t.Fatalf("with the passkey: still frozen after %q", s)
	}
}

// Nor can it through Undo: an undo of the owner's tightening (by its id, or all the owner's entries since
// a time) would put the looser switch back with no passkey. The switches are set again, never undone.
func TestUndoNeverLoosensASwitch(t *testing.T) {
	f := newImportFx(t, 1<<20)
	csrf := f.signedIn()
	ctx := context.Background()
	for _, sw := range []string{gate.Change, gate.Share} {
		if _, err := f.g.SetSwitch(ctx, gate.By{Via: "web"}, sw, gate.Never); err != nil {
			t.Fatal(err)
		}
	}
	es, _ := f.b.Diary(ctx, 1, nil)
	if es[0].Op != "switch" {
		t.Fatalf("the newest entry is %+v", es[0])
	}
	res := f.post("/undo", url.Values{"csrf": {csrf}, "entry": {es[0].ID}})
	res.Body.Close()
	if s := note(t, res); !strings.Contains(s, "set again, not undone") {
		t.Errorf("undo of the tightening said %q", s)
	}
	res = f.post("/undo/since", url.Values{"csrf": {csrf}, "who": {"owner"}, "since": {"2000-01-01T00:00"}})
	res.Body.Close()
	if s := note(t, res); !strings.HasPrefix(s, "Undid 0 changes by owner since") { // it ran, and passed over the switches
		t.Errorf("undo since said %q", s)
	}
	sw, err := f.g.Switches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sw.Of(gate.Change) != gate.Never || sw.Of(gate.Share) != gate.Never {
		t.Fatalf("after the undos, change is %q and share %q", sw.Of(gate.Change), sw.Of(gate.Share))
	}
}
