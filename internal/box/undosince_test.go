package box

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/layout"
)

// "Undo everything Claude did since T" reverses every change of Claude's since T however many other
// entries came after them (here 2,100 job lines, more than any fixed window), and none from before T.
// The clock is the test's own.
func TestUndoSinceReadsTheWholeWindow(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	set := func(t time.Time) { mu.Lock(); defer mu.Unlock(); now = t }
	b := mustInit(t, Options{Now: clock})
	claude := Actor{Who: "Claude", Via: "mcp", Trust: "outside"}
	if _, err := b.Do(ctx, Change{Actor: claude, Op: "remember", Apply: write("/_content/before.md", "kept\n")}); err != nil {
		t.Fatal(err)
	}
	set(time.Date(2026, 3, 5, 9, 0, 0, 0, time.UTC))
	since := time.Date(2026, 3, 5, 8, 0, 0, 0, time.UTC)
	if _, err := b.Do(ctx, Change{Actor: claude, Op: "remember", Apply: write("/_content/after.md", "undone\n")}); err != nil {
		t.Fatal(err)
	}
	// A busy day after it: job records by the box, no undo of their own.
	day := filepath.Join(b.Root, filepath.FromSlash(strings.TrimPrefix(diary.Day(clock()), "/")))
	data, err := os.ReadFile(day)
	if err != nil {
		t.Fatal(err)
	}
	at := clock().Add(30 * time.Minute)
	for range 2100 {
		data = diary.Append(data, diary.Entry{ID: diary.NewID(at), Time: at.Format(time.RFC3339), Actor: "the box", Via: "job", Op: "job", Summary: "a record"})
	}
	if err := os.WriteFile(day, data, 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, b, "-c", "user.name=Box", "-c", "user.email=box@example.com", "-c", "core.hooksPath=/dev/null", "commit", "-qam", "a busy day")
	set(at.Add(time.Hour))

	done, todo, err := b.UndoSince(ctx, since, func(e diary.Entry) bool { return e.Actor == "Claude" }, owner)
	if err != nil || done != 1 || todo != 1 {
		t.Fatalf("undo since: done %d of %d, %v", done, todo, err)
	}
	if _, err := layout.Stat(b.Root, "/_content/after.md"); err == nil {
		t.Error("Claude's change since T is still there")
	}
	if got, ok := readFile(t, b, "/_content/before.md"); !ok || got != "kept\n" {
		t.Errorf("Claude's change before T was undone: %q %v", got, ok)
	}
}
