package index

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// Many openers creating the same new index at once (the CLI, the server and hooks starting together)
// must not take each other's half-made file for a corrupt one and delete it under the others.
func TestConcurrentOpenersOfANewIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ix, err := Open(path)
			if err != nil {
				errs <- err
				return
			}
			defer ix.Close()
			p := fmt.Sprintf("/_content/doc-%d.md", i)
			errs <- ix.ReplaceFile(p, []Doc{{Path: p, Kind: "doc", Title: "doc", Body: fmt.Sprintf("word%d", i)}})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got, err := ix.Count(context.Background()); err != nil || got != n {
		t.Fatalf("%d documents after %d concurrent openers wrote one each (%v)", got, n, err)
	}
}
