package hooks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/boxmem/box/internal/layout"
)

// chdirTo is a cd or pushd of a command line: the folder it names and whether it follows links first (-P).
type chdirTo struct {
	dir      word
	physical bool
}

// changesTo reads a cd, pushd or popd. One that goes back to a folder of the shell's own (cd -, popd, a
// lone pushd, pushd +N or -N) names a folder the hook cannot tell: it may be one of an earlier command.
func changesTo(name string, opts []option, ops []word) *chdirTo {
	back := &chdirTo{dir: word{text: "-", dynamic: true}}
	physical := false
	for _, o := range opts {
		switch {
		case o.name == "P":
			physical = true
		case o.name == "L":
			physical = false
		case name != "cd": // pushd -N: a folder of its stack
			return back
		}
	}
	switch {
	case len(ops) == 0 && name == "cd":
		return &chdirTo{dir: word{text: "~"}} // the home folder
	case name == "popd", len(ops) == 0, ops[0].text == "-", name == "pushd" && strings.HasPrefix(ops[0].text, "+"):
		return back
	}
	return &chdirTo{dir: ops[0], physical: physical}
}

// maxFolders bounds the folders a command line's relative cds make from one another (each relative cd is
// read from every folder before it, so five of them make 32).
const maxFolders = 32

// folders are where the commands of one line may run. A cd adds where it leads and drops nothing: a cd
// in a subshell, one that fails or a popd leaves the shell in a folder it was in before, and the hook
// does not follow the shell's control flow, so a path is judged against every folder the line may be
// in. lost holds the text of each cd the hook cannot follow ($DIR, a ~user), with the relative cds after
// it: a relative path after one is judged by what the two spell. Past maxFolders the line may be
// anywhere (overflow): a relative path is judged in the box too, and by what it spells.
type folders struct {
	dirs, lost []string
	overflow   bool
	inBox      bool   // one of dirs is in the box
	gitEnv     []word // GIT_DIR, GIT_CONFIG… set for the rest of the line (export, a bare assignment)
}

// foldersOf are the folders a command line may run in, from the session's and every cd, pushd, popd,
// env -C and sudo -D of the line, whatever their order: a function or a loop may run a command before a
// cd written after it.
func (s *session) foldersOf(cmds []simpleCmd) folders {
	at := folders{dirs: []string{s.in.Cwd}}
	if s.shellCwd != "" && filepath.IsAbs(s.shellCwd) { // as the shell's $PWD may hold it, through a link
		at.dirs = at.add(at.dirs, filepath.Clean(s.shellCwd))
	}
	for _, c := range cmds {
		rest, dirs := commandOf(c.words)
		for _, d := range dirs {
			at.cd(chdirTo{dir: d}, nil)
		}
		if _, cd := writeTargets(c); cd != nil {
			at.cd(*cd, cdPath(c))
		}
		if len(rest) == 0 || rest[0].text == "export" || rest[0].text == "declare" {
			for _, w := range c.words {
				if gitVariable(w.text) {
					at.gitEnv = append(at.gitEnv, w)
				}
			}
		}
	}
	for _, d := range at.dirs {
		at.inBox = at.inBox || within(s.root, d)
	}
	return at
}

// gitVariable reports whether an assignment sets where git reads its repository or configuration.
func gitVariable(t string) bool {
	name, _, ok := strings.Cut(t, "=")
	return ok && (name == "GIT_DIR" || strings.HasPrefix(name, "GIT_CONFIG"))
}

// cdPath is the CDPATH a cd searches: the command's own assignment, else the hook's environment (the
// agent's, which its shell inherits).
func cdPath(c simpleCmd) []string {
	v := os.Getenv("CDPATH")
	for _, w := range c.words {
		if x, ok := strings.CutPrefix(w.text, "CDPATH="); ok {
			v = x
		}
	}
	var out []string
	for _, d := range filepath.SplitList(v) {
		if p, ok := homePath(word{text: d}); ok && filepath.IsAbs(p) {
			out = append(out, p)
		}
	}
	return out
}

// cd adds where a cd leads. The shell's cd is logical unless -P: dir/.. is taken from the text (cd
// link/.. stays where it was), and links are followed when a path is used; where that folder does not
// exist, bash takes the physical reading instead. A relative
// cd that does not start with . is also looked for in each CDPATH folder; a pattern, in its matches.
func (f *folders) cd(to chdirTo, cdpath []string) {
	p, known := homePath(to.dir)
	if !known {
		f.lost = f.keep(f.lost, to.dir.text)
		return
	}
	rel := !filepath.IsAbs(p)
	if !rel && !to.dir.glob {
		f.dirs = f.keep(f.dirs, filepath.Clean(p))
		if to.physical {
			f.dirs = f.keep(f.dirs, layout.Resolve(p))
		}
		return
	}
	if rel {
		for _, l := range f.lost {
			f.lost = f.add(f.lost, l+"/"+p)
		}
	}
	bases := f.dirs
	if rel && !strings.HasPrefix(p, ".") {
		bases = append(slices.Clone(bases), cdpath...)
	}
	dotdot := slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
	for _, d := range bases {
		next := layout.Join(d, p)
		if to.dir.glob {
			matches, _ := filepath.Glob(next)
			for _, m := range matches[:min(len(matches), 8)] {
				f.dirs = f.add(f.dirs, filepath.Clean(m))
			}
			continue
		}
		logical := filepath.Clean(next)
		if !to.physical {
			f.dirs = f.add(f.dirs, logical)
		}
		if fi, err := os.Stat(logical); to.physical || dotdot && (err != nil || !fi.IsDir()) {
			f.dirs = f.add(f.dirs, layout.Resolve(next))
		}
	}
}

// keep adds s to list unless it holds it, full or not: a folder a cd names whole (absolute, or one the
// hook cannot follow) is never dropped; there are as many as the line has cds.
func (f *folders) keep(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// add adds s to list unless it holds it; a full list marks the line as possibly anywhere.
func (f *folders) add(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	if len(list) >= maxFolders {
		f.overflow = true
		return list
	}
	return append(list, s)
}

// homePath is a cd's folder with ~, $HOME and ${HOME} read as the home folder, and whether the hook
// can tell it (not a folder built otherwise at run time, nor ~user).
func homePath(w word) (string, bool) {
	p := w.text
	for _, home := range []string{"${HOME}", "$HOME", "~"} {
		rest, ok := strings.CutPrefix(p, home)
		if !ok || rest != "" && rest[0] != '/' {
			continue
		}
		if home != "~" && strings.ContainsAny(rest, "$`") || home == "~" && w.dynamic {
			return "", false
		}
		dir, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		return filepath.Join(dir, rest), true
	}
	if w.dynamic || strings.HasPrefix(p, "~") {
		return "", false
	}
	return p, true
}

// expandHome is text with a leading ~, $HOME or ${HOME} written as the home folder, else text.
func expandHome(text string) string {
	for _, home := range []string{"${HOME}", "$HOME", "~"} {
		if rest, ok := strings.CutPrefix(text, home); ok && (rest == "" || rest[0] == '/') {
			if dir, err := os.UserHomeDir(); err == nil {
				return dir + rest
			}
		}
	}
	return text
}

// maxPath is the longest path the kernel takes (PATH_MAX): a longer word names nothing it writes.
const maxPath = 4096

// protectedWriteAt says why a path a command writes may only be written by the box, or "": the path read
// in every folder the line may be in, and after each cd the hook could not follow, by what the cd and
// the path spell together.
func (s *session) protectedWriteAt(t word, at folders) string {
	if len(t.text) > maxPath {
		return ""
	}
	if t.dynamic { // .git/ and approvals/ are every repository's: they count where the line names the box or runs in it
		return spelt(t.text, at.inBox || at.overflow || s.spellsBox([]word{t}, nil))
	}
	dirs := at.dirs
	if filepath.IsAbs(t.text) || strings.HasPrefix(t.text, "~") {
		dirs = dirs[:1]
	} else if at.overflow {
		if why := spelt(t.text, true); why != "" {
			return why
		}
		dirs = append(slices.Clone(dirs), s.root)
	}
	for _, d := range dirs {
		if why := s.protectedWrite(t, d); why != "" {
			return why
		}
		if !t.glob {
			continue
		}
		matches, _ := filepath.Glob(layout.Join(d, expandHome(t.text)))
		for _, m := range matches[:min(len(matches), 64)] {
			if why := s.protectedWrite(word{text: m}, d); why != "" {
				return why
			}
		}
	}
	if filepath.IsAbs(t.text) || strings.HasPrefix(t.text, "~") {
		return ""
	}
	for _, l := range at.lost {
		if why := spelt(l+"/"+t.text, s.spellsBox(nil, &l)); why != "" {
			return why
		}
	}
	return ""
}

// protectedWrite says why a path an agent's command writes may only be written by the box, or "". cwd is
// the folder the command runs in; a path built at run time is judged by what it spells.
func (s *session) protectedWrite(t word, cwd string) string {
	p := t.text
	if rest, ok := strings.CutPrefix(p, "~/"); ok && !t.dynamic {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, rest)
		}
	}
	if t.dynamic || strings.HasPrefix(p, "~") {
		return spelt(p, true)
	}
	// The shell's reading (link/.. climbs from the link's target) and a cleaning tool's (link/.. is the
	// link's folder): a write either way may not land where only the box writes.
	p = layout.Join(cwd, p)
	_, why := s.guardHost(layout.Resolve(p), layout.Resolve(filepath.Clean(p)))
	return why
}

// spelt says why a path whose folder the hook cannot place may be one only the box writes, by what it
// spells, or "". .box/ and the two cards' names are the box's own; .git/ and approvals/ are every
// repository's, so they count only where the path names the box (inBox).
func spelt(p string, inBox bool) string {
	low := strings.ToLower(filepath.ToSlash(p))
	for _, part := range []string{"/.box/", "/.git/", "switches.card", "settings.card", "/approvals/"} {
		if (part == "/.git/" || part == "/approvals/") && !inBox {
			continue
		}
		if strings.Contains(low+"/", part) || strings.HasPrefix(low, strings.TrimPrefix(part, "/")) {
			return "it names " + strings.Trim(part, "/") + ", which only the box writes"
		}
	}
	return ""
}

// gitConfigWriteAt is gitConfigWrite in every folder the line may be in, and after each cd the hook
// could not follow.
func (s *session) gitConfigWriteAt(c simpleCmd, at folders) string {
	c.words = append(slices.Clone(at.gitEnv), c.words...)
	dirs := at.dirs
	if at.overflow {
		dirs = append(slices.Clone(dirs), s.root)
	}
	for _, d := range dirs {
		if why := s.gitConfigWrite(c, d, nil); why != "" {
			return why
		}
	}
	for _, l := range at.lost {
		if why := s.gitConfigWrite(c, "", &l); why != "" {
			return why
		}
	}
	return ""
}
