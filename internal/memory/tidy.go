package memory

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/index"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/secret"
)

// The deterministic tidy (no brain). Its rules, in order, for each inbox line (own lines first, then
// outside lines as their own batch):
//
//  1. Secret-like text, an assistant's chatter, instructions aimed at an assistant, greetings, questions
//     and small talk are dropped to the trash, each with its reason (secret.Secret, secret.Chatter,
//     secret.Instruction, secret.Greeting, secret.Question, secret.SmallTalk; docs/SECRETS.md).
//  2. The notes a line names are those whose title or an alias appears in it as whole words (case and
//     accents ignored). Each proper name (secret.ProperNames) no note has gets an entity stub: an org
//     when it ends in an org word or follows "at", a place when it ends in a place word or follows
//     "in/to/from/near/visited", else a person; listed in moc-people, moc-orgs or moc-places. A line that
//     asks for something ("Remind me to …", "Call Leo …") opens with a verb, not a name.
//  3. The line is filed into the note named first; the other named notes are linked both ways. A line
//     naming nothing goes to entity-owner ("Owner"), the owner's own note. A pronoun ("Me", "I", "She")
//     is never a name, so never a stub.
//  4. A fact changed when it is in the same note and, after the note's name at its start, the old and
//     the new fact begin with the same run of at least two words holding at least one word that is not
//     a stopword, and both go on to differ ("Leo has swim practice Thursdays" → "… Wednesdays"). The
//     newer replaces the older in Key facts; the older moves to the Timeline with the note's last date.
//  5. Outside lines never become core facts or cautions, and a note they touch becomes outside or mixed.
//  6. An imported line whose provenance names its subject (inbox.Source.Entity) is filed into the note
//     whose title or alias is that subject, else into a new stub of the kind its type hints (person,
//     organisation, place …; kindOfType), whatever its first proper name is; the others are linked.
//     An untyped subject becomes a topic.
//
// Tidy files; it does not merge notes. Likely duplicates are the merge pass's (merge.go, docs/MERGE.md).

// ownerName is where a line that names no one is filed: the owner's own note.
const (
	ownerName  = note.OwnerName
	ownerTitle = note.OwnerTitle
)

var (
	orgWords    = set("inc ltd llc corp company co bank school university college hospital clinic club group foundation agency studio gmbh academy church team")
	placeWords  = set("street st road avenue park lake beach city town village island mountain river square airport station centre center shop store cafe restaurant bar pub gym bakery market supermarket hotel cinema theatre theater museum library salon pharmacy mall")
	placeBefore = set("in to from near visited visit visiting")
)

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// entry is one note as the planner sees it.
type entry struct {
	name, title, kind, updated, source string
	aliases                            []string
	facts                              []note.Fact
}

// catalogue is every note by name, with a phrase index of titles and aliases.
type catalogue struct {
	notes   map[string]*entry
	byFirst map[string][]phrase
	broken  map[string]bool
	aliases map[string][]string
}

type phrase struct {
	toks []string
	name string
}

func toks(s string) []string { return index.Words(secret.Fold(s)) }

func (c *catalogue) add(e *entry, aliases []string) {
	e.aliases = aliases
	c.notes[e.name] = e
	c.aliases[e.name] = aliases
	for _, t := range append([]string{e.title}, aliases...) {
		if ts := toks(t); len(ts) > 0 {
			c.byFirst[ts[0]] = append(c.byFirst[ts[0]], phrase{toks: ts, name: e.name})
		}
	}
}

// hit is a note named in a line, at a token position.
type hit struct {
	name     string
	pos, end int
}

// find returns the notes a line names, by first position, each once.
func (c *catalogue) find(lt []string) []hit {
	var out []hit
	seen := map[string]bool{}
	for i := 0; i < len(lt); i++ {
		best := hit{pos: i, end: i}
		for _, ph := range c.byFirst[lt[i]] {
			if i+len(ph.toks) <= len(lt) && slicesEqual(lt[i:i+len(ph.toks)], ph.toks) && i+len(ph.toks) > best.end {
				best = hit{name: ph.name, pos: i, end: i + len(ph.toks)}
			}
		}
		if best.end > i && !seen[best.name] {
			seen[best.name] = true
			out = append(out, best)
		}
	}
	return out
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// loadCatalogue reads every note's frontmatter and facts from disk; a broken note is left alone.
func (m *Memory) loadCatalogue() (*catalogue, []string, error) {
	c := &catalogue{notes: map[string]*entry{}, byFirst: map[string][]phrase{}, broken: map[string]bool{}, aliases: map[string][]string{}}
	var skipped []string
	err := m.eachNote(func(name string, data []byte, n *note.Note, err error) {
		if err != nil {
			c.broken[name] = true
			skipped = append(skipped, fmt.Sprintf("%s: %s Tidy files nothing into it until it is fixed by hand.", name, brokenMemoryFile(notePath(name), data)))
			return
		}
		c.add(&entry{name: name, title: n.Title, kind: n.Kind, updated: n.Updated, source: n.Source, facts: n.Facts}, n.Aliases)
	})
	return c, skipped, err
}

// pendingLine is an inbox line with its day file.
type pendingLine struct {
	day string
	inbox.Line
}

// mdName is the name without ".md" of an entry of a folder of notes, maps or inbox days that the box
// reads: a Markdown file, not hidden (an editor's lock or backup beside it is none); ok false otherwise.
func mdName(e os.DirEntry) (name string, ok bool) {
	name, ok = strings.CutSuffix(e.Name(), ".md")
	return name, ok && !e.IsDir() && !hidden(e.Name())
}

// inboxNow lists the inbox lines on disk, oldest day first, in file order, and says which stay where
// they are: lines of a day that share an id (a file edited by hand), which no action could name apart.
func (m *Memory) inboxNow() ([]pendingLine, []string, error) {
	ents, err := os.ReadDir(m.host(layout.InboxDir))
	if err != nil && !os.IsNotExist(err) {
		return nil, nil, errs.Wrap("memory.tidy", errs.Other, err, "")
	}
	// Oldest first: by date, then a day's parts in order (by name, 2026-11-29-2.md would come first).
	slices.SortStableFunc(ents, func(a, b os.DirEntry) int {
		da, na, _ := inbox.ParseFileName(a.Name())
		db, nb, _ := inbox.ParseFileName(b.Name())
		return cmp.Or(cmp.Compare(da, db), cmp.Compare(na, nb), cmp.Compare(a.Name(), b.Name()))
	})
	var out []pendingLine
	var skipped []string
	for _, d := range ents {
		if _, ok := mdName(d); !ok {
			continue
		}
		p := layout.InboxDir + "/" + d.Name()
		data, err := m.read(p)
		if err != nil {
			continue
		}
		ls := inbox.LinesOf(data)
		count := map[string]int{}
		for _, l := range ls {
			count[l.ID]++
		}
		for _, l := range ls {
			switch n := count[l.ID]; {
			case n == 1:
				out = append(out, pendingLine{day: p, Line: l})
			case n > 1:
				skipped = append(skipped, fmt.Sprintf("%s holds %d lines with the id %s; they stay in the inbox until one is given another id.", p, n, l.ID))
				count[l.ID] = -1 // said once
			}
		}
	}
	return out, skipped, nil
}

// PlanTidy proposes the deterministic filing of the inbox as it is on disk now.
func (m *Memory) PlanTidy(ctx context.Context) (Plan, error) {
	cat, skipped, err := m.loadCatalogue()
	if err != nil {
		return Plan{}, err
	}
	lines, shared, err := m.inboxNow()
	if err != nil {
		return Plan{}, err
	}
	pl := &planner{cat: cat, today: m.now().Format("2006-01-02"), plan: Plan{Skipped: append(skipped, shared...)}}
	for _, trust := range []string{inbox.Own, inbox.Outside} { // outside lines are their own batch
		for _, l := range lines {
			if (l.Trust == inbox.Own) == (trust == inbox.Own) {
				pl.line(l)
			}
		}
	}
	return pl.plan, ctx.Err()
}

type planner struct {
	cat   *catalogue
	today string
	plan  Plan
}

func (pl *planner) add(a Action) { pl.plan.Actions = append(pl.plan.Actions, a) }

func (pl *planner) line(l pendingLine) {
	if utf8.RuneCountInString(l.Text) > secret.MaxFactLen {
		// A page in one line, written into the inbox by hand: remember would have refused it, and the
		// rules below are for a sentence or two.
		pl.add(Action{Op: ActDrop, Day: l.day, Line: l.ID, Reason: DropSecret})
		return
	}
	if reason := dropReasonOf(l.Text); reason != "" {
		pl.add(Action{Op: ActDrop, Day: l.day, Line: l.ID, Reason: reason})
		return
	}
	if checkFact(l.Text) != "" {
		pl.add(Action{Op: ActDrop, Day: l.day, Line: l.ID, Reason: DropSecret}) // an over-long or odd line that remember would have refused
		return
	}
	lt := toks(l.Text)
	about := ""
	if l.Source.Entity != "" { // rule 6: an imported line's subject
		if about = pl.about(l.Source.Entity, l.Source.Type); about == "" {
			pl.plan.Skipped = append(pl.plan.Skipped, fmt.Sprintf("line %s is about %s, whose note is broken; it stays in the inbox.", l.ID, l.Source.Entity))
			return
		}
	}
	hits := pl.cat.find(lt)
	for _, pn := range secret.ProperNames(l.Text) {
		if pronoun(pn) {
			continue
		}
		pt := toks(pn)
		pos := indexOf(lt, pt)
		if len(pt) == 0 || pos < 0 || covered(hits, pos) {
			continue
		}
		kind := entityKind(pt, lt, pos)
		name := note.Name(kind, pn)
		if pl.cat.broken[name] {
			pl.plan.Skipped = append(pl.plan.Skipped, fmt.Sprintf("line %s names %s, whose note %s is broken; it stays in the inbox.", l.ID, pn, name))
			return
		}
		if _, ok := pl.cat.notes[name]; !ok {
			pl.create(kind, pn)
		}
		hits = append(hits, hit{name: name, pos: pos, end: pos + len(pt)})
	}
	if l.Trust != inbox.Own { // the note of the core facts the router leaves out is the owner's alone
		hits = slices.DeleteFunc(hits, func(h hit) bool { return h.name == overflowNote })
		if about == overflowNote {
			about = ""
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].pos < hits[j].pos })
	subject := ownerName
	if about != "" {
		subject = about
	} else if len(hits) > 0 {
		subject = hits[0].name
	} else if _, ok := pl.cat.notes[ownerName]; !ok {
		if pl.cat.broken[ownerName] {
			pl.plan.Skipped = append(pl.plan.Skipped, fmt.Sprintf("line %s names no one and %s is broken; it stays in the inbox.", l.ID, ownerName))
			return
		}
		pl.create("person", ownerTitle)
	}
	var links []string
	for _, h := range hits {
		if h.name != subject && !contains(links, h.name) {
			links = append(links, h.name)
		}
	}
	e := pl.cat.notes[subject]
	a := Action{Op: ActFile, Day: l.day, Line: l.ID, Text: l.Text, Note: subject, Links: links}
	for i := len(e.facts) - 1; i >= 0; i-- {
		if changedFact(e, e.facts[i].Text, l.Text) {
			a.Op, a.Old, a.OldDate = ActReplace, e.facts[i].Text, e.updated
			if a.OldDate == "" {
				a.OldDate = pl.today
			}
			e.facts[i] = note.Fact{Text: l.Text, ID: l.ID}
			break
		}
	}
	if a.Op == ActFile {
		e.facts = append(e.facts, note.Fact{Text: l.Text, ID: l.ID})
	}
	pl.add(a)
}

// dropReasonOf is why a line goes to the trash instead of a note (rule 1), or "". The order matters
// only for the reason given: a secret first, then an assistant's chatter before an instruction ("As
// an AI, …"), a greeting before a question ("Hi, how are you?").
func dropReasonOf(text string) string {
	switch {
	case secretLike(text):
		return DropSecret
	case secret.Chatter(text):
		return DropChatter
	case secret.Instruction(text):
		return DropInstruction
	case secret.Greeting(text):
		return DropGreeting
	case secret.Question(text):
		return DropQuestion
	case secret.SmallTalk(text):
		return DropSmallTalk
	}
	return ""
}

// about is the note an imported line's subject names: the note whose title or an alias is the whole
// subject, else a new stub of the kind its type hints (""  when that note is broken).
func (pl *planner) about(entity, typ string) string {
	et := toks(entity)
	if len(et) == 0 {
		return ""
	}
	for _, h := range pl.cat.find(et) {
		if h.pos == 0 && h.end == len(et) {
			return h.name
		}
	}
	kind := kindOfType(typ)
	name := note.Name(kind, entity)
	if pl.cat.broken[name] {
		return ""
	}
	if _, ok := pl.cat.notes[name]; !ok {
		pl.create(kind, entity)
	}
	return name
}

// kindOfType maps a source's entity type to a note kind: people, organisations and places are entity
// notes; projects and events keep their kind; anything else is a topic.
func kindOfType(typ string) string {
	switch t := strings.ToLower(strings.TrimSpace(typ)); t {
	case "person", "people", "human", "user", "individual", "contact", "friend", "family", "family member", "child", "parent":
		return "person"
	case "organization", "organisation", "org", "company", "business", "institution", "school", "team", "employer", "club":
		return "org"
	case "place", "location", "city", "country", "address", "venue", "town":
		return "place"
	case "project", "event":
		return t
	}
	return "topic"
}

func (pl *planner) create(kind, title string) {
	name := note.Name(kind, title)
	pl.add(Action{Op: ActCreate, Note: name, Kind: kind, Title: title, Map: mapOfKind(kind)})
	pl.cat.add(&entry{name: name, title: title, kind: kind}, nil)
}

// changedFact is rule 4 above.
func changedFact(e *entry, old, new string) bool {
	a, b := stripName(e, toks(old)), stripName(e, toks(new))
	k := 0
	for k < len(a) && k < len(b) && a[k] == b[k] {
		k++
	}
	if k < 2 || k == len(a) || k == len(b) {
		return false
	}
	for _, w := range a[:k] {
		if !secret.Stopwords[w] {
			return true
		}
	}
	return false
}

// stripName drops the note's title (or an alias) at the start of a fact's words.
func stripName(e *entry, ws []string) []string {
	for _, t := range append([]string{e.title}, e.aliases...) {
		if nt := toks(t); len(nt) > 0 && len(ws) >= len(nt) && slicesEqual(ws[:len(nt)], nt) {
			return ws[len(nt):]
		}
	}
	return ws
}

func entityKind(name, line []string, pos int) string {
	last := name[len(name)-1]
	switch {
	case orgWords[last]:
		return "org"
	case placeWords[last]:
		return "place"
	case pos > 0 && placeBefore[line[pos-1]]:
		return "place"
	case pos > 0 && line[pos-1] == "at":
		return "org"
	}
	return "person"
}

func mapOfKind(kind string) string {
	switch kind {
	case "person":
		return "moc-people"
	case "org":
		return "moc-orgs"
	case "place":
		return "moc-places"
	}
	return "moc-topics"
}

func indexOf(hay, needle []string) int {
	for i := 0; i+len(needle) <= len(hay); i++ {
		if slicesEqual(hay[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}

func covered(hits []hit, pos int) bool {
	for _, h := range hits {
		if pos >= h.pos && pos < h.end {
			return true
		}
	}
	return false
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// archivePath is where a merged-away note is kept.
func archivePath(v View, name, date string) string {
	p := layout.ArchiveDir + "/notes/" + name + ".md"
	for i := 2; v.Exists(p); i++ {
		p = fmt.Sprintf("%s/notes/%s-%s-%d.md", layout.ArchiveDir, name, date, i)
	}
	return p
}
