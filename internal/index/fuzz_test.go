package index

import (
	"context"
	"strings"
	"testing"
)

// FuzzQuery: no text makes the parser panic or the FTS5 query fail, and every term it emits is safe.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"leo", `"plays the cello"`, "cel*", `"unclosed`, "NEAR(a b)", "a AND OR NOT b", "*", `"" * ""`} {
		f.Add(s)
	}
	ix := mustOpen(f)
	put(f, ix, note("/a", "Leo", "Leo plays the cello in Lisbon; NEAR and AND are words too"))
	f.Fuzz(func(t *testing.T, text string) {
		terms := parse(text)
		for _, tm := range terms {
			for _, w := range tm.words {
				if w == "" || strings.ContainsAny(w, "\"*() :^{}+-") {
					t.Fatalf("unsafe word %q from %q", w, text)
				}
			}
		}
		if len(text) > maxTextBytes {
			return
		}
		for _, q := range []Query{{Text: text}, {Text: text, Partial: true, Kind: "note"}} {
			if _, err := ix.Search(context.Background(), q); err != nil {
				t.Fatalf("Search(%q): %v", text, err)
			}
		}
	})
}
