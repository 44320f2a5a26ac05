package ref

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
)

// Action is what the canonical pass does (or, without fix, would do) with one relative ref.
type Action string

const (
	Rewrite   Action = "rewrite"   // the document-relative target exists: write it from the box root
	Repair    Action = "repair"    // it dangles relative to the document but exists from the box root
	Ambiguous Action = "ambiguous" // both readings exist: left byte for byte, a human decides
	Skipped   Action = "skipped"   // neither reading exists, or it cannot be rewritten safely: left as is
)

// Item is one relative ref the canonical pass met. To is the /-form (for ambiguous and skipped refs,
// the document-relative reading, when there is one).
type Item struct {
	Path   string `json:"path"`
	Line   int    `json:"line"`
	From   string `json:"from"`
	To     string `json:"to"`
	Action Action `json:"action"`
	Reason string `json:"reason,omitempty"`
}

// Report counts what the canonical pass did (with fix) or would do (without). "Refs" are card refs
// (frontmatter ref/refs, Markdoc ref=, and links in .card bodies); "links" are Markdown links in .md
// files. Wikilinks name notes, not paths, and are never rewritten.
type Report struct {
	RefsRewritten  int    `json:"refsRewritten"`
	LinksRewritten int    `json:"linksRewritten"`
	RefsRepaired   int    `json:"refsRepaired"`
	LinksRepaired  int    `json:"linksRepaired"`
	Ambiguous      int    `json:"ambiguous"`
	FilesChanged   int    `json:"filesChanged"`
	Skipped        int    `json:"skipped"`
	Items          []Item `json:"items"`
}

// Write receives one rewritten file. A caller inside the box write transaction passes its Tx.Write, so
// the rewrite is a commit with a diary line and an undo.
type Write func(boxPath string, data []byte) error

// RewriteWith finds every relative ref in files and names its /-form; with a write it rewrites the refs
// whose target exists, text-surgically, handing each rewritten file to write (nil only reports). A
// rewrite when the document-relative target exists; a repair when only the box-root reading of a bare
// path does ("./" and "../" paths have no box-root reading). When both or neither exist the ref stays
// byte for byte. ?query and #fragment survive; attach/… refs are canonical already; a second run changes
// nothing. files are box paths; nil means every .md and .card file in the areas except _tmp (root files
// like CLAUDE.md are left alone). Symlinked files are never read or written.
func RewriteWith(root string, files []string, write Write) (Report, error) {
	rep := Report{Items: []Item{}}
	if files == nil {
		var err error
		if files, err = canonicalFiles(root); err != nil {
			return rep, err
		}
	}
	rv := NewResolver(root)
	for _, f := range files {
		if err := canonicalFile(rv, &rep, f, write); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// canonicalFiles lists the cards and Markdown files of the box, in path order.
func canonicalFiles(root string) ([]string, error) {
	var out []string
	for _, area := range layout.Areas {
		if area == "_tmp" {
			continue
		}
		top, err := layout.Host(root, "/"+area)
		if err != nil {
			return nil, errs.Wrap("ref.canonical", errs.NotABox, err, "the box folder cannot be read")
		}
		err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil && p == top:
				return fs.SkipDir // the area does not exist
			case err != nil:
				return err
			case d.IsDir() && p != top && (d.Name() == "_tmp" || strings.HasPrefix(d.Name(), ".")):
				return fs.SkipDir
			case !d.Type().IsRegular():
				return nil
			}
			ext := strings.ToLower(path.Ext(d.Name()))
			if ext != ".md" && ext != ".card" {
				return nil
			}
			rel, err := filepath.Rel(top, p)
			if err != nil {
				return err
			}
			out = append(out, "/"+area+"/"+filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("ref.canonical: listing %s: %w", area, err)
		}
	}
	return out, nil
}

// edit replaces data[start:end] with text; want is the ref's Raw after the edit.
type edit struct {
	start, end int
	text, want string
	ref        int  // index of the ref in the file's refs
	item       int  // index of its item in the report
	count      *int // the report counter it adds to once accepted
}

func canonicalFile(rv *Resolver, rep *Report, file string, write Write) error {
	clean, err := layout.Clean(file)
	if err != nil {
		return errs.Wrap("ref.canonical", errs.Invalid, err, "")
	}
	host, err := layout.Host(rv.root, clean)
	if err != nil {
		return errs.Wrap("ref.canonical", errs.Invalid, err, "")
	}
	info, err := os.Lstat(host)
	if err != nil {
		return fmt.Errorf("ref.canonical: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil // a symlink (even one inside the box) or a folder: renaming over it would replace it
	}
	data, err := os.ReadFile(host)
	if err != nil {
		return fmt.Errorf("ref.canonical: %w", err)
	}
	refs, _ := Extract(clean, data) // unparsable frontmatter: its refs are not touched, the body's are
	isMD := strings.EqualFold(path.Ext(clean), ".md")
	var edits []edit
	for i, r := range refs {
		e, ok, err := plan(rv, rep, clean, r, isMD)
		if err != nil {
			return err
		}
		if ok {
			e.ref = i
			edits = append(edits, e)
		}
	}
	accepted := verified(clean, data, refs, edits, rep)
	if len(accepted) == 0 {
		return nil
	}
	for _, e := range accepted {
		*e.count++
	}
	rep.FilesChanged++
	if write == nil {
		return nil
	}
	if err := write(clean, apply(data, accepted)); err != nil {
		return fmt.Errorf("ref.canonical: writing %s: %w", clean, err)
	}
	return nil
}

// plan decides what to do with one ref and records its item; it returns an edit for a rewrite or repair.
func plan(rv *Resolver, rep *Report, from string, r Ref, isMD bool) (edit, bool, error) {
	if r.Kind == Wikilink || emptiness(r.Raw, r.Path) != "" ||
		strings.HasPrefix(r.Path, "/") || strings.HasPrefix(r.Path, "attach/") {
		return edit{}, false, nil
	}
	decoded := r.Path
	if r.Kind == Link {
		decoded = linkPath(r.Path)
	}
	rel, err := rv.resolve(from, r.Raw, decoded)
	if err != nil {
		return edit{}, false, err
	}
	var abs Resolution
	if !dotted(decoded) {
		if abs, err = rv.resolve(from, "/"+decoded, "/"+decoded); err != nil {
			return edit{}, false, err
		}
	}
	relTo, relOK := rewritten(layout.Segments(path.Dir(from)), r, rel.Target)
	absTo, absOK := rewritten(nil, r, abs.Target)
	links := isMD && r.Kind == Link
	item := Item{Path: from, Line: r.Line, From: r.Raw, To: relTo}
	e := edit{start: r.Start, end: r.End, item: len(rep.Items)}
	ok := false
	switch {
	case rel.Exists && abs.Exists && rel.Target != abs.Target:
		item.Action, e.count = Ambiguous, &rep.Ambiguous
		item.Reason = fmt.Sprintf("both %s (from this file's folder) and %s (from the box root) exist", rel.Target, abs.Target)
	case rel.Exists:
		item.Action, e.count, ok = Rewrite, pick(links, &rep.LinksRewritten, &rep.RefsRewritten), relOK
	case abs.Exists:
		item.Action, e.count, ok = Repair, pick(links, &rep.LinksRepaired, &rep.RefsRepaired), absOK
		item.To, item.Reason = absTo, "repairs a dangling ref: it read from this file's folder, it now reads from the box root"
	default:
		item.Action, e.count, item.Reason = Skipped, &rep.Skipped, neither(rel, abs)
	}
	if item.Action == Rewrite || item.Action == Repair {
		if reason := unsafeRewrite(r, ok); reason != "" {
			item.Action, item.Reason, e.count = Skipped, reason, &rep.Skipped
		}
	}
	rep.Items = append(rep.Items, item)
	if item.Action != Rewrite && item.Action != Repair {
		*e.count++
		return edit{}, false, nil
	}
	e.text, e.want = item.To, item.To
	return e, true, nil
}

func pick(links bool, l, r *int) *int {
	if links {
		return l
	}
	return r
}

// neither says why no reading of a ref exists.
func neither(rel, abs Resolution) string {
	switch {
	case rel.Target != "" && abs.Target != "":
		return fmt.Sprintf("neither %s (from this file's folder) nor %s (from the box root) exists", rel.Target, abs.Target)
	case rel.Target != "":
		return rel.Target + " does not exist"
	case abs.Target != "":
		return rel.Reason + ", and " + abs.Target + " does not exist either"
	}
	return rel.Reason
}

// dotted reports whether p starts with "./" or "../": explicitly document-relative, no box-root reading.
func dotted(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return first == "." || first == ".."
}

func unsafeRewrite(r Ref, ok bool) string {
	switch {
	case !r.Verbatim:
		return "the ref is written with escapes or across lines; rewrite it by hand"
	case !ok:
		return "the ref is percent-encoded in a way that would change its target; rewrite it by hand"
	}
	return ""
}

// rewritten writes r's path as the author did (escapes kept) joined onto base, from the box root, with
// r's ?query and #fragment. ok is false when that text would not decode to target.
func rewritten(base []string, r Ref, target string) (string, bool) {
	if target == "" {
		return "", false
	}
	stack := append([]string(nil), base...)
	for _, s := range strings.Split(r.Path, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(stack) == 0 {
				return "", false
			}
			stack = stack[:len(stack)-1]
		default:
			stack = append(stack, s)
		}
	}
	p := "/" + strings.Join(stack, "/")
	decoded := p
	if r.Kind == Link {
		decoded = linkPath(p)
	}
	if decoded != target {
		return "", false
	}
	if strings.HasSuffix(r.Path, "/") {
		p += "/"
	}
	return p + r.Query + r.Fragment, true
}

// verified returns the edits that keep the file parsing the same way: after them every ref is still
// found, in order, with its old target or its new one. Edits that would break the syntax around them (a
// space in a bare link, a YAML indicator) are dropped and their items marked skipped. A link that now
// needs angle brackets gets them.
func verified(file string, data []byte, refs []Ref, edits []edit, rep *Report) []edit {
	for i := range edits {
		e := &edits[i]
		if refs[e.ref].Kind == Link && needsAngle(e.want) && !(e.start > 0 && data[e.start-1] == '<') {
			e.text = "<" + e.want + ">"
		}
	}
	if len(edits) == 0 || sameRefs(file, apply(data, edits), refs, edits) {
		return edits
	}
	var ok []edit
	for _, e := range edits {
		try := append(append([]edit(nil), ok...), e)
		if sameRefs(file, apply(data, try), refs, try) {
			ok = append(ok, e)
			continue
		}
		it := &rep.Items[e.item]
		it.Action, it.Reason = Skipped, "the rewrite would change how the file around it parses; rewrite it by hand"
		rep.Skipped++
	}
	return ok
}

func needsAngle(s string) bool {
	return strings.ContainsAny(s, " \t()") && !strings.ContainsAny(s, "<>\n")
}

func sameRefs(file string, data []byte, old []Ref, edits []edit) bool {
	want := make([]string, len(old))
	for i, r := range old {
		want[i] = r.Raw
	}
	for _, e := range edits {
		want[e.ref] = e.want
	}
	got, _ := Extract(file, data)
	if len(got) != len(old) {
		return false
	}
	for i, g := range got {
		o := old[i]
		if g.Kind != o.Kind || g.Raw != want[i] || g.Query != o.Query || g.Fragment != o.Fragment {
			return false
		}
	}
	return true
}

// apply makes the edits (non-overlapping) on a copy of data.
func apply(data []byte, edits []edit) []byte {
	sorted := append([]edit(nil), edits...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].start < sorted[j].start })
	out := make([]byte, 0, len(data)+64*len(edits))
	prev := 0
	for _, e := range sorted {
		out = append(out, data[prev:e.start]...)
		out = append(out, e.text...)
		prev = e.end
	}
	return append(out, data[prev:]...)
}
