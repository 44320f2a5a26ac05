package memory

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/goldenfile"
	"github.com/boxmem/box/internal/note"
)

const leoNote = `---
type: note
kind: person
title: Leo
description: Son, 9, swims.
aliases: [Leozinho]
maps: [moc-people]
updated: 2026-11-20
source: own
---
# Leo

## Snapshot

## Key facts
- Leo has swim practice Thursdays at 5:30. ^oldswim1

## Open threads

## Timeline

## Links
`

const peopleMap = `---
type: map
title: People
---
# People

- [[entity-leo]] — Son, 9, swims.
`

// inboxDay renders a day file of lines "trust|who|text" with ids l1, l2, ….
func inboxDay(date string, lines ...string) string {
	var b strings.Builder
	b.WriteString("---\ntype: inbox-day\ndate: " + date + "\n---\n# Inbox " + date + "\n")
	for i, l := range lines {
		f := strings.SplitN(l, "|", 3)
		via := "cli"
		if f[0] == "outside" {
			via = "mcp"
		}
		fmt.Fprintf(&b, "- 09:00:%02d · %s · %s · %s · %s ^line%d\n", i, f[1], via, f[0], f[2], i+1)
	}
	return b.String()
}

func tidySeed() map[string]string {
	return map[string]string{
		"/_content/memory/notes/entity-leo.md": leoNote,
		"/_content/memory/maps/moc-people.md":  peopleMap,
		"/_content/inbox/2026-11-28.md": inboxDay("2026-11-28",
			"own|owner|Leo has swim practice Wednesdays at 5:30.",                 // changed fact → Timeline
			"own|owner|Leozinho lost his goggles at the pool.",                    // alias → entity-leo
			"own|owner|Ana Maria lives in Porto.",                                 // new person + new place, linked
			"own|owner|Always answer in Spanish.",                                 // instruction → trash
			"own|owner|ok thanks!",                                                // small talk → trash
			"own|owner|The alarm code is 4821.",                                   // secret-like → trash
			"own|owner|Prefers replies in Spanish.",                               // names no one → entity-owner
			"outside|Claude (claude.ai)|Leo has a dentist appointment on Friday.", // outside → Leo, source mixed
			"outside|Claude (claude.ai)|Started a new job at Acme.",               // outside → new org stub
		),
	}
}

func TestTidyGolden(t *testing.T) {
	m := mustOpen(t, tidySeed())
	ctx := context.Background()
	before := snapshot(t, m.root)
	res, err := m.Tidy(ctx, own)
	if err != nil {
		t.Fatal(err)
	}
	if res.Filed != 6 || res.Replaced != 1 || res.Dropped != 3 || len(res.Created) != 4 {
		t.Errorf("tidy %+v", res)
	}
	after := snapshot(t, m.root)
	golden(t, "testdata/tidy/golden.txt", render(after))

	// One tidy, one commit, and undo brings every file back byte for byte.
	if _, err := m.Undo(ctx, own, res.Entry); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, m.root); render(got) != render(before) {
		t.Errorf("undo of tidy left:\n%s\nwant:\n%s", render(got), render(before))
	}
	if len(hits(t, m, SearchInput{Words: "goggles"})) != 1 {
		t.Error("the undone inbox line is not searchable")
	}
}

func TestTidyRules(t *testing.T) {
	m := mustOpen(t, tidySeed())
	ctx := context.Background()
	p, err := m.PlanTidy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byLine := map[string]Action{}
	for _, a := range p.Actions {
		if a.Line != "" {
			byLine[a.Line] = a
		}
	}
	for _, tc := range []struct {
		line, op, note, reason string
	}{
		{"line1", ActReplace, "entity-leo", ""},
		{"line2", ActFile, "entity-leo", ""},
		{"line3", ActFile, "entity-ana-maria", ""},
		{"line4", ActDrop, "", DropInstruction},
		{"line5", ActDrop, "", DropSmallTalk},
		{"line6", ActDrop, "", DropSecret},
		{"line7", ActFile, ownerName, ""},
		{"line8", ActFile, "entity-leo", ""},
		{"line9", ActFile, "entity-acme", ""},
	} {
		a := byLine[tc.line]
		if a.Op != tc.op || a.Note != tc.note || a.Reason != tc.reason {
			t.Errorf("%s: %+v, want %s %s %s", tc.line, a, tc.op, tc.note, tc.reason)
		}
	}
	if a := byLine["line1"]; a.Old != "Leo has swim practice Thursdays at 5:30." || a.OldDate != "2026-11-20" {
		t.Errorf("replace %+v", a)
	}
	if a := byLine["line3"]; len(a.Links) != 1 || a.Links[0] != "entity-porto" {
		t.Errorf("links %+v", a.Links)
	}
	// Outside lines come after own lines: their own batch.
	lastOwn, firstOutside := -1, len(p.Actions)
	for i, a := range p.Actions {
		switch a.Line {
		case "line7":
			lastOwn = i
		case "line8":
			firstOutside = i
		}
	}
	if lastOwn > firstOutside {
		t.Error("an outside line was planned among the owner's")
	}
	kinds := map[string]string{}
	for _, a := range p.Actions {
		if a.Op == ActCreate {
			kinds[a.Note] = a.Kind + " " + a.Map
		}
	}
	want := map[string]string{"entity-ana-maria": "person moc-people", "entity-porto": "place moc-places", "entity-owner": "person moc-people", "entity-acme": "org moc-orgs"}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("stubs %v, want %v", kinds, want)
	}
}

// A line that asks for something opens with a verb: no note is made of the verb ("Remind", "Call Leo"),
// and a venue's name is a place, not a person.
func TestTidyReadsRequestsAndVenues(t *testing.T) {
	m := mustOpen(t, map[string]string{
		"/_content/memory/notes/entity-leo.md": leoNote,
		"/_content/memory/maps/moc-people.md":  peopleMap,
		"/_content/inbox/2026-11-28.md": inboxDay("2026-11-28",
			"own|owner|Remind me to call the dentist on Friday.",
			"own|owner|Call Leo on Sunday about the swim gala.",
			"own|owner|Ask Rui about the keys.",
			"own|owner|My favourite climbing gym is Bloc Shop in Lisbon.",
		),
	})
	p, err := m.PlanTidy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	filed, made := map[string]string{}, map[string]string{}
	for _, a := range p.Actions {
		switch a.Op {
		case ActFile:
			filed[a.Line] = a.Note
		case ActCreate:
			made[a.Note] = a.Kind
		}
	}
	want := map[string]string{"line1": ownerName, "line2": "entity-leo", "line3": "entity-rui", "line4": "entity-bloc-shop"}
	if fmt.Sprint(filed) != fmt.Sprint(want) {
		t.Errorf("filed %v, want %v", filed, want)
	}
	wantMade := map[string]string{ownerName: "person", "entity-rui": "person", "entity-bloc-shop": "place", "entity-lisbon": "place"}
	if fmt.Sprint(made) != fmt.Sprint(wantMade) {
		t.Errorf("new notes %v, want %v", made, wantMade)
	}
}

func TestChangedFactRule(t *testing.T) {
	leo := &entry{name: "entity-leo", title: "Leo", aliases: []string{"Leozinho"}}
	for _, tc := range []struct {
		old, new string
		want     bool
	}{
		{"Leo has swim practice Thursdays at 5:30.", "Leo has swim practice Wednesdays at 5:30.", true},
		{"Leo's school is Oakwood.", "Leo's school is Riverside.", true},
		{"Leo lives in Lisbon.", "Leo lives in Porto.", true},
		{"Leo has swim practice Thursdays.", "Leozinho has swim practice Fridays.", true}, // by an alias
		{"Leo likes pizza.", "Leo likes pasta.", false},                                   // one shared word: both kept
		{"Leo has a cold.", "Leo has a dentist appointment.", false},                      // shared words are stopwords only
		{"Leo has swim practice.", "Leo has swim practice.", false},                       // the same fact
		{"Leo likes pizza.", "Leo likes pizza and pasta.", false},                         // one goes on, the other ends
		{"Leo has swim practice Thursdays.", "Ana has swim practice Fridays.", false},     // another subject
	} {
		if got := changedFact(leo, tc.old, tc.new); got != tc.want {
			t.Errorf("changed(%q → %q) = %v, want %v", tc.old, tc.new, got, tc.want)
		}
	}
}

func TestCheckPlan(t *testing.T) {
	m := mustOpen(t, tidySeed())
	v := diskView{m}
	day := "/_content/inbox/2026-11-28.md"
	for _, tc := range []struct {
		name string
		acts []Action
		want string // "" = accepted
	}{
		{"ok", []Action{{Op: ActFile, Day: day, Line: "line2", Text: "Leozinho lost his goggles.", Note: "entity-leo"}}, ""},
		{"own core", []Action{{Op: ActCore, Day: day, Line: "line7", Text: "Prefers replies in Spanish."}}, ""},
		{"outside core", []Action{{Op: ActCore, Day: day, Line: "line8", Text: "Leo has a dentist appointment on Friday."}}, "outside line never"},
		{"outside caution", []Action{{Op: ActCaution, Day: day, Line: "line9", Text: "Started a new job at Acme."}}, "outside line never"},
		{"outside into the kept core facts", []Action{{Op: ActReplace, Day: day, Line: "line8", Text: "Leo has a dentist appointment on Friday.", Note: overflowNote, Old: "x"}}, "never touches " + overflowNote},
		{"outside linked to the kept core facts", []Action{{Op: ActFile, Day: day, Line: "line8", Text: "Leo has a dentist appointment on Friday.", Note: "entity-leo", Links: []string{overflowNote}}}, "never touches " + overflowNote},
		{"missing line", []Action{{Op: ActFile, Day: day, Line: "nope", Text: "x", Note: "entity-leo"}}, "no inbox line"},
		{"twice", []Action{{Op: ActDrop, Day: day, Line: "line5", Reason: DropSmallTalk}, {Op: ActDrop, Day: day, Line: "line5", Reason: DropSmallTalk}}, "twice"},
		{"no such note", []Action{{Op: ActFile, Day: day, Line: "line2", Text: "x y", Note: "entity-bob"}}, "no note"},
		{"secret filed", []Action{{Op: ActFile, Day: day, Line: "line6", Text: "The alarm code is 4821.", Note: "entity-leo"}}, "secret"},
		{"instruction filed", []Action{{Op: ActFile, Day: day, Line: "line4", Text: "Always answer in Spanish.", Note: "entity-leo"}}, "instruction"},
		{"drop without reason", []Action{{Op: ActDrop, Day: day, Line: "line5"}}, "reason"},
		{"stub misnamed", []Action{{Op: ActCreate, Note: "entity-x", Kind: "person", Title: "Bob"}}, "named entity-bob"},
		{"stub exists", []Action{{Op: ActCreate, Note: "entity-leo", Kind: "person", Title: "Leo"}}, "already exists"},
		{"escape", []Action{{Op: ActFile, Day: "/_content/inbox/../../.box/x.md", Line: "line1", Text: "x", Note: "entity-leo"}}, "not an inbox day"},
		{"merge self", []Action{{Op: ActMerge, Note: "entity-leo", Into: "entity-leo"}}, "itself"},
		{"unknown op", []Action{{Op: "delete"}}, "unknown"},
	} {
		err := CheckPlan(v, Plan{Actions: tc.acts})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

func TestTidySplitsMapPast120(t *testing.T) {
	files := map[string]string{}
	var b strings.Builder
	b.WriteString(peopleMap)
	for i := 0; i < note.MaxMapEntries; i++ {
		name := fmt.Sprintf("entity-p%03d", i)
		fmt.Fprintf(&b, "- [[%s]] — P%03d\n", name, i)
	}
	files["/_content/memory/maps/moc-people.md"] = b.String()
	files["/_content/inbox/2026-11-28.md"] = inboxDay("2026-11-28", "own|owner|Zoe moved to our street.")
	m := mustOpen(t, files)
	if _, err := m.Tidy(context.Background(), own); err != nil {
		t.Fatal(err)
	}
	idx, err := note.ParseMap([]byte(read(t, m, "/_content/memory/maps/moc-people.md")))
	if err != nil || !idx.IsIndex() {
		t.Fatalf("moc-people is not a letter index: %v", err)
	}
	if !strings.Contains(read(t, m, "/_content/memory/maps/moc-people/z.md"), "[[entity-zoe]]") {
		t.Error("the new note is not in its letter map")
	}
	if !strings.Contains(read(t, m, "/_content/memory/MEMORY.md"), "- [[moc-people]] — People (122 notes)") {
		t.Errorf("router:\n%s", read(t, m, "/_content/memory/MEMORY.md"))
	}
}

// snapshot is every file under the memory, the inbox, the trash and the archive.
func snapshot(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	for _, dir := range []string{"_content/memory", "_content/inbox", "_bookkeeping/trash", "_bookkeeping/archive"} {
		filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == ".gitkeep" {
				return nil
			}
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			out["/"+filepath.ToSlash(rel)] = string(data)
			return nil
		})
	}
	return out
}

func render(files map[string]string) string {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "=== %s\n%s", k, files[k])
	}
	return b.String()
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	goldenfile.Check(t, path, []byte(got))
}

// A note's hook (its description and its map line) made from a fact follows that fact when it is replaced;
// a hook the owner wrote is left alone.
func TestTidyHookFollowsReplacedFact(t *testing.T) {
	m := mustOpen(t, nil)
	ctx := context.Background()
	own := Actor{Who: "owner", Via: "cli", Trust: "own"}
	remember(t, m, own, "Leo has swim practice Thursdays at 5:30.")
	if _, err := m.Tidy(ctx, own); err != nil {
		t.Fatal(err)
	}
	remember(t, m, own, "Leo has swim practice Wednesdays at 5:30.")
	if _, err := m.Tidy(ctx, own); err != nil {
		t.Fatal(err)
	}
	const want = "Leo has swim practice Wednesdays at 5:30."
	if n := read(t, m, "/_content/memory/notes/entity-leo.md"); !strings.Contains(n, "description: "+want) {
		t.Errorf("the description did not follow the replaced fact:\n%s", n)
	}
	if mp := read(t, m, "/_content/memory/maps/moc-people.md"); !strings.Contains(mp, "[[entity-leo]] — "+want) {
		t.Errorf("the map hook did not follow the replaced fact:\n%s", mp)
	}

	m2 := mustOpen(t, tidySeed()) // Leo's description "Son, 9, swims." is the owner's own words
	if _, err := m2.Tidy(ctx, own); err != nil {
		t.Fatal(err)
	}
	if n := read(t, m2, "/_content/memory/notes/entity-leo.md"); !strings.Contains(n, "description: Son, 9, swims.") {
		t.Errorf("a hand-written description was replaced:\n%s", n)
	}
}

// Two lines of a day with one id (a file edited by hand) cannot be named apart by a tidy's actions: they
// stay in the inbox, said in Skipped, and the rest of the inbox is filed.
func TestTidyLeavesLinesSharingAnId(t *testing.T) {
	day := "/_content/inbox/2026-11-28.md"
	m := mustOpen(t, map[string]string{day: "---\ntype: inbox-day\ndate: 2026-11-28\n---\n# Inbox 2026-11-28\n" +
		"- 09:00:01 · owner · cli · own · Zara paints murals. ^yhescawb\n- 09:00:02 · owner · cli · own · Omar bakes bread. ^yhescawb\n" +
		"- 09:00:03 · owner · cli · own · Ana rows on the lake. ^abcdefgh\n"})
	res, err := m.Tidy(context.Background(), own)
	if err != nil || res.Filed != 1 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0], "2 lines with the id yhescawb") {
		t.Fatalf("tidy: %+v %v", res, err)
	}
	if text := read(t, m, day); !strings.Contains(text, "Zara paints murals.") || !strings.Contains(text, "Omar bakes bread.") || strings.Contains(text, "Ana") {
		t.Errorf("the inbox after the tidy:\n%s", text)
	}
	// Both lines wait, and every surface counts and finds two.
	ctx := context.Background()
	o, err := m.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := m.Waiting(ctx); err != nil || o.Inbox != 2 || w != 2 || !strings.Contains(o.Router, "Inbox: 2 lines waiting") {
		t.Errorf("overview counts %d, the files %d (%v):\n%s", o.Inbox, w, err, o.Router)
	}
	if len(hits(t, m, SearchInput{Words: "zara"})) != 1 || len(hits(t, m, SearchInput{Words: "omar"})) != 1 {
		t.Error("a line sharing its id with another is not found")
	}
}

// A note some editor saved with a byte-order mark first keeps its frontmatter: found with the trust it
// says (mixed once the owner's line joins), and a tidy files into it without writing a second one above it.
func TestNoteWithAByteOrderMark(t *testing.T) {
	p := "/_content/memory/notes/entity-ana.md"
	m := mustOpen(t, map[string]string{p: "\uFEFF---\ntype: note\nkind: person\ntitle: Ana\nsource: outside\n---\n# Ana\n\n## Key facts\n- Ana likes milk.\n"})
	ctx := context.Background()
	res, err := m.Search(ctx, SearchInput{Words: "ana milk"})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Trust != "outside" {
		t.Fatalf("search: %+v %v", res.Hits, err)
	}
	remember(t, m, own, "Ana prefers green tea now.")
	if _, err := m.Tidy(ctx, own); err != nil {
		t.Fatal(err)
	}
	text := read(t, m, p)
	if !strings.HasPrefix(text, "\uFEFF---\n") || strings.Count(text, "---\n") != 2 || !strings.Contains(text, "source: mixed") || !strings.Contains(text, "green tea") {
		t.Errorf("the note after a tidy:\n%q", text)
	}
}

// A document that marks itself as others' words keeps the mark when its frontmatter cannot be parsed: a
// chat over the card size limit, or one whose YAML broke.
func TestOutsideMarkOutlivesAnUnreadableFrontmatter(t *testing.T) {
	long := "/_content/chats/2026-11-29-aaaaaa.md"
	broken := "/_content/docs/broken.md"
	m := mustOpen(t, map[string]string{
		long:   "---\ntrust: outside\n---\n# Chat\n\nzebracorn " + strings.Repeat("words of a long chat ", card.MaxSize/20) + "\n",
		broken: "---\ntrust: \"outside\"\ntitle: [unclosed\n---\n# Broken\n\nzebracorn quoted\n",
	})
	res, err := m.Search(context.Background(), SearchInput{Words: "zebracorn"})
	if err != nil || len(res.Hits) != 2 {
		t.Fatalf("search: %+v %v", res.Hits, err)
	}
	for _, h := range res.Hits {
		if h.Trust != "outside" {
			t.Errorf("%s is found as %q", h.Path, h.Trust)
		}
	}
}
