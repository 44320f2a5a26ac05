package finding

import (
	"slices"
	"testing"
)

// TestSortIsTotal: findings equal in path, line and code (links checked at once, found in any order)
// come out in one order, by message, however they went in.
func TestSortIsTotal(t *testing.T) {
	want := []Finding{
		Warnf("/a.md", 1, "x", "the link https://b"),
		Warnf("/a.md", 4, "dead-url", "the link https://a"),
		Warnf("/a.md", 4, "dead-url", "the link https://c"),
		Warnf("/a.md", 4, "unchecked-url", "the link https://a"),
		Warnf("/b.md", 2, "x", "the link https://a"),
	}
	for _, in := range [][]Finding{
		slices.Clone(want),
		{want[4], want[2], want[3], want[1], want[0]},
		{want[2], want[1], want[0], want[4], want[3]},
	} {
		Sort(in)
		if !slices.Equal(in, want) {
			t.Errorf("sorted to %v, want %v", in, want)
		}
	}
}
