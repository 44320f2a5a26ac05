// Package note owns the formats of the memory: the router MEMORY.md, the maps moc-*.md (and their letter
// index) and the notes entity-*/topic-*.md, with pure byte-in, byte-out edits. No files, git or index.
package note

import (
	"cmp"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/markdoc"
	"go.yaml.in/yaml/v3"
)

// doc is a Markdown file cut into frontmatter, a head (everything before the first "## " heading) and
// "## " sections. Every line is kept as written, so render(parse(b)) == b for any input; edits replace
// only the lines they mean to.
type doc struct {
	front []string  // the frontmatter lines between the --- fences; nil when the file has none
	fm    bool      // the file has frontmatter
	fence [2]string // its opening and closing --- lines as written (a CRLF file keeps its \r)
	head  []string
	secs  []*section
	noEOL bool
}

type section struct {
	heading string // the whole heading line, "## Key facts"
	body    []string
}

func (s *section) name() string { return strings.TrimSpace(strings.TrimPrefix(s.heading, "##")) }

func parseDoc(op string, data []byte) (*doc, error) {
	d := &doc{}
	s := string(data)
	if s == "" {
		return d, nil
	}
	d.noEOL = !strings.HasSuffix(s, "\n")
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if markdoc.IsFrontDelimiter(lines[0]) {
		end := -1
		for i := 1; i < len(lines); i++ {
			if markdoc.IsFrontDelimiter(lines[i]) {
				end = i
				break
			}
		}
		if end < 0 {
			return nil, errs.E(op, errs.Invalid, "The frontmatter is not closed with a --- line.")
		}
		d.fm = true
		d.fence = [2]string{lines[0], lines[end]}
		d.front = lines[1:end]
		lines = lines[end+1:]
		var m map[string]any
		if err := yaml.Unmarshal([]byte(strings.Join(d.front, "\n")), &m); err != nil {
			return nil, errs.E(op, errs.Invalid, "The frontmatter is not valid YAML; fix it by hand.")
		}
	}
	var cur *section
	fence := ""
	for _, l := range lines {
		fence = afterLine(fence, l)
		if fence == "" && strings.HasPrefix(l, "## ") {
			cur = &section{heading: l}
			d.secs = append(d.secs, cur)
			continue
		}
		if cur == nil {
			d.head = append(d.head, l)
		} else {
			cur.body = append(cur.body, l)
		}
	}
	return d, nil
}

// openFence returns the marker of a code fence still open at the end of lines, or "".
func openFence(lines []string) string {
	fence := ""
	for _, l := range lines {
		fence = afterLine(fence, l)
	}
	return fence
}

// afterLine returns the open fence's marker after line l, given fence before it ("" outside code): l
// opens a fence, closes the open one with a marker at least as long, or leaves it as it is.
func afterLine(fence, l string) string {
	if f := fenceMark(l); f != "" {
		switch {
		case fence == "":
			return f
		case strings.HasPrefix(f, fence):
			return ""
		}
	}
	return fence
}

func fenceMark(l string) string {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return ""
	}
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, f) {
			return t[:len(t)-len(strings.TrimLeft(t, f[:1]))]
		}
	}
	return ""
}

func (d *doc) lines() []string {
	var out []string
	if d.fm {
		out = append(out, cmp.Or(d.fence[0], "---"))
		out = append(out, d.front...)
		out = append(out, cmp.Or(d.fence[1], "---"))
	}
	out = append(out, d.head...)
	for _, s := range d.secs {
		out = append(out, s.heading)
		out = append(out, s.body...)
	}
	return out
}

func (d *doc) render() []byte {
	ls := d.lines()
	if len(ls) == 0 {
		return []byte{}
	}
	s := strings.Join(ls, "\n")
	if !d.noEOL {
		s += "\n"
	}
	return []byte(s)
}

// decode reads the frontmatter into v.
func (d *doc) decode(v any) error {
	return yaml.Unmarshal([]byte(strings.Join(d.front, "\n")), v)
}

func (d *doc) section(name string) *section {
	for _, s := range d.secs {
		if strings.EqualFold(s.name(), name) {
			return s
		}
	}
	return nil
}

// ensure returns the named section, adding it when missing: after the nearest section that comes
// before it in order, else before the nearest that comes after, else at the end.
func (d *doc) ensure(name string, order []string) *section {
	if s := d.section(name); s != nil {
		return s
	}
	s := &section{heading: "## " + name}
	at := len(d.secs)
	pos := indexOf(order, name)
	after, before := -1, -1
	for i, x := range d.secs {
		p := indexOf(order, x.name())
		if p >= 0 && p < pos {
			after = i
		}
		if p > pos && before < 0 {
			before = i
		}
	}
	switch {
	case after >= 0:
		at = after + 1
	case before >= 0:
		at = before
	}
	// keep one blank line between sections
	if at > 0 {
		prev := d.secs[at-1]
		if n := len(prev.body); n == 0 || prev.body[n-1] != "" {
			prev.body = append(prev.body, "")
		}
	} else if n := len(d.head); n > 0 && d.head[n-1] != "" {
		d.head = append(d.head, "")
	}
	// a fence left open above would swallow the new heading: close it first
	above := append([]string{}, d.head...)
	for _, x := range d.secs[:at] {
		above = append(append(above, x.heading), x.body...)
	}
	if f := openFence(above); f != "" {
		if at > 0 {
			d.secs[at-1].body = append(d.secs[at-1].body, f, "")
		} else {
			d.head = append(d.head, f, "")
		}
	}
	if at < len(d.secs) {
		s.body = []string{""}
	}
	d.secs = append(d.secs[:at], append([]*section{s}, d.secs[at:]...)...)
	if at == len(d.secs)-1 {
		d.noEOL = false
	}
	return s
}

// contentEnd is the index just past the last non-blank line of body.
func contentEnd(body []string) int {
	n := len(body)
	for n > 0 && strings.TrimSpace(body[n-1]) == "" {
		n--
	}
	return n
}

// insert puts line at index i of s's body.
func (s *section) insert(i int, line string) {
	s.body = append(s.body[:i], append([]string{line}, s.body[i:]...)...)
}

// setContent replaces the body's content with lines, keeping its trailing blank lines.
func (s *section) setContent(lines []string, last bool) {
	trail := s.body[contentEnd(s.body):]
	if len(trail) == 0 && !last {
		trail = []string{""}
	}
	s.body = append(append([]string{}, lines...), trail...)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if strings.EqualFold(x, s) {
			return i
		}
	}
	return -1
}

// setField sets a top-level scalar key in the frontmatter, replacing its line or adding one at the end.
func (d *doc) setField(key, value string) {
	v := yamlScalar(value)
	if dateRe.MatchString(value) {
		v = value // dates stay plain, as YAML writers and Obsidian expect
	}
	line := key + ": " + v
	for i, l := range d.front {
		if k, old, ok := strings.Cut(l, ":"); ok && k == key {
			if c := strings.Index(old, " #"); c >= 0 && !strings.ContainsAny(strings.TrimSpace(old)[:1], `"'`) {
				line += old[c:] // keep the owner's comment
			}
			// a block value (the next lines indented) is replaced whole
			j := i + 1
			for j < len(d.front) && (strings.HasPrefix(d.front[j], " ") || strings.HasPrefix(d.front[j], "\t") || strings.HasPrefix(d.front[j], "-")) {
				j++
			}
			d.front = append(d.front[:i], append([]string{line}, d.front[j:]...)...)
			return
		}
	}
	d.fm = true
	d.front = append(d.front, line)
}

// addToList appends item to a top-level list key, keeping its style: a flow list "[a, b]" is rewritten
// on its line; a block list gets a "  - item" line; a missing key becomes a flow list.
func (d *doc) addToList(key, item string) {
	for i, l := range d.front {
		k, v, ok := strings.Cut(l, ":")
		if !ok || k != key {
			continue
		}
		v = strings.TrimSpace(v)
		var cur []string
		switch {
		case v == "" || v == "[]" || strings.HasPrefix(v, "["):
			if v != "" && yaml.Unmarshal([]byte(v), &cur) != nil {
				return // a list we cannot read is left alone
			}
			j := i + 1
			indent := "  "
			for j < len(d.front) && strings.HasPrefix(strings.TrimLeft(d.front[j], " "), "- ") {
				indent = d.front[j][:len(d.front[j])-len(strings.TrimLeft(d.front[j], " "))]
				j++
			}
			if v == "" && j > i+1 {
				d.front = append(d.front[:j], append([]string{indent + "- " + yamlScalar(item)}, d.front[j:]...)...)
				return
			}
			comment := ""
			if c := strings.LastIndex(l, "]"); c >= 0 && v != "" {
				comment = l[c+1:]
				if yaml.Unmarshal([]byte(l[len(key)+1:c+1]), &cur) != nil {
					return
				}
			}
			d.front[i] = key + ": " + flowList(append(cur, item)) + comment
			return
		default:
			d.front[i] = key + ": " + flowList([]string{strings.Trim(v, `"'`), item})
			return
		}
	}
	d.fm = true
	d.front = append(d.front, key+": "+flowList([]string{item}))
}

// yamlScalar writes s as a YAML scalar, plain when that reads back as the same string.
func yamlScalar(s string) string {
	b, err := yaml.Marshal(s)
	if err != nil {
		return `""`
	}
	out := strings.TrimSuffix(string(b), "\n")
	if strings.Contains(out, "\n") {
		return quote(s)
	}
	return out
}

func flowList(items []string) string {
	parts := make([]string, len(items))
	for i, it := range items {
		p := yamlScalar(it)
		if strings.ContainsAny(p, ",[]{}") && !strings.HasPrefix(p, `"`) && !strings.HasPrefix(p, `'`) {
			p = quote(it)
		}
		parts[i] = p
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

// eachBody replaces the head's lines and every section's with fn of them, in order (a map's entries may
// stand in any of them).
func (d *doc) eachBody(fn func([]string) []string) {
	d.head = fn(d.head)
	for _, s := range d.secs {
		s.body = fn(s.body)
	}
}
