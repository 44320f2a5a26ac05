package layout

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Every read of the box tree goes through Open, ReadFile or Stat: the same escape check as writes (Host),
// so nothing a symlink points to outside the box is read, indexed or served; nor anything in .git or
// .box, whatever the path or link that leads there. docs/SECURITY.md
// ("Paths, symlinks and the box tree") states the rule; a symlink that stays inside the box is followed.

// ErrNotRegular is wrapped when a box path names a folder, a device, a pipe or a socket where a file is read.
var ErrNotRegular = errors.New("it is not a regular file")

// Open opens the regular file at boxPath for reading. The path is checked before opening (nothing
// outside is even opened) and the opened file after it (a link swapped in between is caught): the file
// read is the one at the resolved path, and that path is inside the box.
func Open(root, boxPath string) (*os.File, error) {
	f, _, err := open(root, boxPath)
	return f, err
}

func open(root, boxPath string) (*os.File, fs.FileInfo, error) {
	host, realRoot, err := resolve(root, boxPath)
	if err != nil {
		return nil, nil, err
	}
	// O_NONBLOCK: opening a pipe planted in the tree never waits for a writer.
	f, err := os.OpenFile(host, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := checkOpened(f, host, realRoot, boxPath)
	if err != nil {
		_ = f.Close() // opened only to check; the check's error is the one returned
		return nil, nil, err
	}
	return f, fi, nil
}

// checkOpened verifies that f is a regular file and the same file as its path resolved now, inside the box.
func checkOpened(f *os.File, host, realRoot, boxPath string) (fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: boxPath, Err: ErrNotRegular}
	}
	resolved, err := filepath.EvalSymlinks(host)
	if err != nil || !inside(realRoot, resolved) {
		return nil, fmt.Errorf("path %s: %w", boxPath, ErrOutside)
	}
	if err := checkRuntime(realRoot, resolved, boxPath); err != nil {
		return nil, err
	}
	now, err := os.Stat(resolved)
	if err != nil || !os.SameFile(fi, now) {
		return nil, fmt.Errorf("path %s: %w", boxPath, ErrOutside)
	}
	return fi, nil
}

// ReadFile reads the regular file at boxPath under Open's rules. A missing file is fs.ErrNotExist.
func ReadFile(root, boxPath string) ([]byte, error) {
	f, fi, err := open(root, boxPath)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: a close has nothing to lose
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}

// Stat describes what boxPath resolves to (a file or a folder), refusing a path that leads outside the
// box. Only metadata is read, so it checks before the call and not after.
func Stat(root, boxPath string) (fs.FileInfo, error) {
	host, realRoot, err := resolve(root, boxPath)
	if err != nil {
		return nil, err
	}
	if err := checkRuntime(realRoot, evalExisting(host), boxPath); err != nil {
		return nil, err
	}
	return os.Stat(host)
}

// checkRuntime refuses a read that resolves into the repository (.git) or the runtime folder (.box):
// their files (the repository's configuration, the state database, the logs) are the box's own and are
// never served, named directly or reached through a link from a note.
func checkRuntime(realRoot, resolved, boxPath string) error {
	for _, dir := range []string{".git", ".box"} {
		if inside(filepath.Join(realRoot, dir), resolved) {
			return fmt.Errorf("path %s leads into %s: %w", boxPath, dir, ErrOutside)
		}
	}
	return nil
}

// Skipped reports whether a walk or a listing passes over a file ReadFile would not read: gone since it
// was listed, leading outside the box, or not a regular file. A named read refuses instead.
func Skipped(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrOutside) || errors.Is(err, ErrNotRegular)
}
