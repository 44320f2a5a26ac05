package box

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
)

// The spool extends group commit across processes. A writer whose change is data (a registered op and
// its arguments) leaves a request in .box/spool/<entry id>.req before it queues for the lock; whichever
// process holds the lock claims every request it finds (rename to .claimed), applies them in its batch
// and, once the commit is durable, answers each with <id>.res. The requester stops waiting as soon as
// its answer appears. Claims are listed in the batch journal, so a killed leader's claims are answered
// (committed) or put back (not committed) by the next; a request whose process died is dropped.

const spoolDir = ".box/spool"

// SpoolOp is a change expressed as data.
type SpoolOp struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// SpoolFunc turns a spooled op's arguments into the change's Apply.
type SpoolFunc func(args json.RawMessage) (func(tx *Tx) error, error)

type spoolReq struct {
	ID      string  `json:"id"`
	PID     int     `json:"pid"`
	Actor   Actor   `json:"actor"`
	Op      string  `json:"op"`
	Summary string  `json:"summary"`
	Reason  string  `json:"reason,omitempty"`
	Switch  string  `json:"switch,omitempty"`
	UndoOf  string  `json:"undoOf,omitempty"`
	Spool   SpoolOp `json:"spool"`
}

type spoolRes struct {
	EntryID string    `json:"entryId,omitempty"`
	Commit  string    `json:"commit,omitempty"`
	Paths   []string  `json:"paths,omitempty"`
	Kind    errs.Kind `json:"kind,omitempty"`
	Msg     string    `json:"error,omitempty"`
}

func (b *Box) spoolPath(id, ext string) string {
	return filepath.Join(b.Root, filepath.FromSlash(spoolDir), id+ext)
}

func (b *Box) doSpooled(ctx context.Context, c Change) (Result, error) {
	const op = "box.do"
	fn := b.opts.Spool[c.Spool.Name]
	if fn == nil {
		return Result{}, errs.E(op, errs.Invalid, "no spoolable change is named %q", c.Spool.Name)
	}
	apply, err := fn(c.Spool.Args)
	if err != nil {
		return Result{}, errs.Wrap(op, errs.Invalid, err, "")
	}
	c.Apply = apply
	c.entryID = diary.NewID(b.opts.Now())
	req := spoolReq{ID: c.entryID, PID: os.Getpid(), Actor: c.Actor, Op: c.Op, Summary: c.Summary, Reason: c.Reason,
		Switch: c.Switch, UndoOf: c.UndoOf, Spool: *c.Spool}
	data, _ := json.Marshal(req)
	dir := filepath.Join(b.Root, filepath.FromSlash(spoolDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, errs.Wrap(op, errs.Other, err, "cannot make the spool")
	}
	tmp, err := writeTemp(dir, data, 0o644, false)
	if err == nil {
		err = os.Rename(tmp, b.spoolPath(c.entryID, ".req"))
	}
	if err != nil {
		return Result{}, errs.Wrap(op, errs.Other, err, "cannot spool the change")
	}
	p := &pending{ctx: ctx, c: c, done: make(chan struct{}), lead: make(chan struct{}, 1), spoolID: c.entryID}
	b.enqueue(p)
	return b.wait(ctx, p)
}

func (b *Box) resultReady(id string) bool {
	_, err := os.Stat(b.spoolPath(id, ".res"))
	return err == nil
}

// takeResult reads and removes a request's answer.
func (b *Box) takeResult(id string) (Result, error) {
	path := b.spoolPath(id, ".res")
	data, err := os.ReadFile(path)
	if err != nil {
		return Result{}, errs.E("box.do", errs.Other, "the answer to spooled change %s is missing; look for it in the diary", id)
	}
	_ = os.Remove(path)
	var r spoolRes
	if json.Unmarshal(data, &r) != nil {
		return Result{}, errs.E("box.do", errs.Other, "the answer to spooled change %s is unreadable; look for it in the diary", id)
	}
	if r.Msg != "" {
		return Result{}, errs.E("box.do", r.Kind, "%s", r.Msg)
	}
	return Result{EntryID: r.EntryID, Commit: r.Commit, Paths: r.Paths}, nil
}

// cancelSpooled withdraws a request no one has claimed; false means someone has.
func (b *Box) cancelSpooled(id string) bool {
	return os.Remove(b.spoolPath(id, ".req")) == nil
}

// claimSpool runs under the lock at the start of a batch: it claims this batch's own requests (one
// another process already applied gets that process's answer) and adds every other claimable request.
func (b *Box) claimSpool(ps []*pending) []*pending {
	for _, p := range ps {
		if p.spoolID == "" {
			continue
		}
		if os.Rename(b.spoolPath(p.spoolID, ".req"), b.spoolPath(p.spoolID, ".claimed")) != nil {
			p.res, p.err = b.takeResult(p.spoolID)
			p.spoolID = ""
		}
	}
	dir := filepath.Join(b.Root, filepath.FromSlash(spoolDir))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ps
	}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".req")
		if !ok || len(ps) >= b.opts.MaxBatch {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		var req spoolReq
		if err != nil || json.Unmarshal(data, &req) != nil || req.ID != id {
			continue
		}
		if req.PID != os.Getpid() && !alive(req.PID) {
			_ = os.Remove(filepath.Join(dir, e.Name())) // its writer died before anyone applied it
			continue
		}
		fn := b.opts.Spool[req.Spool.Name]
		if req.PID == os.Getpid() || fn == nil {
			continue // ours are queued here already; an op we do not know is left for its own process
		}
		if os.Rename(filepath.Join(dir, e.Name()), b.spoolPath(id, ".claimed")) != nil {
			continue
		}
		p := &pending{ctx: context.Background(), done: make(chan struct{}), spoolID: id, remote: true,
			c: Change{Actor: req.Actor, Op: req.Op, Summary: req.Summary, Reason: req.Reason, Switch: req.Switch,
				UndoOf: req.UndoOf, entryID: id}}
		if p.c.Apply, err = fn(req.Spool.Args); err != nil {
			p.err = errs.Wrap("box.do", errs.Invalid, err, "")
		}
		ps = append(ps, p)
	}
	return ps
}

func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

func spoolIDs(ps []*pending) []string {
	var ids []string
	for _, p := range ps {
		if p.spoolID != "" {
			ids = append(ids, p.spoolID)
		}
	}
	return ids
}

// finishSpool answers the batch's claimed requests once their outcome is decided (still under the lock).
// A claim the rollback put back (a failed commit) stays a request for the next batch, unless its writer
// is here and is being told of the failure.
func (b *Box) finishSpool(ps []*pending) {
	for _, p := range ps {
		if p.spoolID == "" {
			continue
		}
		claimed := b.spoolPath(p.spoolID, ".claimed")
		if !p.remote {
			_ = os.Remove(claimed)
			_ = os.Remove(b.spoolPath(p.spoolID, ".req"))
			continue
		}
		if _, err := os.Stat(claimed); err != nil {
			continue
		}
		b.answer(p.spoolID, p.res, p.err)
		_ = os.Remove(claimed)
	}
}

func (b *Box) answer(id string, r Result, err error) {
	res := spoolRes{EntryID: r.EntryID, Commit: r.Commit, Paths: r.Paths}
	if err != nil {
		res = spoolRes{Kind: errs.KindOf(err), Msg: err.Error()}
	}
	data, _ := json.Marshal(res)
	dir := filepath.Join(b.Root, filepath.FromSlash(spoolDir))
	if tmp, err := writeTemp(dir, data, 0o644, false); err == nil {
		if os.Rename(tmp, b.spoolPath(id, ".res")) != nil {
			_ = os.Remove(tmp)
		}
	}
}

// recoverSpool settles a killed leader's claims: answered if its commit exists, else put back.
func (b *Box) recoverSpool(ctx context.Context, j journal, committed bool) {
	head := ""
	if committed {
		head, _ = b.git.Head(ctx)
	}
	for _, id := range j.Spooled {
		claimed := b.spoolPath(id, ".claimed")
		if _, err := os.Stat(claimed); err != nil {
			continue
		}
		if committed && slices.Contains(j.Entries, id) {
			b.answer(id, Result{EntryID: id, Commit: head}, nil)
			_ = os.Remove(claimed)
			continue
		}
		_ = os.Rename(claimed, b.spoolPath(id, ".req"))
	}
}

// answeredPoll reports, while a batch waits for the lock, whether other processes have answered every
// change in it (only possible when all are spooled); nil when some change needs this process.
func (b *Box) answeredPoll(ps []*pending) func() bool {
	for _, p := range ps {
		if p.spoolID == "" {
			return nil
		}
	}
	return func() bool {
		for _, p := range ps {
			if !b.resultReady(p.spoolID) {
				return false
			}
		}
		return true
	}
}

// settleUnlocked decides a batch that never got the lock. A spooled change another process has
// claimed is not failed: its answer is awaited.
func (b *Box) settleUnlocked(ps []*pending, err error) {
	for _, p := range ps {
		switch {
		case p.spoolID == "":
			p.err = err
		case b.resultReady(p.spoolID):
			p.res, p.err = b.takeResult(p.spoolID)
		case b.cancelSpooled(p.spoolID):
			if errors.Is(err, errAnswered) {
				err = errBusy()
			}
			p.err = err
		default:
			p.res, p.err = b.awaitResult(p.spoolID)
		}
	}
}

// awaitResult waits for the answer to a request another process has claimed.
func (b *Box) awaitResult(id string) (Result, error) {
	deadline := time.Now().Add(2 * b.opts.LockTimeout)
	for time.Now().Before(deadline) {
		if b.resultReady(id) {
			return b.takeResult(id)
		}
		time.Sleep(time.Millisecond)
	}
	return Result{}, errs.E("box.do", errs.Busy, "another writer took change %s but has not answered; check `box diary` before trying again", id)
}

// sweepSpool removes answers nobody collected (their writer died) once they are older than age.
func (b *Box) sweepSpool(age time.Duration) {
	dir := filepath.Join(b.Root, filepath.FromSlash(spoolDir))
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".res") && !strings.HasPrefix(e.Name(), ".box-tmp-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// spoolPoll is how often a waiting writer looks for its answer: each commit takes tens of
// milliseconds, and dozens of processes polling faster would steal the CPU the leader needs.
const spoolPoll = 5 * time.Millisecond

// releaseOrphanClaims turns every claim back into a request. Only a lock holder claims, and it
// settles its claims before it lets go of the lock; so a claim seen by the next holder, after the
// journal repair, was never committed.
func (b *Box) releaseOrphanClaims() {
	dir := filepath.Join(b.Root, filepath.FromSlash(spoolDir))
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".claimed"); ok {
			_ = os.Rename(filepath.Join(dir, e.Name()), b.spoolPath(id, ".req"))
		}
	}
}
