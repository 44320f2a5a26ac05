package memory

import (
	"context"
	"slices"
	"testing"

	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
)

// A map past MaxMapEntries is a letter index: the notes it lists are its letter maps' entries, which a
// page granted the map may read; a map that does not parse is an error, never an empty list.
func TestMapNotesFollowsALetterIndex(t *testing.T) {
	mapFile := func(title string, entries ...note.MapEntry) string {
		data := note.NewMap(title)
		for _, e := range entries {
			var err error
			if data, err = note.AddEntry(data, e); err != nil {
				t.Fatal(err)
			}
		}
		return string(data)
	}
	m := mustOpen(t, map[string]string{
		layout.MapsDir + "/moc-people.md":   mapFile("People", note.MapEntry{Target: "moc-people/a", Hook: note.LetterHook("a", 1)}, note.MapEntry{Target: "moc-people/l", Hook: note.LetterHook("l", 2)}),
		layout.MapsDir + "/moc-people/a.md": mapFile("People — A", note.MapEntry{Target: "entity-ana", Hook: "Ana, sister"}),
		layout.MapsDir + "/moc-people/l.md": mapFile("People — L", note.MapEntry{Target: "entity-leo", Hook: "Leo, son"}, note.MapEntry{Target: "entity-lia"}),
		layout.MapsDir + "/moc-garden.md":   mapFile("Garden", note.MapEntry{Target: "/_content/pages/garden/beds", Hook: "the beds"}),
		layout.MapsDir + "/moc-broken.md":   "---\ntype: map\ntitle: [unclosed\n---\n# Broken\n",
	})
	ctx := context.Background()
	names := func(name string) []string {
		es, err := m.MapNotes(ctx, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Target)
		}
		return out
	}
	if got := names("moc-people"); !slices.Equal(got, []string{"entity-ana", "entity-leo", "entity-lia"}) {
		t.Errorf("letter index: %v", got)
	}
	// A page's map lists box paths, which hold "/" like a letter index's lines: it is no letter index.
	if got := names("moc-garden"); !slices.Equal(got, []string{"/_content/pages/garden/beds"}) {
		t.Errorf("a page's map: %v", got)
	}
	if got := names("moc-nothing"); len(got) != 0 {
		t.Errorf("a map not made yet: %v", got)
	}
	if _, err := m.MapNotes(ctx, "moc-broken"); err == nil {
		t.Error("a map that does not parse listed nothing, without an error")
	}
}
