package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
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

// maxKept bounds the folders one line's cds name whole: past it the line is denied as too long to read.
const maxKept = 200

// line is one command of a line with what the guard reads of it once: the paths it writes and its cd.
type line struct {
	cmd     simpleCmd
	targets []word
	cd      *chdirTo
}

// readLine reads every command of a line for its targets and cd.
func readLine(cmds []simpleCmd) []line {
	out := make([]line, len(cmds))
	for i, c := range cmds {
		t, cd := writeTargets(c)
		out[i] = line{cmd: c, targets: t, cd: cd}
	}
	return out
}

// folders are where the commands of one line may run. A cd adds where it leads and drops nothing: a cd
// in a subshell, one that fails or a popd leaves the shell in a folder it was in before, and the hook
// does not follow the shell's control flow, so a path is judged against every folder the line may be
// in. lost holds the text of each cd the hook cannot follow ($DIR, a ~user), with the relative cds after
// it: a relative path after one is judged by what the two spell.
type folders struct {
	dirs, lost []string
	overflow   bool
	inside     func(string) bool // whether a folder is in the box
	tooMany    bool              // more cds, or more of their lookups, than the guard reads in its time
	work       int               // the lookups the cds so far took
	physical   bool              // the line turns on the shell's physical cds (set -P, bash -P)
	inBox      bool              // one of dirs is in the box
	namesBox   bool              // a word of the line names the box or a $BOX… variable
	gitEnv     []word            // GIT_DIR, GIT_CONFIG… set for the rest of the line (export, a bare assignment)
	cdpath     string            // CDPATH set for the rest of the line
}

// foldersOf are the folders a command line may run in, from the session's and every cd, pushd, popd,
// env -C and sudo -D of the line, whatever their order: a function or a loop may run a command before a
// cd written after it.
func (s *session) foldersOf(cmds []line) folders {
	at := folders{dirs: []string{s.in.Cwd}, cdpath: os.Getenv("CDPATH"), // the agent's, which its shell inherits
		inside: func(d string) bool { return within(s.root, d) }}
	if s.shellCwd != "" && filepath.IsAbs(s.shellCwd) { // as the shell's $PWD may hold it, through a link
		at.dirs = at.add(at.dirs, filepath.Clean(s.shellCwd))
	}
	for _, l := range cmds { // what the line sets for its later commands
		rest, _, _ := commandOf(l.cmd.words)
		at.physical = at.physical || physicalShell(rest)
		if len(rest) == 0 || declares[rest[0].text] {
			for _, w := range l.cmd.words {
				if gitVariable(w.text) {
					at.gitEnv = append(at.gitEnv, w)
				}
				if v, ok := strings.CutPrefix(w.text, "CDPATH="); ok {
					at.cdpath += ":" + v
				}
			}
		}
	}
	for _, l := range cmds {
		_, dirs, _ := commandOf(l.cmd.words)
		for _, d := range dirs {
			at.cd(chdirTo{dir: d}, "")
		}
		if l.cd != nil {
			to := *l.cd
			if at.physical && !to.physical { // the cd may run either way: both readings
				at.cd(chdirTo{dir: to.dir, physical: true}, at.cdpath+":"+cdPathOf(l.cmd))
			}
			at.cd(to, at.cdpath+":"+cdPathOf(l.cmd))
		}
		at.namesBox = at.namesBox || s.spellsBox(append(slices.Clone(l.cmd.words), l.cmd.writes...), nil)
	}
	for _, d := range at.dirs {
		at.inBox = at.inBox || within(s.root, d)
	}
	for _, l := range at.lost {
		at.namesBox = at.namesBox || s.spellsBox(nil, &l)
	}
	return at
}

// physicalShell reports whether a command makes the shell's cds physical: set -P, set -o physical, or a
// shell started with -P.
func physicalShell(w []word) bool {
	if len(w) < 2 || w[0].text != "set" && !shells[filepath.Base(w[0].text)] {
		return false
	}
	for i, x := range w[1:] {
		t := x.text
		if strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'P') ||
			t == "-o" && i+2 < len(w) && w[i+2].text == "physical" {
			return true
		}
	}
	return false
}

// declares are the builtins that set a variable for the rest of the line.
var declares = map[string]bool{"export": true, "declare": true, "typeset": true, "local": true, "readonly": true}

// gitVariable reports whether an assignment sets where git reads its repository or configuration.
func gitVariable(t string) bool {
	name, _, ok := strings.Cut(t, "=")
	return ok && (name == "GIT_DIR" || strings.HasPrefix(name, "GIT_CONFIG"))
}

// cdPathOf is the CDPATH a cd command sets for itself (CDPATH=… cd x), or "".
func cdPathOf(c simpleCmd) string {
	v := ""
	for _, w := range c.words {
		if x, ok := strings.CutPrefix(w.text, "CDPATH="); ok {
			v = x
		}
	}
	return v
}

// cd adds where a cd leads. The shell's cd is logical unless -P: dir/.. is taken from the text (cd
// link/.. stays where it was), and links are followed when a path is used; where that folder does not
// exist, bash takes the physical reading instead. A relative cd that does not start with . or .. is also
// looked for in each CDPATH folder (cdpath, colon-separated; a relative one read from each folder); a
// pattern, in its matches.
func (f *folders) cd(to chdirTo, cdpath string) {
	if len(f.dirs)+len(f.lost) > maxKept || f.work > maxKept*maxFolders {
		f.tooMany = true
		return
	}
	p, known := homePath(to.dir)
	if !known {
		f.lost = keep(f.lost, to.dir.text)
		return
	}
	var bases []string
	if filepath.IsAbs(p) {
		bases = []string{""}
	} else {
		bases = slices.Clone(f.dirs)
		for _, l := range f.lost {
			f.lost = f.add(f.lost, l+"/"+p)
		}
		if p != "." && p != ".." && !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") {
			for _, c := range filepath.SplitList(cdpath) {
				if c, ok := homePath(word{text: c}); ok && c != "" {
					for _, d := range f.dirs {
						bases = keep(bases, layout.Join(d, c))
					}
				}
			}
		}
	}
	f.work += len(bases) // each base is a lookup, or a pattern's matches: the line's cost, capped above
	if to.dir.glob {
		f.work += len(bases) * globCost
	}
	dotdot := slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
	for _, d := range bases {
		next := p
		if d != "" {
			next = layout.Join(d, p)
		}
		// A cd named whole is kept past the cap; one read from another folder is not.
		put := f.add
		if d == "" {
			put = func(list []string, s string) []string { return keep(list, s) }
		}
		if to.dir.glob {
			matches, _ := filepath.Glob(next)
			for _, m := range matches[:min(len(matches), 8)] {
				f.dirs = put(f.dirs, filepath.Clean(m))
			}
			continue
		}
		logical := filepath.Clean(next)
		if !to.physical {
			f.dirs = put(f.dirs, logical)
		}
		if fi, err := os.Stat(logical); to.physical || dotdot && (err != nil || !fi.IsDir()) {
			f.dirs = put(f.dirs, layout.Resolve(next))
		}
	}
}

// keep adds s to list unless it holds it, full or not: a folder a cd names whole (absolute, or one the
// hook cannot follow) is never dropped; there are as many as the line has cds.
func keep(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// add adds s to list unless it holds it. A full list still takes a folder in the box (the folders the
// guard is for); one outside is dropped and the line marked (overflow): a path climbing out of a folder
// with .. is then judged by what it spells too.
func (f *folders) add(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	if len(list) >= maxFolders && (f.inside == nil || !f.inside(s)) {
		f.overflow = true
		return list
	}
	return append(list, s)
}

// homePath is a cd's folder with ~, $HOME and ${HOME} read as the home folder, and whether the hook
// can tell it (not a folder built otherwise at run time, nor ~user).
func homePath(w word) (string, bool) {
	if rest, ok := cutHome(w.text); ok {
		if strings.ContainsAny(rest, "$`") || strings.HasPrefix(w.text, "~") && w.dynamic {
			return "", false
		}
		return expandHome(w.text), true // not cleaned: link/.. is for the kernel to read
	}
	if w.dynamic || strings.HasPrefix(w.text, "~") {
		return "", false
	}
	return w.text, true
}

// cutHome is what follows a leading ~, $HOME or ${HOME} (nothing, or from a slash on).
func cutHome(text string) (string, bool) {
	for _, home := range []string{"${HOME}", "$HOME", "~"} {
		if rest, ok := strings.CutPrefix(text, home); ok && (rest == "" || rest[0] == '/') {
			return rest, true
		}
	}
	return "", false
}

// expandHome is text with a leading ~, $HOME or ${HOME} written as the home folder, else text.
func expandHome(text string) string {
	if rest, ok := cutHome(text); ok {
		if dir, err := os.UserHomeDir(); err == nil {
			return dir + rest
		}
	}
	return text
}

// cutPWD is what follows $PWD or ${PWD} at the start of a path (the folder the command runs in), when
// nothing else in it is built at run time.
func cutPWD(t word) (string, bool) {
	for _, v := range []string{"${PWD}", "$PWD"} {
		if rest, ok := strings.CutPrefix(t.text, v); ok && (rest == "" || rest[0] == '/') && !strings.ContainsAny(rest, "$`") {
			return rest, true
		}
	}
	return "", false
}

// globCost is what the guard's budget counts for a path that is a pattern (its matches in each folder,
// most patterns match a few); maxMatches is the most matches it reads, past which the line is denied.
const (
	globCost   = 17
	maxMatches = 256
)

// protectedWriteAt says why a path a command writes may only be written by the box, or "": the path read
// in every folder the line may be in, and after each cd the hook could not follow, by what the cd and
// the path spell together.
func (s *session) protectedWriteAt(t word, at folders) string {
	if rest, ok := cutPWD(t); ok { // $PWD/…: the path in each folder
		for _, d := range at.dirs {
			if why := s.protectedWrite(word{text: d + rest, glob: t.glob, tree: t.tree}, d); why != "" {
				return why
			}
		}
	}
	if t.dynamic { // .git/ and approvals/ are every repository's: they count where the line names the box or runs in it
		if why := spelt(t.text, at.inBox || at.namesBox); why != "" || !t.tree || !at.namesBox {
			return why
		}
		return treeSpelt(t.text)
	}
	abs := filepath.IsAbs(t.text) || strings.HasPrefix(t.text, "~")
	dirs := at.dirs
	if abs {
		dirs = dirs[:1]
	} else if at.overflow && slices.Contains(strings.Split(filepath.ToSlash(t.text), "/"), "..") {
		if why := spelt(t.text, at.inBox || at.namesBox); why != "" { // from a folder dropped past the cap
			return why
		}
	}
	for _, d := range dirs {
		if why := s.protectedWrite(t, d); why != "" {
			return why
		}
		if !t.glob {
			continue
		}
		matches, _ := filepath.Glob(layout.Join(d, expandHome(t.text)))
		if len(matches) > maxMatches {
			return fmt.Sprintf("the pattern matches more than %d files, more than the guard reads; name fewer", maxMatches)
		}
		for _, m := range matches {
			if why := s.protectedWrite(word{text: m, tree: t.tree}, d); why != "" {
				return why
			}
		}
	}
	if abs {
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
	if !t.dynamic {
		p = expandHome(p)
	}
	if t.dynamic || strings.HasPrefix(p, "~") {
		return spelt(p, true)
	}
	// The shell's reading (link/.. climbs from the link's target) and a cleaning tool's (link/.. is the
	// link's folder): a write either way may not land where only the box writes.
	p = layout.Join(cwd, p)
	_, why := s.guardHost(layout.Resolve(p), layout.Resolve(filepath.Clean(p)))
	if why == "" && t.tree {
		why = s.holdsGuarded(layout.Resolve(p), layout.Resolve(filepath.Clean(p)))
	}
	return why
}

// holdsGuarded says why a folder a command writes anything under (cp -r, rsync -a, find -delete) may not
// be, or "": it is the box's root or holds .box/, .git/, the two cards or the approval cards.
func (s *session) holdsGuarded(dirs ...string) string {
	for _, root := range []string{s.root, s.realRoot()} {
		for _, bp := range []string{"/.box", "/.git", layout.Switches, layout.Settings, layout.Approvals, layout.ArchiveDir + "/approvals"} {
			p := filepath.Join(root, filepath.FromSlash(bp))
			for _, d := range dirs {
				if within(d, p) {
					return "a command that writes or removes anything under it reaches " + strings.TrimPrefix(bp, "/") + ", which only the box writes"
				}
			}
		}
	}
	return ""
}

// treeSpelt says why a folder built at run time, on a line that names the box, may hold what only the box
// writes, by what it spells: nothing but variables (X=~/box; rm -rf "$X"), or a name that holds guarded
// files (`"$X/_config"`, `.git`, `_bookkeeping`).
func treeSpelt(p string) string {
	rest := strings.TrimRight(filepath.ToSlash(p), "/")
	last := rest[strings.LastIndex(rest, "/")+1:]
	if strings.Trim(wholeVariable.ReplaceAllString(rest, ""), "/.") == "" {
		return "it may be the box's folder itself, which holds what only the box writes"
	}
	switch strings.ToLower(last) {
	case "_config", "_bookkeeping", ".box", ".git", "approvals", "archive":
		return "it may be the box's " + last + ", which holds what only the box writes"
	}
	return ""
}

// wholeVariable is a shell variable as a word writes it: $X, ${X}.
var wholeVariable = lazyregexp.New(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`)

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

// gitWriteAt is gitWrite in every folder the line may be in, and after each cd the hook
// could not follow.
func (s *session) gitWriteAt(c simpleCmd, at folders) string {
	c.words = append(slices.Clone(at.gitEnv), c.words...)
	for _, d := range at.dirs {
		if why := s.gitWrite(c, d, nil, at.namesBox); why != "" {
			return why
		}
	}
	for _, l := range at.lost {
		if why := s.gitWrite(c, "", &l, at.namesBox); why != "" {
			return why
		}
	}
	return ""
}
