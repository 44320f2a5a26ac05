package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/gate"
	memnote "github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/page"
)

var claudeAsker = gate.Asker{Connection: "Claude", Via: "mcp", Host: "claude.ai", Conn: "k-claude"}

// install puts a page on the box as an assistant would: proposed, then approved by the local owner.
func install(t *testing.T, f *fx, slug, html string, read ...string) {
	t.Helper()
	ctx := context.Background()
	p, err := f.a.Builds.ProposePage(ctx, builds.PageInput{Name: strings.ToUpper(slug[:1]) + slug[1:], Own: slug, What: "A page.", Read: read, HTML: html}, claudeAsker)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.g.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
		t.Fatal(err)
	}
}

var tokenRe = regexp.MustCompile(`"token":"([A-Za-z0-9_-]+)"`)

// served fetches a page with the client's cookies and returns its response, body and token.
func (f *fx) served(c *http.Client, slug string) (*http.Response, string, string) {
	f.t.Helper()
	res, err := c.Get(f.base + "/s/" + slug + "/")
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	tok := ""
	if m := tokenRe.FindStringSubmatch(string(body)); m != nil {
		tok = m[1]
	}
	return res, string(body), tok
}

// bridge calls a page's route as its frame would: origin null, the token header, no cookies.
func (f *fx) bridge(method, slug, route, token, body string) (int, map[string]any, http.Header) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.base+"/api/sections/"+slug+"/"+route, strings.NewReader(body))
	req.Header.Set("Origin", "null")
	if token != "" {
		req.Header.Set("x-section-token", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string]any{}
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, res.Header
}

func readGarden(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../builds/testdata/garden.html")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A page is served to the owner's signed-in browser only, with exactly the sandbox headers and its
// bridge first; anyone else gets 401.
func TestPageServedBoxed(t *testing.T) {
	f := newFx(t)
	install(t, f, "garden", readGarden(t))
	if res, _, _ := f.served(newClient(), "garden"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a browser that is not signed in got %d", res.StatusCode)
	}
	f.signedIn()
	res, body, tok := f.served(f.c, "garden")
	if res.StatusCode != 200 || tok == "" {
		t.Fatalf("served: %d %.300s", res.StatusCode, body)
	}
	want, _ := page.Headers(f.base)
	for k := range want {
		if got := res.Header.Get(k); got != want.Get(k) {
			t.Errorf("%s: %q, want %q", k, got, want.Get(k))
		}
	}
	if res.Header.Get("X-Frame-Options") != "" {
		t.Error("the page's frame is refused by X-Frame-Options")
	}
	if !strings.Contains(body, "<title>Garden</title>") || strings.Index(body, "<script>") > strings.Index(body, "<title>") {
		t.Errorf("the bridge is not the first thing in <head>: %.200s", body)
	}
	// Opened as a tab of its own, the page is shown in its holder instead (whose frame-src keeps it on
	// the box); in a frame, it is served.
	for dest, want := range map[string]int{"document": http.StatusSeeOther, "iframe": http.StatusOK} {
		req, _ := http.NewRequest("GET", f.base+"/s/garden/", nil)
		req.Header.Set("Sec-Fetch-Dest", dest)
		nav := *f.c
		nav.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		res, err := nav.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want || (want == http.StatusSeeOther && res.Header.Get("Location") != "/pages/garden") {
			t.Errorf("Sec-Fetch-Dest %s: %d %q", dest, res.StatusCode, res.Header.Get("Location"))
		}
	}
	// The box's own screens still refuse to be framed.
	_, _ = f.get(f.c, "/today")
	r2, _ := f.c.Get(f.base + "/pages/garden")
	if r2.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(r2.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("the holder page can be framed: %v", r2.Header)
	}
	r2.Body.Close()
}

// The bridge answers by the page's token alone, keeps a page to its own, and refuses as documented.
func TestBridgeRoutes(t *testing.T) {
	ctx := context.Background()
	f := newFx(t)
	// The pages first: a page's own map may not exist before it (TestPageMayNotOwnTheOwnersMap).
	install(t, f, "garden", readGarden(t))
	install(t, f, "probe", "<p>probe</p>")
	// The garden's own map lists one of its own notes and one of the owner's; moc-people is not given to it.
	mp, _ := memnote.AddEntry(memnote.NewMap("Garden"), memnote.MapEntry{Target: "topic-tomatoes", Hook: "by the fence"})
	mp, _ = memnote.AddEntry(mp, memnote.MapEntry{Target: "/_content/pages/garden/beds", Hook: "the beds"})
	mp, _ = memnote.AddEntry(mp, memnote.MapEntry{Target: "entity-wren", Hook: "a visitor"}) // names the people's map
	people, _ := memnote.AddEntry(memnote.NewMap("People"), memnote.MapEntry{Target: "entity-leo", Hook: "son"})
	if _, err := f.b.Do(ctx, box.Change{Actor: ownerActorFor(), Op: "edit", Summary: "maps", Apply: func(tx *box.Tx) error {
		for p, d := range map[string][]byte{
			"/_content/memory/maps/moc-garden.md":      mp,
			"/_content/memory/maps/moc-people.md":      people,
			"/_content/memory/notes/topic-tomatoes.md": memnote.NewNote("topic", "Tomatoes", nil, []string{"moc-garden"}),
			"/_content/pages/garden/beds.md":           memnote.NewNote("topic", "Beds", nil, []string{"moc-garden"}),
			"/_content/memory/notes/entity-leo.md":     memnote.NewNote("person", "Leo", nil, []string{"moc-people"}),
			// Names the garden's map first, but the map does not list it: the page may not read it.
			"/_content/memory/notes/entity-wren.md": append(memnote.NewNote("topic", "Wren", nil, []string{"moc-people"}), "\nNests in the hedge.\n"...),
			"/_content/memory/notes/entity-bank.md": append(memnote.NewNote("topic", "Bank", nil, []string{"moc-garden"}), "\nThe vault code is marigold.\n"...),
		} {
			if err := tx.Write(p, d); err != nil {
				return err
			}
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	f.signedIn()
	_, _, tok := f.served(f.c, "garden")
	_, _, probeTok := f.served(f.c, "probe")

	// CORS for an opaque origin, never with credentials.
	st, _, h := f.bridge("OPTIONS", "garden", "memory/map", "", "")
	if st != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "null" || h.Get("Access-Control-Allow-Credentials") != "" ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "x-section-token") {
		t.Fatalf("preflight: %d %v", st, h)
	}
	st, out, h := f.bridge("GET", "garden", "memory/map", tok, "")
	if st != 200 || h.Get("Access-Control-Allow-Origin") != "null" || toJSON(out) != `{"maps":[{"name":"moc-garden","notes":[{"description":"the beds","name":"/_content/pages/garden/beds"},{"description":"a visitor","name":"entity-wren"},{"description":"by the fence","name":"topic-tomatoes"}],"own":true}]}` {
		t.Fatalf("map: %d %v", st, out)
	}
	if st, out, _ := f.bridge("GET", "garden", "memory/note?id=topic-tomatoes", tok, ""); st != 200 || out["description"] != "by the fence" || !strings.Contains(out["text"].(string), "# Tomatoes") || strings.Contains(out["text"].(string), "type: topic") {
		t.Fatalf("a note of its map: %d %v", st, out)
	}
	if st, _, _ := f.bridge("GET", "garden", "memory/note?id=entity-leo", tok, ""); st != http.StatusForbidden {
		t.Errorf("a note of a map it was not given: %d", st)
	}
	// Search draws the line reading draws: a note its map does not list is not found, whatever map the
	// note names; one it lists is.
	if st, _, _ := f.bridge("GET", "garden", "memory/note?id=entity-bank", tok, ""); st != http.StatusForbidden {
		t.Errorf("a note its map does not list: %d", st)
	}
	if st, out, _ := f.bridge("GET", "garden", "memory/search?q=marigold", tok, ""); st != 200 || strings.Contains(toJSON(out), "marigold") {
		t.Errorf("search found a note its map does not list: %d %v", st, out)
	}
	for q, want := range map[string]string{"tomatoes": `"name":"topic-tomatoes"`, "beds": `"name":"/_content/pages/garden/beds"`, "hedge": `"name":"entity-wren"`} {
		if st, out, _ := f.bridge("GET", "garden", "memory/search?q="+q, tok, ""); st != 200 || !strings.Contains(toJSON(out), want) {
			t.Errorf("search of a note its map lists (%s): %d %v", q, st, out)
		}
	}
	// Edit: a note of its own map in its own folder, as the page, its frontmatter kept and marked as
	// written by others; the owner's note its map lists and another map's note are refused.
	if st, out, _ := f.bridge("POST", "garden", "memory/edit", tok, `{"id":"/_content/pages/garden/beds","text":"# Beds\n\nPlanted by the fence in May.\n"}`); st != 200 {
		t.Fatalf("edit: %d %v", st, out)
	}
	if n := readBox(t, f, "/_content/pages/garden/beds.md"); !strings.HasPrefix(n, "---\n") || !strings.Contains(n, "in May") || !strings.Contains(n, "\nsource: outside\n") {
		t.Fatalf("the edited note:\n%s", n)
	}
	if n, err := f.m.Read(ctx, "/_content/pages/garden/beds"); err != nil || !n.Outside {
		t.Errorf("the page's note is not served as outside: %+v %v", n, err)
	}
	tomatoes := readBox(t, f, "/_content/memory/notes/topic-tomatoes.md")
	for _, id := range []string{"topic-tomatoes", "entity-leo"} {
		if st, _, _ := f.bridge("POST", "garden", "memory/edit", tok, `{"id":"`+id+`","text":"x"}`); st != http.StatusForbidden {
			t.Errorf("an edit of the owner's note %s: %d", id, st)
		}
	}
	if n := readBox(t, f, "/_content/memory/notes/topic-tomatoes.md"); n != tomatoes {
		t.Errorf("the owner's note changed:\n%s", n)
	}
	// No token, the owner's cookie instead, or another page's token: 401.
	if st, _, _ := f.bridge("GET", "garden", "data", "", ""); st != http.StatusUnauthorized {
		t.Errorf("no token: %d", st)
	}
	req, _ := http.NewRequest("GET", f.base+"/api/sections/garden/data", nil)
	if res, _ := f.c.Do(req); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the owner's cookie alone: %d", res.StatusCode)
	}
	if st, _, _ := f.bridge("GET", "garden", "data", probeTok, ""); st != http.StatusUnauthorized {
		t.Errorf("a second page's token: %d", st)
	}
	// A note outside its maps: 403. Unknown keys: 400. Too big: 413. Unknown route: 404.
	remember(t, f.m, "owner", "Leo swims on Thursdays.")
	if st, out, _ := f.bridge("GET", "garden", "memory/note?id=MEMORY", tok, ""); st != http.StatusForbidden {
		t.Errorf("the router from a page: %d %v", st, out)
	}
	if st, _, _ := f.bridge("POST", "garden", "data", tok, `{"key":"a","value":1,"sha256":"x"}`); st != http.StatusBadRequest {
		t.Errorf("an unknown key: %d", st)
	}
	if st, _, _ := f.bridge("POST", "garden", "data", tok, `{"key":"a","value":"`+strings.Repeat("x", 70<<10)+`"}`); st != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over 64 KB: %d", st)
	}
	if st, _, _ := f.bridge("GET", "garden", "secrets", tok, ""); st != http.StatusNotFound {
		t.Errorf("an unknown route: %d", st)
	}
	// Its own data, and a remembered line written as the page, outside.
	if st, out, _ := f.bridge("POST", "garden", "data", tok, `{"key":"beds","value":{"north":"tomatoes"}}`); st != 200 {
		t.Fatalf("data set: %d %v", st, out)
	}
	if st, out, _ := f.bridge("GET", "garden", "data?key=beds", tok, ""); st != 200 || toJSON(out["value"]) != `{"north":"tomatoes"}` {
		t.Fatalf("data get: %d %v", st, out)
	}
	if st, out, _ := f.bridge("GET", "probe", "data", probeTok, ""); st != 200 || toJSON(out["data"]) != `{}` {
		t.Fatalf("another page's data reached the probe: %v", out)
	}
	st, out, _ = f.bridge("POST", "garden", "memory/remember", tok, `{"text":"Planted tomatoes by the fence."}`)
	if st != 200 || out["id"] == "" {
		t.Fatalf("remember: %d %v", st, out)
	}
	lines, _ := f.m.ForgetPreview(ctx, "tomatoes fence")
	if len(lines) != 1 {
		t.Fatalf("remembered lines: %v", lines)
	}
	if day := readBox(t, f, lines[0].Path); !strings.Contains(day, "page garden · page · outside · Planted tomatoes") {
		t.Errorf("the line is not the page's, outside:\n%s", day)
	}
	// The page's forget is a card it can't approve: the web UI refuses a request from its origin.
	st, out, _ = f.bridge("POST", "garden", "memory/forget", tok, `{"words":"tomatoes"}`)
	id, _ := out["card"].(string)
	if st != 200 || id == "" {
		t.Fatalf("forget: %d %v", st, out)
	}
	req, _ = http.NewRequest("POST", f.base+"/cards/"+id+"/approve", strings.NewReader("{}"))
	req.Header.Set("Origin", "null")
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	if res, _ := f.c.Do(req); res.StatusCode != http.StatusForbidden {
		t.Errorf("approve from a page's origin: %d", res.StatusCode)
	}
	if st, _, _ := f.bridge("POST", "garden", "cards/"+id+"/approve", tok, `{}`); st != http.StatusNotFound {
		t.Errorf("approve through the bridge: %d", st)
	}
	if c, err := f.g.Get(ctx, id); err != nil || c.Status != gate.StatusWaiting || c.FromOwner() {
		t.Fatalf("the page's card: %+v %v", c, err)
	}
	// Heartbeat turns it on; safe mode answers 423 (error still goes through).
	if st, out, _ := f.bridge("POST", "garden", "heartbeat", tok, `{"version":1}`); st != 200 || out["status"] != "on" {
		t.Fatalf("heartbeat: %d %v", st, out)
	}
	if err := f.a.Builds.SetSafeMode(ctx, ownerActorFor(), true); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := f.bridge("GET", "garden", "memory/map", tok, ""); st != http.StatusLocked {
		t.Errorf("safe mode: %d", st)
	}
	if res, _, _ := f.served(f.c, "garden"); res.StatusCode != http.StatusLocked {
		t.Errorf("the page in safe mode: %d", res.StatusCode)
	}
	if st, _, _ := f.bridge("POST", "garden", "error", tok, `{"version":1,"message":"x","where":""}`); st != 200 {
		t.Errorf("error in safe mode: %d", st)
	}
	f.a.Builds.SetSafeMode(ctx, ownerActorFor(), false)
	// Too many calls: 429.
	limited := false
	for i := 0; i < 60 && !limited; i++ {
		st, _, _ := f.bridge("GET", "garden", "data", tok, "")
		limited = st == http.StatusTooManyRequests
	}
	if !limited {
		t.Error("60 calls at once were never limited")
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func readBox(t *testing.T, f *fx, p string) string {
	t.Helper()
	data, err := os.ReadFile(f.a.Root + p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func ownerActorFor() box.Actor { return box.Actor{Who: "owner", Via: "web", Trust: "own"} }

// With "Change my box" at Ask me a page changes nothing on its own: remember, an edit of its own note and
// to-dos answer with a card waiting for the owner; approved, each runs as the page.
func TestBridgeWritesWaitAtAskMe(t *testing.T) {
	ctx := context.Background()
	f := newFx(t)
	install(t, f, "garden", readGarden(t))
	if _, err := f.b.Do(ctx, box.Change{Actor: ownerActorFor(), Op: "edit", Summary: "a page note", Apply: func(tx *box.Tx) error {
		mp, _ := memnote.AddEntry(memnote.NewMap("Garden"), memnote.MapEntry{Target: "/_content/pages/garden/beds", Hook: "the beds"})
		if err := tx.Write("/_content/memory/maps/moc-garden.md", mp); err != nil {
			return err
		}
		return tx.Write("/_content/pages/garden/beds.md", memnote.NewNote("topic", "Beds", nil, []string{"moc-garden"}))
	}}); err != nil {
		t.Fatal(err)
	}
	item, err := f.a.Todos.Add(ctx, ownerActorFor(), builds.TodoList("garden"), "Water the tomatoes")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.g.SetSwitch(ctx, gate.By{Via: "cli", Local: true}, gate.Change, gate.AskMe); err != nil {
		t.Fatal(err)
	}
	f.signedIn()
	_, _, tok := f.served(f.c, "garden")
	beds := readBox(t, f, "/_content/pages/garden/beds.md")
	var cards []string
	for _, c := range []struct{ route, body string }{
		{"memory/remember", `{"text":"Planted tomatoes by the fence."}`},
		{"todos/add", `{"text":"Buy stakes"}`},
		{"todos/done", `{"id":"` + item.ID + `"}`},
		{"memory/edit", `{"id":"/_content/pages/garden/beds","text":"# Beds\n\nStakes by the fence.\n"}`},
	} {
		st, out, _ := f.bridge("POST", "garden", c.route, tok, c.body)
		id, _ := out["card"].(string)
		if st != 200 || id == "" || !strings.Contains(fmt.Sprint(out["text"]), "Waiting for the owner") {
			t.Fatalf("%s at Ask me: %d %v", c.route, st, out)
		}
		cards = append(cards, id)
	}
	if lines, _ := f.m.ForgetPreview(ctx, "tomatoes fence"); len(lines) != 0 || readBox(t, f, "/_content/pages/garden/beds.md") != beds {
		t.Fatalf("a page wrote at Ask me: %v", lines)
	}
	if lists, _ := f.a.Todos.Lists(ctx); len(lists) != 1 || len(lists[0].Items) != 1 || lists[0].Items[0].Done {
		t.Fatalf("a page changed the to-dos at Ask me: %+v", lists)
	}
	if st, body := f.get(f.c, "/today"); st != 200 || !strings.Contains(body, "Stakes by the fence.") || !strings.Contains(body, "Sent by page garden") {
		t.Fatalf("Today does not show the edit card's text and sender: %d", st)
	}
	for _, id := range cards {
		if _, err := f.g.Approve(ctx, id, gate.By{Via: "cli", Local: true}); err != nil {
			t.Fatalf("approve: %v", err)
		}
	}
	lines, _ := f.m.ForgetPreview(ctx, "tomatoes fence")
	if len(lines) != 1 || !strings.Contains(readBox(t, f, lines[0].Path), "page garden · page · outside · Planted tomatoes") {
		t.Fatalf("the approved line is not the page's: %v", lines)
	}
	if lists, _ := f.a.Todos.Lists(ctx); len(lists) != 1 || len(lists[0].Items) != 2 || !lists[0].Items[0].Done {
		t.Fatalf("the approved to-dos: %+v", lists)
	}
	if n := readBox(t, f, "/_content/pages/garden/beds.md"); !strings.Contains(n, "Stakes by the fence.") || !strings.Contains(n, "\nsource: outside\n") {
		t.Fatalf("the approved edit:\n%s", n)
	}
	if es, _ := f.b.Diary(ctx, 20, func(e diary.Entry) bool { return e.Op == "edit" && e.Trust == "outside" }); len(es) != 1 || es[0].Actor != "page garden" {
		t.Fatalf("the approved edit is not the page's: %+v", es)
	}
}

// A page sees and changes only its own to-do list, and learns nothing of the notes outside its maps:
// the owner's to-dos are not listed and cannot be ticked off (by id or by text), and opening a note it
// was not given is one refusal whether the note exists or not.
func TestPageKeepsToItsOwnToDosAndNotes(t *testing.T) {
	ctx := context.Background()
	f := newFx(t)
	install(t, f, "garden", readGarden(t))
	mp, _ := memnote.AddEntry(memnote.NewMap("Garden"), memnote.MapEntry{Target: "topic-tomatoes", Hook: "by the fence"})
	if _, err := f.b.Do(ctx, box.Change{Actor: ownerActorFor(), Op: "edit", Summary: "notes", Apply: func(tx *box.Tx) error {
		for p, d := range map[string][]byte{
			"/_content/memory/maps/moc-garden.md":      mp,
			"/_content/memory/notes/topic-tomatoes.md": memnote.NewNote("topic", "Tomatoes", nil, []string{"moc-garden"}),
			"/_content/memory/notes/entity-leo.md":     memnote.NewNote("person", "Leo", nil, nil),
		} {
			if err := tx.Write(p, d); err != nil {
				return err
			}
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	owners, err := f.a.Todos.Add(ctx, ownerActorFor(), "", "Call the lawyer about custody")
	if err != nil {
		t.Fatal(err)
	}
	f.signedIn()
	_, _, tok := f.served(f.c, "garden")
	if st, out, _ := f.bridge("GET", "garden", "todos", tok, ""); st != 200 || strings.Contains(toJSON(out), "lawyer") {
		t.Fatalf("the page sees the owner's to-dos: %d %v", st, out)
	}
	for _, ref := range []string{owners.ID, "Call the lawyer about custody"} {
		if st, out, _ := f.bridge("POST", "garden", "todos/done", tok, `{"id":"`+ref+`"}`); st != http.StatusNotFound {
			t.Errorf("the page ticked off the owner's to-do by %q: %d %v", ref, st, out)
		}
	}
	st, out, _ := f.bridge("POST", "garden", "todos/add", tok, `{"text":"Buy stakes"}`)
	if st != 200 {
		t.Fatalf("add: %d %v", st, out)
	}
	if st, out, _ := f.bridge("POST", "garden", "todos/done", tok, `{"id":"`+fmt.Sprint(out["id"])+`"}`); st != 200 {
		t.Fatalf("done on its own list: %d %v", st, out)
	}
	lists, _ := f.a.Todos.Lists(ctx)
	if len(lists) != 2 || lists[0].Name != "page-garden" || !lists[0].Items[0].Done || lists[1].Name != "todo" || lists[1].Items[0].Done {
		t.Fatalf("the lists: %+v", lists)
	}
	if st, out, _ := f.bridge("GET", "garden", "todos", tok, ""); st != 200 || !strings.Contains(toJSON(out), "Buy stakes") {
		t.Fatalf("the page's own list: %d %v", st, out)
	}
	var refusals []string
	for _, name := range []string{"entity-leo", "entity-nobody"} {
		st, out, _ := f.bridge("POST", "garden", "ui/open", tok, `{"target":"note:`+name+`"}`)
		if st != http.StatusForbidden {
			t.Errorf("opening %s: %d %v", name, st, out)
		}
		refusals = append(refusals, strings.Replace(fmt.Sprint(out["error"]), name, "NAME", 1))
	}
	if refusals[0] != refusals[1] {
		t.Errorf("the refusals tell an existing note from a missing one: %q", refusals)
	}
	if st, out, _ := f.bridge("POST", "garden", "ui/open", tok, `{"target":"note:topic-tomatoes"}`); st != 200 || out["url"] != "/pages/garden/note?name=topic-tomatoes" {
		t.Errorf("opening a note of its map: %d %v", st, out)
	}
	// The holder follows a box:open to the page's note route, which the page cannot skip by posting the
	// message itself: it opens a note only when that page may read it.
	for name, want := range map[string]string{"topic-tomatoes": "/memory/note?name=topic-tomatoes", "entity-leo": "/pages/garden?", "entity-nobody": "/pages/garden?"} {
		res, err := f.c.Get(f.base + "/pages/garden/note?name=" + name)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if to := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, want) {
			t.Errorf("the garden's note route for %s: %d to %q, want %q", name, res.StatusCode, to, want)
		}
	}
}
