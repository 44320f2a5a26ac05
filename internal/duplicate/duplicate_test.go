package duplicate

import (
	"slices"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/note"
)

func person(name, title string, facts ...string) Subject {
	return Subject{Name: name, Kind: "person", Title: title, Maps: []string{"moc-people"}, Facts: facts}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		in, class, want string
	}{
		{"Leo's", "person", "leo"},
		{"Dr. Sarah Hill", "person", "sarah hill"},
		{"Acme Inc.", "org", "acme"},
		{"Banco Azul SA", "org", "banco azul"},
		{"The Blue Door", "place", "blue door"},
		{"Marks & Spencer", "org", "marks spencer"},
		{"Marks and Spencer", "org", "marks spencer"},
		{"José Álvarez", "person", "jose alvarez"},
		{"Dr", "person", "dr"}, // a name is never emptied
		{"Inc", "org", "inc"},
	} {
		if got := strings.Join(nameWords(tc.in, tc.class), " "); got != tc.want {
			t.Errorf("nameWords(%q, %s) = %q, want %q", tc.in, tc.class, got, tc.want)
		}
	}
	for in, want := range map[string]string{"taxes": "tax", "recipes": "recipe", "hobbies": "hobby", "glasses": "glass",
		"bus": "bus", "class": "class", "news": "new", "cars": "car", "tennis": "tennis", "ski": "ski"} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct{ name, title, want string }{
		{"entity-leo", "Leo", ""}, {"entity-leo-2", "Leo", ""}, {"entity-leo-work", "Leo", "work"},
		{"topic-kids-school", "Kids' school", ""}, {"entity-ana-maria", "Ana María", ""}, {"leo", "Leo", ""},
	} {
		if got := qualifier(tc.name, tc.title); got != tc.want {
			t.Errorf("qualifier(%s, %q) = %q, want %q", tc.name, tc.title, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"bob", "robert", true}, {"bob", "rob", true}, {"alex", "alexandra", true}, {"leo", "leonardo", true},
		{"leo", "leo", false}, {"bob", "william", false}, {"ted", "edward", true}, {"ted", "theodore", true}} {
		if got := sameGivenName(tc.a, tc.b); got != tc.want {
			t.Errorf("sameGivenName(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

// Each rule of docs/MERGE.md on the smallest box that shows it.
func TestRules(t *testing.T) {
	ana := person("entity-ana", "Ana")
	leo := person("entity-leo", "Leo", "Leo swims on Thursdays.")
	leo.Links = []string{"entity-ana"}
	leoPark := person("entity-leo-park", "Leo Park", "Leo Park is Ana's son.")
	leoPark.Links = []string{"entity-ana"}
	for _, tc := range []struct {
		name      string
		box       []Subject
		a, b      string
		merge     bool
		keep      string
		reason    string // a word the reasons or block must hold
		unrelated bool
	}{
		{name: "extension with a shared link", box: []Subject{leo, leoPark, ana}, a: "entity-leo", b: "entity-leo-park", merge: true, keep: "entity-leo-park", reason: "linked with entity-ana"},
		{name: "a second Leo X blocks", box: []Subject{leo, leoPark, ana, person("entity-leo-chen", "Leo Chen")}, a: "entity-leo", b: "entity-leo-park", reason: "ambiguous"},
		{name: "extension alone is not enough", box: []Subject{person("entity-leo", "Leo"), person("entity-leo-park", "Leo Park")}, a: "entity-leo", b: "entity-leo-park", reason: "extension"},
		{name: "a junior", box: []Subject{leo, func() Subject { s := leoPark; s.Name, s.Title = "entity-leo-jr", "Leo Jr"; return s }(), ana}, a: "entity-leo", b: "entity-leo-jr", reason: "generation"},
		{name: "the alias holder is kept", box: []Subject{{Name: "entity-leonardo", Kind: "person", Title: "Leonardo", Aliases: []string{"Leo"}}, person("entity-leo", "Leo")}, a: "entity-leo", b: "entity-leonardo", merge: true, keep: "entity-leonardo", reason: "alias"},
		{name: "an outside note never absorbs the owner's", box: []Subject{{Name: "entity-leonardo", Kind: "person", Title: "Leonardo", Aliases: []string{"Leo"}, Source: note.SourceOutside}, person("entity-leo", "Leo")}, a: "entity-leo", b: "entity-leonardo", merge: true, keep: "entity-leo", reason: "alias"},
		{name: "kinds differ", box: []Subject{person("entity-jordan", "Jordan"), {Name: "entity-jordan-2", Kind: "place", Title: "Jordan"}}, a: "entity-jordan", b: "entity-jordan-2", reason: "kind"},
		{name: "linked notes are two", box: []Subject{{Name: "entity-leo", Kind: "person", Title: "Leo", Aliases: []string{"Leo Park"}, Links: []string{"entity-leo-park"}}, person("entity-leo-park", "Leo Park")}, a: "entity-leo", b: "entity-leo-park", reason: "linked"},
		{name: "a narrower topic is not related", box: []Subject{{Name: "topic-garden", Kind: "topic", Title: "Garden"}, {Name: "topic-garden-party", Kind: "topic", Title: "Garden party"}}, a: "topic-garden", b: "topic-garden-party", unrelated: true},
		{name: "numbers differ", box: []Subject{{Name: "topic-taxes", Kind: "topic", Title: "Taxes 2024", Aliases: []string{"Taxes"}}, {Name: "topic-taxes-2025", Kind: "topic", Title: "Taxes 2025", Aliases: []string{"Taxes"}}}, a: "topic-taxes", b: "topic-taxes-2025", reason: "numbers"},
		{name: "a place within", box: []Subject{{Name: "entity-lisbon", Kind: "place", Title: "Lisbon", Links: []string{"entity-ana"}}, {Name: "entity-lisbon-airport", Kind: "place", Title: "Lisbon Airport", Links: []string{"entity-ana"}}, ana}, a: "entity-lisbon", b: "entity-lisbon-airport", reason: "part of"},
		{name: "places elsewhere", box: []Subject{{Name: "entity-hyde-park", Kind: "place", Title: "Hyde Park", Facts: []string{"Hyde Park in London."}, Links: []string{"entity-ana"}}, {Name: "entity-hyde-park-2", Kind: "place", Title: "Hyde Park", Facts: []string{"Hyde Park in Chicago."}, Links: []string{"entity-ana"}}, ana}, a: "entity-hyde-park", b: "entity-hyde-park-2", reason: "elsewhere"},
		{name: "named apart", box: []Subject{leo, func() Subject { s := leo; s.Name = "entity-leo-work"; return s }(), ana}, a: "entity-leo", b: "entity-leo-work", reason: "named apart"},
		{name: "different maps", box: []Subject{{Name: "entity-leo", Kind: "person", Title: "Leo", Maps: []string{"moc-family"}}, {Name: "entity-leo-2", Kind: "person", Title: "Leo", Maps: []string{"moc-work"}}}, a: "entity-leo", b: "entity-leo-2", reason: "different maps"},
		{name: "the same line in both", box: []Subject{{Name: "entity-leo", Kind: "person", Title: "Leo", IDs: []string{"k3f9a2qd"}}, {Name: "entity-leo-2", Kind: "person", Title: "Leo", IDs: []string{"k3f9a2qd"}}}, a: "entity-leo", b: "entity-leo-2", merge: true, keep: "entity-leo", reason: "^k3f9a2qd"},
		{name: "a shared fact", box: []Subject{person("entity-sarah", "Sarah", "Sarah teaches piano on Mondays."), person("entity-sarah-hill", "Sarah Hill", "Sarah Hill teaches piano Mondays.")}, a: "entity-sarah", b: "entity-sarah-hill", merge: true, keep: "entity-sarah-hill", reason: "a fact in common"},
		{name: "a plural topic with a link", box: []Subject{{Name: "topic-tax", Kind: "topic", Title: "Tax", Links: []string{"entity-ana"}}, {Name: "topic-taxes", Kind: "topic", Title: "Taxes", Links: []string{"entity-ana"}}, ana}, a: "topic-tax", b: "topic-taxes", merge: true, reason: "plural"},
	} {
		var got *Pair
		for _, p := range Find(tc.box) {
			if (p.Keep == tc.a && p.Drop == tc.b) || (p.Keep == tc.b && p.Drop == tc.a) {
				got = &p
			}
		}
		switch {
		case tc.unrelated && got != nil:
			t.Errorf("%s: related: %s", tc.name, got.Why())
		case tc.unrelated:
		case got == nil:
			t.Errorf("%s: not related", tc.name)
		case got.Merge() != tc.merge:
			t.Errorf("%s: merge = %v: %s", tc.name, got.Merge(), got.Why())
		case tc.keep != "" && got.Keep != tc.keep:
			t.Errorf("%s: keeps %s, want %s", tc.name, got.Keep, tc.keep)
		case !strings.Contains(got.Why(), tc.reason):
			t.Errorf("%s: %s does not say %q", tc.name, got.Why(), tc.reason)
		}
	}
}

func TestChoose(t *testing.T) {
	// b and c are both duplicates of a; d's duplicate is b: one pass joins b and c into a, and leaves d
	// for the next pass (b is gone).
	pairs := []Pair{
		{Keep: "a", Drop: "b", Score: 0.9}, {Keep: "a", Drop: "c", Score: 0.8}, {Keep: "b", Drop: "d", Score: 0.8},
		{Keep: "c", Drop: "a", Score: 0.75}, {Keep: "e", Drop: "f", Score: 0.9, Block: "kind"}, {Keep: "g", Drop: "h", Score: 0.5},
	}
	var got []string
	for _, p := range Choose(pairs) {
		got = append(got, p.Drop+"→"+p.Keep)
	}
	if want := []string{"b→a", "c→a"}; !slices.Equal(got, want) {
		t.Errorf("Choose = %v, want %v", got, want)
	}
}

func TestFromNote(t *testing.T) {
	data := []byte("---\ntype: note\nkind: person\ntitle: Leo\naliases: [Leozinho]\nmaps: [moc-people]\nupdated: 2026-11-29\n---\n# Leo\n\n## Snapshot\nSon, 9.\n\n## Key facts\n- Leo swims with [[entity-mia]]. ^aaaa1111\n\n## Timeline\n- 2026-11-02 — Leo swam on Thursdays. (replaced) ^bbbb2222\n\n## Links\n- [[entity-ana]]\n- [[/_content/memory/notes/entity-porto.md]]\n- [[entity-leo]]\n")
	n, err := note.ParseNote(data)
	if err != nil {
		t.Fatal(err)
	}
	s := FromNote("entity-leo", n)
	if !slices.Equal(s.Links, []string{"entity-ana", "entity-porto", "entity-mia"}) || !slices.Equal(s.IDs, []string{"aaaa1111", "bbbb2222"}) ||
		!slices.Equal(s.Facts, []string{"Leo swims with [[entity-mia]]."}) || !slices.Contains(s.Text, "Leo swam on Thursdays.") {
		t.Errorf("%+v", s)
	}
}

// FuzzFind weighs boxes of three notes made from arbitrary text: it never panics, every pair whose names
// relate is weighed, a blocked pair never merges, a score stays in [0, 1], the kept and dropped notes are
// the pair's, and the order of the notes does not change the verdict. Seeds: testdata/fuzz/FuzzFind.
func FuzzFind(f *testing.F) {
	f.Fuzz(func(t *testing.T, ta, tb, tc, ka, kb, fa, fb, m, link string) {
		box := []Subject{
			{Name: "n-a", Kind: ka, Title: ta, Aliases: []string{tc}, Facts: []string{fa}, Maps: []string{m}, Links: []string{link}},
			{Name: "n-b", Kind: kb, Title: tb, Facts: []string{fb}, Maps: []string{m, "moc-people"}, Links: []string{link}},
			{Name: "n-c", Kind: kb, Title: tc},
		}
		verdict := func(ps []Pair) map[string]bool {
			out := map[string]bool{}
			for _, p := range ps {
				if p.Score < 0 || p.Score > 1 || (p.Block != "" && p.Merge()) || p.Keep == p.Drop || !strings.HasPrefix(p.Keep, "n-") || !strings.HasPrefix(p.Drop, "n-") {
					t.Fatalf("bad pair %+v", p)
				}
				out[min(p.Keep, p.Drop)+" "+max(p.Keep, p.Drop)] = p.Merge()
			}
			return out
		}
		one := verdict(Find(box))
		c := newCatalogue(slices.Clone(box)) // every pair whose names relate is weighed, not only those looked up
		for i, a := range c.subs {
			for _, b := range c.subs[i+1:] {
				if _, ok := relate(a, b); ok {
					if _, found := one[min(a.Name, b.Name)+" "+max(a.Name, b.Name)]; !found {
						t.Fatalf("%q and %q relate but were not weighed", a.Title, b.Title)
					}
				}
			}
		}
		slices.Reverse(box)
		if two := verdict(Find(box)); len(one) != len(two) {
			t.Fatalf("order changed the pairs: %v vs %v", one, two)
		} else {
			for k, v := range one {
				if two[k] != v {
					t.Fatalf("order changed the verdict on %s", k)
				}
			}
		}
	})
}
