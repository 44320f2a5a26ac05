package builds_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/passkeytest"
)

func newApp(t testing.TB) *app.App {
	t.Helper()
	a, err := app.Init(context.Background(), t.TempDir(), nil, "true", app.Options{Now: passkeytest.NewClock().Now, VaultDir: filepath.Join(t.TempDir(), "vault")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func garden(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile("testdata/garden.html")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var ownerActor = box.Actor{Who: "owner", Via: "cli", Trust: "own"}

var claude = gate.Asker{Connection: "Claude", Via: "mcp", Host: "claude.ai", Conn: "k-claude"}

// A page from an assistant is a card; approved, it is installed pending; its heartbeat turns it on; an
// update that fails its first load puts the previous version back.
func TestPageLifecycle(t *testing.T) {
	ctx := context.Background()
	a := newApp(t)
	r := a.Builds
	p, err := r.ProposePage(ctx, builds.PageInput{Name: "Garden", Emoji: "🌱", Own: "garden", What: "What I planted where.", HTML: garden(t)}, claude)
	if err != nil {
		t.Fatal(err)
	}
	if p.Card.ID == "" || p.Card.Kind != "new-page" || p.Address != "/s/garden/" {
		t.Fatalf("proposal: %+v", p)
	}
	if _, err := r.Page(ctx, "garden"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("a page is installed before the owner said yes: %v", err)
	}
	if _, err := a.Gate.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
		t.Fatal(err)
	}
	b, err := r.Page(ctx, "garden")
	if err != nil || b.Status != builds.StatusPending || b.Version != 1 || b.Versions[0].By.Who != "Claude" {
		t.Fatalf("installed: %+v %v", b, err)
	}
	src, err := r.Source(b, 1)
	if err != nil || string(src) != garden(t) {
		t.Fatalf("source: %v", err)
	}
	if st, err := r.Heartbeat(ctx, "garden", 1); err != nil || st != builds.StatusOn {
		t.Fatalf("heartbeat: %s %v", st, err)
	}
	// An update: a card; approved, pending; an error on its first load puts version 1 back.
	u, err := r.UpdatePage(ctx, builds.UpdateInput{Section: "garden", HTML: "<p>v2</p><script>throw new Error('x')</script>", What: "Adds a watering list."}, claude)
	if err != nil || u.Card.Kind != "change-page" {
		t.Fatalf("update: %+v %v", u, err)
	}
	if _, err := a.Gate.Approve(ctx, u.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ = r.Page(ctx, "garden"); b.Version != 2 || b.Status != builds.StatusPending || b.Previous != 1 {
		t.Fatalf("after the update: %+v", b)
	}
	if st, err := r.Failed(ctx, "garden", 2, "x is not defined, and the owner's note says Leo"); err != nil || st != builds.StatusOn {
		t.Fatalf("failed: %s %v", st, err)
	}
	b, _ = r.Page(ctx, "garden")
	if b.Version != 1 || b.Status != builds.StatusOn || !b.Versions[1].Failed {
		t.Fatalf("rolled back: %+v", b)
	}
	s, err := r.StatusFor(ctx, u.Card.ID, "k-claude")
	if err != nil || s.Card != gate.StatusApproved || s.Section == nil || s.Section.Problem == "" || strings.Contains(s.Section.Problem, "Leo") {
		t.Fatalf("status: %+v %v", s, err)
	}
	// The owner's side: off, on, undo to version 2 (it failed, so it waits for a clean load), remove.
	if b, err = r.SetOn(ctx, ownerActor, "garden", false); err != nil || b.Status != builds.StatusOff {
		t.Fatalf("off: %+v %v", b, err)
	}
	if b, err = r.SetOn(ctx, ownerActor, "page:garden", true); err != nil || b.Status != builds.StatusOn {
		t.Fatalf("on: %+v %v", b, err)
	}
	if b, err = r.Undo(ctx, ownerActor, "garden", 2); err != nil || b.Version != 2 || b.Status != builds.StatusPending {
		t.Fatalf("undo to 2: %+v %v", b, err)
	}
	if err := r.SetData(ctx, "garden", "beds", json.RawMessage(`{"north":"tomatoes"}`)); err != nil {
		t.Fatal(err)
	}
	rm, err := r.Remove(ctx, ownerActor, "garden", gate.Asker{Owner: true, Via: "cli"})
	if err != nil || rm.Card == nil || rm.Card.Kind != "delete" {
		t.Fatalf("remove: %+v %v", rm, err)
	}
	if _, err := r.Page(ctx, "garden"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("removed page still there: %v", err)
	}
	if d, _ := r.Data(ctx, "garden"); len(d) != 1 {
		t.Fatal("removing a page deleted its data before the Delete for good card")
	}
	// The delete checks each file again inside its own change: one written since the card's check (here,
	// a card listing other bytes) stops it whole.
	listed, _ := rm.Card.Action.Payload.(map[string]any)["files"].([]any)
	var stale []any
	for _, f := range listed {
		stale = append(stale, map[string]any{"path": f.(map[string]any)["path"], "sha256": strings.Repeat("0", 64)})
	}
	eff, err := r.NotesOp().Run(ctx, *rm.Card, gate.Action{Kind: "delete", Switch: gate.Delete, Payload: map[string]any{"op": builds.OpPageNotes, "slug": "garden", "name": "Garden", "files": stale}})
	if err != nil || len(stale) == 0 {
		t.Fatalf("run: %v (%d files listed)", err, len(stale))
	}
	if _, err := a.Box.Do(ctx, *eff.Change); !errs.Is(err, errs.Conflict) {
		t.Fatalf("a delete of files that changed since the card: %v", err)
	}
	if d, _ := r.Data(ctx, "garden"); len(d) != 1 {
		t.Fatal("a delete of changed files went ahead")
	}
	if _, err := a.Gate.Approve(ctx, rm.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
		t.Fatal(err)
	}
	if d, _ := r.Data(ctx, "garden"); len(d) != 0 {
		t.Fatal("Delete for good left the page's data")
	}
}

// A first version that throws before its heartbeat goes off (broken); switched on again, it waits for a
// clean load; a heartbeat for another version changes nothing.
func TestFirstVersionThatFailsGoesOff(t *testing.T) {
	ctx := context.Background()
	a := newApp(t)
	p, err := a.Builds.ProposePage(ctx, builds.PageInput{Name: "Garden", Own: "garden", What: "Plants.", HTML: "<p>x</p>"}, claude)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Gate.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.Builds.Heartbeat(ctx, "garden", 2); st != builds.StatusPending {
		t.Fatalf("a heartbeat for a version that is not served: %s", st)
	}
	// The page's own words, kept in build.json (in git), never a secret in them.
	if st, err := a.Builds.Failed(ctx, "garden", 1, "boom: my bank password is Tr0ub4dor&3xyz"); err != nil || st != builds.StatusBroken {
		t.Fatalf("failed: %s %v", st, err)
	}
	if out, err := exec.Command("git", "-C", a.Root, "log", "-p", "--all").CombinedOutput(); err != nil || strings.Contains(string(out), "Tr0ub4dor") || !strings.Contains(string(out), "was not kept") {
		t.Fatalf("the page's message in git: %v\n%s", err, out)
	}
	if s, _ := a.Builds.StatusFor(ctx, p.Card.ID, "k-claude"); s.Section == nil || s.Section.Status != builds.StatusBroken || strings.Contains(s.Section.Problem, "boom") {
		t.Fatalf("status: %+v", s)
	}
	if st, _ := a.Builds.Heartbeat(ctx, "garden", 1); st != builds.StatusBroken {
		t.Fatalf("a broken page came on by a late heartbeat: %s", st)
	}
	if b, err := a.Builds.SetOn(ctx, ownerActor, "garden", true); err != nil || b.Status != builds.StatusPending {
		t.Fatalf("on again: %+v %v", b, err)
	}
	if st, _ := a.Builds.Heartbeat(ctx, "garden", 1); st != builds.StatusOn {
		t.Fatalf("heartbeat after on: %s", st)
	}
}

// Bytes changed between the card and the yes install nothing.
func TestChangedBytesInstallNothing(t *testing.T) {
	ctx := context.Background()
	a := newApp(t)
	p, err := a.Builds.ProposePage(ctx, builds.PageInput{Name: "Garden", Own: "garden", What: "Plants.", HTML: garden(t)}, claude)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(a.Root, filepath.FromSlash(p.Card.Path))
	data, _ := os.ReadFile(path)
	changed := strings.Replace(string(data), "Planted tomatoes", "Planted potatoes", 1)
	if changed == string(data) {
		t.Fatal("the card does not hold the page")
	}
	os.WriteFile(path, []byte(changed), 0o644)
	if _, err := a.Gate.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); !errs.Is(err, errs.Conflict) {
		t.Fatalf("approve of changed bytes: %v", err)
	}
	if _, err := a.Builds.Page(ctx, "garden"); !errs.Is(err, errs.NotFound) {
		t.Fatal("changed bytes were installed")
	}
}

// Refusals before any card: the checks, a page that exists, Never.
func TestRefusedBeforeACard(t *testing.T) {
	ctx := context.Background()
	a := newApp(t)
	for _, tc := range []struct {
		in   builds.PageInput
		want string
	}{
		{builds.PageInput{Name: "G", Own: "garden", What: "x", HTML: `<script src="https://cdn.example.com/x.js"></script>`}, "cdn.example.com"},
		{builds.PageInput{Name: "G", Own: "Garden!", What: "x", HTML: "<p>x</p>"}, "Not proposed: own"},
		{builds.PageInput{Name: "", Own: "garden", What: "x", HTML: "<p>x</p>"}, "name is empty"},
		{builds.PageInput{Name: "G", Own: "garden", What: "x", Uses: []string{"bus"}, HTML: "<p>x</p>"}, "isn't installed on this box"},
		{builds.PageInput{Name: "G", Own: "garden", What: "x", Read: []string{"../x"}, HTML: "<p>x</p>"}, "not a map"},
	} {
		_, err := a.Builds.ProposePage(ctx, tc.in, claude)
		if err == nil || !strings.HasPrefix(errs.Sentence(err), "Not proposed: ") || !strings.Contains(errs.Sentence(err), tc.want) {
			t.Errorf("%+v: %v", tc.in, err)
		}
	}
	if w, _ := a.Gate.Waiting(ctx); len(w) != 0 {
		t.Fatalf("a refusal made %d cards", len(w))
	}
	if _, err := a.Gate.SetSwitch(ctx, gate.By{Via: "cli", Local: true}, gate.Change, gate.Never); err != nil {
		t.Fatal(err)
	}
	_, err := a.Builds.ProposePage(ctx, builds.PageInput{Name: "G", Own: "garden", What: "x", HTML: "<p>x</p>"}, claude)
	if err == nil || !strings.Contains(errs.Sentence(err), "Never") {
		t.Fatalf("at Never: %v", err)
	}
}

// A page never owns the owner's map: a slug whose map is a default one (moc-people) or already in the
// memory is refused before any card, and a card made before the owner's map appeared installs nothing.
func TestPageMayNotOwnTheOwnersMap(t *testing.T) {
	ctx := context.Background()
	a := newApp(t)
	for _, own := range []string{"people", "orgs", "places", "topics"} {
		_, err := a.Builds.ProposePage(ctx, builds.PageInput{Name: "Directory", Own: own, What: "A people directory.", HTML: "<p>x</p>"}, claude)
		if err == nil || !strings.Contains(errs.Sentence(err), "moc-"+own+", which is one of the owner's own maps") {
			t.Errorf("own %q: %v", own, err)
		}
	}
	p, err := a.Builds.ProposePage(ctx, builds.PageInput{Name: "Garden", Own: "garden", What: "Plants.", HTML: "<p>x</p>"}, claude)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Box.Do(ctx, box.Change{Actor: ownerActor, Op: "edit", Summary: "a map", Apply: func(tx *box.Tx) error {
		return tx.Write("/_content/memory/maps/moc-garden.md", []byte("---\ntype: map\ntitle: Garden\n---\n# Garden\n- [[topic-roses]] — the owner's roses\n"))
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Gate.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); !errs.Is(err, errs.Conflict) {
		t.Fatalf("approve after the owner's map appeared: %v", err)
	}
	if _, err := a.Builds.Page(ctx, "garden"); !errs.Is(err, errs.NotFound) {
		t.Fatal("a page was installed over the owner's map")
	}
	_, err = a.Builds.ProposePage(ctx, builds.PageInput{Name: "Garden", Own: "garden", What: "Plants.", HTML: "<p>x</p>"}, claude)
	if err == nil || !strings.Contains(errs.Sentence(err), "moc-garden, which is already in the memory") {
		t.Fatalf("own garden with moc-garden there: %v", err)
	}
	if w, _ := a.Gate.Waiting(ctx); len(w) != 0 {
		t.Fatalf("a refused page left %d cards", len(w))
	}
}

// TestPageDataKeepsNoSecret: a page's store is in the tree and git and its key in a commit's message: a
// password or an API key, as a value, deep in one or as the key, is refused as remember refuses it, and
// nothing is written.
func TestPageDataKeepsNoSecret(t *testing.T) {
	ctx := context.Background()
	a := newApp(t)
	r := a.Builds
	p, err := r.ProposePage(ctx, builds.PageInput{Name: "Garden", Own: "garden", What: "What I planted where.", HTML: garden(t)}, claude)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Gate.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Heartbeat(ctx, "garden", 1); err != nil {
		t.Fatal(err)
	}
	const key = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	for _, c := range []struct{ key, value string }{
		{"note", `"my bank password is Tr0ub4dor&3xyz"`},
		{"beds", `{"north": ["tomatoes", {"code": "my bank password is Tr0ub4dor&3xyz"}]}`},
		{"beds", `{"` + key + `": 1}`},
		{key, `1`},
	} {
		err := r.SetData(ctx, "garden", c.key, json.RawMessage(c.value))
		if errs.KindOf(err) != errs.Invalid || !strings.Contains(errs.Sentence(err), "not saved") {
			t.Errorf("%s = %s: %v", c.key, c.value, err)
		}
	}
	if err := r.SetData(ctx, "garden", "beds", json.RawMessage(`{"north":"tomatoes"}`)); err != nil {
		t.Fatalf("a plain value: %v", err)
	}
	// What a program keeps is not a secret for looking random: ids, hashes, an image.
	for key, value := range map[string]string{
		"V1StGXR8_Z5jdHi6B-myT": `{"id": "Kx9pQ2mZ7vL4sR8tY3wN", "uuid": "123e4567-e89b-12d3-a456-426614174000"}`,
		"hashes":                `["da39a3ee5e6b4b0d3255bfef95601890afd80709", "d41d8cd98f00b204e9800998ecf8427e"]`,
		"photo":                 `"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="`,
	} {
		if err := r.SetData(ctx, "garden", key, json.RawMessage(value)); err != nil {
			t.Errorf("%s = %s was refused: %v", key, value, err)
		}
	}
	out, err := exec.Command("git", "-C", a.Root, "log", "-p", "--all").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "tomatoes") {
		t.Fatalf("the plain value is not in git; the test sees nothing")
	}
	for _, s := range []string{"Tr0ub4dor", "sk-ant-api03-AAAA"} {
		if strings.Contains(string(out), s) {
			t.Errorf("git holds %q", s)
		}
	}
}
