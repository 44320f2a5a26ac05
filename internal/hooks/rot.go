package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/memory"
)

// maxRot is how many rotten lines the notice names.
const maxRot = 12

var (
	boxPathRe  = lazyregexp.New("(?:^|[\\s(`\"'\\[])(/(?:_content|_config|_bookkeeping|_publish)/[^\\s)`\"'\\]]+)")
	tickPathRe = lazyregexp.New("`([A-Za-z0-9_.\\-]+(?:/[A-Za-z0-9_.\\-]+)+/?)`")
	linkRe     = lazyregexp.New(`\]\(([^)\s]+)\)`)
	wikiRe     = lazyregexp.New(`\[\[([^\]|#]+)`)
)

// rot lists lines of the router and of the agent guides that name a box path, a repo path or a note that
// no longer exists: the claim is in the window already, so the correction goes beside it. The router
// comes from the memory (router is its text); whether a note exists is the memory's to say.
func (s *session) rot(m *memory.Memory, router string) []string {
	type doc struct{ name, text, dir string }
	docs := []doc{{layout.Router, router, s.root}}
	for _, base := range uniq([]string{s.root, s.project}) {
		for _, name := range []string{"CLAUDE.md", "AGENTS.md"} {
			host := filepath.Join(base, name)
			read := func(p string) ([]byte, error) { return readHead(p, maxGuideBytes) }
			if base == s.root { // the box's own files are read under the box's escape check
				read = func(string) ([]byte, error) { return layout.ReadFile(s.root, "/"+name) }
			}
			data, err := read(host)
			if err != nil {
				continue
			}
			docs = append(docs, doc{s.display(host), string(data), base})
		}
	}
	guide := map[string]bool{}
	for _, l := range strings.Split(layout.AgentGuide(), "\n") {
		guide[l] = true
	}
	var out []string
	for _, d := range docs {
		fence := false
		for i, line := range strings.Split(d.text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
			}
			if fence || guide[line] {
				continue
			}
			for _, missing := range s.missing(m, line, d.dir) {
				out = append(out, fmt.Sprintf("- %s:%d names %s", d.name, i+1, missing))
				if len(out) >= maxRot {
					return out
				}
			}
		}
	}
	return out
}

// missing returns the paths line names that do not exist; dir is what relative paths are read against.
func (s *session) missing(mem *memory.Memory, line, dir string) []string {
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
		if !mem.Has(name) && !s.fileExists(name) {
			out = append(out, "[["+name+"]]")
		}
	}
	return out
}

// fileExists reports whether a wikilink names a file by its box path.
func (s *session) fileExists(name string) bool {
	host, err := layout.Host(s.root, "/"+strings.TrimPrefix(name, "/"))
	if err != nil {
		return false
	}
	_, err = os.Stat(host)
	return err == nil
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
