// Package memory owns the owner's memory: remember, forget, search, read, overview, recent, tidy and
// undo, as one Go API every surface uses. It writes only through the box transaction, never around it.
package memory

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/index"
	"github.com/boxmem/box/internal/schema"
)

// Options tune Open.
type Options struct {
	// Watch keeps the index current with a file watcher, and reconciles it in the background so Open
	// returns at once (the server). Without it (the CLI) the index is reconciled on the first read, in
	// the caller's time: a stat walk that reloads only changed files.
	Watch bool
	Now   func() time.Time // the clock; nil = time.Now
	// Progress hears a reconcile or reindex that has files to load (a progress bar); may be nil.
	Progress func(done, total int)
}

// Memory is an open memory over one box. It is safe for concurrent use.
type Memory struct {
	root    string
	box     *box.Box
	schemas *schema.Registry
	now     func() time.Time
	opts    Options

	ixMu sync.RWMutex // guards ix against Reindex swapping it
	ix   *index.Index

	fresh    sync.Once   // the CLI's one reconcile
	indexing atomic.Bool // a background reconcile is running
	stop     context.CancelFunc
	bg       sync.WaitGroup
}

// indexFile is the index inside the box's runtime folder.
const indexFile = ".box/index.db"

// Open opens the memory of the box at root: the box with schema validation and the index update wired
// into every write, and the index (rebuilt when missing, corrupt or of another version).
func Open(ctx context.Context, root string, opts Options) (*Memory, error) {
	const op = "memory.open"
	m := &Memory{opts: opts, now: opts.Now}
	if m.now == nil {
		m.now = time.Now
	}
	b, err := box.OpenWith(root, box.Options{Validate: m.validate, AfterCommit: m.afterCommit, Spool: m.spoolOps()})
	if err != nil {
		return nil, err
	}
	m.box, m.root = b, b.Root
	if m.schemas, err = schema.Load(m.root); err != nil {
		b.Close()
		return nil, errs.Wrap(op, errs.Other, err, "The box's schemas could not be read")
	}
	if m.ix, err = openIndex(m.root); err != nil {
		b.Close()
		return nil, err
	}
	if opts.Watch {
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		m.stop = cancel
		m.indexing.Store(true)
		m.fresh.Do(func() {}) // the background owns freshness
		m.bg.Add(2)
		go m.watchLoop(wctx)
		go m.catchUp(wctx)
	}
	return m, nil
}

// Close stops the watcher and closes the index and the box.
func (m *Memory) Close() error {
	if m.stop != nil {
		m.stop()
	}
	m.bg.Wait()
	m.ixMu.Lock()
	err := m.ix.Close()
	m.ixMu.Unlock()
	return errors.Join(err, m.box.Close())
}

// Box is the open box the memory writes through.
func (m *Memory) Box() *box.Box { return m.box }

// index runs fn with the current index under the read lock.
func (m *Memory) withIndex(fn func(ix *index.Index) error) error {
	m.ixMu.RLock()
	defer m.ixMu.RUnlock()
	return fn(m.ix)
}

// ensureFresh reconciles the index once, in the caller's time (the CLI). With Watch it does nothing:
// the background reconcile reports Indexing until it is done.
func (m *Memory) ensureFresh(ctx context.Context) {
	m.fresh.Do(func() { m.reconcile(ctx, m.opts.Progress) })
}

// reconcile brings the index in line with the tree: a stat walk of /_content/, then only new, changed
// and removed files are touched. Errors leave the index as it was; search still answers from it.
func (m *Memory) reconcile(ctx context.Context, progress func(done, total int)) (int, error) {
	current, err := m.stamps()
	if err != nil {
		return 0, err
	}
	var n int
	err = m.withIndex(func(ix *index.Index) error {
		n, err = ix.Reconcile(ctx, current, m.load, progress)
		return err
	})
	return n, err
}

// watchLoop follows the file watcher until Close; a watcher that fails (too many folders, say) is
// retried, not given up.
func (m *Memory) watchLoop(ctx context.Context) {
	defer m.bg.Done()
	for ctx.Err() == nil {
		index.Watch(ctx, m.root, m.onChange)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// catchUp is the background reconcile of a watched memory; Indexing is true until it ends.
func (m *Memory) catchUp(ctx context.Context) {
	defer m.bg.Done()
	defer m.indexing.Store(false)
	m.reconcile(ctx, m.opts.Progress)
}

// onChange reindexes the paths the watcher reports; a path that is gone is a file or a folder removed.
func (m *Memory) onChange(paths []string) {
	var files []string
	for _, p := range paths {
		if _, err := os.Stat(m.host(p)); err != nil && !strings.HasSuffix(p, ".md") {
			m.withIndex(func(ix *index.Index) error {
				have, err := ix.Files(context.Background())
				if err != nil {
					return err
				}
				var gone []string
				for f := range have {
					if strings.HasPrefix(f, p+"/") {
						gone = append(gone, f)
					}
				}
				return ix.DeleteFiles(gone)
			})
			continue
		}
		files = append(files, p)
	}
	m.refresh(files)
}

// afterCommit is box's hook: the index follows every commit before the writers hear "done".
func (m *Memory) afterCommit(_ context.Context, paths []string) { m.refresh(paths) }

// refresh reindexes the given box paths from disk: changed files are reloaded, missing ones dropped.
func (m *Memory) refresh(paths []string) error {
	var put []index.FileDocs
	var gone []string
	for _, p := range paths {
		if !indexable(p) {
			continue
		}
		fi, err := os.Stat(m.host(p))
		if err != nil {
			gone = append(gone, p)
			continue
		}
		st := stampOf(fi)
		docs, err := m.loadStamped(p, st)
		if err != nil {
			continue
		}
		put = append(put, index.FileDocs{Path: p, Stamp: st, Docs: docs})
	}
	return m.withIndex(func(ix *index.Index) error {
		if len(gone) > 0 {
			if err := ix.DeleteFiles(gone); err != nil {
				return err
			}
		}
		if len(put) > 0 {
			return ix.ReplaceFiles(put)
		}
		return nil
	})
}

// stamps walks /_content/ and returns the stamp of every indexable file.
func (m *Memory) stamps() (map[string]index.FileStamp, error) {
	out := map[string]index.FileStamp{}
	base := m.host("/_content")
	err := filepath.WalkDir(base, func(h string, d fs.DirEntry, err error) error {
		if err != nil {
			if h == base && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if h != base && hidden(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		p := m.boxPath(h)
		if !indexable(p) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		out[p] = stampOf(fi)
		return nil
	})
	return out, err
}

func stampOf(fi fs.FileInfo) index.FileStamp {
	return index.FileStamp{ModTime: fi.ModTime(), Size: fi.Size()}
}

// indexable reports the files the index holds: Markdown under /_content/, no hidden or temp files.
func indexable(p string) bool {
	if !strings.HasPrefix(p, "/_content/") || !strings.HasSuffix(p, ".md") {
		return false
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if hidden(seg) {
			return false
		}
	}
	return true
}

func hidden(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~") || name == "_tmp"
}

func (m *Memory) host(p string) string {
	return filepath.Join(m.root, filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

func (m *Memory) boxPath(h string) string {
	rel, _ := filepath.Rel(m.root, h)
	return "/" + filepath.ToSlash(rel)
}

// validate is box's Validate: schema checks of the cards a change writes. A finding the file already
// had on disk does not refuse the change (a hand-broken file is reported by validate, not frozen).
func (m *Memory) validate(root string, paths []string, files map[string][]byte) []finding.Finding {
	var out []finding.Finding
	for _, p := range paths {
		data, ok := files[p]
		if !ok || !(strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".card")) {
			continue
		}
		fs := m.schemas.CheckFile(p, data)
		if !finding.HasErrors(fs) {
			continue
		}
		before := map[string]bool{}
		if old, err := os.ReadFile(m.host(p)); err == nil {
			for _, f := range m.schemas.CheckFile(p, old) {
				before[f.Code+f.Message] = true
			}
		}
		for _, f := range fs {
			if !before[f.Code+f.Message] {
				out = append(out, f)
			}
		}
	}
	return out
}

// Reindex rebuilds the index from the tree; progress is called as files are read.
func (m *Memory) Reindex(ctx context.Context, progress func(done, total int)) (int, error) {
	const op = "memory.reindex"
	path := filepath.Join(m.root, filepath.FromSlash(indexFile))
	m.ixMu.Lock()
	m.ix.Close()
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
	ix, err := openIndex(m.root)
	if err != nil {
		m.ixMu.Unlock()
		return 0, errs.Wrap(op, errs.Other, err, "The search index could not be made again")
	}
	m.ix = ix
	m.ixMu.Unlock()
	m.fresh.Do(func() {})
	m.indexing.Store(true)
	defer m.indexing.Store(false)
	n, err := m.reconcile(ctx, progress)
	if err != nil {
		return n, errs.Wrap(op, errs.Other, err, "The search index could not be rebuilt")
	}
	return n, nil
}

// openIndex opens the index holding an OS lock beside it: index.Open deletes a file it cannot trust,
// and a file another process is creating at that moment looks untrustworthy.
func openIndex(root string) (*index.Index, error) {
	path := filepath.Join(root, filepath.FromSlash(indexFile))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, errs.Wrap("memory.open", errs.Other, err, "")
	}
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, errs.Wrap("memory.open", errs.Other, err, "The search index could not be locked")
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return nil, errs.Wrap("memory.open", errs.Other, err, "The search index could not be locked")
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return index.Open(path)
}
