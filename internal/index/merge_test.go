package index

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// TestSmallWritesKeepFewSegments: a box that only grows by small writes (a line remembered at a time)
// keeps its full-text index in a few segments, since every search reads every segment. Without the
// merge every mergeEvery writes, FTS5's own merging leaves 16 after 320 writes.
func TestSmallWritesKeepFewSegments(t *testing.T) {
	ix, err := Open(filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for i := range 320 {
		p := fmt.Sprintf("/_content/memory/notes/entity-n%03d.md", i)
		if err := ix.ReplaceFile(p, []Doc{{Path: p, Kind: "note", Title: fmt.Sprintf("N%03d", i), Body: fmt.Sprintf("fact %d about gardening", i), Who: "owner", Trust: "own"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range []string{"fts", "names"} {
		var segments int
		if err := ix.rdb.QueryRowContext(context.Background(), `SELECT count(DISTINCT segid) FROM `+table+`_idx`).Scan(&segments); err != nil {
			t.Fatal(err)
		}
		if segments > 3 {
			t.Errorf("%s holds %d segments after 320 small writes", table, segments)
		}
	}
	hits, err := ix.Search(context.Background(), Query{Text: "gardening", Limit: 50})
	if err != nil || len(hits) != 50 {
		t.Fatalf("after the merges a search finds %d of 50: %v", len(hits), err)
	}
}
