// Package validate owns every way a box is checked (paths, --all, --staged, --hook, --pre-commit, --links,
// --urls, --canonical) as findings; it holds no card rules and writes only the URL cache (--fix writes via ref).
package validate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/egress"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/ref"
	"github.com/boxmem/box/internal/schema"
	"github.com/boxmem/box/internal/usage"
)

// Finding codes this package reports itself (the others come from layout, card, schema and ref).
const (
	CodeReserved      = "reserved-name"   // error: a nested area name
	CodeMissingAnchor = "missing-anchor"  // error: an interface card is missing
	CodeSymlinkOut    = "symlink-out"     // error: a symlink pointing outside the box
	CodeTooLarge      = "too-large"       // error: a card over 1 MiB
	CodeNotFound      = "not-found"       // error: a named file does not exist
	CodeOutside       = "outside-box"     // error: a named path is not in the box
	CodeBinary        = "unlisted-binary" // error: a staged file over 1 MiB no attachments card lists
	CodeDangling      = "dangling-ref"    // warning: a ref to a path this commit deletes or renames
	CodeDeadURL       = "dead-url"        // warning: an external URL that does not answer
	CodeUncheckedURL  = "unchecked-url"   // warning: an external URL on a private or local address, not asked (the egress rule)
	CodeBadName       = "bad-name"        // error: a staged file name with a line break
)

// MaxBinary is the largest staged non-card file a commit takes without an attachments card listing it.
const MaxBinary = 1 << 20

// Result is what one validation run found. Files counts the cards and documents checked.
type Result struct {
	Findings []finding.Finding `json:"findings"`
	Errors   int               `json:"errors"`
	Warnings int               `json:"warnings"`
	Files    int               `json:"files"`
}

// HasErrors reports whether the run found an error.
func (r Result) HasErrors() bool { return r.Errors > 0 }

func (r *Result) add(fs ...finding.Finding) { r.Findings = append(r.Findings, fs...) }

// done sorts the findings, drops exact repeats and counts them.
func (r *Result) done() Result {
	finding.Sort(r.Findings)
	out := r.Findings[:0]
	for i, f := range r.Findings {
		if i > 0 && f == r.Findings[i-1] {
			continue
		}
		out = append(out, f)
	}
	r.Findings, r.Errors, r.Warnings = out, 0, 0
	if r.Findings == nil {
		r.Findings = []finding.Finding{}
	}
	for _, f := range r.Findings {
		if f.Severity == finding.Error {
			r.Errors++
		} else {
			r.Warnings++
		}
	}
	return *r
}

// Options tune a Validator; the zero value is ready for use.
type Options struct {
	// Egress is the client of the URL pass (default: egress.New with Timeout): public addresses only, no
	// redirect followed, the box's one rule for its own fetches (docs/SECURITY.md).
	Egress *egress.Client
	// Timeout bounds one URL check (default 10 s); Concurrency is how many run at once (default 4).
	Timeout     time.Duration
	Concurrency int
	// Now is the clock of the URL cache (default time.Now).
	Now func() time.Time
	// Workers is how many files the box-wide passes check at once (default GOMAXPROCS).
	Workers int
}

// Validator validates one box. The schema registry is loaded once, on first use.
type Validator struct {
	root string
	opts Options
	git  *git.Repo

	regOnce sync.Once
	reg     *schema.Registry
	regErr  error
}

// New returns a Validator for the box at root (a host path).
func New(root string, opts Options) *Validator {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = 4
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Workers == 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	return &Validator{root: root, opts: opts, git: git.Open(root)}
}

func (v *Validator) registry() (*schema.Registry, error) {
	v.regOnce.Do(func() {
		v.reg, v.regErr = schema.Load(v.root)
		if v.regErr != nil {
			v.regErr = errs.Wrap("validate", errs.Other, v.regErr, "cannot read the box's schemas in /_config/schemas")
		}
	})
	return v.reg, v.regErr
}

// Data checks one card's bytes as the file at boxPath: bad input, the card format, its schema, the
// rules of its kind (router, map, note, inbox day) and, with rv, its refs (warnings).
func (v *Validator) Data(boxPath string, data []byte, rv *ref.Resolver) []finding.Finding {
	reg, err := v.registry()
	if err != nil {
		return []finding.Finding{finding.Errorf(boxPath, 0, schema.CodeUnchecked, "%v", err)}
	}
	return checkData(reg, boxPath, data, rv)
}

func checkData(reg *schema.Registry, boxPath string, data []byte, rv *ref.Resolver) []finding.Finding {
	var out []finding.Finding
	if off, bad := layout.ReservedOffender(boxPath); bad {
		out = append(out, reservedFinding(off))
	}
	if len(data) > card.MaxSize {
		return append(out, finding.Errorf(boxPath, 0, CodeTooLarge,
			"the file is %d bytes; a card may be at most 1 MiB (1048576 bytes): split it, or keep the data outside the card", len(data)))
	}
	c, err := card.Parse(boxPath, data)
	if err != nil {
		var ce *card.Error
		if errors.As(err, &ce) {
			out = append(out, finding.Errorf(boxPath, ce.Line, schema.CodeInvalidCard, "%s", ce.Msg))
		} else {
			out = append(out, finding.Errorf(boxPath, 0, schema.CodeInvalidCard, "%s", userMsg(err)))
		}
		if utf8ok(data) && !hasNUL(data) && rv != nil {
			out = append(out, rv.Check(boxPath, data)...) // the body's refs are still worth knowing
		}
		return out
	}
	out = append(out, reg.Check(c)...)
	switch c.Type {
	case "router":
		out = append(out, note.CheckRouter(boxPath, data)...)
	case "map":
		out = append(out, note.CheckMap(boxPath, data)...)
	case "note":
		out = append(out, note.CheckNote(boxPath, data)...)
	case "inbox-day":
		out = append(out, inbox.Check(boxPath, data)...)
	}
	if rv != nil {
		out = append(out, rv.Check(boxPath, data)...)
	}
	return out
}

func reservedFinding(off string) finding.Finding {
	return finding.Errorf(off, 0, CodeReserved,
		"%s uses the reserved area name %q below the root: rename it (only _tmp may nest)", off, path.Base(off))
}

// userMsg is an error's user sentence without the operation prefix.
func userMsg(err error) string {
	var e *errs.Error
	if errors.As(err, &e) && e.Msg != "" {
		return e.Msg
	}
	return err.Error()
}

// Writes validates the files a write transaction is about to commit (box paths → bytes; nil bytes
// are deletions); it has the signature of box.Options.Validate, and the composition root gives it to the
// one box handle of a process, so every writer is checked the same. Refs are not checked: they only warn.
// An error the file already had on disk does not refuse the change: a hand-broken file is reported by
// box validate, not frozen against every other edit.
func (v *Validator) Writes(_ string, paths []string, files map[string][]byte) []finding.Finding {
	var out []finding.Finding
	for _, p := range paths {
		data, ok := files[p]
		if !ok || data == nil {
			continue
		}
		if off, bad := layout.ReservedOffender(p); bad {
			out = append(out, reservedFinding(off))
			continue
		}
		if !card.IsCard(p) {
			continue
		}
		fs := v.Data(p, data, nil)
		if !finding.HasErrors(fs) {
			out = append(out, fs...)
			continue
		}
		out = append(out, v.newFindings(p, fs)...)
	}
	finding.Sort(out)
	return out
}

// newFindings drops the findings the file at p already has on disk.
func (v *Validator) newFindings(p string, fs []finding.Finding) []finding.Finding {
	old, err := os.ReadFile(filepath.Join(v.root, filepath.FromSlash(p)))
	if err != nil {
		return fs
	}
	had := map[string]bool{}
	for _, f := range v.Data(p, old, nil) {
		had[f.Code+"\x00"+f.Message] = true
	}
	var out []finding.Finding
	for _, f := range fs {
		if !had[f.Code+"\x00"+f.Message] {
			out = append(out, f)
		}
	}
	return out
}

// Files validates the named files and folders: box paths ("/_content/x.md") or host paths, relative
// ones against cwd. A folder means every card under it. Non-card files are skipped.
func (v *Validator) Files(ctx context.Context, cwd string, args []string) (Result, error) {
	var res Result
	var paths []string
	for _, a := range args {
		bp, f := v.boxPathOf(cwd, a)
		if f != nil {
			res.add(*f)
			continue
		}
		// A path through a linked folder that leads out is refused before anything under it is
		// listed or read (docs/SECURITY.md, "Paths, symlinks and the box tree").
		if _, err := layout.Host(v.root, bp); errors.Is(err, layout.ErrOutside) {
			res.add(finding.Errorf(bp, 0, CodeSymlinkOut, symlinkOut))
			continue
		}
		host := filepath.Join(v.root, filepath.FromSlash(bp))
		fi, err := os.Lstat(host)
		if err != nil {
			res.add(finding.Errorf(bp, 0, CodeNotFound, "no such file in the box"))
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if f := v.symlink(bp, host); f != nil {
				res.add(*f)
				continue
			}
			fi, err = os.Stat(host)
			if err != nil {
				res.add(finding.Errorf(bp, 0, CodeNotFound, "the symlink points to nothing"))
				continue
			}
		}
		if fi.IsDir() {
			w, err := v.walk(ctx, bp)
			if err != nil {
				return res, err
			}
			res.add(w.findings...)
			paths = append(paths, w.cards...)
			continue
		}
		if off, bad := layout.ReservedOffender(bp); bad {
			res.add(reservedFinding(off))
		}
		if card.IsCard(bp) {
			paths = append(paths, bp)
		}
	}
	slices.Sort(paths)
	fs, n, err := v.checkFiles(ctx, slices.Compact(paths))
	if err != nil {
		return res, err
	}
	res.add(fs...)
	res.Files = n
	return res.done(), nil
}

// boxPathOf reads an argument as a box path or a host path.
func (v *Validator) boxPathOf(cwd, arg string) (string, *finding.Finding) {
	if strings.Contains(arg, "\x00") {
		f := finding.Errorf(strings.ReplaceAll(arg, "\x00", `\0`), 0, CodeOutside, "the path contains a NUL byte")
		return "", &f
	}
	host := arg
	if !filepath.IsAbs(host) {
		host = filepath.Join(cwd, host)
	}
	// The folder may be reached through a symlink (macOS /tmp); compare resolved folders.
	dir, base := filepath.Split(filepath.Clean(host))
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		host = filepath.Join(r, base)
	}
	if strings.HasPrefix(arg, "/") && host != v.root && !strings.HasPrefix(host, v.root+string(filepath.Separator)) {
		if bp, err := layout.Clean(arg); err == nil {
			return bp, nil // a box path: /_content/…
		}
	}
	rel, err := filepath.Rel(v.root, host)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		f := finding.Errorf(arg, 0, CodeOutside, "the path is outside the box %s (no path may leave the box root, `..` included)", v.root)
		return "", &f
	}
	if rel == "." {
		return "/", nil
	}
	bp, err := layout.Clean("/" + filepath.ToSlash(rel))
	if err != nil {
		f := finding.Errorf(arg, 0, CodeOutside, "%v", err)
		return "", &f
	}
	return bp, nil
}

// symlinkOut is the finding's sentence for a path that leads outside the box through a symlink.
const symlinkOut = "the symlink points outside the box: nothing in a box may lead out of it; copy the file in instead"

// symlink reports a symlink that leads outside the box (or nowhere readable), else nil.
func (v *Validator) symlink(bp, host string) *finding.Finding {
	target, err := filepath.EvalSymlinks(host)
	if err != nil {
		f := finding.Errorf(bp, 0, CodeSymlinkOut, "the symlink points to nothing that exists")
		return &f
	}
	rel, err := filepath.Rel(v.root, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		f := finding.Errorf(bp, 0, CodeSymlinkOut, symlinkOut)
		return &f
	}
	return nil
}

// checkFiles reads and checks cards (box paths) on disk, in parallel, each worker with its own
// ref resolver. It returns the findings and how many files it checked.
func (v *Validator) checkFiles(ctx context.Context, paths []string) ([]finding.Finding, int, error) {
	reg, err := v.registry()
	if err != nil {
		return nil, 0, err
	}
	return v.parallel(ctx, paths, func(rv *ref.Resolver, bp string) []finding.Finding {
		data, f := v.read(bp)
		if f != nil {
			return []finding.Finding{*f}
		}
		return checkData(reg, bp, data, rv)
	})
}

// parallel runs check on every path with Workers goroutines, each with its own Resolver.
func (v *Validator) parallel(ctx context.Context, paths []string, check func(rv *ref.Resolver, bp string) []finding.Finding) ([]finding.Finding, int, error) {
	results := make([][]finding.Finding, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	workers := min(v.opts.Workers, max(1, len(paths)/64+1))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rv := ref.NewResolver(v.root)
			for i := range next {
				results[i] = check(rv, paths[i])
			}
		}()
	}
	var err error
	for i := range paths {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, 0, err
	}
	var out []finding.Finding
	for _, r := range results {
		out = append(out, r...)
	}
	return out, len(paths), nil
}

// read returns a file's bytes, or the finding that says why it is not read: leading outside the box,
// too large, missing. It reads through layout.Open, under the escape check of every read of the tree.
func (v *Validator) read(bp string) ([]byte, *finding.Finding) {
	file, err := layout.Open(v.root, bp)
	if errors.Is(err, layout.ErrOutside) {
		f := finding.Errorf(bp, 0, CodeSymlinkOut, symlinkOut)
		return nil, &f
	}
	if err != nil {
		f := finding.Errorf(bp, 0, CodeNotFound, "cannot read the file: %v", pathErr(err))
		return nil, &f
	}
	defer func() { _ = file.Close() }() // read only
	fi, err := file.Stat()
	if err != nil {
		f := finding.Errorf(bp, 0, CodeNotFound, "cannot read the file: %v", pathErr(err))
		return nil, &f
	}
	if fi.Size() > card.MaxSize {
		f := finding.Errorf(bp, 0, CodeTooLarge,
			"the file is %d bytes; a card may be at most 1 MiB (1048576 bytes): split it, or keep the data outside the card", fi.Size())
		return nil, &f
	}
	data, err := io.ReadAll(io.LimitReader(file, card.MaxSize+1))
	if err != nil {
		f := finding.Errorf(bp, 0, CodeNotFound, "cannot read the file: %v", pathErr(err))
		return nil, &f
	}
	return data, nil
}

func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// walked is what one walk of a part of the box saw.
type walked struct {
	cards    []string
	dirs     []string
	findings []finding.Finding // reserved names, symlinks out
}

// walk lists the cards under the box path dir (the whole box for "/"): it skips _tmp at any depth,
// .git and .box, reports the shallowest reserved-name offender and symlinks that leave the box.
func (v *Validator) walk(ctx context.Context, dir string) (walked, error) {
	var w walked
	starts := []string{dir}
	if dir == "/" {
		starts = nil
		for _, a := range layout.Areas {
			if a != "_tmp" {
				starts = append(starts, "/"+a)
			}
		}
	}
	for _, s := range starts {
		if off, bad := layout.ReservedOffender(s); bad {
			w.findings = append(w.findings, reservedFinding(off))
			continue
		}
		if s == "/" || strings.HasPrefix(s, "/.git") || strings.HasPrefix(s, "/.box") {
			continue
		}
		hostStart := filepath.Join(v.root, filepath.FromSlash(s))
		err := filepath.WalkDir(hostStart, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == hostStart && errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return nil // unreadable or vanished: not a card finding
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rel, _ := filepath.Rel(v.root, p)
			bp := "/" + filepath.ToSlash(rel)
			if d.IsDir() {
				if d.Name() == "_tmp" {
					return fs.SkipDir
				}
				if off, bad := layout.ReservedOffender(bp); bad && off == bp {
					w.findings = append(w.findings, reservedFinding(off))
					return fs.SkipDir
				}
				w.dirs = append(w.dirs, bp)
				return nil
			}
			if off, bad := layout.ReservedOffender(bp); bad && off == bp {
				w.findings = append(w.findings, reservedFinding(off))
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				if f := v.symlink(bp, p); f != nil {
					w.findings = append(w.findings, *f)
					return nil
				}
			}
			if card.IsCard(bp) {
				w.cards = append(w.cards, bp)
			}
			return nil
		})
		if err != nil {
			return w, errs.Wrap("validate", errs.Other, err, fmt.Sprintf("cannot walk %s", s))
		}
	}
	return w, nil
}

// All validates the whole box: the root vocabulary, reserved names, the interface anchors, the
// box's own schemas, every card under the areas (except _tmp) and case collisions per folder.
func (v *Validator) All(ctx context.Context) (Result, error) {
	var res Result
	ents, err := os.ReadDir(v.root)
	if err != nil {
		return res, errs.Wrap("validate", errs.Other, err, "cannot read the box root")
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	res.add(layout.CheckRoot(names)...)
	for _, a := range layout.InterfaceCards {
		if _, err := os.Stat(filepath.Join(v.root, filepath.FromSlash(a))); err != nil {
			res.add(finding.Errorf(a, 0, CodeMissingAnchor,
				"the interface card %s is missing: the owner's views need it; restore it from git or copy it from a new box", a))
		}
	}
	reg, err := v.registry()
	if err != nil {
		return res, err
	}
	res.add(reg.Findings()...)
	w, err := v.walk(ctx, "/")
	if err != nil {
		return res, err
	}
	res.add(w.findings...)
	for _, d := range w.dirs {
		res.add(ref.Collisions(v.root, d)...)
	}
	fs, n, err := v.checkFiles(ctx, w.cards)
	if err != nil {
		return res, err
	}
	res.add(fs...)
	res.Files = n
	res.add(v.ledgers()...)
	return res.done(), nil
}

// ledgers names every usage-ledger line the brain leaves out of its totals (docs/BRAIN.md, "The usage
// ledger"): the owner fixes or removes it.
func (v *Validator) ledgers() []finding.Finding {
	ents, err := os.ReadDir(filepath.Join(v.root, filepath.FromSlash(strings.TrimPrefix(usage.Dir, "/"))))
	if err != nil {
		return nil // no ledger yet; a folder that cannot be read is the walk's finding
	}
	var out []finding.Finding
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		p := usage.Dir + "/" + e.Name()
		data, err := layout.ReadFile(v.root, p)
		if err != nil {
			out = append(out, finding.Warnf(p, 0, usage.CodeDamaged, "the usage ledger cannot be read: %s", userMsg(err)))
			continue
		}
		out = append(out, usage.Damaged(p, data)...)
	}
	return out
}

// Links is the box-wide broken-link scan: every ref of every card, as warnings.
func (v *Validator) Links(ctx context.Context) (Result, error) {
	var res Result
	w, err := v.walk(ctx, "/")
	if err != nil {
		return res, err
	}
	fs, n, err := v.parallel(ctx, w.cards, func(rv *ref.Resolver, bp string) []finding.Finding {
		data, f := v.read(bp)
		if f != nil {
			return nil // not a link problem; --all reports it
		}
		return rv.Check(bp, data)
	})
	if err != nil {
		return res, err
	}
	res.add(fs...)
	res.Files = n
	return res.done(), nil
}

// Canonical is the canonical-form pass over the whole box (ref.RewriteWith). With a box to write through
// (the process's one handle) it rewrites: under the lock, one commit, a diary line, and an undo.
func (v *Validator) Canonical(ctx context.Context, fix *box.Box) (ref.Report, error) {
	rep, err := ref.RewriteWith(v.root, nil, nil)
	if err == nil && fix != nil && rep.FilesChanged > 0 {
		rep, err = v.canonicalFix(ctx, fix)
	}
	if err != nil {
		return rep, errs.Wrap("validate.canonical", errs.Other, err, "")
	}
	if rep.Items == nil {
		rep.Items = []ref.Item{}
	}
	return rep, nil
}

func (v *Validator) canonicalFix(ctx context.Context, b *box.Box) (ref.Report, error) {
	var rep ref.Report
	_, err := b.Do(ctx, box.Change{
		Actor:  box.Actor{Who: "owner", Via: "cli", Trust: "own"},
		Op:     "canonical",
		Switch: "change",
		Apply: func(tx *box.Tx) error {
			var err error
			rep, err = ref.RewriteWith(v.root, nil, tx.Write)
			return err
		},
		Summary: "owner rewrote relative refs in the /-form (box validate --canonical --fix)",
	})
	return rep, err
}

func utf8ok(b []byte) bool { return utf8.Valid(b) }

func hasNUL(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 }
