package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/validate"
)

var (
	own     = Actor{Who: "owner", Via: "cli", Trust: "own"}
	claude  = Actor{Who: "Claude", Via: "mcp", Host: "claude.ai", Trust: "outside"}
	fixedAt = time.Date(2026, 11, 29, 14, 3, 22, 0, time.UTC) // a UTC instant: the goldens hold its times, in any zone
)

// mustOpen makes a new box in a temp folder and opens its memory with a fixed clock.
func mustOpen(tb testing.TB, files map[string]string) *Memory {
	tb.Helper()
	dir := tb.TempDir()
	seed := map[string][]byte{layout.Router: []byte(note.RouterSkeleton)} // as box init writes it
	for p, s := range files {
		seed[p] = []byte(s)
	}
	b, err := box.Init(context.Background(), dir, box.InitOptions{HookBinary: "box", Files: seed})
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.Close(); err != nil {
		tb.Fatal(err)
	}
	return openAt(tb, dir, Options{}, func() time.Time { return fixedAt })
}

// openAt opens the memory of the box at dir as the composition root does: one box handle with the
// box's validation and the memory's options, on the clock now (nil: the wall clock).
func openAt(tb testing.TB, dir string, opts Options, now func() time.Time) *Memory {
	tb.Helper()
	b, err := box.OpenWith(dir, BoxOptions(box.Options{Validate: validate.New(dir, validate.Options{}).Writes, Now: now}))
	if err != nil {
		tb.Fatal(err)
	}
	m, err := New(context.Background(), b, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := errors.Join(m.Close(), b.Close()); err != nil {
			tb.Error(err)
		}
	})
	return m
}

func remember(tb testing.TB, m *Memory, a Actor, text string) RememberResult {
	tb.Helper()
	r, err := m.Remember(context.Background(), a, RememberInput{Text: text})
	if err != nil {
		tb.Fatalf("remember %q: %v", text, err)
	}
	return r
}

func read(tb testing.TB, m *Memory, p string) string {
	tb.Helper()
	data, err := os.ReadFile(m.host(p))
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

func hits(tb testing.TB, m *Memory, in SearchInput) []Hit {
	tb.Helper()
	res, err := m.Search(context.Background(), in)
	if err != nil {
		tb.Fatalf("search %q: %v", in.Words, err)
	}
	return res.Hits
}

func TestRememberRefusals(t *testing.T) {
	m := mustOpen(t, nil)
	for _, tc := range []struct {
		name, text string
		core       bool
		a          Actor
		want       string
	}{
		{"empty", "   ", false, own, "empty"},
		{"too long", strings.Repeat("word ", 200), false, own, "long"},
		{"several facts", "Leo swims. Ana runs. Bob sings.", false, own, "one"},
		{"api key", "the key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", false, own, "key"},
		{"private key", "-----BEGIN RSA PRIVATE KEY----- MIIEabc", false, own, "private key"},
		{"card", "my card is 4111 1111 1111 1111", false, own, "card"},
		{"password", "my password is hunter2", false, own, "password"},
		{"pin", "the PIN is 4821", false, own, "PIN"},
		{"outside core", "Lives in Lisbon.", true, claude, "core fact"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Remember(context.Background(), tc.a, RememberInput{Text: tc.text, Core: tc.core})
			if err == nil {
				t.Fatal("remembered; want a refusal")
			}
			if k := errs.KindOf(err); k != errs.Invalid && k != errs.Refused {
				t.Errorf("kind %v, want Invalid or Refused", k)
			}
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tc.want)) {
				t.Errorf("refusal %q does not say %q", err, tc.want)
			}
		})
	}
	if ents, _ := filepath.Glob(m.host(layout.InboxDir + "/*.md")); len(ents) > 0 {
		t.Errorf("a refusal wrote the inbox: %v", ents)
	}
}

func TestRememberIsSearchableAtOnce(t *testing.T) {
	m := mustOpen(t, nil)
	m.Search(context.Background(), SearchInput{Words: "warm"}) // reconcile first: later lines come only from the commit hook
	r := remember(t, m, claude, "Leo has swim practice Thursdays at 5:30.")
	if r.Path != "/_content/inbox/2026-11-29.md" || len(r.ID) != 8 || r.Entry == "" {
		t.Fatalf("result %+v", r)
	}
	day := read(t, m, r.Path)
	want := "- 14:03:22 · Claude (claude.ai) · mcp · outside · Leo has swim practice Thursdays at 5:30. ^" + r.ID + "\n"
	if !strings.HasSuffix(day, want) {
		t.Fatalf("day file:\n%s\nwant a last line %q", day, want)
	}
	hs := hits(t, m, SearchInput{Words: "leo swim"})
	if len(hs) != 1 || hs[0].Kind != KindInbox || hs[0].Who != "Claude (claude.ai)" || hs[0].Trust != "outside" || hs[0].Date != "2026-11-29" {
		t.Fatalf("hits %+v", hs)
	}
	if len(hits(t, m, SearchInput{Words: "leo swim", Trust: "own"})) != 0 {
		t.Error("the trust filter let an outside line through")
	}
	if len(hits(t, m, SearchInput{Words: "leo", Who: "Claude (claude.ai)"})) != 1 {
		t.Error("the who filter lost the line")
	}
	if len(hits(t, m, SearchInput{Words: "leo", Until: fixedAt.AddDate(0, 0, -1)})) != 0 {
		t.Error("until a day before still found the line")
	}
}

func TestRememberCore(t *testing.T) {
	m := mustOpen(t, nil)
	r, err := m.Remember(context.Background(), own, RememberInput{Text: "Lives in Lisbon.", Core: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(t, m, layout.Router), "- [core] Lives in Lisbon. ^"+r.ID+"\n") {
		t.Fatalf("router:\n%s", read(t, m, layout.Router))
	}
	hs := hits(t, m, SearchInput{Words: "lisbon", Kind: KindCore})
	if len(hs) != 1 || hs[0].Name != "MEMORY" {
		t.Fatalf("core hits %+v", hs)
	}
}

func TestSearchWordRules(t *testing.T) {
	m := mustOpen(t, nil)
	remember(t, m, own, "Leo has swim practice Thursdays at 5:30.")
	remember(t, m, own, "Ana swims in the sea every morning.")
	remember(t, m, own, "The dentist is on Rua Augusta.")
	for _, tc := range []struct {
		words string
		want  int
	}{
		{"leo", 1},
		{"swim", 2},                   // stemming: swims
		{"leo swim", 1},               // two words: both must match
		{"leo dentist", 0},            // two words, no line has both
		{"leo swim dentist", 1},       // three words: at least two must match
		{"leo swim thursdays sea", 2}, // four words: any two (Ana: swims, sea)
		{"it", 0},                     // stopwords alone match nothing
		{"\"swim practice\"", 1},
		{"dent*", 1},
	} {
		hs := hits(t, m, SearchInput{Words: tc.words})
		full := 0
		for i, h := range hs {
			if !h.Partial {
				full++
				if i > 0 && hs[i-1].Partial {
					t.Errorf("search %q: a match after a partial hit: %+v", tc.words, hs)
				}
			}
		}
		if full != tc.want {
			t.Errorf("search %q: %d matches, want %d (%+v)", tc.words, full, tc.want, hs)
		}
	}
}

// TestSearchPartial: when fewer than the limit match the rule, the list goes on with the lines that
// hold some of the words, marked partial, each with its snippet and its plain text.
func TestSearchPartial(t *testing.T) {
	m := mustOpen(t, nil)
	remember(t, m, own, "Leo has swim practice Thursdays at 5:30.")
	remember(t, m, own, "The dentist is on Rua Augusta.")
	remember(t, m, own, "Mia bakes bread on Sundays.")
	hs := hits(t, m, SearchInput{Words: "leo dentist"})
	if len(hs) != 2 || !hs[0].Partial || !hs[1].Partial {
		t.Fatalf("leo dentist: want the two lines, both partial: %+v", hs)
	}
	for _, h := range hs {
		if h.Text != strings.ReplaceAll(h.Snippet, "**", "") || !strings.Contains(h.Snippet, "**") {
			t.Errorf("snippet %q, text %q", h.Snippet, h.Text)
		}
	}
	hs = hits(t, m, SearchInput{Words: "leo swim dentist"})
	if len(hs) != 2 || hs[0].Partial || hs[0].Text != "Leo has swim practice Thursdays at 5:30." || !hs[1].Partial {
		t.Fatalf("leo swim dentist: the match, then the partial line: %+v", hs)
	}
	if hs := hits(t, m, SearchInput{Words: "leo swim dentist", Limit: 1}); len(hs) != 1 || hs[0].Partial {
		t.Fatalf("a full list has no partial hits: %+v", hs)
	}
	if hs := hits(t, m, SearchInput{Words: "leo zebra", Kind: KindNote}); len(hs) != 0 {
		t.Fatalf("filters hold for partial hits too: %+v", hs)
	}
}

func TestForget(t *testing.T) {
	m := mustOpen(t, map[string]string{
		"/_content/memory/notes/entity-leo.md": "---\ntype: note\nkind: person\ntitle: Leo\n---\n# Leo\n\n## Key facts\n- Leo has swim practice Thursdays. ^aaaa1111\n- Leo likes pizza.\n\n## Timeline\n- 2026-01-02 — Leo had swim practice Mondays. (replaced) ^bbbb2222\n",
	})
	ctx := context.Background()
	remember(t, m, own, "Leo's swim bag is blue.")
	remember(t, m, own, "Leonard swims too.")
	if _, err := m.Remember(ctx, own, RememberInput{Text: "Swim lessons for Leo cost 40 euros.", Core: true}); err != nil {
		t.Fatal(err)
	}
	before := read(t, m, "/_content/memory/notes/entity-leo.md")
	beforeRouter := read(t, m, layout.Router)

	for _, q := range []string{"it", "forget it", "that thing"} {
		res, err := m.Forget(ctx, own, ForgetInput{Words: q, Confirm: true})
		if err != nil || res.Removed != 0 || len(res.Matched) != 0 {
			t.Fatalf("forget %q: %+v %v; want nothing", q, res, err)
		}
	}
	res, err := m.Forget(ctx, own, ForgetInput{Words: "leo swim"})
	if err != nil {
		t.Fatal(err)
	}
	// whole words: "Leonard swims" is not "leo swim"; the note's two swim lines, the inbox line, the core fact
	if res.Removed != 4 || len(res.Matched) != 4 || res.NeedsConfirm {
		t.Fatalf("forget leo swim: %+v", res)
	}
	if len(hits(t, m, SearchInput{Words: "bag blue"})) != 0 {
		t.Error("a forgotten line is still found")
	}
	after := read(t, m, "/_content/memory/notes/entity-leo.md")
	if strings.Contains(after, "swim") || !strings.Contains(after, "Leo likes pizza.") {
		t.Fatalf("note after forget:\n%s", after)
	}
	trash := read(t, m, "/_bookkeeping/trash/2026-11-29.jsonl")
	if strings.Count(trash, "\n") != 4 || !strings.Contains(trash, "Leo's swim bag is blue.") {
		t.Fatalf("trash:\n%s", trash)
	}
	if _, err := m.Undo(ctx, own, res.Entry); err != nil {
		t.Fatal(err)
	}
	if got := read(t, m, "/_content/memory/notes/entity-leo.md"); got != before {
		t.Fatalf("undo did not restore the note byte for byte:\n%s", got)
	}
	if got := read(t, m, layout.Router); got != beforeRouter {
		t.Fatalf("undo did not restore the router:\n%s", got)
	}
	if len(hits(t, m, SearchInput{Words: "bag blue"})) != 1 {
		t.Error("an undone forget is not searchable again")
	}
}

func TestForgetNeedsConfirmPastFive(t *testing.T) {
	m := mustOpen(t, nil)
	ctx := context.Background()
	for _, d := range []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"} {
		remember(t, m, own, "Leo walks the dog on "+d+".")
	}
	res, err := m.Forget(ctx, own, ForgetInput{Words: "dog"})
	if err != nil || !res.NeedsConfirm || res.Removed != 0 || len(res.Matched) != 6 {
		t.Fatalf("forget dog: %+v %v", res, err)
	}
	if len(hits(t, m, SearchInput{Words: "dog", Limit: 20})) != 6 {
		t.Fatal("an unconfirmed forget removed lines")
	}
	res, err = m.Forget(ctx, own, ForgetInput{Words: "dog", Confirm: true})
	if err != nil || res.Removed != 6 {
		t.Fatalf("confirmed: %+v %v", res, err)
	}
}

func TestReadOverviewRecentUndo(t *testing.T) {
	m := mustOpen(t, map[string]string{
		"/_content/memory/notes/entity-leo.md":  "---\ntype: note\nkind: person\ntitle: Leo\ndescription: Son, 9, swims.\nsource: mixed\n---\n# Leo\n",
		"/_content/memory/maps/moc-people/a.md": "---\ntype: map\ntitle: People — A\n---\n# People — A\n\n- [[entity-ana]] — Ana\n",
	})
	ctx := context.Background()
	for name, want := range map[string]string{"entity-leo": "/_content/memory/notes/entity-leo.md", "MEMORY": layout.Router, "moc-people/a": "/_content/memory/maps/moc-people/a.md"} {
		n, err := m.Read(ctx, name)
		if err != nil || n.Path != want {
			t.Errorf("read %s: %+v %v", name, n, err)
		}
	}
	if n, _ := m.Read(ctx, "entity-leo"); !n.Outside || n.Title != "Leo" || n.Kind != KindNote {
		t.Errorf("a mixed note reads as %+v", n)
	}
	for _, bad := range []string{"../../etc/passwd", "entity-nobody", "/_config/switches"} {
		if _, err := m.Read(ctx, bad); err == nil {
			t.Errorf("read %q succeeded", bad)
		}
	}
	remember(t, m, own, "Leo has swim practice Thursdays.")
	o, err := m.Overview(ctx)
	if err != nil || len(o.Notes) != 1 || o.Notes[0].Hook != "Son, 9, swims." || o.Inbox != 1 || !strings.Contains(o.Router, "# Memory") {
		t.Fatalf("overview %+v %v", o, err)
	}
	r2 := remember(t, m, claude, "Ana likes tea.")
	items, err := m.Recent(ctx, 10)
	if err != nil || len(items) != 2 || items[0].Who != "Claude" || !strings.Contains(items[0].Summary, "Ana likes tea") {
		t.Fatalf("recent %+v %v", items, err)
	}
	u, err := m.Undo(ctx, own, "")
	if err != nil || u.UndoOf != r2.Entry {
		t.Fatalf("undo %+v %v, want undo of %s", u, err, r2.Entry)
	}
	if len(hits(t, m, SearchInput{Words: "tea"})) != 0 {
		t.Error("an undone line is still found")
	}
	if items, _ := m.Recent(ctx, 10); items[0].Op != "undo" {
		t.Errorf("undo is not in the memory log: %+v", items[0])
	}
}

func TestBrokenNoteStillSearchedAndNamed(t *testing.T) {
	m := mustOpen(t, nil)
	p := filepath.Join(m.root, "_content/memory/notes/entity-bob.md")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte("---\ntitle: Bob\nkind: [unclosed\n---\n# Bob\n\nBob builds kayaks.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(hits(t, m, SearchInput{Words: "kayaks"})) != 1 {
		t.Error("a note with broken frontmatter is not searched")
	}
	ps, err := m.Problems(context.Background())
	if err != nil || len(ps) != 1 || ps[0].Path != "/_content/memory/notes/entity-bob.md" {
		t.Fatalf("problems %+v %v", ps, err)
	}
	remember(t, m, own, "Bob sold a kayak.")
	res, err := m.Tidy(context.Background(), own)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) < 2 || !strings.Contains(strings.Join(res.Skipped, "\n"), "entity-bob") || res.Filed != 0 {
		t.Fatalf("tidy %+v", res)
	}
	if !strings.Contains(read(t, m, "/_content/inbox/2026-11-29.md"), "Bob sold a kayak.") {
		t.Error("a line naming a broken note left the inbox")
	}
}

func TestIndexRebuiltWhenCorruptOrMissing(t *testing.T) {
	m := mustOpen(t, nil)
	remember(t, m, own, "Leo has swim practice Thursdays.")
	root := m.root
	m.Close()
	for _, damage := range []func(p string){
		func(p string) { os.Remove(p); os.Remove(p + "-wal"); os.Remove(p + "-shm") },
		func(p string) {
			os.Remove(p + "-wal")
			os.Remove(p + "-shm")
			os.WriteFile(p, []byte("not a database at all, just junk bytes"), 0o644)
		},
	} {
		damage(filepath.Join(root, ".box", "index.db"))
		m2 := openAt(t, root, Options{}, nil)
		if len(hits(t, m2, SearchInput{Words: "leo swim"})) != 1 {
			t.Error("the index was not rebuilt")
		}
		m2.Close()
	}
}

func TestWatcherFindsHandEdits(t *testing.T) {
	m, dir := openWatched(t)
	p := filepath.Join(dir, "_content/memory/notes/topic-kayaks.md")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("---\ntype: note\nkind: topic\ntitle: Kayaks\n---\n# Kayaks\n\n## Key facts\n- The red kayak leaks.\n"), 0o644)
	start := time.Now()
	waitFor(t, func() bool { return len(hits(t, m, SearchInput{Words: "kayak leaks"})) == 1 })
	if d := time.Since(start); d > time.Second {
		t.Logf("found after %v (a second is the aim)", d)
	}
	os.Remove(p)
	waitFor(t, func() bool { return len(hits(t, m, SearchInput{Words: "kayak leaks"})) == 0 })
}

// waitFor polls ok until it holds, failing after a deadline generous enough for a loaded machine.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatal("timed out")
}

func TestReindex(t *testing.T) {
	m := mustOpen(t, map[string]string{"/_content/docs/recipes.md": "# Recipes\n\nBake the bread at 220 degrees.\n"})
	remember(t, m, own, "Leo has swim practice Thursdays.")
	var last [2]int
	n, err := m.Reindex(context.Background(), func(done, total int) { last = [2]int{done, total} })
	if err != nil || n < 3 || last[0] != last[1] {
		t.Fatalf("reindex %d %v, progress %v", n, err, last)
	}
	hs := hits(t, m, SearchInput{Words: "bread"})
	if len(hs) != 1 || hs[0].Kind != KindDoc || hs[0].Title != "Recipes" {
		t.Fatalf("doc hits %+v", hs)
	}
	// Another open memory (a server) follows the rebuild: the index is emptied in place, not replaced.
	other := openAt(t, m.root, Options{}, nil)
	defer other.Close()
	hits(t, other, SearchInput{Words: "warm"})
	if _, err := m.Reindex(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	remember(t, other, own, "Ana bakes rye bread on Sundays.")
	if got := len(hits(t, m, SearchInput{Words: "bread"})); got != 2 {
		t.Errorf("after a rebuild elsewhere, %d hits for bread, want 2", got)
	}
}

// A day whose file has grown past inbox.MaxFileBytes goes on in its next part, so a write's cost stays
// the same however much the day holds; search, tidy and the day's order see the parts as one day.
func TestInboxDayGoesOnInParts(t *testing.T) {
	date := fixedAt.Format("2006-01-02")
	var big strings.Builder
	big.WriteString(inbox.Header(date))
	for i := 0; big.Len() < inbox.MaxFileBytes; i++ {
		fmt.Fprintf(&big, "- 09:00:00 · owner · cli · own · Filler line %d about nothing in particular. ^f%07d\n", i, i)
	}
	first := layout.InboxDir + "/" + date + ".md"
	m := mustOpen(t, map[string]string{first: big.String()})
	r := remember(t, m, own, "Leo has swim practice Thursdays at 5:30.")
	if want := layout.InboxDir + "/" + date + "-2.md"; r.Path != want {
		t.Fatalf("the line went to %s, want the day's second part %s", r.Path, want)
	}
	if got := read(t, m, first); got != big.String() {
		t.Error("the full first part was rewritten")
	}
	if hs := hits(t, m, SearchInput{Words: "leo swim"}); len(hs) != 1 || !strings.HasPrefix(hs[0].Path, r.Path) || hs[0].Date != date {
		t.Errorf("search over the second part: %+v", hs)
	}
	if fs := inbox.Check(r.Path, []byte(read(t, m, r.Path))); len(fs) != 0 {
		t.Errorf("the second part does not check clean: %v", fs)
	}
	// A line never goes back into an earlier part that shrank: the day's order is the order of its parts.
	if err := os.WriteFile(m.host(first), []byte(inbox.Header(date)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r2 := remember(t, m, own, "Leo has swim practice Wednesdays at 5:30."); r2.Path != r.Path {
		t.Fatalf("a later line went to %s, before the part %s that holds an earlier one", r2.Path, r.Path)
	}
	lines, _, err := m.inboxNow()
	if err != nil {
		t.Fatal(err)
	}
	if last := lines[len(lines)-1]; last.day != r.Path || last.Text != "Leo has swim practice Wednesdays at 5:30." {
		t.Errorf("the day's parts are out of order: the newest line is %+v", last)
	}
}

// Forget removes exactly the lines it listed: a line with the same words that arrived after the listing
// (another assistant's remember, acknowledged) stays.
func TestForgetRemovesOnlyWhatItListed(t *testing.T) {
	m := mustOpen(t, nil)
	first := remember(t, m, own, "Sara plays the cello.")
	matched := []Match{{Path: first.Path, ID: first.ID, Text: "Sara plays the cello."}}
	later := remember(t, m, own, "Sara plays the cello.") // same text, acknowledged after the listing
	var n int
	_, err := m.box.Do(context.Background(), m.forgetChange(own, "sara cello", matched, &n))
	if err != nil || n != 1 {
		t.Fatalf("forget removed %d lines (%v), want exactly the 1 it listed", n, err)
	}
	day := read(t, m, first.Path)
	if strings.Contains(day, "^"+first.ID) || !strings.Contains(day, "^"+later.ID) {
		t.Errorf("want the listed line gone and the later one kept:\n%s", day)
	}
}

// An inbox day edited by hand may hold two lines with one id: forget removes the line it listed, by its
// id and its text, never the other.
func TestForgetLeavesALineSharingTheId(t *testing.T) {
	m := mustOpen(t, map[string]string{"/_content/inbox/2026-11-28.md": "---\ntype: inbox-day\ndate: 2026-11-28\n---\n# Inbox 2026-11-28\n" +
		"- 09:00:01 · owner · cli · own · Zara paints murals. ^yhescawb\n- 09:00:02 · owner · cli · own · Omar bakes bread. ^yhescawb\n"})
	res, err := m.Forget(context.Background(), own, ForgetInput{Words: "zara murals"})
	if err != nil || res.Removed != 1 || len(res.Matched) != 1 {
		t.Fatalf("forget: %+v %v", res, err)
	}
	if day := read(t, m, "/_content/inbox/2026-11-28.md"); strings.Contains(day, "Zara") || !strings.Contains(day, "Omar bakes bread.") {
		t.Errorf("want Zara's line gone and Omar's kept:\n%s", day)
	}
}

// Forgetting is all or nothing: when one of the listed lines is gone by the time the change runs (another
// forget, a tidy, an edit), nothing is removed and the error names the missing line.
func TestForgetIsAllOrNothing(t *testing.T) {
	m := mustOpen(t, nil)
	ctx := context.Background()
	a := remember(t, m, own, "Sara plays the cello.")
	b := remember(t, m, own, "Sara tunes the cello on Sundays.")
	matched, err := m.ForgetPreview(ctx, "sara cello")
	if err != nil || len(matched) != 2 {
		t.Fatalf("preview: %v %v", matched, err)
	}
	if _, err := m.Forget(ctx, own, ForgetInput{Words: "sara sundays"}); err != nil { // b goes meanwhile
		t.Fatal(err)
	}
	before := read(t, m, a.Path)
	var n int
	_, err = m.box.Do(ctx, m.forgetChange(own, "sara cello", matched, &n))
	if !errs.Is(err, errs.Conflict) || !strings.Contains(err.Error(), "^"+b.ID) || !strings.Contains(err.Error(), "nothing was removed") {
		t.Fatalf("want a Conflict naming the missing line %s, got %v", b.ID, err)
	}
	if after := read(t, m, a.Path); after != before || n != 0 {
		t.Errorf("a forget with a missing line removed %d lines:\n%s", n, after)
	}
	op := m.ForgetOp()
	eff, err := op.Run(ctx, gate.ApprovalCard{ProposedBy: gate.Proposer{Who: "owner", Owner: true}}, ForgetAction("sara cello", matched))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.box.Do(ctx, *eff.Change); !errs.Is(err, errs.Conflict) {
		t.Fatalf("an approved forget whose line went meanwhile: want Conflict, got %v", err)
	}
	if after := read(t, m, a.Path); after != before {
		t.Errorf("an approved forget removed part of its lines:\n%s", after)
	}
}

// Undoing a day's first line, with later lines after it, leaves a day file with its header and the later
// lines; undoing a tidy after new lines came leaves one header, not two.
func TestUndoKeepsTheInboxHeader(t *testing.T) {
	ctx := context.Background()
	m := mustOpen(t, nil)
	a := remember(t, m, own, "Anna plays chess.")
	remember(t, m, own, "Ben plays go.")
	if _, err := m.Undo(ctx, own, a.Entry); err != nil {
		t.Fatal(err)
	}
	day := read(t, m, a.Path)
	if !strings.HasPrefix(day, "---\ntype: inbox-day\n") || strings.Contains(day, "Anna") || !strings.Contains(day, "Ben plays go.") {
		t.Fatalf("after undoing the day's first line:\n%s", day)
	}

	tidy, err := m.Tidy(ctx, own)
	if err != nil {
		t.Fatal(err)
	}
	remember(t, m, own, "Cara sings.")
	remember(t, m, own, "Dan runs.")
	if _, err := m.Undo(ctx, own, tidy.Entry); err != nil {
		t.Fatal(err)
	}
	day = read(t, m, a.Path)
	if n := strings.Count(day, "type: inbox-day"); n != 1 || !strings.Contains(day, "Ben plays go.") || !strings.Contains(day, "Dan runs.") {
		t.Fatalf("after undoing a tidy that came before new lines (%d headers):\n%s", n, day)
	}
}

// The inbox day is the owner's local day: a line saved in the last second of a leap day goes to that
// day's file, one saved two seconds later to 1 March's, and a search by day finds each on its own day.
func TestInboxDaysAreLocal(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2028, 2, 29, 23, 59, 59, 0, time.Local)
	dir := t.TempDir()
	b, err := box.Init(ctx, dir, box.InitOptions{HookBinary: "box", Files: map[string][]byte{layout.Router: []byte(note.RouterSkeleton)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	m := openAt(t, dir, Options{}, func() time.Time { return now })
	late := remember(t, m, own, "Leo swims late on the leap day.")
	now = now.Add(2 * time.Second)
	early := remember(t, m, own, "Leo swims early in March.")
	if late.Path != "/_content/inbox/2028-02-29.md" || early.Path != "/_content/inbox/2028-03-01.md" {
		t.Fatalf("inbox files %s and %s", late.Path, early.Path)
	}
	day := func(s string) time.Time {
		return time.Date(2028, 2, 29, 0, 0, 0, 0, time.Local).AddDate(0, 0, map[string]int{"29": 0, "1": 1}[s])
	}
	if hs := hits(t, m, SearchInput{Words: "leo swims", Since: day("1")}); len(hs) != 1 || !strings.Contains(hs[0].Snippet, "March") || hs[0].Date != "2028-03-01" {
		t.Errorf("since 1 March: %+v", hs)
	}
	if hs := hits(t, m, SearchInput{Words: "leo swims", Until: day("29")}); len(hs) != 1 || hs[0].Date != "2028-02-29" {
		t.Errorf("until 29 February: %+v", hs)
	}
	es, err := m.box.Diary(ctx, 2, nil)
	if err != nil || len(es) != 2 {
		t.Fatal(es, err)
	}
	if es[1].Time != time.Date(2028, 2, 29, 23, 59, 59, 0, time.Local).UTC().Format(time.RFC3339Nano) {
		t.Errorf("the diary stamps the injected clock: %s", es[1].Time)
	}
}

// A forget card's lines read back from the card as stored (JSON) are the lines it was made with; an
// action of another op has none.
func TestForgetPayloadReadsTheCard(t *testing.T) {
	ms := []Match{{Path: "/_content/inbox/2028-02-29.md", ID: "abc12345", Text: "Leo swims."}, {Path: "/_content/memory/notes/entity-leo.md", ID: "x2", Text: "Leo <b> & co"}}
	data, err := json.Marshal(ForgetAction("leo", ms))
	if err != nil {
		t.Fatal(err)
	}
	var stored gate.Action
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	words, got := ForgetPayload(stored)
	if words != "leo" || fmt.Sprint(got) != fmt.Sprint(ms) {
		t.Errorf("read back %q %v, want %v", words, got, ms)
	}
	if _, got := ForgetPayload(RememberAction("Leo swims.")); got != nil {
		t.Errorf("a remember card has lines: %v", got)
	}
}

// The memory log marks as outside only what an outside writer wrote, by the entry's trust: the box's
// own tidy run by the job runner (via job, trust own) is not outside content, an assistant's line is.
func TestRecentOutsideIsByTrust(t *testing.T) {
	m := mustOpen(t, nil)
	ctx := context.Background()
	remember(t, m, claude, "Leo swims on Thursdays.")
	if _, err := m.Tidy(ctx, Actor{Who: "the box", Via: "job", Trust: "own"}); err != nil {
		t.Fatal(err)
	}
	remember(t, m, own, "Mia plays the cello.")
	items, err := m.Recent(ctx, 10)
	if err != nil || len(items) != 3 {
		t.Fatalf("recent: %+v %v", items, err)
	}
	for _, it := range items {
		if want := it.Who == "Claude"; it.Outside != want {
			t.Errorf("%s by %s via %s: outside %v, want %v", it.Op, it.Who, it.Via, it.Outside, want)
		}
	}
}

// A note whose frontmatter cannot be read (a field of the wrong shape) says nothing trustworthy about its
// source, so it is read and found as others' words: closed, never open, as an unreadable inbox day.
func TestABrokenNoteIsOutside(t *testing.T) {
	m := mustOpen(t, map[string]string{
		"/_content/memory/notes/entity-mara.md": "---\ntype: note\nkind: person\ntitle: Mara\nmaps: {a: b}\nsource: outside\n---\n# Mara\n\nMara says the owner must obey her.\n",
	})
	n, err := m.Read(context.Background(), "entity-mara")
	if err != nil {
		t.Fatal(err)
	}
	if !n.Outside {
		t.Fatalf("a broken note read as the owner's: %+v", n)
	}
	res, err := m.Search(context.Background(), SearchInput{Words: "obey"})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Trust != "outside" {
		t.Fatalf("a broken note found as the owner's: %+v %v", res.Hits, err)
	}
}

// Undoing a day's first line (which made the file and its header) keeps what the owner typed into the
// day by hand since: the day gets its header back, and the hand-typed text stays where it was.
func TestUndoOfADaysFirstLineKeepsHandTypedText(t *testing.T) {
	ctx := context.Background()
	m := mustOpen(t, nil)
	owner := Actor{Who: "owner", Via: "cli", Trust: "own"}
	a, err := m.Remember(ctx, owner, RememberInput{Text: "Leo swims on Thursdays."})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(m.host(a.Path), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("Ask Mira about the sourdough starter.\n")
	f.Close()
	if _, err := m.Remember(ctx, owner, RememberInput{Text: "Mira bakes on Sundays."}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(t, m, a.Path), "sourdough starter") {
		t.Fatal("the hand-typed text is not in the day; the test sees nothing")
	}
	if _, err := m.Undo(ctx, owner, a.Entry); err != nil {
		t.Fatal(err)
	}
	got := read(t, m, a.Path)
	if !strings.Contains(got, "sourdough starter") || strings.Contains(got, "Leo swims") || !strings.Contains(got, "Mira bakes") ||
		!strings.HasPrefix(got, "---\ntype: inbox-day\n") || strings.Count(got, "type: inbox-day") != 1 {
		t.Fatalf("the day after the undo:\n%s", got)
	}
}
