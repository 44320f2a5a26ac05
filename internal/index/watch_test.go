package index

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestWatchReportsExternalEdits(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"_content/memory/notes", "_config", ".box", "_content/_tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan []string, 16)
	done := startWatch(t, ctx, root, got)

	write := func(rel, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(want ...string) {
		t.Helper()
		seen := map[string]bool{}
		deadline := time.After(watchWait)
		for {
			select {
			case ps := <-got:
				for _, p := range ps {
					seen[p] = true
				}
			case <-deadline:
				t.Fatalf("within %v saw %v, want %v", watchWait, seen, want)
			}
			if allSeen(seen, want) {
				for p := range seen {
					if !slices.Contains(want, p) {
						t.Errorf("unexpected %s", p)
					}
				}
				return
			}
		}
	}

	write(".box/index.db-x", "ignored")
	write("_content/_tmp/scratch.md", "ignored")
	write("_content/memory/notes/.entity-leo.md.swp", "ignored")
	write("_content/memory/notes/entity-leo.md~", "ignored")
	write("_content/memory/notes/entity-leo.md", "# Leo\n")
	expect("/_content/memory/notes/entity-leo.md")

	// A new folder is watched, and a file written into it at once is reported.
	if err := os.MkdirAll(filepath.Join(root, "_content/recipes/soups"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("_content/recipes/soups/leek.md", "leek")
	expect("/_content/recipes/soups/leek.md")
	time.Sleep(50 * time.Millisecond)
	write("_content/recipes/soups/leek.md", "leek and potato")
	write("_config/settings.card", "---\n---\n")
	expect("/_content/recipes/soups/leek.md", "/_config/settings.card")

	if err := os.Remove(filepath.Join(root, "_content/memory/notes/entity-leo.md")); err != nil {
		t.Fatal(err)
	}
	expect("/_content/memory/notes/entity-leo.md")

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// watchWait bounds the wait for a report: far past the debounce, for a loaded machine.
const watchWait = 30 * time.Second

// startWatch runs the watcher until ctx ends, sending its reports to got, and returns once it watches
// every folder; its error comes on the channel returned.
func startWatch(t *testing.T, ctx context.Context, root string, got chan<- []string) <-chan error {
	t.Helper()
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- Watch(ctx, root, func(p []string) { got <- p }, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the watcher stopped before it watched: %v", err)
	case <-time.After(watchWait):
		t.Fatal("the watcher did not start")
	}
	return done
}

func allSeen(seen map[string]bool, want []string) bool {
	for _, w := range want {
		if !seen[w] {
			return false
		}
	}
	return true
}

func TestIgnored(t *testing.T) {
	for name, want := range map[string]bool{
		"entity-leo.md": false, "moc-people.md": false, "2026-11-29.md": false,
		".entity-leo.md.swp": true, "entity-leo.md~": true, "4913": true, "#x#": true, "a.tmp": true,
		".DS_Store": true, "entity-leo.md.tmp-123": true,
	} {
		if got := ignored(name, false); got != want {
			t.Errorf("ignored(%q) = %v", name, got)
		}
	}
	for p, want := range map[string]bool{
		"_content/a.md": true, "_config/x.card": true, "_bookkeeping/diary/x.jsonl": false,
		".box/index.db": false, "_content/x/_tmp/y.md": false, "_content/.git/HEAD": false, "README.md": false,
	} {
		if _, got := boxPath("/r", "/r/"+p); got != want {
			t.Errorf("boxPath(%q) = %v", p, got)
		}
	}
}

// A folder linked in from outside the box is never watched: its files are not the box's, and the
// link itself is reported as one path for the caller's escape check (docs/SECURITY.md).
func TestWatchNeverFollowsLinksOut(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(root, "_content/docs"), 0o755)
	if err := os.Symlink(out, filepath.Join(root, "_content/docs/before")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan []string, 16)
	startWatch(t, ctx, root, got)
	seen := map[string]bool{}
	waitFor := func(p string) {
		t.Helper()
		for deadline := time.After(watchWait); !seen[p]; {
			select {
			case ps := <-got:
				for _, p := range ps {
					seen[p] = true
				}
			case <-deadline:
				t.Fatalf("%s was not reported: %v", p, seen)
			}
		}
	}
	if err := os.Symlink(out, filepath.Join(root, "_content/docs/after")); err != nil {
		t.Fatal(err)
	}
	waitFor("/_content/docs/after") // the watcher has met the link before anything is written through it
	os.WriteFile(filepath.Join(out, "secret.md"), []byte("outside"), 0o644)
	os.WriteFile(filepath.Join(root, "_content/docs/real.md"), []byte("inside"), 0o644)
	waitFor("/_content/docs/real.md")
	for p := range seen {
		if p != "/_content/docs/real.md" && p != "/_content/docs/after" {
			t.Errorf("reported %s, which lies through a link out of the box", p)
		}
	}
}
