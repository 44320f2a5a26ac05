package note

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/say"
)

// A map lists notes, one line each, in the order of their file names:
//
//	---
//	type: map
//	title: People
//	---
//	# People
//
//	- [[entity-ana-maria]] — Ana Maria, sister, lives in Porto
//	- [[entity-leo]] — Leo, son, 9, swims
//
// Past MaxMapEntries a map splits into a letter index: moc-people.md lists its letter maps
// ("- [[moc-people/a]] — A (14 notes)") and moc-people/a.md holds the entries under A. An index stays
// one (docs/MEMORY.md): a letter map left empty by a merge goes with its index line (docs/MERGE.md).

// MaxMapEntries is where a map splits into a letter index.
const MaxMapEntries = 120

// MapEntry is one map line: the note (or letter map) it links and its one-line hook.
type MapEntry struct {
	Target string // entity-leo, or moc-people/a in a letter index
	Hook   string // "Leo, son, 9, swims"; may be empty
}

func (e MapEntry) line() string {
	if e.Hook == "" {
		return "- [[" + e.Target + "]]"
	}
	return "- [[" + e.Target + "]] — " + e.Hook
}

var entryRe = lazyregexp.New(`^- \[\[([^\[\]|#]+)\]\](?: — (.*))?$`)

func parseEntry(l string) (MapEntry, bool) {
	m := entryRe.FindStringSubmatch(l)
	if m == nil {
		return MapEntry{}, false
	}
	e := MapEntry{Target: m[1], Hook: m[2]}
	return e, e.line() == l
}

// Map is a parsed map or letter map.
type Map struct {
	Type    string     `yaml:"type"`
	Title   string     `yaml:"title"`
	Entries []MapEntry `yaml:"-"` // in a letter index, the letter maps
	doc     *doc
}

// IsIndex reports whether the map is a letter index (its entries are letter maps).
func (m *Map) IsIndex() bool {
	for _, e := range m.Entries {
		if !strings.Contains(e.Target, "/") {
			return false
		}
	}
	return len(m.Entries) > 0
}

// Render returns the map's bytes, exactly as parsed.
func (m *Map) Render() []byte { return m.doc.render() }

// ParseMap parses a map, a letter index or a letter map. Lines that are not entries are kept.
func ParseMap(data []byte) (*Map, error) {
	const op = "note.parseMap"
	d, err := parseDoc(op, data)
	if err != nil {
		return nil, err
	}
	m := &Map{doc: d}
	if err := d.decode(m); err != nil {
		return nil, errs.E(op, errs.Invalid, "The map's frontmatter has a field of the wrong shape.")
	}
	if m.Type != "" && m.Type != "map" {
		return nil, errs.E(op, errs.Invalid, "The file says it is of type %q, not map.", m.Type)
	}
	for _, l := range d.allLines() {
		if e, ok := parseEntry(*l); ok {
			m.Entries = append(m.Entries, e)
		}
	}
	return m, nil
}

// allLines points at the head and section lines (not the frontmatter), in order.
func (d *doc) allLines() []*string {
	var out []*string
	for i := range d.head {
		out = append(out, &d.head[i])
	}
	for _, s := range d.secs {
		for i := range s.body {
			out = append(out, &s.body[i])
		}
	}
	return out
}

// DefaultMaps are the maps tidy files every note of a kind in (people, orgs, places, topics): the owner's
// own, never a page's.
var DefaultMaps = []string{"moc-people", "moc-orgs", "moc-places", "moc-topics"}

// MapTitle is the title of the map of a domain: "people" → "People", "home-admin" → "Home admin".
func MapTitle(domain string) string {
	t := strings.ReplaceAll(domain, "-", " ")
	if t == "" {
		return t
	}
	return strings.ToUpper(t[:1]) + t[1:]
}

// NewMap returns an empty map titled title.
func NewMap(title string) []byte {
	title = strings.Join(strings.Fields(title), " ")
	return []byte("---\ntype: map\ntitle: " + yamlScalar(title) + "\n---\n# " + title + "\n")
}

// AddEntry adds e to the map's list, before the first entry whose target sorts after it; an entry for
// the same target has its hook replaced in place. Nothing else moves.
func AddEntry(data []byte, e MapEntry) ([]byte, error) {
	const op = "note.addEntry"
	if err := checkLine(op, "map entry", e.Target); err != nil {
		return nil, err
	}
	if strings.ContainsAny(e.Target, "[]|#") || strings.ContainsAny(e.Hook, "\n\r") {
		return nil, errs.E(op, errs.Invalid, "A map entry is one line and its target cannot contain [, ], | or #.")
	}
	d, err := parseDoc(op, data)
	if err != nil {
		return nil, err
	}
	lines := d.allLines()
	last := -1
	for i, l := range lines {
		g, ok := parseEntry(*l)
		if !ok {
			continue
		}
		if g.Target == e.Target {
			*l = e.line()
			return d.render(), nil
		}
		if sortKey(g.Target) > sortKey(e.Target) {
			insertAt(d, l, false, e.line())
			return d.render(), nil
		}
		last = i
	}
	if last >= 0 {
		insertAt(d, lines[last], true, e.line())
		return d.render(), nil
	}
	// first entry: after the head, separated by a blank line
	if n := len(d.head); n > 0 && d.head[n-1] != "" {
		d.head = append(d.head, "")
	}
	d.head = append(d.head, e.line())
	return d.render(), nil
}

// insertAt inserts line next to the line target points at: before it, or after it when after is set.
func insertAt(d *doc, target *string, after bool, line string) {
	at := func(ls []string) ([]string, bool) {
		for j := range ls {
			if &ls[j] == target {
				if after {
					j++
				}
				return append(ls[:j], append([]string{line}, ls[j:]...)...), true
			}
		}
		return ls, false
	}
	var ok bool
	if d.head, ok = at(d.head); ok {
		return
	}
	for _, s := range d.secs {
		if s.body, ok = at(s.body); ok {
			return
		}
	}
}

// RemoveEntry removes the entry for target, reporting whether there was one.
func RemoveEntry(data []byte, target string) ([]byte, bool) {
	d, err := parseDoc("note.removeEntry", data)
	if err != nil {
		return data, false
	}
	found := false
	filter := func(ls []string) []string {
		out := ls[:0:0]
		for _, l := range ls {
			if e, ok := parseEntry(l); ok && e.Target == target {
				found = true
				continue
			}
			out = append(out, l)
		}
		return out
	}
	d.eachBody(filter)
	if !found {
		return data, false
	}
	return d.render(), true
}

func sortKey(target string) string { return strings.ToLower(target) }

// Letter is the letter map a note is filed under: the first letter of its name after entity-/topic-
// ("entity-leo" → "l"); digits and other scripts go under "0".
func Letter(target string) string {
	s := target
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	for _, p := range []string{"entity-", "topic-"} {
		s = strings.TrimPrefix(s, p)
	}
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return s[:1]
	}
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
		return strings.ToLower(s[:1])
	}
	return "0"
}

// letterLabel is how a letter index names a letter map: its letter, or "0–9 and others".
func letterLabel(l string) string {
	if l == "0" {
		return "0–9 and others"
	}
	return strings.ToUpper(l)
}

// LetterHook is a letter index's line for the letter map l holding n notes: "A (14 notes)".
func LetterHook(l string, n int) string {
	return fmt.Sprintf("%s (%d %s)", letterLabel(l), n, say.Plural(n, "note", "notes"))
}

// NewLetterMap is a new, empty letter map l of the map titled title: "People — A".
func NewLetterMap(title, l string) []byte { return NewMap(title + " — " + letterLabel(l)) }

// SplitMap turns the map named name (moc-people) into a letter index and its letter maps, keyed by
// letter; the letter map "l" is the file <name>/l.md. The index keeps the map's frontmatter and head;
// its entries become one line per letter.
func SplitMap(name string, data []byte) (index []byte, letters map[string][]byte, err error) {
	const op = "note.splitMap"
	m, err := ParseMap(data)
	if err != nil {
		return nil, nil, err
	}
	if m.IsIndex() {
		return nil, nil, errs.E(op, errs.Invalid, "The map %s is already a letter index.", name)
	}
	title := m.Title
	if title == "" {
		title = MapTitle(strings.TrimPrefix(name, "moc-"))
	}
	groups := map[string][]MapEntry{}
	for _, e := range m.Entries {
		l := Letter(e.Target)
		groups[l] = append(groups[l], e)
	}
	keys := slices.Sorted(maps.Keys(groups))
	letters = map[string][]byte{}
	var idx []MapEntry
	for _, l := range keys {
		es := groups[l]
		sort.SliceStable(es, func(i, j int) bool { return sortKey(es[i].Target) < sortKey(es[j].Target) })
		letters[l] = renderList(NewLetterMap(title, l), es)
		idx = append(idx, MapEntry{Target: name + "/" + l, Hook: LetterHook(l, len(es))})
	}
	return replaceEntries(m.doc, idx), letters, nil
}

// replaceEntries writes es where d's entry lines were (at the first one), dropping the old entries.
func replaceEntries(d *doc, es []MapEntry) []byte {
	var lines []string
	for _, e := range es {
		lines = append(lines, e.line())
	}
	placed := false
	swap := func(ls []string) []string {
		var out []string
		for _, l := range ls {
			if _, ok := parseEntry(l); ok {
				if !placed {
					out = append(out, lines...)
					placed = true
				}
				continue
			}
			out = append(out, l)
		}
		return out
	}
	d.eachBody(swap)
	if !placed {
		if n := len(d.head); n > 0 && d.head[n-1] != "" && len(lines) > 0 {
			d.head = append(d.head, "")
		}
		d.head = append(d.head, lines...)
	}
	return d.render()
}

func renderList(header []byte, es []MapEntry) []byte {
	var b strings.Builder
	b.Write(header)
	if len(es) > 0 {
		b.WriteString("\n")
	}
	for _, e := range es {
		b.WriteString(e.line() + "\n")
	}
	return []byte(b.String())
}
