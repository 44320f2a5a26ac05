// Package memory owns the owner's memory: remember, forget, search, read, overview, recent, tidy and
// undo, as one Go API every surface uses. It writes only through the box transaction, never around it.
package memory

import (
	"context"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// Options tune Open.
type Options struct {
	Watch bool             // keep the index current with a file watcher (the server)
	Now   func() time.Time // the clock; nil = time.Now
}

// Memory is an open memory over one box.
type Memory struct{}

// Open opens the memory of the box at root.
func Open(ctx context.Context, root string, opts Options) (*Memory, error) {
	return nil, notYet("memory.open")
}

func notYet(op string) error { return errs.E(op, errs.Other, "%s is not built yet", op) }

func (m *Memory) Remember(ctx context.Context, a Actor, in RememberInput) (RememberResult, error) {
	return RememberResult{}, notYet("memory.remember")
}
func (m *Memory) Forget(ctx context.Context, a Actor, in ForgetInput) (ForgetResult, error) {
	return ForgetResult{}, notYet("memory.forget")
}
func (m *Memory) Search(ctx context.Context, in SearchInput) (SearchResult, error) {
	return SearchResult{}, notYet("memory.search")
}
func (m *Memory) Read(ctx context.Context, name string) (Note, error) {
	return Note{}, notYet("memory.read")
}
func (m *Memory) Overview(ctx context.Context) (Overview, error) {
	return Overview{}, notYet("memory.overview")
}
func (m *Memory) Recent(ctx context.Context, n int) ([]RecentItem, error) {
	return nil, notYet("memory.recent")
}
func (m *Memory) Tidy(ctx context.Context, a Actor) (TidyResult, error) {
	return TidyResult{}, notYet("memory.tidy")
}
func (m *Memory) Undo(ctx context.Context, a Actor, entry string) (UndoResult, error) {
	return UndoResult{}, notYet("memory.undo")
}
func (m *Memory) Close() error { return nil }

// Reindex rebuilds the index from the tree; progress is called as files are read.
func (m *Memory) Reindex(ctx context.Context, progress func(done, total int)) (int, error) {
	return 0, notYet("memory.reindex")
}
