package box

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/boxmem/box/internal/atomicfile"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
)

// Files are written atomically: a temp file in .box/tmp (same file system as the box), fsynced, renamed
// over the target, and the target's folder fsynced. Temp files exist only while the lock is held, so
// any found when the lock is taken were left by a killed writer and are removed. This is deliberately
// not atomicfile.WriteFile: a batch writes all its temps unflushed, flushes them together (syncAll),
// renames them and fsyncs each touched folder once, where atomicfile pays two flushes per file; and
// its temps stay out of the tree that git and the index watcher see.
const (
	tmpDir      = ".box/tmp"
	journalPath = ".box/journal.json"
)

// fileState is a file's content, or its absence.
type fileState struct {
	data   []byte
	exists bool
}

func (s fileState) equal(o fileState) bool {
	return s.exists == o.exists && string(s.data) == string(o.data)
}

// host maps a box path to its host path, refusing escapes.
func (b *Box) host(boxPath string) (string, error) {
	h, err := layout.Host(b.Root, boxPath)
	if err != nil {
		return "", errs.Wrap("box.path", errs.Invalid, err, "")
	}
	return h, nil
}

// linkedFolder returns the first folder of box path clean (a path Clean made) that is a symbolic link,
// if one is: git refuses a path beyond a link, so a write through one could be neither committed nor
// rolled back.
func (b *Box) linkedFolder(clean string) (string, bool) {
	segs := layout.Segments(clean)
	dir := b.Root
	for i, s := range segs[:max(0, len(segs)-1)] {
		dir = filepath.Join(dir, s)
		fi, err := os.Lstat(dir)
		if err != nil {
			return "", false // a folder not made yet: nothing beyond it is a link
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "/" + strings.Join(segs[:i+1], "/"), true
		}
	}
	return "", false
}

// noLinkedFolder refuses a write of box path p whose folder is a link, with the sentence that says what to do.
func (b *Box) noLinkedFolder(op, p string) error {
	if link, ok := b.linkedFolder(p); ok {
		return errs.E(op, errs.Invalid, "%s is a link to a folder, and git keeps no file beyond a link, so the box writes nothing through it (%s); replace the link with the folder it points to, then try again", link, p)
	}
	return nil
}

func (b *Box) readDisk(boxPath string) (fileState, error) {
	if _, err := b.host(boxPath); err != nil {
		return fileState{}, err
	}
	// Read through layout's check again on the opened file: a link swapped in after the check above
	// is never read, so never copied into the box by the change that follows.
	data, err := layout.ReadFile(b.Root, boxPath)
	if errors.Is(err, layout.ErrOutside) {
		return fileState{}, errs.Wrap("box.path", errs.Invalid, err, "")
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fileState{}, nil
	}
	if err != nil {
		return fileState{}, errs.Wrap("box.read", errs.Other, err, "The file "+boxPath+" could not be read")
	}
	return fileState{data: data, exists: true}, nil
}

// writeStates puts every path in its state (write or remove) and fsyncs the folders touched.
func (b *Box) writeStates(paths []string, states map[string]fileState) error {
	dirs := map[string]bool{}
	for _, p := range paths {
		h, err := b.host(p)
		if err != nil {
			return err
		}
		st := states[p]
		if !st.exists {
			if err := os.Remove(h); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return errs.Wrap("box.write", errs.Other, err, "The file "+p+" could not be removed")
			}
			dirs[filepath.Dir(h)] = true
			b.pruneEmpty(filepath.Dir(h))
			continue
		}
		if err := b.mkdirs(filepath.Dir(h), dirs); err != nil {
			return err
		}
		if err := b.writeAtomic(h, st.data); err != nil {
			return errs.Wrap("box.write", errs.Other, err, "The file "+p+" could not be written")
		}
		dirs[filepath.Dir(h)] = true
	}
	for d := range dirs {
		if err := atomicfile.SyncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return errs.Wrap("box.write", errs.Other, err, "The folder "+d+" could not be flushed to disk")
		}
	}
	return nil
}

// mkdirs makes dir and its missing parents, noting each parent whose entries changed.
func (b *Box) mkdirs(dir string, dirs map[string]bool) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := b.mkdirs(filepath.Dir(dir), dirs); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	dirs[filepath.Dir(dir)] = true
	return nil
}

// pruneEmpty removes folders a removal left empty, up to (not including) an area or a standard folder.
func (b *Box) pruneEmpty(dir string) {
	for {
		rel, err := filepath.Rel(b.Root, dir)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			return
		}
		bp := "/" + filepath.ToSlash(rel)
		if len(layout.Segments(bp)) <= 1 || isStandardFolder(bp) {
			return
		}
		if os.Remove(dir) != nil { // not empty
			return
		}
		dir = filepath.Dir(dir)
	}
}

func isStandardFolder(bp string) bool {
	for _, f := range layout.Folders {
		if "/"+f.Name == bp {
			return true
		}
	}
	return false
}

// writeAtomic writes data to host path h through a temp file and a rename.
func (b *Box) writeAtomic(h string, data []byte) error {
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(h); err == nil {
		perm = fi.Mode().Perm()
	}
	tdir := filepath.Join(b.Root, filepath.FromSlash(tmpDir))
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return err
	}
	tmp, err := writeTemp(tdir, data, perm, true)
	if err != nil {
		return err
	}
	err = os.Rename(tmp, h)
	if errors.Is(err, syscall.EXDEV) { // a folder on another file system: temp beside the target
		_ = os.Remove(tmp)
		if tmp, err = writeTemp(filepath.Dir(h), data, perm, true); err != nil {
			return err
		}
		err = os.Rename(tmp, h)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

func writeTemp(dir string, data []byte, perm os.FileMode, sync bool) (string, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	name := filepath.Join(dir, ".box-tmp-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", err
	}
	return name, nil
}

// journal is written (fsynced) before a batch touches the tree and removed after its commit. Found at
// lock time, it means a writer died mid-batch: if the batch's commit exists the journal is dropped,
// otherwise every path goes back to its pre-batch content, so a killed write leaves no trace.
type journal struct {
	Head    string         `json:"head"` // HEAD before the batch ("" before the first commit)
	Entries []string       `json:"entries"`
	Spooled []string       `json:"spooled,omitempty"` // spool requests this batch claimed
	Files   []journalEntry `json:"files"`
}

type journalEntry struct {
	Path   string `json:"path"`
	Pre    string `json:"pre"` // blob id, "" when the file did not exist
	Exists bool   `json:"exists"`
}

// writeJournal writes the journal without a flush: the batch flushes it with its temp files.
func (b *Box) writeJournal(j journal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	h := filepath.Join(b.Root, filepath.FromSlash(journalPath))
	tmp, err := writeTemp(filepath.Dir(h), data, 0o644, false)
	if err == nil {
		err = os.Rename(tmp, h)
	}
	if err != nil {
		return errs.Wrap("box.write", errs.Other, err, "The box's write journal could not be written")
	}
	return nil
}

func (b *Box) dropJournal() {
	_ = os.Remove(filepath.Join(b.Root, filepath.FromSlash(journalPath)))
}

// recoverLocked repairs after a killed writer; the caller holds the lock. Spool claims left over
// once the journal is settled belong to a leader that died before its journal: put them back.
func (b *Box) recoverLocked(ctx context.Context) error {
	err := b.recoverJournal(ctx)
	b.releaseOrphanClaims()
	return err
}

func (b *Box) recoverJournal(ctx context.Context) error {
	tdir := filepath.Join(b.Root, filepath.FromSlash(tmpDir))
	if fi, err := os.Lstat(tdir); err == nil && !fi.IsDir() {
		_ = os.Remove(tdir) // a link or file in its place is never followed: the box's scratch is a folder of its own
	} else if ents, err := os.ReadDir(tdir); err == nil {
		for _, e := range ents {
			_ = os.RemoveAll(filepath.Join(tdir, e.Name()))
		}
	}
	data, err := os.ReadFile(filepath.Join(b.Root, filepath.FromSlash(journalPath)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errs.Wrap("box.recover", errs.Other, err, "cannot read the box's write journal")
	}
	b.removeStaleGitLocks()
	var j journal
	if json.Unmarshal(data, &j) != nil || len(j.Entries) == 0 || !j.changesOnly() {
		b.dropJournal()
		return nil
	}
	if b.committed(ctx, j.Entries[0]) {
		b.recoverSpool(ctx, j, true)
		b.dropJournal()
		return nil
	}
	b.recoverSpool(ctx, j, false)
	// Not committed. If HEAD moved anyway, the commit was cut short by a crash before its flush
	// (a ref naming a commit that did not reach the disk): put the branch back.
	if head, err := b.git.Head(ctx); j.Head != "" && (err != nil || head != j.Head) {
		if _, err := b.git.Run(ctx, nil, "update-ref", "HEAD", j.Head); err != nil {
			return errs.Wrap("box.recover", errs.Other, err, "cannot repair HEAD after an interrupted write")
		}
	}
	paths := make([]string, 0, len(j.Files))
	states := map[string]fileState{}
	for _, f := range j.Files {
		if _, linked := b.linkedFolder(f.Path); linked {
			continue // git holds nothing there to put back, and would refuse the path (a box written before links were refused)
		}
		st := fileState{exists: f.Exists}
		if f.Exists {
			d, err := b.git.Blob(ctx, f.Pre)
			if err != nil {
				return errs.Wrap("box.recover", errs.Other, err, fmt.Sprintf("cannot restore %s after an interrupted write", f.Path))
			}
			st.data = d
		}
		paths = append(paths, f.Path)
		states[f.Path] = st
	}
	if err := b.writeStates(paths, states); err != nil {
		return errs.Wrap("box.recover", errs.Other, err, "cannot undo an interrupted write")
	}
	if err := b.git.Add(ctx, gitPaths(paths)...); err != nil {
		return errs.Wrap("box.recover", errs.Other, err, "cannot undo an interrupted write")
	}
	b.dropJournal()
	return nil
}

// changesOnly reports whether every file the journal names is one a change can write: a journal naming a
// path in .git/ or .box/ (or one not clean) was not written by the box, and none of it is applied.
func (j journal) changesOnly() bool {
	for _, f := range j.Files {
		clean, err := layout.Clean(f.Path)
		segs := layout.Segments(clean)
		if err != nil || clean != f.Path || len(segs) == 0 || strings.EqualFold(segs[0], ".git") || strings.EqualFold(segs[0], ".box") {
			return false
		}
	}
	return true
}

// committed reports whether HEAD carries the entry id (a batch's commit is HEAD until the next batch,
// which cannot start while its journal exists).
func (b *Box) committed(ctx context.Context, entryID string) bool {
	ts, err := b.git.Trailers(ctx, "HEAD")
	if err != nil {
		return false
	}
	for _, t := range ts {
		if t.Key == "Box-Entry" && t.Value == entryID {
			return true
		}
	}
	return false
}

// removeStaleGitLocks removes lock files a killed writer's git left. Only box writers commit here and we
// hold the box lock, but a writer killed mid-commit leaves its git child running for a few milliseconds
// more: a lock that fresh is waited out (up to gitLockGrace) so that git finishes (or dies) first, and the
// journal's check then sees whether its commit landed (docs/ARCHITECTURE.md, "A killed writer").
func (b *Box) removeStaleGitLocks() {
	gd := b.git.GitDir()
	locks := []string{"index.lock", "HEAD.lock", "refs/heads/main.lock", "refs/heads/master.lock"}
	deadline := time.Now().Add(gitLockGrace)
	for _, p := range locks {
		p = filepath.Join(gd, filepath.FromSlash(p))
		for {
			fi, err := os.Stat(p)
			if err != nil || time.Since(fi.ModTime()) > gitLockGrace || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = os.Remove(p)
	}
}

// gitLockGrace is how long a git process outliving its killed writer may still hold a lock: git holds
// one for milliseconds, so two seconds is generous.
const gitLockGrace = 2 * time.Second

// removeOldIndexLock removes a git index.lock older than a few seconds (a git killed outside the box:
// git holds it for milliseconds) and reports whether it did.
func (b *Box) removeOldIndexLock() bool {
	p := filepath.Join(b.git.GitDir(), "index.lock")
	fi, err := os.Stat(p)
	if err != nil || time.Since(fi.ModTime()) < 5*time.Second {
		return false
	}
	return os.Remove(p) == nil
}

// gitPaths turns box paths into paths relative to the root.
func gitPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.TrimPrefix(p, "/")
	}
	return out
}

// syncAll fsyncs files (or folders) in parallel: the file system joins concurrent flushes into one
// journal commit, so a batch pays about one flush however many files it wrote. (syncfs would flush
// every other program's dirty data on the same disk too.)
func syncAll(paths []string) error {
	errc := make(chan error, len(paths))
	sem := make(chan struct{}, 32)
	for _, p := range paths {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			f, err := os.Open(p)
			if err == nil {
				err = f.Sync()
				_ = f.Close()
			}
			if errors.Is(err, fs.ErrNotExist) {
				err = nil // removed since: nothing to make durable
			}
			errc <- err
		}()
	}
	var first error
	for range paths {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}
