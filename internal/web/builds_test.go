package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/gate"
)

// Settings → Things I built: the owner's off, on, undo and remove, and safe mode, whose off needs a
// passkey assertion made for it.
func TestThingsIBuilt(t *testing.T) {
	ctx := context.Background()
	f := newFx(t)
	install(t, f, "garden", readGarden(t))
	p, err := f.a.Builds.UpdatePage(ctx, builds.UpdateInput{Section: "garden", HTML: "<p>two</p>", What: "Two."}, claudeAsker)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.g.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.a.Builds.SetData(ctx, "garden", "beds", json.RawMessage(`3`)); err != nil {
		t.Fatal(err)
	}
	csrf := f.signedIn()
	if st, body := f.get(f.c, "/settings/builds"); st != 200 || !strings.Contains(body, "Garden") || !strings.Contains(body, "v2: Two.") || !strings.Contains(body, "written by Claude") {
		t.Fatalf("Things I built: %d\n%.600s", st, body)
	}
	act := func(path string, v url.Values) *http.Response {
		t.Helper()
		v.Set("csrf", csrf)
		res := f.form(f.c, path, v)
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
		return res
	}
	page := func() builds.Build {
		t.Helper()
		b, err := f.a.Builds.Page(ctx, "garden")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	act("/settings/builds/page:garden/off", url.Values{})
	if page().Status != builds.StatusOff {
		t.Fatal("off")
	}
	if res, _, _ := f.served(f.c, "garden"); res.StatusCode != http.StatusNotFound {
		t.Errorf("an off page is served: %d", res.StatusCode)
	}
	act("/settings/builds/page:garden/on", url.Values{})
	act("/settings/builds/page:garden/undo", url.Values{"version": {"1"}})
	if b := page(); b.Version != 1 || b.Status != builds.StatusOn {
		t.Fatalf("undo: %+v", b)
	}

	// Safe mode: on with a tap; off only with the passkey.
	act("/settings/safe-mode", url.Values{"on": {"1"}})
	if !f.a.Builds.SafeMode(ctx) {
		t.Fatal("safe mode did not turn on")
	}
	act("/settings/safe-mode", url.Values{"on": {"0"}})
	if !f.a.Builds.SafeMode(ctx) {
		t.Fatal("safe mode turned off without a passkey")
	}
	if st, out := f.call(f.c, "/settings/safe-mode", map[string]any{}, csrf); st == 200 || !f.a.Builds.SafeMode(ctx) {
		t.Fatalf("safe mode off with no assertion: %d %v", st, out)
	}
	if st, out := f.call(f.c, "/settings/safe-mode", f.assert(csrf, "safe-mode-off", ""), csrf); st != 200 || f.a.Builds.SafeMode(ctx) {
		t.Fatalf("safe mode off with the passkey: %d %v", st, out)
	}

	// Remove: the page goes; its data waits on a Delete for good card.
	act("/settings/builds/page:garden/remove", url.Values{})
	if _, err := f.a.Builds.Page(ctx, "garden"); err == nil {
		t.Fatal("the page is still there")
	}
	w, _ := f.g.Waiting(ctx)
	if len(w) != 1 || w[0].Kind != "delete" || !w[0].FromOwner() {
		t.Fatalf("cards after remove: %+v", w)
	}
	if _, body := f.get(f.c, "/today"); !strings.Contains(body, "The notes and data of the removed page Garden") {
		t.Errorf("Today does not show the Delete for good card")
	}
}

// A look applies to the UI's screens but never to Today, Settings or sign-in, and ?plain=1 removes it;
// a layout sends / to its home and orders the tabs.
func TestLookAndLayout(t *testing.T) {
	ctx := context.Background()
	f := newFx(t)
	install(t, f, "garden", readGarden(t))
	for _, prop := range []func() (builds.Proposal, error){
		func() (builds.Proposal, error) {
			return f.a.Builds.ProposeLook(ctx, builds.LookInput{Name: "Plum", What: "Plum headings.", CSS: "h1 { color: #7a1f5c; }"}, claudeAsker)
		},
		func() (builds.Proposal, error) {
			return f.a.Builds.ProposeLayout(ctx, builds.LayoutInput{What: "Garden first", Layout: json.RawMessage(`{"items":["page:garden","today","settings"],"home":"page:garden","menu":"hamburger"}`)}, claudeAsker)
		},
	} {
		p, err := prop()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.g.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
			t.Fatal(err)
		}
	}
	f.signedIn()
	for path, want := range map[string]bool{"/memory": true, "/memory?plain=1": false, "/today": false, "/settings": false, "/settings/builds": false} {
		if _, body := f.get(f.c, path); strings.Contains(body, `href="/look.css`) != want {
			t.Errorf("%s: the look applied is %v, want %v", path, !want, want)
		}
	}
	if _, css := f.get(f.c, "/look.css"); css != "h1 { color: #7a1f5c; }" {
		t.Errorf("look.css: %q", css)
	}
	res, _ := f.c.Get(f.base + "/")
	if loc := res.Header.Get("Location"); loc != "/pages/garden" {
		t.Errorf("home: %q", loc)
	}
	_, body := f.get(f.c, "/memory")
	if !strings.Contains(body, `<details class="menu">`) || strings.Index(body, `data-tab="page:garden"`) > strings.Index(body, `data-tab="today"`) || strings.Contains(body, `data-tab="memory"`) {
		t.Errorf("the layout's tabs:\n%.2000s", body)
	}
	// Safe mode: the default tabs and no look.
	f.a.Builds.SetSafeMode(ctx, ownerActorFor(), true)
	if _, body := f.get(f.c, "/memory"); strings.Contains(body, "look.css") || !strings.Contains(body, `data-tab="memory"`) {
		t.Error("safe mode kept the look or the layout")
	}
}
