package index

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestSmallWritesKeepFewSegments: a box that only grows by small writes (a line remembered at a time)
// keeps its full-text index in a few segments, since every search reads every segment. Without the
// merge every mergeEvery writes, FTS5's own merging leaves 16 after 320 writes.
func TestSmallWritesKeepFewSegments(t *testing.T) {
	ix := openIndex(t)
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

// TestReconcileLeavesWhatAnotherWriterIndexedSince: a file the reconcile loaded, then changed and indexed
// again by another writer (the watcher) before the reconcile's batch was written, keeps the other
// writer's newer text, and a file another writer added meanwhile stays.
func TestReconcileLeavesWhatAnotherWriterIndexedSince(t *testing.T) {
	ctx := context.Background()
	ix := openIndex(t)
	doc := func(p, body string) []Doc {
		return []Doc{{Path: p, Kind: "note", Title: "Garden", Body: body, Who: "owner", Trust: "own", Hash: body}}
	}
	const edited, other = "/_content/memory/notes/topic-garden.md", "/_content/memory/notes/topic-pond.md"
	if err := ix.ReplaceFile(edited, doc(edited, "tomatoes")); err != nil {
		t.Fatal(err)
	}
	current := map[string]FileStamp{edited: {Hash: "roses"}} // the scan: the garden note changed, the pond note is not there
	_, err := ix.Reconcile(ctx, current, func(p string) ([]Doc, error) {
		// Between the reconcile's read and its write, the owner edits both again and the watcher indexes them.
		if err := ix.ReplaceFile(edited, doc(edited, "tulips")); err != nil {
			return nil, err
		}
		if err := ix.ReplaceFile(other, doc(other, "frogs")); err != nil {
			return nil, err
		}
		return doc(p, "roses"), nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for words, want := range map[string]int{"tulips": 1, "roses": 0, "frogs": 1} {
		if hits, err := ix.Search(ctx, Query{Text: words, Limit: 5}); err != nil || len(hits) != want {
			t.Errorf("%q finds %d, want %d (%v)", words, len(hits), want, err)
		}
	}
}

// TestReconcileSinceKeepsWhatWasIndexedAfterHave: with the indexed stamps read before the scan, a note
// another writer indexed after that read, which the scan missed (its folder walked already), is kept.
func TestReconcileSinceKeepsWhatWasIndexedAfterHave(t *testing.T) {
	ctx := context.Background()
	ix := openIndex(t)
	have, err := ix.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const p = "/_content/memory/notes/topic-pond.md"
	if err := ix.ReplaceFile(p, []Doc{{Path: p, Kind: "note", Title: "Pond", Body: "frogs", Who: "owner", Trust: "own", Hash: "h"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.ReconcileSince(ctx, have, map[string]FileStamp{}, func(string) ([]Doc, error) { return nil, nil }, nil); err != nil {
		t.Fatal(err)
	}
	if hits, err := ix.Search(ctx, Query{Text: "frogs", Limit: 5}); err != nil || len(hits) != 1 {
		t.Fatalf("the note indexed after the scan began is gone: %d hits, %v", len(hits), err)
	}
}

// openIndex is a new, empty index in the test's temp dir, closed when the test ends.
func openIndex(t *testing.T) *Index {
	t.Helper()
	ix, err := Open(filepath.Join(t.TempDir(), "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// A reconcile of several batches that stops half way (a hook killed at its time budget, a file it could
// not read) leaves the index saying so: the next opener is told to reconcile, until one finishes.
func TestHalfDoneReconcileIsRebuiltNextTime(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	current := map[string]FileStamp{}
	for i := range reconcileBatch + 10 {
		current[fmt.Sprintf("/_content/memory/notes/topic-n%04d.md", i)] = FileStamp{ModTime: time.Unix(int64(i), 0), Size: 1}
	}
	load := func(fail string) func(string) ([]Doc, error) {
		return func(p string) ([]Doc, error) {
			if p == fail {
				return nil, errors.New("gone")
			}
			return []Doc{{Path: p, Kind: "note", Title: "n", Body: "frogs", Who: "owner", Trust: "own", Hash: "h"}}, nil
		}
	}
	last := fmt.Sprintf("/_content/memory/notes/topic-n%04d.md", reconcileBatch+5)
	if _, err := ix.ReconcileSince(ctx, map[string]FileStamp{}, current, load(last), nil); err == nil {
		t.Fatal("the reconcile read a file it could not")
	}
	if n, _ := ix.Count(ctx); n != reconcileBatch {
		t.Fatalf("%d documents after the first batch, want %d", n, reconcileBatch)
	}
	ix.Close()
	for round, want := range []bool{true, false} {
		if ix, err = Open(path); err != nil {
			t.Fatal(err)
		}
		if ix.NeedsRebuild() != want {
			t.Fatalf("round %d: NeedsRebuild %v, want %v", round, ix.NeedsRebuild(), want)
		}
		have, _ := ix.Files(ctx)
		if _, err := ix.ReconcileSince(ctx, have, current, load(""), nil); err != nil {
			t.Fatal(err)
		}
		ix.Close()
	}
}
