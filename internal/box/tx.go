package box

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/layout"
)

// Actor is who made a change and how far it is trusted.
type Actor struct {
	Who   string `json:"who"`             // "owner", "Claude", "a page: recipes"
	Via   string `json:"via,omitempty"`   // "cli", "mcp", "web", "hook"
	Host  string `json:"host,omitempty"`  // the assistant's host, when known
	Conn  string `json:"conn,omitempty"`  // the connection it came through (a key or OAuth grant id), when any
	Trust string `json:"trust,omitempty"` // "own" or "outside"; empty means own
}

// Change is one write through the box. Apply reads and writes through the Tx; returning an error
// (or writing a card Validate refuses) leaves the box untouched.
type Change struct {
	Actor   Actor
	Op      string // remember, forget, tidy, undo, init, edit, …
	Summary string // one plain sentence for the diary and the commit
	Reason  string
	Switch  string // the switch that allowed it (change, send, …)
	UndoOf  string // for an undo: the entry it reverses
	// Permanent changes keep no undo in their diary line: the gate's paper trail (a card made or decided)
	// and an erase are records of what happened, and reversing them would reopen a decided card.
	Permanent bool
	Apply     func(tx *Tx) error
	// Spool is the change as data, used instead of Apply: a registered op (Options.Spool) and its
	// arguments, so that a writer in another process can apply it in its own batch.
	Spool *SpoolOp
	// EntryID, when set, is the diary entry id the change gets (diary.NewID): a caller that names the
	// entry in another change of the same commit (the job runner's record) chooses it in advance.
	EntryID string

	entryID string // set in advance for spooled changes
}

// Result is an acknowledged change: it is committed.
type Result struct {
	EntryID string   `json:"entryId"`
	Commit  string   `json:"commit"`
	Paths   []string `json:"paths,omitempty"`
}

// pending is one change waiting in the in-process queue, or a group of changes (DoAll) that commit
// together or not at all.
type pending struct {
	ctx    context.Context
	c      Change
	more   []Change // the rest of a group, after c
	res    Result
	all    []Result // a group's results, c's first
	err    error
	done   chan struct{}
	lead   chan struct{}
	leader bool
	taken  bool
	// spoolID is the entry id of a change also offered through the spool; remote marks a change read
	// from another process's spool request.
	spoolID string
	remote  bool
}

// Do runs a change as a write transaction and returns once its commit exists. Concurrent calls are
// batched: one caller (the leader) takes the lock and commits every change queued so far in one commit,
// each with its own diary line and Box-Entry trailer; a change that fails is rolled back alone.
// A change given as data (Spool) is also offered to writers in other processes (see spool.go).
func (b *Box) Do(ctx context.Context, c Change) (Result, error) {
	if c.Apply == nil && c.Spool != nil {
		return b.doSpooled(ctx, c)
	}
	if c.Apply == nil {
		return Result{}, errs.E("box.do", errs.Invalid, "a change needs something to apply")
	}
	p := &pending{ctx: ctx, c: c, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	b.enqueue(p)
	return b.wait(ctx, p)
}

// DoAll runs changes as one write transaction that commits all of them or none: each keeps its own
// diary line (and its own undo), and they share one commit. The gate uses it to run an approved action
// and put its card away together, so that an approved card can never be approved again.
func (b *Box) DoAll(ctx context.Context, cs ...Change) ([]Result, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	for _, c := range cs {
		if c.Apply == nil {
			return nil, errs.E("box.do", errs.Invalid, "a change needs something to apply")
		}
	}
	p := &pending{ctx: ctx, c: cs[0], more: cs[1:], done: make(chan struct{}), lead: make(chan struct{}, 1)}
	b.enqueue(p)
	if _, err := b.wait(ctx, p); err != nil {
		return nil, err
	}
	return p.all, nil
}

// Subscribe registers fn to run after each commit with the paths it changed, before any writer of that
// commit is acknowledged (the search index follows every write this way). The composition root
// registers every subscriber before the box takes its first write.
func (b *Box) Subscribe(fn func(ctx context.Context, paths []string)) {
	b.subMu.Lock()
	defer b.subMu.Unlock()
	b.subs = append(b.subs, fn)
}

func (b *Box) enqueue(p *pending) {
	b.mu.Lock()
	b.queue = append(b.queue, p)
	if !b.leading {
		b.leading = true
		p.leader = true
		p.lead <- struct{}{}
	}
	b.mu.Unlock()
}

// dequeue takes p out of the queue if no batch has it yet.
func (b *Box) dequeue(p *pending) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p.taken || p.leader {
		return false
	}
	for i, q := range b.queue {
		if q == p {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			return true
		}
	}
	return false
}

// wait waits for p's outcome, leading a batch when its turn comes. A spooled change also watches for
// a result written by a writer in another process.
func (b *Box) wait(ctx context.Context, p *pending) (Result, error) {
	var tick <-chan time.Time
	if p.spoolID != "" {
		t := time.NewTicker(spoolPoll)
		defer t.Stop()
		tick = t.C
	}
	cancelled := ctx.Done()
	queued := true
	for {
		select {
		case <-p.done:
			return p.res, p.err
		case <-p.lead:
			b.lead()
			return p.res, p.err
		case <-tick:
			if !b.resultReady(p.spoolID) {
				continue
			}
			if queued && !b.dequeue(p) {
				tick = nil // a batch of ours has it and will read the result
				continue
			}
			return b.takeResult(p.spoolID)
		case <-cancelled:
			cancelled = nil
			if !b.dequeue(p) {
				continue // in a batch: its outcome is decided, wait for it
			}
			queued = false
			if p.spoolID == "" || b.cancelSpooled(p.spoolID) {
				return Result{}, ctx.Err()
			}
			// another process claimed it: wait for its result
		}
	}
}

// lead commits one batch from the head of the queue (the leader is always at its head) and hands the
// lead to the next waiting change, if any.
func (b *Box) lead() {
	b.mu.Lock()
	n := min(len(b.queue), b.opts.MaxBatch)
	batch := append([]*pending(nil), b.queue[:n]...)
	b.queue = b.queue[n:]
	for _, p := range batch {
		p.taken = true
	}
	b.mu.Unlock()

	b.commitBatch(batch)
	for _, p := range batch {
		close(p.done)
	}

	b.mu.Lock()
	if len(b.queue) == 0 {
		b.leading = false
	} else {
		next := b.queue[0]
		next.leader = true
		next.lead <- struct{}{}
	}
	b.mu.Unlock()
}

// givenUp is ctx for the wait for the box lock: it ends once every caller of the batch has given up (an
// HTTP call past its deadline), since nobody is left to write for; nothing has been written yet, and a
// spooled request is withdrawn (settleUnlocked), so the change is dropped whole. Once the lock is held the
// batch runs on ctx, which nobody cancels, so a commit is never torn.
func givenUp(ctx context.Context, ps []*pending) (context.Context, context.CancelFunc) {
	wait, cancel := context.WithCancel(ctx)
	go func() {
		for _, p := range ps {
			if p.remote { // another process's request: its writer is waiting for the answer
				return
			}
			select {
			case <-p.ctx.Done():
			case <-wait.Done():
				return
			}
		}
		cancel()
	}()
	return wait, cancel
}

// batch is the state of one group commit: the tree as the changes so far left it.
type batch struct {
	b       *Box
	initial map[string]fileState // on disk before the batch
	current map[string]fileState // after the changes applied so far
	order   []string             // paths in first-touch order
}

func (bt *batch) read(p string) (fileState, error) {
	if st, ok := bt.current[p]; ok {
		return st, nil
	}
	st, err := bt.b.readDisk(p)
	if err != nil {
		return st, err
	}
	bt.initial[p] = st
	bt.current[p] = st
	bt.order = append(bt.order, p)
	return st, nil
}

// applied is one change that went through, waiting for the commit.
type applied struct {
	p     *pending
	entry diary.Entry
}

// commitBatch applies, validates, writes and commits a batch, filling every pending's result.
func (b *Box) commitBatch(ps []*pending) {
	ctx := context.WithoutCancel(ps[0].ctx)
	fail := func(ps []*pending, err error) {
		for _, p := range ps {
			if p.err == nil {
				p.err = err
			}
		}
	}
	wait, stop := givenUp(ctx, ps)
	_, unlock, err := b.lock(wait, b.answeredPoll(ps))
	gaveUp := wait.Err() != nil // read before stop, which ends wait whatever happened
	stop()
	if err != nil {
		if gaveUp && ps[0].ctx.Err() != nil {
			err = ps[0].ctx.Err() // every caller gave up (a request's deadline): say so, not "cancelled"
		}
		b.settleUnlocked(ps, err)
		return
	}
	defer unlock()
	if err := b.git.Check(ctx); err != nil { // refused before anything is written (docs/SECURITY.md, "Git")
		b.settleUnlocked(ps, err)
		return
	}
	ps = b.claimSpool(ps)
	defer b.finishSpool(ps)

	bt := &batch{b: b, initial: map[string]fileState{}, current: map[string]fileState{}}
	var ok []applied
	blobs := map[string][]byte{}
	for _, p := range ps {
		if p.err != nil || p.res.EntryID != "" {
			continue // decided while claiming: another process applied it
		}
		if err := p.ctx.Err(); err != nil && !p.remote {
			p.err = err
			continue
		}
		es, err := b.applyGroup(ctx, bt, append([]Change{p.c}, p.more...), blobs)
		if err != nil {
			p.err = err
			continue
		}
		for _, e := range es {
			ok = append(ok, applied{p: p, entry: e})
		}
	}
	if len(ok) == 0 {
		return
	}
	hash, err := b.commitApplied(ctx, bt, ok, blobs, spoolIDs(ps))
	if err != nil {
		var ps2 []*pending
		for _, a := range ok {
			ps2 = append(ps2, a.p)
		}
		fail(ps2, err)
		return
	}
	var all []string
	for _, a := range ok {
		r := Result{EntryID: a.entry.ID, Commit: hash, Paths: a.entry.Paths}
		if len(a.p.all) == 0 {
			a.p.res = r
		}
		a.p.all = append(a.p.all, r)
		all = append(all, a.entry.Paths...)
	}
	slices.Sort(all)
	b.notify(ctx, slices.Compact(all))
	b.finishSpool(ps)
	b.dropJournal()
}

// Refusals are the findings that would refuse a write of files (box paths → bytes), by the box's own
// validation, without writing anything: a caller that prepares many files (an import) checks each first.
func (b *Box) Refusals(paths []string, files map[string][]byte) []finding.Finding {
	if b.opts.Validate == nil {
		return nil
	}
	var out []finding.Finding
	for _, f := range b.opts.Validate(b.Root, paths, files) {
		if f.Severity == finding.Error {
			out = append(out, f)
		}
	}
	return out
}

// notify runs the commit subscribers.
func (b *Box) notify(ctx context.Context, paths []string) {
	b.subMu.Lock()
	subs := b.subs
	b.subMu.Unlock()
	for _, fn := range subs {
		fn(ctx, paths)
	}
}

// applyGroup runs a group's changes in order against the batch state; if one fails, the batch state is
// as it was before the first.
func (b *Box) applyGroup(ctx context.Context, bt *batch, cs []Change, blobs map[string][]byte) ([]diary.Entry, error) {
	if len(cs) == 1 {
		e, err := b.applyOne(ctx, bt, cs[0], blobs)
		if err != nil {
			return nil, err
		}
		return []diary.Entry{e}, nil
	}
	saved := maps.Clone(bt.current)
	var es []diary.Entry
	for _, c := range cs {
		e, err := b.applyOne(ctx, bt, c, blobs)
		if err != nil {
			bt.current = saved
			return nil, err
		}
		es = append(es, e)
	}
	return es, nil
}

// applyOne runs one change against the batch state; on any failure the batch state is as before.
func (b *Box) applyOne(ctx context.Context, bt *batch, c Change, blobs map[string][]byte) (e diary.Entry, err error) {
	tx := &Tx{ctx: ctx, bt: bt, writes: map[string]fileState{}, pre: map[string]fileState{}, init: c.Op == "init"}
	defer func() {
		if r := recover(); r != nil {
			err = errs.E("box.do", errs.Other, "the change failed: %v", r)
		}
	}()
	if err := c.Apply(tx); err != nil {
		return diary.Entry{}, err
	}
	var paths []string
	files := map[string][]byte{}
	for _, p := range tx.order {
		if tx.pre[p].equal(tx.writes[p]) {
			continue
		}
		paths = append(paths, p)
		if st := tx.writes[p]; st.exists {
			files[p] = st.data
		}
	}
	if b.opts.Validate != nil && len(files) > 0 {
		var written []string
		for _, p := range paths {
			if _, ok := files[p]; ok {
				written = append(written, p)
			}
		}
		for _, f := range b.opts.Validate(b.Root, written, files) {
			if f.Severity == finding.Error {
				return diary.Entry{}, errs.E("box.do", errs.Invalid, "refused: %s", f.String())
			}
		}
	}
	now := b.opts.Now().UTC()
	if c.entryID == "" {
		c.entryID = c.EntryID
	}
	if c.entryID == "" {
		c.entryID = diary.NewID(now)
	}
	e = diary.Entry{
		ID: c.entryID, Time: now.Format(time.RFC3339Nano),
		Actor: c.Actor.Who, Via: c.Actor.Via, Host: c.Actor.Host, Conn: c.Actor.Conn, Trust: trust(c.Actor),
		Op: c.Op, Summary: c.Summary, Reason: c.Reason, Switch: c.Switch, UndoOf: c.UndoOf, Paths: paths,
	}
	for _, p := range paths {
		pre, post := tx.pre[p], tx.writes[p]
		if !c.Permanent {
			e.Undo = append(e.Undo, diary.FileUndo{Path: p, Pre: b.blob(pre, blobs), Post: b.blob(post, blobs)})
		}
		bt.current[p] = post
	}
	day := diary.Day(now)
	st, err := bt.read(day)
	if err != nil {
		return diary.Entry{}, err
	}
	bt.current[day] = fileState{data: diary.Append(st.data, e), exists: true}
	return e, nil
}

func trust(a Actor) string {
	if a.Trust == "" {
		return "own"
	}
	return a.Trust
}

// blob notes a state's content for storing and returns its id ("" when absent).
func (b *Box) blob(st fileState, blobs map[string][]byte) string {
	if !st.exists {
		return ""
	}
	id := b.git.BlobID(st.data)
	blobs[id] = st.data
	return id
}

// commitApplied writes the batch to disk and commits it; on failure the tree goes back as it was.
// Durability costs about three flushes per batch, however many changes it carries:
//
//	undo blobs, journal, temp files written → fsync all in parallel → renames, git add →
//	git commit (git fsyncs its objects and ref) → fsync the renamed folders → ack
//
// The first flush makes the journal and every new byte durable before anything is replaced; the
// last ones make the renames and the commit durable before any writer hears "done".
func (b *Box) commitApplied(ctx context.Context, bt *batch, ok []applied, blobs map[string][]byte, spooled []string) (string, error) {
	var paths []string
	j := journal{Spooled: spooled}
	j.Head, _ = b.git.Head(ctx)
	for _, a := range ok {
		j.Entries = append(j.Entries, a.entry.ID)
	}
	for _, p := range bt.order {
		if bt.initial[p].equal(bt.current[p]) {
			continue
		}
		// Again for every path, the diary's day included (the box writes it, past the change's guard),
		// and for a link made since the change wrote.
		if err := b.noLinkedFolder("box.do", p); err != nil {
			return "", err
		}
		paths = append(paths, p)
		j.Files = append(j.Files, journalEntry{Path: p, Pre: b.blob(bt.initial[p], blobs), Exists: bt.initial[p].exists})
	}
	datas := make([][]byte, 0, len(blobs))
	for _, d := range blobs {
		datas = append(datas, d)
	}
	ids, err := b.git.WriteBlobs(ctx, datas)
	if err != nil {
		return "", errs.Wrap("box.do", errs.Other, err, "cannot store the undo copies")
	}
	if err := b.writeJournal(j); err != nil {
		return "", errs.Wrap("box.do", errs.Other, err, "cannot start the write")
	}
	temps, dirs, err := b.prepare(paths, bt.current)
	if err == nil {
		err = b.syncBefore(ids, temps)
	}
	if err != nil {
		for _, t := range temps {
			_ = os.Remove(t)
		}
		b.dropJournal()
		return "", errs.Wrap("box.do", errs.Other, err, "cannot write the change")
	}
	hash, err := b.renameAndCommit(ctx, paths, temps, bt, ok)
	if err != nil {
		if rerr := b.recoverLocked(ctx); rerr != nil {
			err = errors.Join(err, errs.Wrap("box.do", errs.Other, rerr, "and the rollback failed"))
		}
		return "", err
	}
	if err := syncAll(dirs); err != nil {
		return "", errs.Wrap("box.do", errs.Other, err, "the change is committed but the disk did not confirm it")
	}
	return hash, nil // the caller drops the journal once every writer is answered
}

// syncBefore makes the undo blobs, the journal and the temp files durable, with their folders.
func (b *Box) syncBefore(blobIDs []string, temps map[string]string) error {
	files := []string{filepath.Join(b.Root, filepath.FromSlash(journalPath))}
	dirs := map[string]bool{filepath.Join(b.Root, ".box"): true, filepath.Join(b.Root, filepath.FromSlash(tmpDir)): true}
	for _, id := range blobIDs {
		p := b.git.LoosePath(id)
		files = append(files, p)
		dirs[filepath.Dir(p)] = true
	}
	for _, t := range temps {
		files = append(files, t)
	}
	if err := syncAll(files); err != nil {
		return err
	}
	return syncAll(keys(dirs))
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// prepare writes each new file's bytes to a temp file (not yet flushed) and makes missing folders.
// It returns the temp files and the folders whose entries the batch changes (to fsync at the end).
func (b *Box) prepare(paths []string, states map[string]fileState) (map[string]string, []string, error) {
	tdir := filepath.Join(b.Root, filepath.FromSlash(tmpDir))
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return nil, nil, err
	}
	temps := map[string]string{}
	dirs := map[string]bool{}
	for _, p := range paths {
		h, err := b.host(p)
		if err != nil {
			return temps, nil, err
		}
		dirs[filepath.Dir(h)] = true
		st := states[p]
		if !st.exists {
			continue
		}
		if err := b.mkdirs(filepath.Dir(h), dirs); err != nil {
			return temps, nil, err
		}
		perm := os.FileMode(0o644)
		if fi, err := os.Stat(h); err == nil {
			perm = fi.Mode().Perm()
		}
		t, err := writeTemp(tdir, st.data, perm, false)
		if err != nil {
			return temps, nil, err
		}
		temps[p] = t
	}
	return temps, keys(dirs), nil
}

func (b *Box) renameAndCommit(ctx context.Context, paths []string, temps map[string]string, bt *batch, ok []applied) (string, error) {
	for _, p := range paths {
		h, err := b.host(p)
		if err != nil {
			return "", err
		}
		if !bt.current[p].exists {
			if err := os.Remove(h); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", errs.Wrap("box.do", errs.Other, err, "cannot remove "+p)
			}
			b.pruneEmpty(filepath.Dir(h))
			continue
		}
		err = os.Rename(temps[p], h)
		if errors.Is(err, syscall.EXDEV) {
			_ = os.Remove(temps[p])
			err = b.writeAtomic(h, bt.current[p].data)
		}
		if err != nil {
			return "", errs.Wrap("box.do", errs.Other, err, "cannot write "+p)
		}
	}
	err := b.git.Add(ctx, gitPaths(paths)...)
	if err != nil && b.removeOldIndexLock() {
		err = b.git.Add(ctx, gitPaths(paths)...)
	}
	if err != nil {
		return "", errs.Wrap("box.do", errs.Other, err, "cannot stage the change in git")
	}
	subject, body, trailers := commitMessage(ok)
	hash, err := b.git.Commit(ctx, subject+"\n"+body, trailers)
	if err != nil {
		return "", errs.Wrap("box.do", errs.Other, err, "cannot commit the change")
	}
	return hash, nil
}

// commitMessage: one change → its summary; several → a count and one line each. Trailers repeat per
// change, each group starting with Box-Entry.
func commitMessage(ok []applied) (string, string, []git.Trailer) {
	var ts []git.Trailer
	var body strings.Builder
	for _, a := range ok {
		e := a.entry
		ts = append(ts, git.Trailer{Key: "Box-Entry", Value: e.ID}, git.Trailer{Key: "Box-Actor", Value: e.Actor})
		if e.Via != "" {
			ts = append(ts, git.Trailer{Key: "Box-Via", Value: e.Via})
		}
		ts = append(ts, git.Trailer{Key: "Box-Trust", Value: e.Trust}, git.Trailer{Key: "Box-Op", Value: e.Op})
		if e.Switch != "" {
			ts = append(ts, git.Trailer{Key: "Box-Switch", Value: e.Switch})
		}
		if e.UndoOf != "" {
			ts = append(ts, git.Trailer{Key: "Box-Undo-Of", Value: e.UndoOf})
		}
		if len(ok) > 1 {
			fmt.Fprintf(&body, "- %s\n", summaryOf(e))
		}
	}
	if len(ok) == 1 {
		return summaryOf(ok[0].entry), "", ts
	}
	return fmt.Sprintf("%d changes: %s …", len(ok), summaryOf(ok[0].entry)), body.String(), ts
}

func summaryOf(e diary.Entry) string {
	if e.Summary != "" {
		return e.Summary
	}
	return e.Actor + ": " + e.Op
}

// Tx is what a change's Apply sees: the box as earlier changes in the batch left it, plus its own writes.
// Paths are box paths in any form Clean accepts.
type Tx struct {
	ctx    context.Context
	bt     *batch
	writes map[string]fileState
	pre    map[string]fileState
	order  []string
	init   bool
}

// Context is the transaction's context.
func (tx *Tx) Context() context.Context { return tx.ctx }

// Root is the box root on the host.
func (tx *Tx) Root() string { return tx.bt.b.Root }

// Read returns a file's bytes; a missing file is an error matching fs.ErrNotExist.
func (tx *Tx) Read(p string) ([]byte, error) {
	st, clean, err := tx.state(p)
	if err != nil {
		return nil, err
	}
	if !st.exists {
		return nil, errs.Wrap("box.read", errs.NotFound, fs.ErrNotExist, clean+" does not exist")
	}
	return st.data, nil
}

// Exists reports whether a file exists.
func (tx *Tx) Exists(p string) bool {
	st, _, err := tx.state(p)
	return err == nil && st.exists
}

// List returns the files directly in folder dir (box paths, sorted) as the change sees the box: what is
// on disk, with what earlier changes of the batch and this change wrote or removed. Sub-folders are left
// out; a missing folder lists nothing. Counting inside the write transaction holds across processes:
// every writer of the box takes its lock first.
func (tx *Tx) List(dir string) ([]string, error) {
	clean, err := layout.Clean(dir)
	if err != nil {
		return nil, errs.Wrap("box.list", errs.Invalid, err, "")
	}
	h, err := tx.bt.b.host(clean)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	ents, err := os.ReadDir(h)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errs.Wrap("box.list", errs.Other, err, "The folder "+clean+" could not be read")
	}
	for _, e := range ents {
		if e.Type().IsRegular() {
			seen[clean+"/"+e.Name()] = true
		}
	}
	inDir := func(p string) bool { return path.Dir(p) == clean }
	for p, st := range tx.bt.current {
		if inDir(p) {
			seen[p] = st.exists
		}
	}
	for p, st := range tx.writes {
		if inDir(p) {
			seen[p] = st.exists
		}
	}
	var out []string
	for p, ok := range seen {
		if ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Write sets a file's bytes.
func (tx *Tx) Write(p string, data []byte) error {
	clean, err := tx.guard(p)
	if err != nil {
		return err
	}
	if err := tx.touch(clean); err != nil {
		return err
	}
	tx.writes[clean] = fileState{data: append([]byte(nil), data...), exists: true}
	return nil
}

// Remove deletes a file; removing a missing file is a NotFound error.
func (tx *Tx) Remove(p string) error {
	clean, err := tx.guard(p)
	if err != nil {
		return err
	}
	if err := tx.touch(clean); err != nil {
		return err
	}
	if !tx.writes[clean].exists {
		return errs.E("box.remove", errs.NotFound, "%s does not exist", clean)
	}
	tx.writes[clean] = fileState{}
	return nil
}

func (tx *Tx) state(p string) (fileState, string, error) {
	clean, err := layout.Clean(p)
	if err != nil {
		return fileState{}, "", errs.Wrap("box.read", errs.Invalid, err, "")
	}
	if st, ok := tx.writes[clean]; ok {
		return st, clean, nil
	}
	st, err := tx.bt.read(clean)
	return st, clean, err
}

// touch records a path's pre-image the first time the change touches it.
func (tx *Tx) touch(clean string) error {
	if _, ok := tx.writes[clean]; ok {
		return nil
	}
	st, err := tx.bt.read(clean)
	if err != nil {
		return err
	}
	tx.pre[clean] = st
	tx.writes[clean] = st
	tx.order = append(tx.order, clean)
	return nil
}

// guard refuses writes outside the box's own names: .git, .box (but the marker at init), the diary
// (the transaction writes it), root strays and nested reserved names.
func (tx *Tx) guard(p string) (string, error) {
	const op = "box.write"
	clean, err := layout.Clean(p)
	if err != nil {
		return "", errs.Wrap(op, errs.Invalid, err, "")
	}
	segs := layout.Segments(clean)
	switch {
	case len(segs) == 0:
		return "", errs.E(op, errs.Invalid, "cannot write the box root itself")
	case segs[0] == ".git":
		return "", errs.E(op, errs.Invalid, "%s is inside git's own folder; the box never writes there", clean)
	case segs[0] == ".box" && !(tx.init && clean == "/"+layout.Marker):
		return "", errs.E(op, errs.Invalid, "%s is in .box/, the box's runtime folder; it is not written by changes", clean)
	case strings.HasPrefix(clean, layout.DiaryDir+"/"):
		return "", errs.E(op, errs.Invalid, "%s is the diary; the box writes it itself", clean)
	case segs[0] == "_tmp":
		return "", errs.E(op, errs.Invalid, "%s is scratch space, never committed; write it directly", clean)
	}
	if fs := layout.CheckRoot(segs[:1]); len(fs) > 0 {
		return "", errs.E(op, errs.Invalid, "%s", fs[0].Message)
	}
	if off, bad := layout.ReservedOffender(clean); bad {
		return "", errs.E(op, errs.Invalid, "%s uses the reserved name %s below the root; pick another folder name", clean, off)
	}
	if err := tx.bt.b.noLinkedFolder(op, clean); err != nil {
		return "", err
	}
	return clean, nil
}
