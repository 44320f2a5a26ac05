// Package box owns one box on disk: its marker, init, the cross-process write lock and the write
// transaction (atomic files, validation, diary line, commit, undo). It knows no card or memory format.
package box

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/layout"
)

// ShapeVersion is the only marker shape this binary understands.
const ShapeVersion = 1

// Marker is the content of .box/box.json.
type Marker struct {
	ShapeVersion int    `json:"shapeVersion"`
	ID           string `json:"id"`
	Created      string `json:"created"`
}

// Options are what the layers above inject into the write transaction.
type Options struct {
	// Validate checks the files a change writes (box paths → bytes); an error finding refuses the change.
	Validate func(root string, paths []string, files map[string][]byte) []finding.Finding
	// LockTimeout is how long a write waits for the box lock before it is Busy; 0 means 15 s.
	LockTimeout time.Duration
	// MaxBatch caps how many changes one commit carries; 0 means 256.
	MaxBatch int
	// Spool lists the changes that can be expressed as data, by name: a spooled change from any
	// process is applied by whichever process holds the lock. Every process must register the same.
	Spool map[string]SpoolFunc
	// Settle tidies a file an undo produced by a line merge, for formats whose header a line merge cannot
	// place (an inbox day whose first line is undone loses its header with it). nil keeps merges as they are.
	Settle func(path string, merged []byte) []byte
	// Now is the clock that stamps diary entries and marker dates; nil is the wall clock.
	Now func() time.Time
}

// Box is an open box. It is safe for concurrent use; Close releases its lock file.
type Box struct {
	Root   string // absolute, symlinks resolved
	Marker Marker
	Notes  []string // what Init wants the owner to know (where the hooks point)

	git  *git.Repo
	opts Options

	lockMu sync.Mutex // one lock holder per Box in this process

	subMu sync.Mutex
	subs  []func(ctx context.Context, paths []string) // Subscribe

	mu      sync.Mutex
	queue   []*pending
	leading bool
}

// OpenWith opens the box at dir with injected options. It also cleans up after a writer that was killed
// (temp files, a half-done transaction, stale git locks) when no other writer holds the lock.
func OpenWith(dir string, opts Options) (*Box, error) {
	const op = "box.open"
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, errs.Wrap(op, errs.Invalid, err, "")
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	m, err := ReadMarker(root)
	if err != nil {
		return nil, err
	}
	b := newBox(root, opts)
	b.Marker = m
	if err := b.recoverIfFree(context.Background()); err != nil {
		return nil, err
	}
	return b, nil
}

func newBox(root string, opts Options) *Box {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 15 * time.Second
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	g := git.Open(root)
	g.CallerSyncs = true // the write transaction fsyncs its blobs itself, in parallel
	return &Box{Root: root, git: g, opts: opts}
}

// Now is the box's clock.
func (b *Box) Now() time.Time { return b.opts.Now() }

// Git is the box's repository.
func (b *Box) Git() *git.Repo { return b.git }

// Close releases what the box holds; it holds no file between writes, so this is for symmetry.
func (b *Box) Close() error { return nil }

// ReadMarker reads and checks root's marker.
func ReadMarker(root string) (Marker, error) {
	const op = "box.open"
	path := filepath.Join(root, filepath.FromSlash(layout.Marker))
	if err := checkRuntimeDir(root); err != nil {
		return Marker{}, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Marker{}, errs.E(op, errs.NotABox, "%s is not a box: run `box init` to make one", root)
	}
	if err != nil {
		return Marker{}, errs.Wrap(op, errs.NotABox, err, fmt.Sprintf("cannot read the box marker %s", path))
	}
	var m Marker
	if err := json.Unmarshal(data, &m); err != nil || m.ShapeVersion == 0 {
		return Marker{}, errs.E(op, errs.NotABox,
			"the box marker %s is not valid JSON with a shapeVersion: restore it from git (git checkout -- .box/box.json) or run `box init` in an empty folder", path)
	}
	if m.ShapeVersion > ShapeVersion {
		return Marker{}, errs.E(op, errs.NotABox,
			"this box was made by a newer box (shape %d); upgrade the box binary", m.ShapeVersion)
	}
	if m.ShapeVersion < ShapeVersion {
		return Marker{}, errs.E(op, errs.NotABox,
			"the box marker %s has shape %d, which this box binary does not know", path, m.ShapeVersion)
	}
	return m, nil
}

// checkRuntimeDir refuses a box whose .box folder, or whose marker in it, is a symlink or anything but
// what it should be: the lock, the index, the state, the spool and the logs live in .box, and a link
// would put them (and the owner's keys' hashes) wherever it points, outside the box.
func checkRuntimeDir(root string) error {
	for _, p := range []string{".box", layout.Marker} {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil // not a box: ReadMarker says so
		}
		if err != nil {
			return errs.Wrap("box.open", errs.NotABox, err, fmt.Sprintf("cannot read the box's %s in %s", p, root))
		}
		want := fi.Mode().IsRegular()
		if p == ".box" {
			want = fi.IsDir()
		}
		if fi.Mode()&fs.ModeSymlink != 0 || !want {
			return errs.E("box.open", errs.Refused,
				"%s in %s is a link or not a plain %s, so the box would keep its lock, index and state wherever it points: replace it with a real folder and marker (git checkout -- .box/box.json restores the marker)",
				p, root, map[bool]string{true: "folder", false: "file"}[p == ".box"])
		}
	}
	return nil
}

// Find walks up from start to the nearest folder holding a box marker and returns it. A box whose
// .box is a link is refused there, not passed over for one further up.
func Find(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", errs.Wrap("box.find", errs.Invalid, err, "")
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(layout.Marker))); err == nil {
			if err := checkRuntimeDir(dir); err != nil {
				return "", err
			}
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errs.E("box.find", errs.NotABox,
				"no box in %s or any folder above it: run `box init` to make one, or pass --box DIR", start)
		}
		dir = parent
	}
}

// Discover resolves which box a command means: the --box flag, else BOX_DIR, else the nearest box at or
// above cwd. A named folder must itself be a box (no walking up from it).
func Discover(flagDir, env, cwd string) (string, error) {
	for _, d := range []string{flagDir, env} {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", errs.Wrap("box.discover", errs.Invalid, err, "")
		}
		if _, err := ReadMarker(abs); err != nil {
			return "", err
		}
		return abs, nil
	}
	return Find(cwd)
}
