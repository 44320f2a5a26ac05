package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/boxmem/box/internal/layout"
)

// maxRot is how many rotten lines the notice names.
const maxRot = 12

var (
	boxPathRe  = regexp.MustCompile("(?:^|[\\s(`\"'\\[])(/(?:_content|_config|_bookkeeping|_publish)/[^\\s)`\"'\\]]+)")
	tickPathRe = regexp.MustCompile("`([A-Za-z0-9_.\\-]+(?:/[A-Za-z0-9_.\\-]+)+/?)`")
	linkRe     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	wikiRe     = regexp.MustCompile(`\[\[([^\]|#]+)`)
)

// rot lists lines of the memory and of the agent guides that name a box path, a repo path or a note that
// no longer exists: the claim is in the window already, so the correction goes beside it.
func (s *session) rot() []string {
	type doc struct{ host, dir string }
	docs := []doc{{filepath.Join(s.root, filepath.FromSlash(strings.TrimPrefix(layout.Router, "/"))), s.root}}
	for _, base := range uniq([]string{s.root, s.project}) {
		for _, name := range []string{"CLAUDE.md", "AGENTS.md"} {
			docs = append(docs, doc{filepath.Join(base, name), base})
		}
	}
	guide := map[string]bool{}
	for _, l := range strings.Split(layout.AgentGuide(), "\n") {
		guide[l] = true
	}
	var out []string
	for _, d := range docs {
		read := os.ReadFile
		if d.dir == s.root { // the box's own files are read under the box's escape check
			read = func(h string) ([]byte, error) {
				rel, _ := filepath.Rel(s.root, h)
				return layout.ReadFile(s.root, "/"+filepath.ToSlash(rel))
			}
		}
		data, err := read(d.host)
		if err != nil {
			continue
		}
		fence := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
			}
			if fence || guide[line] {
				continue
			}
			for _, missing := range s.missing(line, d.dir) {
				out = append(out, fmt.Sprintf("- %s:%d names %s", s.display(d.host), i+1, missing))
				if len(out) >= maxRot {
					return out
				}
			}
		}
	}
	return out
}

// missing returns the paths line names that do not exist; dir is what relative paths are read against.
func (s *session) missing(line, dir string) []string {
	var out []string
	check := func(name, host string) {
		if _, err := os.Stat(host); err != nil {
			out = append(out, name)
		}
	}
	for _, m := range boxPathRe.FindAllStringSubmatch(line, -1) {
		p := cleanRef(m[1])
		if p == "" {
			continue
		}
		if host, err := layout.Host(s.root, p); err == nil {
			check(p, host)
		}
	}
	var rel []string
	for _, m := range tickPathRe.FindAllStringSubmatch(line, -1) {
		first, _, _ := strings.Cut(m[1], "/")
		if strings.Contains(first, ".") && !strings.HasPrefix(first, ".") {
			continue // a host or module path (github.com/x/y), not a file
		}
		if strings.Contains(m[1], ".") || strings.HasSuffix(m[1], "/") {
			rel = append(rel, m[1])
		}
	}
	for _, m := range linkRe.FindAllStringSubmatch(line, -1) {
		rel = append(rel, m[1])
	}
	for _, r := range rel {
		p := cleanRef(r)
		if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "://") || strings.HasPrefix(p, "mailto:") || strings.HasPrefix(p, "..") {
			continue
		}
		check(p, filepath.Join(dir, filepath.FromSlash(p)))
	}
	for _, m := range wikiRe.FindAllStringSubmatch(line, -1) {
		name := strings.TrimSpace(m[1])
		if name == "" || strings.ContainsAny(name, "<>*") {
			continue
		}
		if !s.noteExists(name) {
			out = append(out, "[["+name+"]]")
		}
	}
	return out
}

// noteExists reports whether a wikilink target names a note, a map, a map's letter index or a file.
func (s *session) noteExists(name string) bool {
	mem := filepath.Join(s.root, "_content", "memory")
	for _, p := range []string{
		filepath.Join(mem, "notes", name+".md"), filepath.Join(mem, "maps", name+".md"), filepath.Join(mem, "maps", name),
		filepath.Join(mem, name+".md"), filepath.Join(s.root, filepath.FromSlash(strings.TrimPrefix(name, "/"))),
	} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// cleanRef drops a fragment, a query and trailing punctuation; "" for a template or a glob.
func cleanRef(p string) string {
	if i := strings.IndexAny(p, "#?"); i >= 0 {
		p = p[:i]
	}
	p = strings.TrimRight(p, ".,:;!")
	if p == "" || strings.ContainsAny(p, "*<>{}$") || strings.Contains(p, "...") {
		return ""
	}
	return p
}

func uniq(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
