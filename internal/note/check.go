package note

import (
	"path"
	"strings"

	"github.com/boxmem/box/internal/finding"
)

// CheckRouter reports a router that cannot be read or is over its line budget.
func CheckRouter(p string, data []byte) []finding.Finding {
	r, err := ParseRouter(data)
	if err != nil {
		return []finding.Finding{finding.Errorf(p, 1, "router-frontmatter", "%v", err)}
	}
	if n := len(r.doc.lines()); n > MaxRouterLines {
		return []finding.Finding{finding.Warnf(p, 0, "router-too-long", "The router has %d lines; keep it to %d (tidy condenses it).", n, MaxRouterLines)}
	}
	return nil
}

// CheckNote reports a note that cannot be read, lacks a title or kind, is named against its kind, or
// repeats a block id.
func CheckNote(p string, data []byte) []finding.Finding {
	n, err := ParseNote(data)
	if err != nil {
		return []finding.Finding{finding.Errorf(p, 1, "note-frontmatter", "%v", err)}
	}
	var fs []finding.Finding
	if strings.TrimSpace(n.Title) == "" {
		fs = append(fs, finding.Warnf(p, 1, "note-title", "The note has no title, so tidy cannot file facts into it by name."))
	}
	base := path.Base(p)
	entity := indexOf(EntityKinds, n.Kind) >= 0
	switch {
	case n.Kind == "":
		fs = append(fs, finding.Warnf(p, 1, "note-kind", "The note has no kind (person, org, place, topic …)."))
	case entity && strings.HasPrefix(base, "topic-"), !entity && strings.HasPrefix(base, "entity-"):
		fs = append(fs, finding.Warnf(p, 1, "note-kind", "A note of kind %s is named %s; entity- is for people, orgs and places, topic- for the rest.", n.Kind, base))
	}
	seen := map[string]bool{}
	for i, l := range n.doc.lines() {
		if m := idSuffix.FindStringSubmatch(l); m != nil {
			if seen[m[1]] {
				fs = append(fs, finding.Warnf(p, i+1, "note-duplicate-id", "The block id ^%s appears twice; Obsidian links only the first.", m[1]))
			}
			seen[m[1]] = true
		}
	}
	return fs
}

// CheckMap reports a map that cannot be read or has outgrown MaxMapEntries without splitting.
func CheckMap(p string, data []byte) []finding.Finding {
	m, err := ParseMap(data)
	if err != nil {
		return []finding.Finding{finding.Errorf(p, 1, "map-frontmatter", "%v", err)}
	}
	if len(m.Entries) > MaxMapEntries && !m.IsIndex() {
		return []finding.Finding{finding.Warnf(p, 0, "map-too-long", "The map lists %d notes; past %d tidy splits it into a letter index.", len(m.Entries), MaxMapEntries)}
	}
	return nil
}
