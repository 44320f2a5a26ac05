package git

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Restart replaces the whole history with one root commit holding HEAD's tree and message, on the
// current branch: every other ref goes (branches, tags, stash, notes), the reflogs are expired and every
// object no longer reachable is pruned, so nothing of the old history can be read back from the
// repository. It returns the new commit. Only erase calls it.
func (r *Repo) Restart(ctx context.Context) (string, error) {
	msg, err := r.Run(ctx, nil, "log", "-1", "--format=%B", "HEAD")
	if err != nil {
		return "", err
	}
	tree, err := r.Run(ctx, nil, "rev-parse", "--verify", "HEAD^{tree}")
	if err != nil {
		return "", err
	}
	out, err := r.Run(ctx, msg, "commit-tree", strings.TrimSpace(string(tree)), "-F", "-")
	if err != nil {
		return "", err
	}
	root := strings.TrimSpace(string(out))
	branch, err := r.Run(ctx, nil, "symbolic-ref", "-q", "HEAD")
	if err != nil {
		return "", err
	}
	head := strings.TrimSpace(string(branch))
	if _, err := r.Run(ctx, nil, "update-ref", head, root); err != nil {
		return "", err
	}
	refs, err := r.Run(ctx, nil, "for-each-ref", "--format=%(refname)")
	if err != nil {
		return "", err
	}
	for _, ref := range strings.Fields(string(refs)) {
		if ref == head {
			continue
		}
		if _, err := r.Run(ctx, nil, "update-ref", "-d", ref); err != nil {
			return "", err
		}
	}
	for _, name := range []string{"ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"} {
		if err := os.Remove(filepath.Join(r.GitDir(), name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	if _, err := r.Run(ctx, nil, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all"); err != nil {
		return "", err
	}
	if _, err := r.Run(ctx, nil, "-c", "gc.cruftPacks=false", "gc", "--prune=now", "--quiet"); err != nil {
		return "", err
	}
	if _, err := r.Run(ctx, nil, "prune", "--expire=now"); err != nil {
		return "", err
	}
	return root, nil
}

// LinkedWorktrees lists the folders where the repository is also checked out (git worktree add): their
// HEADs keep the history they name reachable, out of Restart's sight.
func (r *Repo) LinkedWorktrees(ctx context.Context) ([]string, error) {
	out, err := r.Run(ctx, nil, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var dirs []string
	for i, rec := range strings.Split(string(out), "\x00") {
		if dir, ok := strings.CutPrefix(rec, "worktree "); ok && i > 0 { // the first is the repository's own
			dirs = append(dirs, dir)
		}
	}
	return dirs, nil
}
