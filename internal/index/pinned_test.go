package index

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/pinned.json from what search answers now")

// pinnedHit is a Hit as testdata/pinned.json holds it: the score as its exact decimal.
type pinnedHit struct {
	Path, Kind, Title, Snippet, Text, Score, Date, Who, Trust string
	Partial                                                   bool `json:",omitempty"`
}

// TestSearchPinned: the hits of a mix of searches over a generated box of 1,500 notes and 500 inbox lines
// (names, short facts, long questions, phrases and prefixes, words hundreds of notes hold, a word none
// holds, filters, with and without partial matches) are, in order, field for field and score for score,
// those of testdata/pinned.json. A change to how search reads, counts or bounds its work must keep them
// (docs/SEARCH.md, "Cost"); after a deliberate change of the ranking, `go test ./internal/index -run
// TestSearchPinned -update` rewrites the file, and the diff shows what moved.
func TestSearchPinned(t *testing.T) {
	ix, err := Open(filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for chunk := range slices.Chunk(corpus(1500, 500), reconcileBatch) {
		if err := ix.ReplaceFiles(chunk); err != nil {
			t.Fatal(err)
		}
	}
	var qs []Query
	for i, q := range benchQueries()[:40] {
		q.Limit, q.Partial = 5, i%2 == 0
		qs = append(qs, q)
	}
	for _, w := range []string{"likes", "leo", "lisbon", "gardening", "leo lisbon", `"key facts"`, "lis*", "xylophone"} {
		qs = append(qs, Query{Text: w, Limit: 10, Partial: true}, Query{Text: w, Limit: 3})
	}
	qs = append(qs, Query{Text: "leo", Kind: "inbox", Limit: 5}, Query{Text: "likes coffee", Who: "claude", Limit: 5, Partial: true},
		Query{Text: "likes", Since: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Limit: 5})
	got := map[string][]pinnedHit{}
	var keys []string
	for _, q := range qs {
		hits, err := ix.Search(context.Background(), q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		key := q.Text + " limit " + strconv.Itoa(q.Limit)
		if q.Partial {
			key += " partial"
		}
		if q.Kind != "" || q.Who != "" || !q.Since.IsZero() {
			key += " filtered"
		}
		list := []pinnedHit{}
		for _, h := range hits {
			p := pinnedHit{Path: h.Path, Kind: h.Kind, Title: h.Title, Snippet: h.Snippet, Text: h.Text,
				Score: strconv.FormatFloat(h.Score, 'g', -1, 64), Who: h.Who, Trust: h.Trust, Partial: h.Partial}
			if !h.Date.IsZero() {
				p.Date = h.Date.Format(time.RFC3339)
			}
			list = append(list, p)
		}
		got[key] = list
		keys = append(keys, key)
	}
	file := filepath.Join("testdata", "pinned.json")
	if *update {
		data, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]pinnedHit
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Errorf("%d searches pinned, %d run", len(want), len(got))
	}
	broad := 0
	for _, k := range keys {
		w, g := want[k], got[k]
		if len(w) != len(g) {
			t.Errorf("%q: %d hits, want %d", k, len(g), len(w))
			continue
		}
		for i := range w {
			if w[i] != g[i] {
				t.Errorf("%q hit %d:\n got %+v\nwant %+v", k, i, g[i], w[i])
			}
		}
		if len(g) == 10 {
			broad++
		}
	}
	if broad < 4 {
		t.Errorf("only %d searches filled their list of 10: the pins no longer cover broad searches", broad)
	}
}
