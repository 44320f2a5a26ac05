package note

import (
	"strings"
	"unicode"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/secret"
	"go.yaml.in/yaml/v3"
)

// A note file, as NewNote writes it and tidy fills it:
//
//	---
//	type: note
//	kind: person
//	title: Leo
//	description: Son, 9, swims.
//	aliases: [Leozinho]
//	maps: [moc-people]
//	updated: 2026-11-29
//	source: own
//	---
//	# Leo
//
//	## Snapshot
//	Son, 9. Swims twice a week.
//
//	## Key facts
//	- Leo has swim practice Wednesdays at 5:30. ^m4n5p6q7
//
//	## Open threads
//	- New goggles before the gala.
//
//	## Timeline
//	- 2026-11-29 — Leo has swim practice Thursdays at 5:30. (replaced) ^k3f9a2qd
//
//	## Links
//	- [[entity-ana-maria]]

// The owner's own note: where tidy files a line that names no one, and where an export puts core facts.
const (
	OwnerName  = "entity-owner"
	OwnerTitle = "Owner"
)

// Sections are the note sections in the order they are written.
var Sections = []string{"Snapshot", "Key facts", "Open threads", "Timeline", "Links"}

// EntityKinds are the kinds filed as entity-* notes; every other kind is a topic-* note.
var EntityKinds = []string{"person", "org", "place"}

// Source values: who wrote a note's facts.
const (
	SourceOwn     = "own"
	SourceOutside = "outside"
	SourceMixed   = "mixed"
)

// Fact is one line of Key facts (or a core fact of the router): "- text ^id". ID is the inbox line the
// fact came from; a hand-written fact has none.
type Fact struct {
	Text string
	ID   string
}

// Event is one dated Timeline line: "- 2026-11-29 — text (replaced) ^id".
type Event struct {
	Date     string
	Text     string
	Replaced bool
	ID       string
}

// Note is a parsed note. The fields are a read-only view; edits go through the byte functions below,
// and Render gives back exactly the bytes parsed.
type Note struct {
	Type        string `yaml:"type"`
	Kind        string `yaml:"kind"`
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
	Aliases     List   `yaml:"aliases"`
	Maps        List   `yaml:"maps"`
	Updated     string `yaml:"updated"`
	Source      string `yaml:"source"`

	Snapshot string   `yaml:"-"`
	Facts    []Fact   `yaml:"-"`
	Threads  []string `yaml:"-"`
	Timeline []Event  `yaml:"-"`
	Links    []string `yaml:"-"` // wikilink targets in Links, in order

	doc *doc
}

// List is a frontmatter list that also accepts a single value ("aliases: Leo"), as Obsidian does.
type List []string

// UnmarshalYAML reads a sequence of strings or one scalar.
func (l *List) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Tag != "!!null" && n.Value != "" {
			*l = List{n.Value}
		}
		return nil
	}
	var s []string
	if err := n.Decode(&s); err != nil {
		return err
	}
	*l = s
	return nil
}

// ParseNote parses a note. Only broken frontmatter is an error; unknown sections and lines are kept.
func ParseNote(data []byte) (*Note, error) {
	const op = "note.parse"
	d, err := parseDoc(op, data)
	if err != nil {
		return nil, err
	}
	n := &Note{doc: d}
	if err := d.decode(n); err != nil {
		return nil, errs.E(op, errs.Invalid, "The note's frontmatter has a field of the wrong shape (aliases and maps are lists).")
	}
	if n.Type != "" && n.Type != "note" {
		return nil, errs.E(op, errs.Invalid, "The file says it is of type %q, not note.", n.Type)
	}
	if s := d.section("Snapshot"); s != nil {
		n.Snapshot = strings.Join(s.body[:contentEnd(s.body)], "\n")
		n.Snapshot = strings.TrimLeft(n.Snapshot, "\n")
	}
	if s := d.section("Key facts"); s != nil {
		for _, l := range s.body {
			if f, ok := parseFact(l); ok {
				n.Facts = append(n.Facts, f)
			}
		}
	}
	if s := d.section("Open threads"); s != nil {
		for _, l := range s.body {
			if t, ok := strings.CutPrefix(l, "- "); ok {
				n.Threads = append(n.Threads, t)
			}
		}
	}
	if s := d.section("Timeline"); s != nil {
		for _, l := range s.body {
			if e, ok := parseEvent(l); ok {
				n.Timeline = append(n.Timeline, e)
			}
		}
	}
	if s := d.section("Links"); s != nil {
		n.Links = Wikilinks(strings.Join(s.body, "\n"))
	}
	return n, nil
}

// Render returns the note's bytes.
func (n *Note) Render() []byte { return n.doc.render() }

// NewNote returns a stub note: frontmatter and the five empty sections. AddFact and Touch fill it.
func NewNote(kind, title string, aliases, maps []string) []byte {
	title = strings.Join(strings.Fields(title), " ")
	var b strings.Builder
	b.WriteString("---\ntype: note\nkind: " + yamlScalar(kind) + "\ntitle: " + yamlScalar(title) +
		"\ndescription: \"\"\naliases: " + flowList(aliases) + "\nmaps: " + flowList(maps) + "\n---\n# " + title + "\n")
	for i, s := range Sections {
		b.WriteString("\n## " + s + "\n")
		if i == len(Sections)-1 {
			break
		}
	}
	return []byte(b.String())
}

var (
	idSuffix = lazyregexp.New(` \^([A-Za-z0-9-]+)$`)
	eventRe  = lazyregexp.New(`^- (\d{4}-\d{2}-\d{2}) — (.+)$`)
	linkRe   = lazyregexp.New(`\[\[([^\[\]|#\n]+)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]`)
)

func parseFact(l string) (Fact, bool) {
	t, ok := strings.CutPrefix(l, "- ")
	if !ok || strings.TrimSpace(t) == "" {
		return Fact{}, false
	}
	f := Fact{Text: t}
	if m := idSuffix.FindStringSubmatchIndex(t); m != nil {
		f.Text, f.ID = t[:m[0]], t[m[2]:m[3]]
	}
	return f, true
}

func (f Fact) line() string {
	if f.ID == "" {
		return "- " + f.Text
	}
	return "- " + f.Text + " ^" + f.ID
}

func parseEvent(l string) (Event, bool) {
	m := eventRe.FindStringSubmatch(l)
	if m == nil {
		return Event{}, false
	}
	f, _ := parseFact("- " + m[2])
	e := Event{Date: m[1], Text: f.Text, ID: f.ID}
	if t, ok := strings.CutSuffix(e.Text, " (replaced)"); ok {
		e.Text, e.Replaced = t, true
	}
	return e, true
}

func (e Event) line() string {
	t := e.Text
	if e.Replaced {
		t += " (replaced)"
	}
	return Fact{Text: e.Date + " — " + t, ID: e.ID}.line()
}

// Wikilinks returns the targets of the [[wikilinks]] in s, in order, without repeats.
func Wikilinks(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range linkRe.FindAllStringSubmatch(s, -1) {
		t := strings.TrimSpace(m[1])
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func checkLine(op, what, s string) error {
	if strings.TrimSpace(s) == "" {
		return errs.E(op, errs.Invalid, "The %s is empty.", what)
	}
	if strings.ContainsAny(s, "\n\r\u2028\u2029") {
		return errs.E(op, errs.Invalid, "The %s must be a single line.", what)
	}
	return nil
}

func parseForEdit(op string, data []byte) (*doc, error) {
	return parseDoc(op, data)
}

// AddFact appends f to Key facts (made if missing). A fact already there with the same text or id is
// not added twice.
func AddFact(data []byte, f Fact) ([]byte, error) {
	const op = "note.addFact"
	if err := checkLine(op, "fact", f.Text); err != nil {
		return nil, err
	}
	d, err := parseForEdit(op, data)
	if err != nil {
		return nil, err
	}
	s := d.ensure("Key facts", Sections)
	for _, l := range s.body {
		if g, ok := parseFact(l); ok && (g.Text == f.Text || f.ID != "" && g.ID == f.ID) {
			return data, nil
		}
	}
	s.insert(contentEnd(s.body), f.line())
	return d.render(), nil
}

// ReplaceFact replaces the Key facts line whose id or text is old with f, in place, and moves the old
// fact to the Timeline as "- date — old (replaced) ^id". date is the day the old fact was recorded; ""
// uses the note's updated date.
func ReplaceFact(data []byte, old string, f Fact, date string) ([]byte, error) {
	const op = "note.replaceFact"
	if err := checkLine(op, "fact", f.Text); err != nil {
		return nil, err
	}
	d, err := parseForEdit(op, data)
	if err != nil {
		return nil, err
	}
	if date == "" {
		var fm struct {
			Updated string `yaml:"updated"`
		}
		_ = d.decode(&fm)
		date = fm.Updated
	}
	if !dateRe.MatchString(date) {
		return nil, errs.E(op, errs.Invalid, "The old fact needs a date (YYYY-MM-DD) for the timeline.")
	}
	s := d.section("Key facts")
	if s == nil {
		return nil, errs.E(op, errs.NotFound, "The note has no Key facts to replace.")
	}
	for i, l := range s.body {
		g, ok := parseFact(l)
		if !ok || (g.Text != old && (g.ID == "" || g.ID != old)) {
			continue
		}
		s.body[i] = f.line()
		insertEvent(d.ensure("Timeline", Sections), Event{Date: date, Text: g.Text, Replaced: true, ID: g.ID})
		return d.render(), nil
	}
	return nil, errs.E(op, errs.NotFound, "The note has no fact like that to replace.")
}

var dateRe = lazyregexp.New(`^\d{4}-\d{2}-\d{2}$`)

// insertEvent keeps the timeline in date order: e goes after every line dated on or before it.
func insertEvent(s *section, e Event) {
	at := contentEnd(s.body)
	for i := at - 1; i >= 0; i-- {
		if g, ok := parseEvent(s.body[i]); ok {
			if g.Date <= e.Date {
				break
			}
			at = i
		}
	}
	s.insert(at, e.line())
}

// Removed is a line RemoveFactsMatching took out, with the section it was in.
type Removed struct {
	Section string // "Key facts" or "Timeline"
	Line    string // the whole line as it was
	Fact    Fact   // the text and id (for a timeline line, the text without date)
}

// RemoveFactsMatching removes the Key facts and Timeline lines that match (forget), and returns them.
// match sees a timeline line's text without its date. Other lines are untouched; no match returns data
// unchanged.
func RemoveFactsMatching(data []byte, match func(f Fact) bool) ([]byte, []Removed) {
	d, err := parseDoc("note.forget", data)
	if err != nil {
		return data, nil
	}
	var removed []Removed
	for _, name := range []string{"Key facts", "Timeline"} {
		s := d.section(name)
		if s == nil {
			continue
		}
		kept := s.body[:0:0]
		for _, l := range s.body {
			var f Fact
			ok := false
			if name == "Timeline" {
				var e Event
				if e, ok = parseEvent(l); ok {
					f = Fact{Text: e.Text, ID: e.ID}
				}
			} else {
				f, ok = parseFact(l)
			}
			if ok && match(f) {
				removed = append(removed, Removed{Section: s.name(), Line: l, Fact: f})
				continue
			}
			kept = append(kept, l)
		}
		s.body = kept
	}
	if len(removed) == 0 {
		return data, nil
	}
	return d.render(), removed
}

// AddLink adds "- [[target]]" to Links (made if missing) unless target is already linked there.
func AddLink(data []byte, target string) ([]byte, error) {
	const op = "note.addLink"
	if err := checkLine(op, "link target", target); err != nil {
		return nil, err
	}
	if strings.ContainsAny(target, "[]|#") {
		return nil, errs.E(op, errs.Invalid, "A link target cannot contain [, ], | or #.")
	}
	d, err := parseForEdit(op, data)
	if err != nil {
		return nil, err
	}
	s := d.ensure("Links", Sections)
	for _, t := range Wikilinks(strings.Join(s.body, "\n")) {
		if t == target {
			return data, nil
		}
	}
	s.insert(contentEnd(s.body), "- [["+target+"]]")
	return d.render(), nil
}

// SetSnapshot replaces the Snapshot text (made if missing) with text, one paragraph or several.
func SetSnapshot(data []byte, text string) ([]byte, error) {
	const op = "note.setSnapshot"
	d, err := parseForEdit(op, data)
	if err != nil {
		return nil, err
	}
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "## ") {
			return nil, errs.E(op, errs.Invalid, "The snapshot cannot contain a ## heading.")
		}
	}
	s := d.ensure("Snapshot", Sections)
	var lines []string
	if text != "" {
		lines = strings.Split(text, "\n")
	}
	s.setContent(lines, s == d.secs[len(d.secs)-1])
	return d.render(), nil
}

// Touch records a write on the day date (YYYY-MM-DD) by a writer of trust own or outside: it sets
// updated and moves source (own, outside, or mixed once both have written).
func Touch(data []byte, date, trust string) ([]byte, error) {
	const op = "note.touch"
	if !dateRe.MatchString(date) {
		return nil, errs.E(op, errs.Invalid, "The date %q is not YYYY-MM-DD.", date)
	}
	if trust != SourceOwn && trust != SourceOutside {
		return nil, errs.E(op, errs.Invalid, "Trust must be own or outside.")
	}
	d, err := parseForEdit(op, data)
	if err != nil {
		return nil, err
	}
	var fm struct {
		Updated string `yaml:"updated"`
		Source  string `yaml:"source"`
	}
	_ = d.decode(&fm)
	src := trust
	if fm.Source != "" && fm.Source != trust {
		src = SourceMixed
	}
	if fm.Updated != date {
		d.setField("updated", date)
	}
	if fm.Source != src {
		d.setField("source", src)
	}
	return d.render(), nil
}

// SetDescription sets the one-line description.
func SetDescription(data []byte, text string) ([]byte, error) {
	const op = "note.setDescription"
	if strings.ContainsAny(text, "\n\r") {
		return nil, errs.E(op, errs.Invalid, "The description must be a single line.")
	}
	d, err := parseForEdit(op, data)
	if err != nil {
		return nil, err
	}
	d.setField("description", text)
	return d.render(), nil
}

// AddAlias adds an alias unless the note already has it (case-insensitively) or it is the title.
func AddAlias(data []byte, alias string) ([]byte, error) {
	return addListItem("note.addAlias", data, "aliases", alias)
}

// AddMap records that the note is listed in a map (moc-people).
func AddMap(data []byte, mapName string) ([]byte, error) {
	return addListItem("note.addMap", data, "maps", mapName)
}

func addListItem(op string, data []byte, key, item string) ([]byte, error) {
	if err := checkLine(op, key[:len(key)-1], item); err != nil {
		return nil, err
	}
	d, err := parseForEdit(op, data)
	if err != nil {
		return nil, err
	}
	var fm map[string]any
	_ = d.decode(&fm)
	if t, _ := fm["title"].(string); key == "aliases" && strings.EqualFold(t, item) {
		return data, nil
	}
	if one, ok := fm[key].(string); ok && strings.EqualFold(one, item) {
		return data, nil
	}
	if list, ok := fm[key].([]any); ok {
		for _, x := range list {
			if s, _ := x.(string); strings.EqualFold(s, item) {
				return data, nil
			}
		}
	}
	d.addToList(key, item)
	return d.render(), nil
}

// Slug makes a file-name slug from a title: accents folded to ASCII, lower case, words joined by
// hyphens ("Ana María" → "ana-maria"). Letters of other scripts are kept; an empty result is "untitled".
func Slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(secret.Fold(title)) {
		if r == '\'' || r == '’' {
			continue // "Leo's" → "leos"
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "untitled"
	}
	s := b.String()
	if r := []rune(s); len(r) > 80 {
		s = strings.TrimRight(string(r[:80]), "-")
	}
	return s
}

// Name is the note's file name without .md: entity-<slug> for a person, org or place, else topic-<slug>.
func Name(kind, title string) string {
	if indexOf(EntityKinds, kind) >= 0 {
		return "entity-" + Slug(title)
	}
	return "topic-" + Slug(title)
}
