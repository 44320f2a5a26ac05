package hooks

import (
	"os"
	"path/filepath"
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

// maxFolders bounds the folders a command line is judged in.
const maxFolders = 32

// folders are where the commands of one line may run. A cd adds where it leads and drops nothing: a cd
// in a subshell, one that fails or a popd leaves the shell in a folder it was in before, and the hook
// does not follow the shell's control flow, so a path is judged against every folder the line may be
// in. lost holds the text of each cd the hook cannot follow ($DIR, a ~user), with the relative cds after
// it: a relative path after one is judged by what the two spell.
type folders struct {
	dirs []string
	lost []string
}

// cd adds where a cd leads. The shell's cd is logical unless -P: dir/.. is taken from the text (cd
// link/.. stays where it was), and links are followed when a path is used.
func (f *folders) cd(to chdirTo) {
	p, known := homePath(to.dir)
	if !known {
		f.lost = appendCapped(f.lost, to.dir.text)
		return
	}
	if !filepath.IsAbs(p) {
		for _, l := range f.lost {
			f.lost = appendCapped(f.lost, l+"/"+p)
		}
	}
	for _, d := range f.dirs {
		next := filepath.Clean(layout.Join(d, p))
		if to.physical {
			next = layout.Resolve(layout.Join(d, p))
		}
		f.dirs = appendCapped(f.dirs, next)
	}
}

// appendCapped adds s to list unless it holds it or is full.
func appendCapped(list []string, s string) []string {
	if len(list) >= maxFolders {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
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

// protectedWriteAt says why a path a command writes may only be written by the box, or "": the path read
// in every folder the line may be in, and after each cd the hook could not follow, by what the cd and
// the path spell together.
func (s *session) protectedWriteAt(t word, at folders) string {
	if t.dynamic || filepath.IsAbs(t.text) || strings.HasPrefix(t.text, "~") {
		return s.protectedWrite(t, at.dirs[0])
	}
	for _, d := range at.dirs {
		if why := s.protectedWrite(t, d); why != "" {
			return why
		}
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
	for _, d := range at.dirs {
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
