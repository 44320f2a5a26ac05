package index

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
)

// hugeBody is a note of about size bytes in which the query's words occur on every line: the shape that
// made FTS5's snippet() quadratic (every occurrence scored against every other).
func hugeBody(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "- %d: Leo went swimming with Mia at the lake and talked about cello lessons.\n", i)
	}
	return b.String()
}

// BenchmarkSearchHugeNote: a search whose best hit is a 6 MB note (the note is found by every word and
// quoted from its first maxReadBytes); next to it, the cost of the same search over ordinary notes alone.
func BenchmarkSearchHugeNote(b *testing.B) {
	for _, size := range []int{0, 6 << 20} {
		b.Run(fmt.Sprintf("note=%dMB", size>>20), func(b *testing.B) {
			ix := mustOpen(b)
			for i := range 200 {
				put(b, ix, note(fmt.Sprintf("/n/%d", i), "Note", fmt.Sprintf("Leo swims on day %d; Mia plays the cello.", i)))
			}
			if size > 0 {
				put(b, ix, note("/n/huge", "Huge", hugeBody(size)))
			}
			ctx := context.Background()
			for b.Loop() {
				hits, err := ix.Search(ctx, Query{Text: "leo swimming cello lessons", Partial: true})
				if err != nil || len(hits) == 0 {
					b.Fatal(len(hits), err)
				}
				if size > 0 && hits[0].Path != "/n/huge" {
					b.Fatalf("the huge note is not first: %v", hits[0].Path)
				}
			}
		})
	}
}

// BenchmarkSearchNoteOfHeadings: a note of nothing but headings holding the word, read to maxReadBytes
// (tens of thousands of heading lines): the snippet tells heading words in one pass over the body's words
// up to its last match, not a look at every heading for every occurrence (which took seconds).
func BenchmarkSearchNoteOfHeadings(b *testing.B) {
	ix := mustOpen(b)
	put(b, ix, note("/n/headings", "Headings", strings.Repeat("# z\nz\n", maxReadBytes/6)))
	ctx := context.Background()
	for b.Loop() {
		if hits, err := ix.Search(ctx, Query{Text: "z"}); err != nil || len(hits) != 1 {
			b.Fatal(len(hits), err)
		}
	}
}

// TestSearchStopsWhenContextEnds: reading candidates' text stops at the next step once the request's
// context ends, and the search returns the context's error; a context already ended reads nothing.
func TestSearchStopsWhenContextEnds(t *testing.T) {
	ix := mustOpen(t)
	const docs = 8
	for i := range docs {
		put(t, ix, note(fmt.Sprintf("/n/%d", i), "Big", hugeBody(maxReadBytes)))
	}
	q := Query{Text: "leo cello lessons", Partial: true}

	// Unhindered, the search reads the first maxReadBytes of every candidate.
	if _, err := ix.Search(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	full := ix.readBytes.Swap(0)
	if full < docs*(maxReadBytes-checkEvery) {
		t.Fatalf("an unhindered search read %d bytes, want about %d", full, docs*maxReadBytes)
	}

	ctx, cancel := context.WithCancel(context.Background())
	ix.onRead = cancel // the request ends after the first step of reading
	_, err := ix.Search(ctx, q)
	ix.onRead = nil
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if n := ix.readBytes.Swap(0); n != checkEvery {
		t.Errorf("read %d bytes after the context ended, want one step (%d) of %d", n, checkEvery, full)
	}

	if _, err := ix.Search(ctx, q); !errors.Is(err, context.Canceled) {
		t.Fatalf("an ended context: got %v, want context.Canceled", err)
	}
	if n := ix.readBytes.Load(); n != 0 {
		t.Errorf("an ended context read %d bytes", n)
	}
}

// TestBroadSearchRanksABoundedPool: when more than broadPool documents match, BM25 ranks the newest
// broadPool matches and the older ones that hold a term in a title or aliases; an older match with the
// word in its body only is not ranked (docs/SEARCH.md, "Cost"). With fewer matches every one is ranked.
func TestBroadSearchRanksABoundedPool(t *testing.T) {
	ix := mustOpen(t)
	put(t, ix, note("/old/title", "Lyon", "A city on the Rhône."), note("/old/body", "Notes", "Lyon, Lyon, Lyon."))
	var files []FileDocs
	for i := range broadPool {
		d := note(fmt.Sprintf("/new/%d", i), "Day", fmt.Sprintf("On day %d Ana met Ben for a long lunch near the station in Lyon, then walked home.", i))
		files = append(files, FileDocs{Path: d.Path, Docs: []Doc{d}})
	}
	if err := ix.ReplaceFiles(files); err != nil {
		t.Fatal(err)
	}
	ranked := func(text string) []string {
		var out []string
		for _, h := range search(t, ix, Query{Text: text, Limit: 3}) {
			out = append(out, h.Path)
		}
		return out
	}
	// broadPool + 2 documents match "lyon": the title holder is ranked, the old body-only note is not.
	if got := ranked("lyon"); len(got) != 3 || got[0] != "/old/title" || slices.Contains(got, "/old/body") {
		t.Errorf("lyon: %v, want /old/title first and no /old/body", got)
	}
	// Past the horizon the newest matches are ranked as before.
	if got := ranked("lyon day 7"); len(got) == 0 || got[0] != "/new/7" {
		t.Errorf("lyon day 7: %v, want /new/7 first", got)
	}
	if err := ix.DeleteFiles(func() []string {
		var ps []string
		for _, f := range files[:10] {
			ps = append(ps, f.Path)
		}
		return ps
	}()); err != nil {
		t.Fatal(err)
	}
	// Now fewer than broadPool match: every match is ranked, and the short body-only note comes second.
	if got := ranked("lyon"); len(got) != 3 || got[0] != "/old/title" || got[1] != "/old/body" {
		t.Errorf("lyon with %d matches: %v, want /old/title, /old/body first", broadPool-8, got)
	}
}

// TestShortSearchesRunUnwatched: the driver watches a statement's context with goroutines of its own,
// which cost more than a small search; a search of one or two single words with no filter runs its
// statements unwatched (its matches and its partial matches), any other watched, so that its statements
// stop as the context ends. Both are refused once the context has ended.
func TestShortSearchesRunUnwatched(t *testing.T) {
	ix := mustOpen(t)
	for i := range 20 {
		put(t, ix, note(fmt.Sprintf("/n/%d", i), "Note", fmt.Sprintf("Leo swims on day %d; Mia plays the cello.", i)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const searches = 200
	for _, c := range []struct {
		q       Query
		watched bool
	}{
		{Query{Text: "cello"}, false},
		{Query{Text: "leo cello"}, false},
		{Query{Text: "cello zebra", Partial: true}, false}, // no match: the partial matches' statements
		{Query{Text: "leo swims cello"}, true},
		{Query{Text: "cel*"}, true},
		{Query{Text: `"plays the cello"`}, true},
		{Query{Text: "cello", Kind: "note"}, true},
		{Query{Text: "cello", Limit: DefaultLimit + 1}, true},
	} {
		runtime.GC() // no collection's workers counted below
		before := goroutinesCreated()
		for range searches {
			if hits, err := ix.Search(ctx, c.q); err != nil || len(hits) == 0 {
				t.Fatalf("%q: %d hits, %v", c.q.Text, len(hits), err)
			}
		}
		// Two goroutines a statement when watched; none when not.
		n := goroutinesCreated() - before
		if watched := n >= searches; watched != c.watched {
			t.Errorf("%q (kind %q): %d searches started %d goroutines; want watched %v", c.q.Text, c.q.Kind, searches, n, c.watched)
		}
	}
	cancel()
	for _, words := range []string{"cello", "zebra", "leo swims cello"} { // zebra: no match, nothing to read
		if _, err := ix.Search(ctx, Query{Text: words}); !errors.Is(err, context.Canceled) {
			t.Errorf("%q with an ended context: got %v, want context.Canceled", words, err)
		}
	}
}

func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestLongPhrasesAreCut: FTS5 walks the documents of every word of a phrase, so a phrase counts its words
// against maxTerms and is cut where they end; a pasted page in quotes costs no more than 32 words.
func TestLongPhrasesAreCut(t *testing.T) {
	long := `"` + strings.Repeat("living in ", 800) + `"`
	terms := parse(long)
	if len(terms) != 1 || len(terms[0].words) != maxTerms {
		t.Fatalf("a 1,600-word phrase: %d terms, the first of %d words; want one of %d", len(terms), len(terms[0].words), maxTerms)
	}
	var words string
	for i := range 30 {
		words += fmt.Sprintf("word%d ", i)
	}
	if terms := parse(words + `extra "the cello"`); len(terms) != 31 {
		t.Fatalf("a phrase cut to a stopword: %d terms, want it dropped", len(terms))
	}
	terms = parse(words + `"cello lessons in lisbon"`)
	if len(terms) != 31 || strings.Join(terms[30].words, " ") != "cello lessons" {
		t.Fatalf("30 words and a phrase: %d terms, the last %v; want 31, the phrase cut to its first two words", len(terms), terms[len(terms)-1].words)
	}
}
