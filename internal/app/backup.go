package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxmem/box/internal/backup"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/say"
)

// composeBackups builds the box's backups over its repository and the vault (docs/BACKUP.md).
func (a *App) composeBackups() {
	exe, err := os.Executable()
	if err != nil {
		exe = "box" // a token push then fails with a sentence; ssh and local remotes need no askpass
	}
	a.Backups = backup.New(backup.Config{Repo: a.Box.Git(), Vault: a.Vault, Askpass: exe, Now: a.opts.Now,
		HealthFile: filepath.Join(a.Root, ".box", "backups.json"), HasVault: a.hasVault})
}

// backupJob pushes the box's branch to every backup. A push is not recorded when it went through or
// failed as the time before: a record is a commit, which would itself need pushing, so only news (a new
// failure, a recovery) is recorded, in the diary and on Today (docs/JOBS.md).
func (a *App) backupJob(ctx context.Context, run *jobs.Run) (jobs.Result, error) {
	round, err := a.Backups.PushAll(ctx, false, run.Why == jobs.WhyAsked)
	if err != nil {
		return jobs.Result{}, err
	}
	if a.jobs.serving.Load() {
		a.armRetry(ctx)
	}
	res := jobs.Result{Details: round, Changed: []string{}}
	var failed []string
	for _, p := range round.Pushed {
		switch {
		case p.Error != "":
			failed = append(failed, p.Remote+": "+p.Error)
		case p.Skipped != "":
		case p.Unchanged:
		default:
			res.Changed = append(res.Changed, fmt.Sprintf("pushed %s to %s", say.Hash(p.Commit), p.Remote))
		}
	}
	res.Summary = fmt.Sprintf("The box pushed to %d of %d %s.", len(res.Changed), len(round.Pushed), say.Plural(len(round.Pushed), "backup", "backups"))
	if !round.Worth() {
		res.Nothing = true
		return res, nil
	}
	if len(failed) > 0 {
		return res, errs.E("app.backup", errs.Other, "A backup push failed: %s", strings.Join(failed, "; "))
	}
	res.Summary += " The backups work again."
	return res, nil
}

// retryFloor is the least delay a retry is armed with: a retry time already past (a clock moved, a
// health file another process wrote) runs the job soon, never in a loop.
const retryFloor = backup.MinBackoff

// armRetry arms the backup job for the first remote's retry time. The earlier trigger wins (TriggerOnce):
// a push after new commits is never held back by a failing remote's retry an hour off.
func (a *App) armRetry(ctx context.Context) {
	if t := a.Backups.NextRetry(ctx); !t.IsZero() {
		a.Jobs.TriggerOnce("backup", "retry", max(t.Sub(a.Now()), retryFloor))
	}
}

// Restored is what box restore made.
type Restored struct {
	Root string `json:"root"`
	ID   string `json:"id"`
	// NotRestored names the state that lives outside git and does not come back: the owner makes it anew.
	NotRestored []string `json:"notRestored"`
	Notes       []string `json:"notes,omitempty"`
}

// Restore makes dir (absent or empty) a working box from the backup at url (docs/BACKUP.md): its main,
// or its only branch; the source is kept as the backup "origin" that has everything. What is not in git
// (keys, sessions, passkeys, the index, the vault) is not restored: the index rebuilds itself, the git
// hooks are installed again, and the owner makes a new passkey and new keys.
func Restore(ctx context.Context, url, dir, token string, opts Options) (_ Restored, err error) {
	exe, _ := os.Executable()
	check := func(files []git.TreeFile) error {
		for _, f := range files {
			if layout.NeverCommitted(f.Path, f.Mode == "100644" || f.Mode == "100755") {
				return errs.E("app.restore", errs.Refused, "The repository at %s holds %q, which no box puts in git (the box's own state lives there, out of git), so it was not made by a box or was changed since; nothing was restored. Restore from a backup the box pushed.", git.ShownURL(url), f.Path)
			}
		}
		return nil
	}
	if _, err := git.Clone(ctx, url, dir, git.CloneOptions{Remote: "origin", Auth: git.Auth{Token: token, Askpass: exe, URL: url}, Check: check}); err != nil {
		return Restored{}, err
	}
	opts.Mode = CLI
	a, err := Open(ctx, dir, opts)
	if err != nil {
		return Restored{}, errs.Wrap("app.restore", errs.KindOf(err), err, "The copy was made in "+dir+" but it does not open as a box")
	}
	defer func() { err = errors.Join(err, a.Close()) }()
	bin, note := box.HookBinary()
	hookNote, err := a.Box.InstallHooks(bin)
	if err != nil {
		return Restored{}, err
	}
	if token != "" {
		v, err := a.Vault()
		if err != nil {
			return Restored{}, err
		}
		if err := v.Put(backup.TokenName("origin"), backup.SealToken(url, token)); err != nil {
			return Restored{}, err
		}
	}
	if _, err := a.Memory.Reindex(ctx, opts.Progress); err != nil {
		return Restored{}, err
	}
	r := Restored{Root: a.Root, ID: a.Box.Marker.ID, NotRestored: []string{"passkeys and web sessions", "keys and connections of other assistants", "the brain's key and other vault secrets"}}
	for _, n := range []string{note, hookNote} {
		if n != "" {
			r.Notes = append(r.Notes, n)
		}
	}
	// The builds a backup carries (pages, looks, the layout, connectors) were approved in the box it came
	// from, or planted by whoever could push to it: a restore cannot tell, so they wait paused for the
	// owner to look (docs/BACKUP.md).
	if bs, lerr := a.Builds.List(ctx); lerr != nil || len(bs) > 0 {
		if err := a.Builds.SetSafeMode(ctx, box.Actor{Who: "owner", Via: "cli", Trust: "own"}, true); err != nil {
			return Restored{}, err
		}
		r.Notes = append(r.Notes, "Safe mode is on: the pages, looks, layout and connectors the backup carries stay paused until you have checked them (box builds list) and turned it off (box safe-mode off).")
	}
	for _, p := range []string{".claude", ".codex", ".agents", ".mcp.json"} {
		if _, err := os.Lstat(filepath.Join(a.Root, p)); err == nil {
			r.Notes = append(r.Notes, "The backup carries settings coding agents act on (.claude/, .codex/, .agents/, .mcp.json): read them before you open the box in Claude Code or Codex.")
			break
		}
	}
	return r, nil
}
