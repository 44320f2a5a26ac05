package note

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestGoldenMap(t *testing.T) {
	must := mustOK(t)
	b := NewMap(MapTitle("people"))
	b = must(AddEntry(b, MapEntry{"entity-leo", "Leo, son, 9, swims"}))
	b = must(AddEntry(b, MapEntry{"entity-ana-maria", "Ana Maria, wife"}))
	b = must(AddEntry(b, MapEntry{"entity-rui", ""}))
	b = must(AddEntry(b, MapEntry{"entity-leo", "Leo, son, 9, swims and plays chess"}))
	golden(t, "map.md", b)
	m, err := ParseMap(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Render(), b) {
		t.Error("map does not round-trip")
	}
	want := []MapEntry{{"entity-ana-maria", "Ana Maria, wife"}, {"entity-leo", "Leo, son, 9, swims and plays chess"}, {"entity-rui", ""}}
	if !reflect.DeepEqual(m.Entries, want) || m.Title != "People" || m.IsIndex() {
		t.Errorf("parsed %+v", m)
	}
	out, ok := RemoveEntry(b, "entity-leo")
	if !ok {
		t.Fatal("RemoveEntry found nothing")
	}
	if added, removed := diffLines(b, out); len(added) != 0 || len(removed) != 1 {
		t.Errorf("RemoveEntry changed %q %q", added, removed)
	}
	if _, ok := RemoveEntry(out, "entity-leo"); ok {
		t.Error("removed twice")
	}
}

func TestHandEditedMap(t *testing.T) {
	data := []byte("# People\n\nFamily first.\n\n- [[entity-leo]] — Leo\n- [[entity-zoe]] — Zoe\n\n## Friends\n- [[entity-tom]] — Tom\n\nLast words.\n")
	m, err := ParseMap(data)
	if err != nil || !bytes.Equal(m.Render(), data) || len(m.Entries) != 3 {
		t.Fatalf("hand-edited map: %v %+v", err, m)
	}
	out, err := AddEntry(data, MapEntry{"entity-maria", "Maria"})
	if err != nil {
		t.Fatal(err)
	}
	want := "# People\n\nFamily first.\n\n- [[entity-leo]] — Leo\n- [[entity-maria]] — Maria\n- [[entity-zoe]] — Zoe\n\n## Friends\n- [[entity-tom]] — Tom\n\nLast words.\n"
	if string(out) != want {
		t.Errorf("got\n%s", out)
	}
	out, _ = AddEntry(data, MapEntry{"entity-zz", "last"})
	want = "# People\n\nFamily first.\n\n- [[entity-leo]] — Leo\n- [[entity-zoe]] — Zoe\n\n## Friends\n- [[entity-tom]] — Tom\n- [[entity-zz]] — last\n\nLast words.\n"
	if string(out) != want {
		t.Errorf("got\n%s", out)
	}
}

func TestSplitKeepsEveryEntry(t *testing.T) {
	must := mustOK(t)
	b := NewMap("People")
	names := []string{"ana", "andre", "bruno", "leo", "lucia", "zoe", "8ball", "rui"}
	for i := 0; i < MaxMapEntries+1; i++ {
		n := names[i%len(names)]
		b = must(AddEntry(b, MapEntry{fmt.Sprintf("entity-%s-%03d", n, i), fmt.Sprintf("%s %d", n, i)}))
	}
	index, letters, err := SplitMap("moc-people", b)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "map-index.md", index)
	golden(t, "moc-people/a.md", letters["a"])
	im, _ := ParseMap(index)
	if !im.IsIndex() || len(im.Entries) != len(letters) {
		t.Errorf("index %+v for letters %v", im.Entries, slices.Sorted(maps.Keys(letters)))
	}
	// Every entry, hook and all, is in exactly one letter map: its own letter's.
	var kept []MapEntry
	for l, lb := range letters {
		lm, err := ParseMap(lb)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range lm.Entries {
			if Letter(e.Target) != l {
				t.Errorf("%s filed under %s", e.Target, l)
			}
		}
		kept = append(kept, lm.Entries...)
	}
	orig, _ := ParseMap(b)
	byTarget := func(a, b MapEntry) int { return strings.Compare(a.Target, b.Target) }
	if !slices.Equal(slices.SortedFunc(slices.Values(kept), byTarget), slices.SortedFunc(slices.Values(orig.Entries), byTarget)) {
		t.Errorf("the split kept %d of %d entries, or changed one", len(kept), len(orig.Entries))
	}
	if _, _, err := SplitMap("moc-people", index); err == nil {
		t.Error("split an index again")
	}
}

func TestLetter(t *testing.T) {
	for in, want := range map[string]string{"entity-leo": "l", "topic-swimming": "s", "entity-8ball": "0", "moc-people/a": "a", "entity-日本": "0", "Zed": "z"} {
		if got := Letter(in); got != want {
			t.Errorf("Letter(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseMap(f *testing.F) {
	for _, name := range []string{"testdata/map.md", "testdata/map-index.md"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMap(data)
		if err != nil {
			return
		}
		if !bytes.Equal(m.Render(), data) {
			t.Fatalf("round trip failed for %q", data)
		}
		out, err := AddEntry(data, MapEntry{"entity-fuzz", "hook"})
		if err != nil {
			return
		}
		back, err := ParseMap(out)
		if err != nil {
			t.Fatalf("AddEntry broke the map: %v", err)
		}
		found := false
		for _, e := range back.Entries {
			found = found || e.Target == "entity-fuzz"
		}
		if !found {
			t.Fatalf("AddEntry lost its entry:\n%q", out)
		}
	})
}
