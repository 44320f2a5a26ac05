package index

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/fsnotify/fsnotify"
)

// debounce is how long the watcher waits for quiet before reporting a burst of changes.
const debounce = 100 * time.Millisecond

// watched are the areas whose files are indexed.
var watched = []string{"_content", "_config"}

// Watch reports changes made under root's _content/ and _config/ (new folders included) as sorted box
// paths, debounced, until ctx ends; the caller reindexes them. It ignores .box/, .git/, _tmp/ and editor
// temp files. A removed folder is reported as its own path: the caller drops whatever it indexed below a
// path that no longer exists. onChange runs on the watcher's goroutine, one call at a time. ready, when
// not nil, is called once every folder is watched: a change made after it is reported, so a scan of the
// files that starts after it misses nothing.
func Watch(ctx context.Context, root string, onChange func(paths []string), ready func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return errs.Wrap("index.watch", errs.Other, err, "The file watcher could not start")
	}
	defer func() { _ = w.Close() }() // the watch is over either way
	root, err = filepath.Abs(root)
	if err != nil {
		return errs.Wrap("index.watch", errs.Other, err, "")
	}
	pending := map[string]bool{}
	for _, area := range watched {
		if err := addTree(w, filepath.Join(root, area), nil); err != nil {
			return errs.Wrap("index.watch", errs.Other, err, "The file watcher could not start")
		}
	}
	if ready != nil {
		ready()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	note := func(host string) {
		if p, ok := boxPath(root, host); ok {
			pending[p] = true
			timer.Reset(debounce)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			return errs.Wrap("index.watch", errs.Other, err, "The file watcher failed")
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if _, keep := boxPath(root, ev.Name); !keep || ev.Op == fsnotify.Chmod {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					// Files may land in a new folder before it is watched: report what is there.
					_ = addTree(w, ev.Name, note)
					continue
				}
			}
			note(ev.Name)
		case <-timer.C:
			paths := make([]string, 0, len(pending))
			for p := range pending {
				paths = append(paths, p)
			}
			clear(pending)
			slices.Sort(paths)
			onChange(paths)
		}
	}
}

// addTree watches dir and every folder below it that is not ignored; found (may be nil) hears each file.
func addTree(w *fsnotify.Watcher, dir string, found func(string)) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return nil // a folder that vanished or cannot be read is skipped, not fatal
		}
		if d.IsDir() {
			if p != dir && ignored(d.Name(), true) {
				return filepath.SkipDir
			}
			return w.Add(p)
		}
		if found != nil {
			found(p)
		}
		return nil
	})
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// boxPath maps a host path under root to its box path, and reports whether it is one Watch reports.
func boxPath(root, host string) (string, bool) {
	rel, err := filepath.Rel(root, host)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if !slices.Contains(watched, parts[0]) {
		return "", false
	}
	for i, name := range parts {
		if ignored(name, i < len(parts)-1) {
			return "", false
		}
	}
	return "/" + strings.Join(parts, "/"), true
}

// ignored reports names that are never indexed: runtime and scratch folders, hidden files, and the temp
// files editors and atomic writers leave for a moment.
func ignored(name string, dir bool) bool {
	switch {
	case name == ".box" || name == ".git" || name == "_tmp":
		return true
	case dir:
		return strings.HasPrefix(name, ".")
	}
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~") || strings.HasSuffix(name, "~") ||
		strings.HasPrefix(name, "#") || name == "4913" ||
		strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, ".swp") || strings.HasSuffix(name, ".swx") ||
		strings.Contains(name, ".tmp-") || strings.Contains(name, ".tmp.")
}
