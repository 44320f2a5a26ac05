// Package exports owns writing a box's memory out in formats other tools read (docs/IMPORTS.md): a
// plain Obsidian-ready copy of its Markdown, the reference MCP memory server's JSONL graph, and one JSON
// document of every note, line and card with provenance. It only reads the box tree (never through a
// symlink, never its runtime files) and writes only the destination it is given, outside the box.
package exports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxmem/box/internal/atomicfile"
	"github.com/boxmem/box/internal/errs"
)

// Kinds of export, as `box export KIND` names them.
const (
	Markdown     = "markdown"
	ServerMemory = "server-memory"
	JSON         = "json"
)

// Kinds lists every kind, in the order the docs show them.
var Kinds = []string{Markdown, ServerMemory, JSON}

// InboxEntity names the entity a server-memory export keeps the unfiled inbox lines on; its type is
// imports.InboxType, which `box import server-memory` reads back as plain lines (docs/IMPORTS.md).
const InboxEntity = "Unfiled inbox"

// Options tune an export.
type Options struct {
	Now      func() time.Time // the clock, for the JSON export's stamp; nil = time.Now
	Progress func(done, total int)
}

// Result says what was written.
type Result struct {
	Kind      string `json:"kind"`
	Path      string `json:"path"`
	Files     int    `json:"files,omitempty"`     // markdown: files copied
	Notes     int    `json:"notes"`               // notes exported
	Lines     int    `json:"lines"`               // unfiled inbox lines exported
	Facts     int    `json:"facts,omitempty"`     // server-memory: observations written
	Relations int    `json:"relations,omitempty"` // server-memory
	Cards     int    `json:"cards,omitempty"`     // json: cards
	Bytes     int64  `json:"bytes"`
	Text      string `json:"text"`
}

// Export writes the box at root as kind to dest.
func Export(ctx context.Context, kind, root, dest string, opts Options) (Result, error) {
	const op = "exports.export"
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Progress == nil {
		opts.Progress = func(int, int) {}
	}
	dest, err := outside(root, dest)
	if err != nil {
		return Result{}, err
	}
	b, err := openBox(root)
	if err != nil {
		return Result{}, err
	}
	defer b.close()
	file := sink{name: dest, write: func(fill func(io.Writer) error) (int64, error) { return writeFile(dest, fill) }}
	switch kind {
	case Markdown:
		return b.markdown(ctx, dest, opts)
	case ServerMemory:
		return b.serverMemory(ctx, file, opts)
	case JSON:
		return b.json(ctx, file, opts)
	}
	return Result{}, errs.E(op, errs.Usage, "%q is not a kind of export; use one of %s.", kind, strings.Join(Kinds, ", "))
}

// Stream writes the box at root as kind to w, for a download (the web UI's export buttons): markdown
// as a zip of the same files the folder export copies, server-memory and json as their files. name is
// what the result's text calls the destination.
func Stream(ctx context.Context, kind, root, name string, w io.Writer, opts Options) (Result, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Progress == nil {
		opts.Progress = func(int, int) {}
	}
	b, err := openBox(root)
	if err != nil {
		return Result{}, err
	}
	defer b.close()
	out := sink{name: name, write: func(fill func(io.Writer) error) (int64, error) {
		cw := &countWriter{w: w}
		err := fill(cw)
		if err == nil {
			err = cw.err
		}
		return cw.n, err
	}}
	switch kind {
	case Markdown:
		return b.markdownZip(ctx, out, opts)
	case ServerMemory:
		return b.serverMemory(ctx, out, opts)
	case JSON:
		return b.json(ctx, out, opts)
	}
	return Result{}, errs.E("exports.stream", errs.Usage, "%q is not a kind of export; use one of %s.", kind, strings.Join(Kinds, ", "))
}

// sink is where an export goes: a file written atomically, or a stream.
type sink struct {
	name  string
	write func(fill func(io.Writer) error) (int64, error)
}

// outside makes dest absolute and refuses a destination inside the box: everything the box holds is
// written through its transaction, and an export is not.
func outside(root, dest string) (string, error) {
	const op = "exports.dest"
	abs, err := filepath.Abs(dest)
	if err != nil {
		return "", errs.Wrap(op, errs.Invalid, err, "The export's destination is not a path")
	}
	real := abs
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			real = filepath.Join(r, strings.TrimPrefix(abs, p))
			break
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	rroot, err := filepath.EvalSymlinks(root)
	if err != nil {
		rroot = root
	}
	if rel, err := filepath.Rel(rroot, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errs.E(op, errs.Invalid, "%s is inside the box; export to a folder or file outside it.", dest)
	}
	return abs, nil
}

// writeFile writes a file atomically from a stream (temp file beside it, fsync, rename).
func writeFile(dest string, fill func(w io.Writer) error) (int64, error) {
	dir := filepath.Dir(dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, errs.Wrap("exports.write", errs.Other, err, "The export's folder cannot be made")
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".*.tmp")
	if err != nil {
		return 0, errs.Wrap("exports.write", errs.Other, err, "The export cannot be written there")
	}
	cw := &countWriter{w: f}
	err = fill(cw)
	if err == nil {
		err = cw.err
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), dest)
	}
	if err != nil {
		_ = os.Remove(f.Name()) // the half-written temp file; the error that stopped it is the one returned
		var e *errs.Error
		if errors.As(err, &e) {
			return 0, err
		}
		return 0, errs.Wrap("exports.write", errs.Other, err, "The export could not be written")
	}
	return cw.n, atomicfile.SyncDir(dir)
}

// countWriter counts what is written and keeps the first write error, which writeFile returns: a fill
// may write piece by piece without checking each.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// box is the tree being exported, opened through an os.Root so no read leaves it.
type box struct {
	root string
	fs   *os.Root
}

func openBox(root string) (*box, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, errs.Wrap("exports.open", errs.NotABox, err, "The box cannot be read")
	}
	return &box{root: root, fs: r}, nil
}

func (b *box) close() { _ = b.fs.Close() } // read only: a close has nothing to lose

// files lists the files under dir (a box path without its leading /) that an export may read: no
// symlinks, no hidden names, no _tmp, in lexical order.
func (b *box) files(dir string) ([]string, error) {
	var out []string
	if _, err := b.plain(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	err := fs.WalkDir(b.fs.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipDir
			}
			return err
		}
		name := d.Name()
		if p != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~") || name == "_tmp") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, errs.Wrap("exports.read", errs.Other, err, "The box's files cannot be listed")
	}
	return out, nil
}

func (b *box) read(p string) ([]byte, error) {
	f, err := b.open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	return io.ReadAll(f)
}

// open opens a file the walk listed, never through a link: every folder on its way and the file itself
// must be what they were when listed (no symlink), checked before and after the open, so a link swapped
// in meanwhile is refused, not followed (os.Root alone would follow a link that stays inside the box,
// into .git or .box).
func (b *box) open(p string) (*os.File, error) {
	before, err := b.plain(p)
	if err != nil {
		return nil, err
	}
	f, err := b.fs.Open(p)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	after, err2 := b.plain(p)
	if err == nil {
		err = err2
	}
	if err == nil && (!fi.Mode().IsRegular() || !os.SameFile(fi, before) || !os.SameFile(fi, after)) {
		err = fmt.Errorf("%s changed while it was read", p)
	}
	if err != nil {
		_ = f.Close() // read only
		return nil, err
	}
	return f, nil
}

// plain checks that no part of p is a link, and returns what p is.
func (b *box) plain(p string) (os.FileInfo, error) {
	var fi os.FileInfo
	parts := strings.Split(p, "/")
	for i := range parts {
		var err error
		if fi, err = b.fs.Lstat(strings.Join(parts[:i+1], "/")); err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, errs.E("exports.read", errs.Invalid, "/%s is a link; an export never follows links, so replace it with the folder or file itself.", strings.Join(parts[:i+1], "/"))
		}
	}
	return fi, nil
}
