package note

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/goldenfile"
	"github.com/boxmem/box/internal/secret"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

func mustOK(t *testing.T) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func roundTrip(t *testing.T, data []byte) *Note {
	t.Helper()
	n, err := ParseNote(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(n.Render(), data) {
		t.Fatalf("note does not round-trip:\n%s", data)
	}
	return n
}

func TestGoldenNote(t *testing.T) {
	must := mustOK(t)
	b := NewNote("person", "Leo", []string{"Leozinho"}, []string{"moc-people"})
	golden(t, "note-stub.md", b)
	roundTrip(t, b)
	b = must(SetDescription(b, "Son, 9, swims."))
	b = must(SetSnapshot(b, "Son, 9. Swims twice a week."))
	b = must(AddFact(b, Fact{Text: "Leo has swim practice Thursdays at 5:30.", ID: "k3f9a2qd"}))
	b = must(AddFact(b, Fact{Text: "Leo is allergic to peanuts.", ID: "a7b2c3d4"}))
	b = must(ReplaceFact(b, "k3f9a2qd", Fact{Text: "Leo has swim practice Wednesdays at 5:30.", ID: "m4n5p6q7"}, "2026-11-02"))
	b = must(AddLink(b, "entity-ana-maria"))
	b = must(AddLink(b, "topic-swimming"))
	b = must(Touch(b, "2026-11-29", "own"))
	b = must(Touch(b, "2026-11-29", "outside"))
	b = must(AddAlias(b, "Leonardo"))
	golden(t, "note-leo.md", b)
	n := roundTrip(t, b)
	want := &Note{Type: "note", Kind: "person", Title: "Leo", Description: "Son, 9, swims.",
		Aliases: List{"Leozinho", "Leonardo"}, Maps: List{"moc-people"}, Updated: "2026-11-29", Source: "mixed",
		Snapshot: "Son, 9. Swims twice a week.",
		Facts:    []Fact{{"Leo has swim practice Wednesdays at 5:30.", "m4n5p6q7"}, {"Leo is allergic to peanuts.", "a7b2c3d4"}},
		Timeline: []Event{{"2026-11-02", "Leo has swim practice Thursdays at 5:30.", true, "k3f9a2qd"}},
		Links:    []string{"entity-ana-maria", "topic-swimming"}}
	n.doc = nil
	if !reflect.DeepEqual(n, want) {
		t.Errorf("parsed\n%+v\nwant\n%+v", n, want)
	}
}

func TestHandEditedNote(t *testing.T) {
	data, err := os.ReadFile("testdata/hand-edited.md")
	if err != nil {
		t.Fatal(err)
	}
	n := roundTrip(t, data)
	if len(n.Facts) != 2 || n.Facts[1].ID != "" || len(n.Timeline) != 2 {
		t.Errorf("parsed facts %+v timeline %+v", n.Facts, n.Timeline)
	}
	// Each edit changes only its own lines: the diff of before/after is exactly the expected lines.
	tests := []struct {
		name          string
		edit          func([]byte) ([]byte, error)
		added, remove []string
	}{
		{"add fact", func(b []byte) ([]byte, error) { return AddFact(b, Fact{"Plays chess on Sundays.", "zz22yy33"}) },
			[]string{"- Plays chess on Sundays. ^zz22yy33"}, nil},
		{"add same fact", func(b []byte) ([]byte, error) { return AddFact(b, Fact{Text: "Loves dinosaurs."}) }, nil, nil},
		{"add link", func(b []byte) ([]byte, error) { return AddLink(b, "entity-rui") }, []string{"- [[entity-rui]]"}, nil},
		{"existing link", func(b []byte) ([]byte, error) { return AddLink(b, "entity-ana-maria") }, nil, nil},
		{"replace by text", func(b []byte) ([]byte, error) {
			return ReplaceFact(b, "Loves dinosaurs.", Fact{"Loves sharks now.", "q2w3e4r5"}, "")
		}, []string{"- Loves sharks now. ^q2w3e4r5", "- 2026-10-01 — Loves dinosaurs. (replaced)"}, []string{"- Loves dinosaurs."}},
		{"snapshot", func(b []byte) ([]byte, error) { return SetSnapshot(b, "New snapshot.") },
			[]string{"New snapshot."}, []string{"Nine years old; swims; *loves* dinosaurs."}},
		{"touch", func(b []byte) ([]byte, error) { return Touch(b, "2026-11-29", "own") },
			[]string{"updated: 2026-11-29"}, []string{"updated: 2026-10-01"}},
		{"alias block list", func(b []byte) ([]byte, error) { return AddAlias(b, "Leonardo") }, []string{"  - Leonardo"}, nil},
		{"alias present", func(b []byte) ([]byte, error) { return AddAlias(b, "leozinho") }, nil, nil},
		{"map flow list", func(b []byte) ([]byte, error) { return AddMap(b, "moc-school") },
			[]string{"maps: [moc-people, moc-school] # where it is listed"}, []string{"maps: [moc-people] # where it is listed"}},
	}
	for _, tt := range tests {
		out, err := tt.edit(data)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		added, removed := diffLines(data, out)
		if !reflect.DeepEqual(added, tt.added) || !reflect.DeepEqual(removed, tt.remove) {
			t.Errorf("%s: added %q removed %q, want added %q removed %q", tt.name, added, removed, tt.added, tt.remove)
		}
		roundTrip(t, out)
	}
}

// diffLines returns the lines only in b and only in a (as multisets), in order.
func diffLines(a, b []byte) (added, removed []string) {
	count := map[string]int{}
	for _, l := range strings.Split(string(a), "\n") {
		count[l]++
	}
	for _, l := range strings.Split(string(b), "\n") {
		if count[l] > 0 {
			count[l]--
			continue
		}
		added = append(added, l)
	}
	for _, l := range strings.Split(string(a), "\n") {
		if count[l] > 0 {
			count[l]--
			removed = append(removed, l)
		}
	}
	return added, removed
}

func TestRemoveFactsMatching(t *testing.T) {
	data, _ := os.ReadFile("testdata/note-leo.md")
	words := secret.Words("swim thursdays")
	out, removed := RemoveFactsMatching(data, func(f Fact) bool { return secret.MatchesAll(f.Text, words) })
	if len(removed) != 1 || removed[0].Section != "Timeline" || removed[0].Fact.ID != "k3f9a2qd" {
		t.Fatalf("removed %+v", removed)
	}
	if _, rm := diffLines(data, out); len(rm) != 1 {
		t.Errorf("removed lines %q", rm)
	}
	out, removed = RemoveFactsMatching(data, func(f Fact) bool { return secret.MatchesAll(f.Text, secret.Words("it")) })
	if len(removed) != 0 || !bytes.Equal(out, data) {
		t.Error("a stopword query removed something")
	}
	_, removed = RemoveFactsMatching(data, func(f Fact) bool { return secret.MatchesAll(f.Text, secret.Words("leo")) })
	if len(removed) != 3 {
		t.Errorf("forget leo removed %d lines, want 3", len(removed))
	}
}

func TestScalarAlias(t *testing.T) {
	n, err := ParseNote([]byte("---\ntype: note\ntitle: Leo\naliases: Leozinho\nmaps:\n---\n"))
	if err != nil || !reflect.DeepEqual(n.Aliases, List{"Leozinho"}) || n.Maps != nil {
		t.Fatalf("%v %+v", err, n)
	}
	out, err := AddAlias([]byte("---\ntype: note\ntitle: Leo\naliases: Leozinho\n---\n"), "Leonardo")
	if err != nil || !strings.Contains(string(out), "aliases: [Leozinho, Leonardo]\n") {
		t.Errorf("%v %s", err, out)
	}
}

func TestMissingSections(t *testing.T) {
	must := mustOK(t)
	b := []byte("---\ntype: note\nkind: topic\ntitle: Swimming\n---\n# Swimming\n\nSome prose.\n\n## Gear\n- goggles\n")
	b = must(AddLink(b, "entity-leo"))
	b = must(AddFact(b, Fact{Text: "Pool opens at 7.", ID: "aaaa2222"}))
	b = must(ReplaceFact(b, "aaaa2222", Fact{Text: "Pool opens at 6:30.", ID: "bbbb3333"}, "2026-11-01"))
	b = must(SetSnapshot(b, "Leo's sport."))
	golden(t, "note-missing-sections.md", b)
	roundTrip(t, b)
}

func TestEditErrors(t *testing.T) {
	data, _ := os.ReadFile("testdata/note-leo.md")
	broken := []byte("---\ntitle: [oops\n---\n# x\n")
	checks := map[string]error{}
	_, checks["multiline fact"] = AddFact(data, Fact{Text: "a\nb"})
	_, checks["empty fact"] = AddFact(data, Fact{Text: " "})
	_, checks["broken frontmatter"] = AddFact(broken, Fact{Text: "a"})
	_, checks["no such fact"] = ReplaceFact(data, "nope", Fact{Text: "a"}, "2026-11-01")
	_, checks["bad date"] = ReplaceFact(data, "a7b2c3d4", Fact{Text: "a"}, "yesterday")
	_, checks["bad link"] = AddLink(data, "a|b")
	_, checks["heading in snapshot"] = SetSnapshot(data, "a\n## b")
	_, checks["bad trust"] = Touch(data, "2026-11-29", "maybe")
	for name, err := range checks {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ParseNote(broken); err == nil {
		t.Error("ParseNote accepted broken frontmatter")
	}
	if _, err := ParseNote([]byte("---\ntype: map\n---\n")); err == nil {
		t.Error("ParseNote accepted a map")
	}
}

func TestSlugAndName(t *testing.T) {
	for in, want := range map[string]string{
		"Leo": "leo", "Ana María": "ana-maria", "  São   Paulo! ": "sao-paulo", "Leo's school": "leos-school",
		"Straße 5": "strasse-5", "Bank of America": "bank-of-america", "!!!": "untitled", "日本": "日本", "C++": "c",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
	if Name("person", "Leo") != "entity-leo" || Name("place", "Lisbon") != "entity-lisbon" || Name("topic", "Swimming") != "topic-swimming" || Name("recipe", "Pão de Ló") != "topic-pao-de-lo" {
		t.Error("Name chose the wrong prefix")
	}
}

func FuzzParseNote(f *testing.F) {
	for _, name := range []string{"testdata/note-leo.md", "testdata/hand-edited.md", "testdata/note-stub.md"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ParseNote(data)
		if err != nil {
			return
		}
		if !bytes.Equal(n.Render(), data) {
			t.Fatalf("round trip failed for %q", data)
		}
		// edits keep the file parseable and never lose a line they do not own
		for i, edit := range []func([]byte) ([]byte, error){
			func(b []byte) ([]byte, error) { return AddFact(b, Fact{Text: "Fuzz fact.", ID: "fuzz2222"}) },
			func(b []byte) ([]byte, error) { return AddLink(b, "entity-fuzz") },
			func(b []byte) ([]byte, error) { return Touch(b, "2026-11-29", "own") },
		} {
			out, err := edit(data)
			if err != nil {
				continue
			}
			if _, err := ParseNote(out); err != nil {
				t.Fatalf("edit %d broke the note: %v\n%q", i, err, out)
			}
			if i < 2 {
				if _, removed := diffLines(data, out); len(removed) > 0 {
					t.Fatalf("edit %d removed %q", i, removed)
				}
				continue
			}
			if body(t, out) != body(t, data) {
				t.Fatalf("Touch changed the body of %q", data)
			}
		}
	})
}

// body is the note without its frontmatter.
func body(t *testing.T, b []byte) string {
	d, err := parseDoc("test", b)
	if err != nil {
		t.Fatal(err)
	}
	d.fm, d.front = false, nil
	return string(d.render())
}

func ExampleName() {
	fmt.Println(Name("person", "Ana María"), Name("topic", "Swimming"))
	// Output: entity-ana-maria topic-swimming
}

// A note saved with CRLF line ends (or "--- " with a trailing space) has frontmatter like any other: the
// card parser and the note reader agree on where it is (markdoc.IsFrontDelimiter).
func TestCRLFNoteKeepsItsFrontmatter(t *testing.T) {
	for _, data := range []string{
		"---\r\nkind: topic\r\ntitle: Kites\r\n---\r\n# Kites\r\n\r\n## Facts\r\n- Leo flies kites.\r\n",
		"--- \nkind: topic\ntitle: Kites\n---\t\n# Kites\n",
	} {
		d, err := parseDoc("test", []byte(data))
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		if !d.fm || len(d.front) != 2 || !strings.HasPrefix(d.front[0], "kind: topic") {
			t.Errorf("%q: frontmatter %v %q", data, d.fm, d.front)
		}
	}
}
