package ref

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
)

// Form is how a ref is written, which decides where it is read from.
type Form string

const (
	Rooted   Form = "rooted"   // "/x": from the box root (the canonical form)
	Attach   Form = "attach"   // "attach/…": the card's own <name>.attach/ folder (also canonical)
	Relative Form = "relative" // anything else: from the document's folder (legacy, still resolves)
	Name     Form = "name"     // a wikilink: a file under /_content/ found by its name
)

// Resolution is where a ref leads. A ref that fails closed has a Reason and no Target; otherwise
// Target is a clean box path (empty for a wikilink that matches nothing) and Exists says whether it is there.
type Resolution struct {
	Form   Form   `json:"form"`
	Target string `json:"target,omitempty"`
	Exists bool   `json:"exists"`
	Reason string `json:"reason,omitempty"`
}

// Closed reports whether the ref fails closed: it resolves to nothing, whatever exists on disk.
func (r Resolution) Closed() bool { return r.Reason != "" }

// Resolver resolves refs in one box. It lists the names under /_content/ once, the first time a wikilink
// needs them, so one Resolver serves a whole validation pass (and sees the files of that moment); it is
// not safe for concurrent use.
type Resolver struct {
	root  string
	names []string // box paths of the files under /_content/, built on the first wikilink that needs it
	built bool
	// inside remembers folders whose whole path was checked to stay in the box: a target in one of them
	// needs only an lstat, not a symlink walk from the root. A Resolver is for one pass over a box that
	// does not change under it.
	inside   map[string]bool
	realRoot string
}

// NewResolver returns a Resolver for the box at root.
func NewResolver(root string) *Resolver { return &Resolver{root: root, inside: map[string]bool{}} }

// ResolveRef resolves an extracted ref from the file fromBoxPath: wikilinks by name, links after Markdown
// and percent decoding.
func (rv *Resolver) ResolveRef(fromBoxPath string, r Ref) (Resolution, error) {
	switch r.Kind {
	case Wikilink:
		return rv.Wikilink(fromBoxPath, r.Path)
	case Link:
		return rv.resolve(fromBoxPath, r.Raw, linkPath(r.Path))
	}
	return rv.resolve(fromBoxPath, r.Raw, r.Path)
}

// linkPath decodes a Markdown link destination: backslash escapes, then percent escapes ("My%20Plan.md").
func linkPath(p string) string {
	if strings.Contains(p, `\`) {
		var b strings.Builder
		for i := 0; i < len(p); i++ {
			if p[i] == '\\' && i+1 < len(p) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", p[i+1]) >= 0 {
				i++
			}
			b.WriteByte(p[i])
		}
		p = b.String()
	}
	if strings.Contains(p, "%") {
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
	}
	return p
}

// resolve reads p (raw without ?query/#fragment, already decoded) from the file from.
func (rv *Resolver) resolve(from, raw, p string) (Resolution, error) {
	fromClean, err := layout.Clean(from)
	if err != nil {
		return Resolution{}, errs.Wrap("ref.resolve", errs.Invalid, err, "")
	}
	if reason := emptiness(raw, p); reason != "" {
		return Resolution{Form: Relative, Reason: reason}, nil
	}
	var base []string
	form := Relative
	switch {
	case strings.HasPrefix(p, "/"):
		form = Rooted
	case strings.HasPrefix(p, "attach/"):
		form = Attach
		base = layout.Segments(attachDir(fromClean))
		p = strings.TrimPrefix(p, "attach/")
	default:
		base = layout.Segments(path.Dir(fromClean))
	}
	target, reason := join(base, p, form == Attach)
	if reason != "" {
		return Resolution{Form: form, Reason: reason}, nil
	}
	return rv.stat(form, target)
}

// emptiness names why a ref with no path is refused, or "".
func emptiness(raw, p string) string {
	switch {
	case strings.TrimSpace(p) != "":
		return ""
	case strings.TrimSpace(raw) == "":
		return "the ref is empty"
	case strings.HasPrefix(raw, "#"):
		return "the ref is only a #fragment and names no file"
	case strings.HasPrefix(raw, "?"):
		return "the ref is only a ?query and names no file"
	}
	return "the ref names no file"
}

// attachDir is the card's own attach folder: the file name minus its final extension, plus ".attach"
// ("/_content/a/Plan.doc.card" → "/_content/a/Plan.doc.attach").
func attachDir(from string) string {
	dir, base := path.Split(from)
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return dir + base + ".attach"
}

// join applies p to the folder base and checks the result is a place a ref may lead: inside the box,
// not the root, inside one of the five areas (and, for attach refs, inside the attach folder).
func join(base []string, p string, attach bool) (string, string) {
	if strings.ContainsRune(p, 0) {
		return "", "the ref contains a NUL byte"
	}
	if strings.Contains(p, `\`) {
		return "", "the ref contains a backslash; box paths use /"
	}
	floor := 0
	if attach {
		floor = len(base)
	}
	stack := append([]string(nil), base...)
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(stack) == floor {
				if attach {
					return "", "the ref leaves the card's attach folder (.. above attach/)"
				}
				return "", "the ref leaves the box (.. goes above the box root)"
			}
			stack = stack[:len(stack)-1]
		default:
			stack = append(stack, s)
		}
	}
	target := "/" + strings.Join(stack, "/")
	switch {
	case len(stack) == 0:
		return "", "the ref names the box root itself"
	case len(stack) == 1 && layout.IsArea(stack[0]):
		return "", fmt.Sprintf("the ref names the area %s itself, not something in it", target)
	case !layout.InArea(target):
		return "", fmt.Sprintf("the ref leads to %s, outside the five areas (%s)", target, strings.Join(layout.Areas, ", "))
	}
	return target, ""
}

// stat maps a clean in-area box path to the host, refusing symlinks that lead out, and checks it exists.
func (rv *Resolver) stat(form Form, target string) (Resolution, error) {
	dir := path.Dir(target)
	if rv.inside[dir] {
		fi, err := os.Lstat(filepath.Join(rv.realRoot, filepath.FromSlash(target)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return Resolution{Form: form, Target: target}, nil
		case err == nil && fi.Mode()&fs.ModeSymlink == 0:
			return Resolution{Form: form, Target: target, Exists: true}, nil
		} // a symlink, or an odd error: the full check below
	}
	host, err := layout.Host(rv.root, target)
	if err != nil {
		if _, rerr := filepath.EvalSymlinks(rv.root); rerr != nil {
			return Resolution{}, errs.Wrap("ref.resolve", errs.NotABox, rerr, "the box folder cannot be read")
		}
		return Resolution{Form: form, Reason: fmt.Sprintf("the ref %s leads outside the box through a symlink", target)}, nil
	}
	_, err = os.Stat(host)
	if rv.inside != nil && rv.realRoot == "" {
		rv.realRoot, _ = filepath.EvalSymlinks(rv.root)
	}
	if rv.inside != nil && rv.realRoot != "" {
		if fi, derr := os.Lstat(filepath.Dir(host)); derr == nil && fi.IsDir() {
			rv.inside[dir] = true // layout.Host walked it: the folder's real path is in the box
		}
	}
	return Resolution{Form: form, Target: target, Exists: err == nil}, nil
}

// Wikilink resolves [[name]] (the #heading already cut, or cut here): a file under /_content/ whose
// name, with or without ".md", is name, or whose path ends in name ("moc-people/a"). Preference:
// /_content/memory/notes/<name>, then /_content/memory/maps/<name>, then the shallowest match anywhere
// under /_content/ (ties by path order); an exact-case match beats a case-insensitive one.
// A name starting with "/" is a box path. fromBoxPath is used only then.
func (rv *Resolver) Wikilink(fromBoxPath, name string) (Resolution, error) {
	if i := strings.IndexByte(name, '#'); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimSpace(name)
	if strings.HasPrefix(name, "/") {
		res, err := rv.resolve(fromBoxPath, name, name)
		if err != nil || res.Exists || res.Closed() {
			return res, err
		}
		if md, err := rv.resolve(fromBoxPath, name+".md", name+".md"); err == nil && md.Exists {
			return md, nil
		}
		return res, nil
	}
	if reason := wikiName(name); reason != "" {
		return Resolution{Form: Name, Reason: reason}, nil
	}
	for _, dir := range []string{layout.NotesDir, layout.MapsDir} {
		for _, p := range []string{dir + "/" + name + ".md", dir + "/" + name} {
			res, err := rv.stat(Name, p)
			if err != nil {
				return res, err
			}
			if res.Exists && !res.Closed() && isFile(rv.root, p) {
				return res, nil
			}
		}
	}
	if err := rv.buildNames(); err != nil {
		return Resolution{}, err
	}
	for _, fold := range []bool{false, true} {
		for _, p := range rv.names {
			if matchesName(p, name, fold) {
				return Resolution{Form: Name, Target: p, Exists: true}, nil
			}
		}
	}
	return Resolution{Form: Name}, nil
}

// wikiName names why a wikilink name can never match a file, or "".
func wikiName(name string) string {
	switch {
	case name == "":
		return "the wikilink names nothing"
	case strings.ContainsRune(name, 0):
		return "the wikilink contains a NUL byte"
	case strings.Contains(name, `\`):
		return "the wikilink contains a backslash"
	}
	for _, s := range strings.Split(name, "/") {
		if s == "" || s == "." || s == ".." {
			return "a wikilink names a note; it cannot hold empty, . or .. folder names"
		}
	}
	return ""
}

func matchesName(p, name string, fold bool) bool {
	for _, want := range []string{"/" + name + ".md", "/" + name} {
		if len(p) < len(want) {
			continue
		}
		tail := p[len(p)-len(want):]
		if tail == want || fold && strings.EqualFold(tail, want) {
			return true
		}
	}
	return false
}

func isFile(root, boxPath string) bool {
	host, err := layout.Host(root, boxPath)
	if err != nil {
		return false
	}
	fi, err := os.Stat(host)
	return err == nil && !fi.IsDir()
}

// buildNames lists the files under /_content/, shallowest first, then in path order. Symlinks are
// listed only when they stay inside the box.
func (rv *Resolver) buildNames() error {
	if rv.built {
		return nil
	}
	rv.built = true
	top, err := layout.Host(rv.root, "/_content")
	if err != nil {
		return errs.Wrap("ref.wikilink", errs.NotABox, err, "the box folder cannot be read")
	}
	err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == top {
				return fs.SkipAll // no /_content/: nothing matches
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(top, p)
		if err != nil {
			return nil
		}
		bp := "/_content/" + filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 && !isFile(rv.root, bp) {
			return nil
		}
		rv.names = append(rv.names, bp)
		return nil
	})
	sort.SliceStable(rv.names, func(i, j int) bool {
		a, b := rv.names[i], rv.names[j]
		if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
			return da < db
		}
		return a < b
	})
	return err
}
