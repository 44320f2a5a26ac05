package index

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// FuzzQuery: no text makes the parser panic or the FTS5 query fail, and every term it emits is safe.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"leo", `"plays the cello"`, "cel*", `"unclosed`, "NEAR(a b)", "a AND OR NOT b", "*", `"" * ""`} {
		f.Add(s)
	}
	f.Add("leo day*")
	ix := mustOpen(f)
	put(f, ix, note("/a", "Leo", "Leo plays the cello in Lisbon; NEAR and AND are words too"))
	// More than broadPool documents hold "leo" and "day": those searches take the broad path.
	var files []FileDocs
	for i := range broadPool + 10 {
		d := note(fmt.Sprintf("/d/%d", i), "Day", fmt.Sprintf("Day %d: Leo met Mia", i))
		files = append(files, FileDocs{Path: d.Path, Docs: []Doc{d}})
	}
	if err := ix.ReplaceFiles(files); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		terms := parse(text)
		words := 0
		for _, tm := range terms {
			words += len(tm.words)
			for _, w := range tm.words {
				if w == "" || strings.ContainsAny(w, "\"*() :^{}+-") {
					t.Fatalf("unsafe word %q from %q", w, text)
				}
			}
		}
		if words > maxTerms {
			t.Fatalf("%d words from %q, want at most %d", words, text, maxTerms)
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

// FuzzRead: reading any text for any query never panics, finds terms only at real words, and the
// snippet, unmarked, is the text it quotes.
func FuzzRead(f *testing.F) {
	for _, s := range [][2]string{
		{"Leo plays the cello in Lisbon.", "cello lisbon"},
		{"a\nb\nc", `"a b" c*`},
		{"Café naïve résumé — e-mail leo@example.com", "cafe resume mail*"},
		{"**bold** … ellipsis", "bold ellipsis"},
		{"x\u0301y \xff\xfe broken utf-8", "xy broken"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, query string) {
		terms := parse(query)
		if len(terms) == 0 {
			return
		}
		m := newMatcher(terms, func() error { return nil })
		d, err := m.read([nFields]string{"", "", "", text})
		if err != nil {
			t.Fatal(err)
		}
		w := weights([]*docText{d}, len(terms))
		for _, hs := range d.hits {
			for i, p := range hs {
				if p < 3*fieldGap || i > 0 && hs[i-1] >= p {
					t.Fatalf("hit %d out of the body or out of order: %v", p, hs)
				}
			}
		}
		_ = proximity(d, w)
		snippet, plain := m.snippet(d, w)
		unmarked := strings.ReplaceAll(text, "**", "") // the text's own ** look like marks
		quoted := strings.TrimSuffix(strings.TrimPrefix(strings.ReplaceAll(snippet, "**", ""), "…"), "…")
		if !strings.Contains(unmarked, strings.TrimSpace(quoted)) {
			t.Fatalf("snippet %q does not quote %q", snippet, text)
		}
		if !strings.Contains(unmarked, strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(plain, "…"), "…"), "**", "")) {
			t.Fatalf("plain text %q is not from %q", plain, text)
		}
	})
}
