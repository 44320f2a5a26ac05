package box

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/layout"
)

// Undo reverses one diary entry as a new change (Op undo, UndoOf the entry) with its own diary line and
// commit. An empty id means the newest entry that is not an undo, not the init, and not already undone;
// so repeated undos walk back through history. Undoing an undo entry by its id redoes what it undid.
//
// Per path: if the file is still as the entry left it, its earlier bytes come back exactly (or it is
// removed if the entry created it); otherwise the entry's change is taken out by a 3-way merge so later
// edits stay, and a clash refuses with Conflict and changes nothing. One entry of a grouped commit is
// undone without touching the others.
func (b *Box) Undo(ctx context.Context, entryID string, actor Actor) (Result, error) {
	const op = "box.undo"
	e, err := b.undoTarget(entryID)
	if err != nil {
		return Result{}, err
	}
	if e.Op == "init" {
		return Result{}, errs.E(op, errs.Invalid, "the box's first commit cannot be undone")
	}
	if len(e.Undo) == 0 {
		return Result{}, errs.E(op, errs.Invalid, "diary entry %s changed no file, so there is nothing to undo", e.ID)
	}
	if p := ownersOnly(e); p != "" {
		return Result{}, errs.E(op, errs.Refused, "diary entry %s changed %s, which is set again, not undone: an undo could give back what the owner took away without their passkey, or a connector without its tests; change it in Settings (or box switches, box brain, box builds on|off|undo)", e.ID, p)
	}
	verb := "undid"
	if e.Op == "undo" {
		verb = "redid"
	}
	summary := fmt.Sprintf("%s %s: %s", nonEmpty(actor.Who, "owner"), verb, strings.TrimSuffix(summaryOf(e), "."))
	return b.Do(ctx, Change{Actor: actor, Op: "undo", Summary: summary, Switch: "change", UndoOf: e.ID,
		Apply: func(tx *Tx) error {
			for _, fu := range e.Undo {
				if err := b.undoFile(tx, e, fu); err != nil {
					return err
				}
			}
			return nil
		}})
}

// Undone tracks, over diary entries read newest first, which ones an undo still in force reversed; an
// undo that a later undo reversed (a redo) no longer counts. Undo, the diary view, UndoSince and the
// merge pass's "kept apart" share it.
type Undone map[string]bool

// Saw records e (entries must come newest first) and reports whether an undo in force reversed it.
func (u Undone) Saw(e diary.Entry) bool {
	if e.Op == "undo" && !u[e.ID] {
		u[e.UndoOf] = true
	}
	return u[e.ID]
}

// Undoable reports whether undo can reverse e at all: it changed files and kept their undo (a Permanent
// change keeps none), it is not the box's first commit, and it changed none of the owner's settings.
func Undoable(e diary.Entry) bool { return e.Op != "init" && len(e.Undo) > 0 && ownersOnly(e) == "" }

// ownersOnly is the first file e changed that is set again, never undone, or "": the switches card and
// the settings card (the brain's address), since loosening a switch or moving the brain needs the
// owner's proof (docs/GATE.md, "The five switches") and an undo, which anyone signed in may ask for,
// would put back a switch the owner tightened; and the connectors, which go on only through their own
// lifecycle, which tests them first (docs/CONNECTORS.md): an undo of the owner's "off", of a failed
// test or of a removal would put one back on untested.
func ownersOnly(e diary.Entry) string {
	for _, fu := range e.Undo {
		p := strings.ToLower(fu.Path)
		if p == layout.Switches || p == layout.Settings {
			return fu.Path
		}
		if strings.HasPrefix(p, layout.Connectors+"/") {
			return fu.Path
		}
	}
	return ""
}

// Next is the entry Undo reverses when it is given no id: the newest undoable one not undone already.
func (b *Box) Next() (diary.Entry, error) { return b.undoTarget("") }

// UndoSince reverses, newest first and one entry at a time, every undoable change since that match
// picks (a connection's), each as its own undo. It reads every diary entry since then (only the day
// files from since's day on), so no change in the window is left out however busy the box was. It stops
// at the first that cannot be undone and says how many it did and how many it meant to.
func (b *Box) UndoSince(ctx context.Context, since time.Time, match func(diary.Entry) bool, actor Actor) (done, todo int, err error) {
	all, err := diary.Since(b.Root, since, nil)
	if err != nil {
		return 0, 0, errs.Wrap("box.undo", errs.Other, err, "cannot read the diary")
	}
	undone := Undone{}
	var ids []string
	for _, e := range all { // newest first, none before since
		if undone.Saw(e) || e.Op == "undo" || !Undoable(e) || !match(e) {
			continue
		}
		ids = append(ids, e.ID)
	}
	for _, id := range ids {
		if _, err := b.Undo(ctx, id, actor); err != nil {
			return done, len(ids), err
		}
		done++
	}
	return done, len(ids), nil
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (b *Box) undoTarget(id string) (diary.Entry, error) {
	const op = "box.undo"
	if id != "" {
		e, err := diary.Find(b.Root, id)
		if errors.Is(err, diary.ErrNotFound) {
			return e, errs.E(op, errs.NotFound, "no diary entry %s: `box diary` lists the entries", id)
		}
		if err != nil {
			return e, errs.Wrap(op, errs.Other, err, "cannot read the diary")
		}
		return e, nil
	}
	undone := Undone{}
	es, err := diary.Recent(b.Root, 1, func(e diary.Entry) bool {
		return !undone.Saw(e) && e.Op != "undo" && Undoable(e)
	})
	if err != nil {
		return diary.Entry{}, errs.Wrap(op, errs.Other, err, "cannot read the diary")
	}
	if len(es) == 0 {
		return diary.Entry{}, errs.E(op, errs.NotFound, "there is nothing to undo")
	}
	return es[0], nil
}

func (b *Box) undoFile(tx *Tx, e diary.Entry, fu diary.FileUndo) error {
	const op = "box.undo"
	ctx := tx.Context()
	cur, err := tx.Read(fu.Path)
	exists := err == nil
	curID := ""
	if exists {
		curID = b.git.BlobID(cur)
	}
	switch {
	case curID == fu.Pre:
		return nil // already as it was before the entry
	case curID == fu.Post:
		if fu.Pre == "" {
			return tx.Remove(fu.Path)
		}
		pre, err := b.blobData(ctx, fu.Pre)
		if err != nil {
			return err
		}
		return tx.Write(fu.Path, pre)
	case !exists:
		return errs.E(op, errs.Conflict, "cannot undo %s: %s was removed since; restore it first", e.ID, fu.Path)
	}
	base, err := b.blobData(ctx, fu.Post)
	if err != nil {
		return err
	}
	other, err := b.blobData(ctx, fu.Pre)
	if err != nil {
		return err
	}
	merged, ok := b.merge(ctx, cur, base, other)
	if !ok {
		return errs.E(op, errs.Conflict,
			"cannot undo %s: %s was changed since in the same place; edit it by hand instead", e.ID, fu.Path)
	}
	if b.opts.Settle != nil {
		merged = b.opts.Settle(fu.Path, merged)
	}
	if fu.Pre == "" && len(merged) == 0 {
		return tx.Remove(fu.Path)
	}
	return tx.Write(fu.Path, merged)
}

func (b *Box) blobData(ctx context.Context, id string) ([]byte, error) {
	if id == "" {
		return nil, nil
	}
	d, err := b.git.Blob(ctx, id)
	if err != nil {
		return nil, errs.Wrap("box.undo", errs.Other, err, "the saved copy "+id+" is missing from git")
	}
	return d, nil
}

// merge takes the change base→current and the change base→other together. git merge-file decides first;
// when it reports a clash, a line merge that lets changes touch (but not overlap) gets a second say:
// git counts adjacent edits as a conflict, and "undo the first of two lines appended to one inbox day"
// is exactly that case.
func (b *Box) merge(ctx context.Context, current, base, other []byte) ([]byte, bool) {
	out, conflict, err := b.git.MergeFile(ctx, current, base, other)
	if err == nil && !conflict {
		return out, true
	}
	return lineMerge(current, base, other)
}

type hunk struct {
	bs, be int // base lines [bs, be) replaced
	repl   []string
}

func lineMerge(current, base, other []byte) ([]byte, bool) {
	c, bl, o := splitLines(current), splitLines(base), splitLines(other)
	hs, ok := hunks(bl, o)
	if !ok {
		return nil, false
	}
	al, ok := lcsAlign(bl, c)
	if !ok {
		return nil, false
	}
	var out []string
	pos := 0
	for _, h := range hs {
		var start, del int
		switch {
		case h.bs < h.be:
			start, del = al[h.bs], h.be-h.bs
			for k := h.bs; k < h.be; k++ {
				if al[k] < 0 || al[k] != start+(k-h.bs) {
					return nil, false // a line the entry changed was changed again
				}
			}
		case h.bs == 0:
			start = 0
		case al[h.bs-1] >= 0:
			start = al[h.bs-1] + 1
		case h.bs < len(bl) && al[h.bs] >= 0:
			start = al[h.bs]
		default:
			return nil, false
		}
		if start < pos {
			return nil, false
		}
		out = append(out, c[pos:start]...)
		out = append(out, h.repl...)
		pos = start + del
	}
	out = append(out, c[pos:]...)
	return []byte(strings.Join(out, "")), true
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	ls := strings.SplitAfter(string(b), "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// hunks lists the changes that turn base into other.
func hunks(base, other []string) ([]hunk, bool) {
	al, ok := lcsAlign(base, other)
	if !ok {
		return nil, false
	}
	var hs []hunk
	i, j := 0, 0
	for i < len(base) || j < len(other) {
		if i < len(base) && al[i] == j {
			i, j = i+1, j+1
			continue
		}
		h := hunk{bs: i}
		for i < len(base) && al[i] < 0 {
			i++
		}
		h.be = i
		next := len(other)
		if i < len(base) {
			next = al[i]
		}
		h.repl, j = other[j:next], next
		hs = append(hs, h)
	}
	return hs, true
}

// lcsAlign matches lines of a to lines of b along a longest common subsequence: al[i] is the index in
// b of a[i], or -1. The common head and tail are matched directly; the middle gets a DP, refused
// (false) when it would be too large.
func lcsAlign(a, b []string) ([]int, bool) {
	al := make([]int, len(a))
	for i := range al {
		al[i] = -1
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		al[p] = p
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		al[len(a)-1-s] = len(b) - 1 - s
		s++
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	if len(am) == 0 || len(bm) == 0 {
		return al, true
	}
	if len(am)*len(bm) > 4_000_000 {
		return nil, false
	}
	n, m := len(am), len(bm)
	dp := make([][]int32, n+1)
	for i := range dp {
		dp[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if am[i] == bm[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case am[i] == bm[j]:
			al[p+i] = p + j
			i, j = i+1, j+1
		case dp[i+1][j] >= dp[i][j+1]:
			i++
		default:
			j++
		}
	}
	return al, true
}

// Diary returns up to n diary entries newest first, each with the commit that carries it filled in
// (looked up among the recent commits; an entry older than those keeps an empty Commit).
func (b *Box) Diary(ctx context.Context, n int, keep diary.Filter) ([]diary.Entry, error) {
	es, err := diary.Recent(b.Root, n, keep)
	if err != nil {
		return nil, errs.Wrap("box.diary", errs.Other, err, "cannot read the diary")
	}
	cs, err := b.git.Log(ctx, git.LogOptions{Max: 2*len(es) + 64})
	if err != nil {
		return es, nil // the diary itself is the answer; commits are a courtesy
	}
	byEntry := map[string]string{}
	for _, c := range cs {
		for _, t := range c.Trailers {
			if t.Key == "Box-Entry" {
				byEntry[t.Value] = c.Hash
			}
		}
	}
	for i := range es {
		es[i].Commit = byEntry[es[i].ID]
	}
	return es, nil
}

// Restart commits c as the box's new first commit, with no history behind it: the diary holds only c's
// line (no paths, no undo), and git holds only the tree c leaves, every other ref, reflog and
// unreachable object gone. Erase uses it so that nothing it removed can be read back from the box.
func (b *Box) Restart(ctx context.Context, c Change) (Result, error) {
	const op = "box.restart"
	if c.Apply == nil {
		return Result{}, errs.E(op, errs.Invalid, "a change needs something to apply")
	}
	c.Permanent = true
	_, unlock, err := b.lock(ctx, nil)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	bt := &batch{b: b, initial: map[string]fileState{}, current: map[string]fileState{}}
	days, err := filepath.Glob(filepath.Join(b.Root, filepath.FromSlash(strings.TrimPrefix(layout.DiaryDir, "/")), "*"))
	if err != nil {
		return Result{}, errs.Wrap(op, errs.Other, err, "cannot list the diary")
	}
	for _, h := range days {
		p := layout.DiaryDir + "/" + filepath.Base(h)
		if _, err := bt.read(p); err != nil {
			return Result{}, err
		}
		bt.current[p] = fileState{}
	}
	blobs := map[string][]byte{}
	e, err := b.applyOne(ctx, bt, c, blobs)
	if err != nil {
		return Result{}, err
	}
	changed := e.Paths
	e.Paths = nil // the names of what was erased are not kept either
	day, err := diary.DayOf(e)
	if err != nil {
		return Result{}, err
	}
	bt.current[day] = fileState{data: diary.Line(e), exists: true}
	p := &pending{ctx: ctx, c: c}
	if _, err := b.commitApplied(ctx, bt, []applied{{p: p, entry: e}}, blobs, nil); err != nil {
		return Result{}, err
	}
	b.dropJournal()
	root, err := b.git.Restart(ctx)
	if err != nil {
		return Result{}, errs.Wrap(op, errs.Other, err, "The files were erased, but git's history could not be rewritten; run box serve again and erase once more")
	}
	b.notify(ctx, changed)
	return Result{EntryID: e.ID, Commit: root}, nil
}
