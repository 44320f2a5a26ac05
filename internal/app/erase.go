package app

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/memory"
)

// kept are the runtime files of .box/ that erase leaves (the marker, the write lock, and the two
// databases, which it empties itself); the rest (sessions, sieved outputs, logs, spool, caches) may
// quote erased text and goes.
var kept = map[string]bool{"box.json": true, "lock": true, "hooks.json": true,
	"index.db": true, "index.db-wal": true, "index.db-shm": true, "index.db.lock": true,
	"state.db": true, "state.db-wal": true, "state.db-shm": true}

// Erase erases the box for the owner (docs/SECURITY.md, "The gate, approvals and erase"): every
// connection ends first (keys and OAuth grants are deleted, names included; the web UI's sessions and
// setup links end, so the owner signs in again with their passkey), then the memory erases the
// tree and restarts git's history and the diary, the runtime leftovers go, and the state store is
// rewritten so no deleted row can be read back. Passkeys stay. Every step runs even when one fails, and
// every failure is reported.
func (a *App) Erase(ctx context.Context, who box.Actor) (memory.EraseResult, error) {
	const op = "app.erase"
	// An erase once begun runs to the end, the backups' forced push too, whoever stops waiting for it: a
	// half-done erase would leave the erased history on the backups.
	ctx = context.WithoutCancel(ctx)
	// A worktree of the box's repository elsewhere keeps the history its HEAD names, which no prune
	// reaches: the erase starts only without one.
	wts, err := a.Box.Git().LinkedWorktrees(ctx)
	if err != nil {
		return memory.EraseResult{}, errs.Wrap(op, errs.Other, err, "The box's repository could not be read; nothing was erased")
	}
	if len(wts) > 0 {
		return memory.EraseResult{}, errs.E(op, errs.Conflict, "The box's history is also checked out in %s (a git worktree), which would keep what the erase removes; remove it first (git worktree remove PATH). Nothing was erased.", strings.Join(wts, ", "))
	}
	var all []error
	if err := a.State.EndSessions(ctx); err != nil {
		all = append(all, err)
	}
	if err := a.Keys.DeleteAll(ctx); err != nil {
		all = append(all, err)
	}
	if err := a.Grants.DeleteAll(ctx); err != nil {
		all = append(all, err)
	}
	res, err := a.Memory.Erase(ctx, who)
	if err != nil {
		all = append(all, err)
	}
	if err := a.wipeRuntime(); err != nil {
		all = append(all, err)
	}
	if err := a.State.Compact(ctx); err != nil {
		all = append(all, err)
	}
	// The erase rewrote history: every backup's copy is replaced by the fresh root (docs/BACKUP.md).
	if round, err := a.Backups.PushAll(ctx, true, true); err != nil {
		all = append(all, err)
	} else if round.Failed() > 0 {
		for _, p := range round.Pushed {
			if p.Error != "" {
				all = append(all, errs.E(op, errs.Other, "The backup %s still holds the erased history: %s", p.Remote, p.Error))
			}
		}
	}
	if err := errors.Join(all...); err != nil {
		return res, errs.Wrap(op, errs.KindOf(err), err, "The erase did not finish; what failed is named here, and erasing again retries every step")
	}
	return res, nil
}

// wipeRuntime removes what .box/ and the scratch folder hold besides what erase keeps.
func (a *App) wipeRuntime() error {
	var all []error
	dir := filepath.Join(a.Root, ".box")
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errs.Wrap("app.erase", errs.Other, err, "The box's runtime folder could not be read")
	}
	for _, e := range ents {
		if !kept[e.Name()] {
			all = append(all, os.RemoveAll(filepath.Join(dir, e.Name())))
		}
	}
	all = append(all, os.RemoveAll(filepath.Join(a.Root, "_tmp")))
	if err := errors.Join(all...); err != nil {
		return errs.Wrap("app.erase", errs.Other, err, "Some of the box's runtime files could not be removed")
	}
	return nil
}
