// Package memory owns the owner's memory: remember, forget, search, read, overview, recent, tidy and
// undo, as one Go API every surface uses. It writes only through the box transaction, never around it.
package memory

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/index"
	"github.com/boxmem/box/internal/layout"
)

// Mode is how the memory keeps its index current.
type Mode int

const (
	// Reads reconciles the index on the first read, in the caller's time: a stat walk that reloads only
	// changed files (a CLI verb).
	Reads Mode = iota
	// Watch keeps the index current with a file watcher and reconciles it in the background, so opening
	// returns at once and search says "indexing" until it is done (box serve, box mcp).
	Watch
	// Light reads the index as it stands: the box's own writes, the server's watcher and every CLI read
	// keep it current, and a hook must not pay the reconcile walk on every prompt. Only an index that is
	// missing or unusable is rebuilt, once, in the caller's time.
	Light
)

// Options tune New.
type Options struct {
	Mode Mode
	// Progress hears a reconcile or reindex that has files to load (a progress bar); may be nil.
	Progress func(done, total int)
}

// Memory is the memory of one box. It is safe for concurrent use.
type Memory struct {
	root string
	box  *box.Box
	now  func() time.Time
	opts Options

	ixMu sync.Mutex
	ix   *index.Index // opened on first use: a `box remember` whose line another process commits never needs it

	fresh    sync.Once   // the one reconcile of Reads (and of Light, when the index needs a rebuild)
	indexing atomic.Bool // a background reconcile is running
	missed   atomic.Bool // an index update after a commit failed: the next read reconciles
	stop     context.CancelFunc
	bg       sync.WaitGroup

	planner atomic.Pointer[Planner] // set by the composition root: tidy asks it for a plan (planner.go)
}

// indexFile is the index inside the box's runtime folder.
const indexFile = ".box/index.db"

// BoxOptions are the write-transaction options the memory needs of the box handle it writes through:
// its spooled ops (so other processes' remembers batch with ours) and the inbox day's settling after a
// line-merging undo. The composition root adds them when it opens the box.
func BoxOptions(o box.Options) box.Options {
	o.Spool = spoolOps()
	o.Settle = settleDay
	return o
}

// New is the memory of the box b (opened with BoxOptions), on b's clock. It subscribes the index to b's
// commits; with Watch it also starts the watcher and a background reconcile, which Close stops.
func New(ctx context.Context, b *box.Box, opts Options) (*Memory, error) {
	m := &Memory{root: b.Root, box: b, now: b.Now, opts: opts}
	b.Subscribe(m.afterCommit)
	if opts.Mode == Watch {
		if _, err := m.index(); err != nil {
			return nil, err
		}
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		m.stop = cancel
		m.indexing.Store(true)
		m.fresh.Do(func() {}) // the background owns freshness
		// The reconcile scans the files only once the watcher watches them: a hand edit made between
		// the scan and the watch would be in neither.
		watching := make(chan struct{})
		var once sync.Once
		ready := func() { once.Do(func() { close(watching) }) }
		m.bg.Add(2)
		go m.watchLoop(wctx, ready)
		go m.catchUp(wctx, watching)
	}
	return m, nil
}

// Close stops the watcher and closes the index; the box is its opener's to close.
func (m *Memory) Close() error {
	if m.stop != nil {
		m.stop()
	}
	m.bg.Wait()
	m.ixMu.Lock()
	defer m.ixMu.Unlock()
	if m.ix == nil {
		return nil
	}
	ix := m.ix
	m.ix = nil
	return ix.Close()
}

// Indexing reports whether a background reconcile is still bringing the index up to date.
func (m *Memory) Indexing() bool { return m.indexing.Load() }

// Box is the box the memory writes through.
func (m *Memory) Box() *box.Box { return m.box }

// withIndex runs fn with the index, opening it first if need be.
func (m *Memory) withIndex(fn func(ix *index.Index) error) error {
	ix, err := m.index()
	if err != nil {
		return err
	}
	return fn(ix)
}

func (m *Memory) index() (*index.Index, error) {
	m.ixMu.Lock()
	defer m.ixMu.Unlock()
	if m.ix == nil {
		ix, err := openIndex(m.root)
		if err != nil {
			return nil, err
		}
		m.ix = ix
	}
	return m.ix, nil
}

// ensureFresh reconciles the index once, in the caller's time (Reads; Light only when the index needs a
// rebuild). With Watch it does nothing: the background reconcile reports Indexing until it is done. A
// reconcile that fails leaves the index as it was (search still answers from it) and is tried again on
// the next read.
func (m *Memory) ensureFresh(ctx context.Context) {
	m.fresh.Do(func() {
		if m.opts.Mode == Light {
			ix, err := m.index()
			if err != nil || !ix.NeedsRebuild() {
				return
			}
		}
		if _, err := m.reconcile(ctx, m.opts.Progress); err != nil {
			m.missed.Store(true)
		}
	})
	if m.missed.CompareAndSwap(true, false) {
		if _, err := m.reconcile(ctx, nil); err != nil {
			m.missed.Store(true) // still behind: try again on the next read
		}
	}
}

// reconcile brings the index in line with the tree: a stat walk of /_content/, then only new, changed
// and removed files are touched. Errors leave the index as it was; search still answers from it.
func (m *Memory) reconcile(ctx context.Context, progress func(done, total int)) (int, error) {
	var n int
	err := m.withIndex(func(ix *index.Index) error {
		have, err := ix.Files(ctx) // before the walk: what is indexed after it is another writer's, and kept
		if err != nil {
			return err
		}
		current, lines, err := m.stamps(ctx, ix)
		if err != nil {
			return err
		}
		load := func(p string) ([]index.Doc, error) {
			if d, ok := lines[p]; ok {
				return []index.Doc{d}, nil
			}
			return m.load(p)
		}
		n, err = ix.ReconcileSince(ctx, have, current, load, progress)
		return err
	})
	return n, err
}

// watchLoop follows the file watcher until Close; a watcher that fails (too many folders, say) is
// retried, not given up. ready is called once the watcher watches, or once it failed.
func (m *Memory) watchLoop(ctx context.Context, ready func()) {
	defer m.bg.Done()
	for ctx.Err() == nil {
		if err := index.Watch(ctx, m.root, m.onChange, ready); err != nil {
			m.missed.Store(true) // changes made while no watcher ran: the next read reconciles
			ready()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// catchUp is the background reconcile of a watched memory; Indexing is true until it ends.
func (m *Memory) catchUp(ctx context.Context, watching <-chan struct{}) {
	defer m.bg.Done()
	defer m.indexing.Store(false)
	select {
	case <-watching:
	case <-ctx.Done():
		return
	}
	if _, err := m.reconcile(ctx, m.opts.Progress); err != nil {
		m.missed.Store(true) // the next read tries again
	}
}

// onChange reindexes the paths the watcher reports; a path that is gone is a file or a folder removed.
func (m *Memory) onChange(paths []string) {
	var files []string
	for _, p := range paths {
		if _, err := m.stat(p); err != nil && !strings.HasSuffix(p, ".md") {
			err := m.withIndex(func(ix *index.Index) error {
				have, err := ix.FilesUnder(context.Background(), p+"/")
				if err != nil {
					return err
				}
				return ix.DeleteFiles(slices.Collect(maps.Keys(have)))
			})
			if err != nil {
				m.missed.Store(true)
			}
			continue
		}
		files = append(files, p)
	}
	if err := m.refresh(files); err != nil {
		m.missed.Store(true)
	}
}

// afterCommit is box's hook: the index follows every commit before the writers hear "done".
// A failed update is not the write's failure (the commit is durable): the next read reconciles instead.
func (m *Memory) afterCommit(_ context.Context, paths []string) {
	if err := m.refresh(paths); err != nil {
		m.missed.Store(true)
	}
}

// refresh reindexes the given box paths from disk: changed files are reloaded, missing ones dropped.
// An inbox day's lines are documents of their own (keys "day#id"), so appending a line to a long day
// indexes one line, not the whole day again.
func (m *Memory) refresh(paths []string) error {
	return m.withIndex(func(ix *index.Index) error {
		var put []index.FileDocs
		var gone []string
		for _, p := range paths {
			if !indexable(p) {
				continue
			}
			fi, err := m.stat(p)
			if err != nil {
				gone = append(gone, p)
				if isDay(p) {
					old, _ := ix.FilesUnder(context.Background(), p+"#")
					gone = append(gone, slices.Collect(maps.Keys(old))...)
				}
				continue
			}
			st := stampOf(fi)
			if isDay(p) {
				data, err := m.read(p)
				if err != nil {
					continue
				}
				old, err := ix.FilesUnder(context.Background(), p+"#")
				if err != nil {
					return err
				}
				for _, d := range inboxDocs(p, data) {
					ls := lineStamp(d)
					if was, ok := old[d.Path]; !ok || index.Changed(was, ls) {
						put = append(put, index.FileDocs{Path: d.Path, Stamp: ls, Docs: []index.Doc{d}})
					}
					delete(old, d.Path)
				}
				gone = append(gone, slices.Collect(maps.Keys(old))...)
				put = append(put, index.FileDocs{Path: p, Stamp: st})
				continue
			}
			docs, err := m.loadStamped(p, st)
			if err != nil {
				continue
			}
			put = append(put, index.FileDocs{Path: p, Stamp: st, Docs: docs})
		}
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

// stamps walks /_content/ and returns the stamp of every indexable file, and of every inbox line
// (keyed "day#id", stamped by a hash). An unchanged day's lines are taken from the index as they are;
// a changed day is read, and its lines are returned too, for loading.
func (m *Memory) stamps(ctx context.Context, ix *index.Index) (map[string]index.FileStamp, map[string]index.Doc, error) {
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
		if d.Type()&fs.ModeSymlink != 0 {
			fi, err = m.stat(p) // a link is indexed only when it stays inside the box
		}
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		out[p] = stampOf(fi)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	have, err := ix.FilesUnder(ctx, layout.InboxDir+"/")
	if err != nil {
		return nil, nil, err
	}
	byDay := map[string][]string{}
	for k := range have {
		if day, _, ok := strings.Cut(k, "#"); ok {
			byDay[day] = append(byDay[day], k)
		}
	}
	lines := map[string]index.Doc{}
	for p, st := range out {
		if !isDay(p) {
			continue
		}
		if old, ok := have[p]; ok && !index.Changed(old, st) {
			for _, k := range byDay[p] {
				out[k] = have[k]
			}
			continue
		}
		data, err := m.read(p)
		if err != nil {
			continue
		}
		for _, d := range inboxDocs(p, data) {
			out[d.Path] = lineStamp(d)
			lines[d.Path] = d
		}
	}
	return out, lines, nil
}

// lineStamp stamps an inbox line by what it says, who said it and when.
func lineStamp(d index.Doc) index.FileStamp {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d", d.Body, d.Who, d.Trust, d.Date.Unix()) // a hash never fails to write
	return index.FileStamp{Size: int64(len(d.Body)), Hash: strconv.FormatUint(h.Sum64(), 36)}
}

// isDay reports an inbox day file, /_content/inbox/YYYY-MM-DD.md.
func isDay(p string) bool {
	typ, _ := card.TypeOf(p, "")
	return typ == "inbox-day"
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

// read and stat go through layout's escape check: nothing a symlink points to outside the box is read,
// indexed or served (docs/SECURITY.md, "Paths, symlinks and the box tree").
func (m *Memory) read(p string) ([]byte, error) { return layout.ReadFile(m.root, p) }

func (m *Memory) stat(p string) (fs.FileInfo, error) { return layout.Stat(m.root, p) }

func (m *Memory) host(p string) string {
	return filepath.Join(m.root, filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

func (m *Memory) boxPath(h string) string {
	rel, _ := filepath.Rel(m.root, h)
	return "/" + filepath.ToSlash(rel)
}

// Reindex rebuilds the index from the tree; progress is called as files are read. The index is emptied
// in place, so a server that has it open follows the rebuild.
func (m *Memory) Reindex(ctx context.Context, progress func(done, total int)) (int, error) {
	const op = "memory.reindex"
	m.fresh.Do(func() {})
	if err := m.withIndex(func(ix *index.Index) error { return ix.Clear(ctx) }); err != nil {
		return 0, errs.Wrap(op, errs.Other, err, "The search index could not be emptied for the rebuild")
	}
	m.indexing.Store(true)
	defer m.indexing.Store(false)
	n, err := m.reconcile(ctx, progress)
	if err != nil {
		return n, errs.Wrap(op, errs.Other, err, "The search index could not be rebuilt")
	}
	return n, nil
}

// openIndex opens the box's index (index.Open locks beside the file while it decides whether to trust it).
func openIndex(root string) (*index.Index, error) {
	return index.Open(filepath.Join(root, filepath.FromSlash(indexFile)))
}

// Stale counts the files and inbox lines the index has not caught up with (new, changed or removed),
// without indexing them: box status reports it.
func (m *Memory) Stale(ctx context.Context) (int, error) {
	n := 0
	err := m.withIndex(func(ix *index.Index) error {
		current, _, err := m.stamps(ctx, ix)
		if err != nil {
			return err
		}
		have, err := ix.Files(ctx)
		if err != nil {
			return err
		}
		for p, st := range current {
			if old, ok := have[p]; !ok || index.Changed(old, st) {
				n++
			}
		}
		for p := range have {
			if _, ok := current[p]; !ok {
				n++
			}
		}
		return nil
	})
	return n, err
}
