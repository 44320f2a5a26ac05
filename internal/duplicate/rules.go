package duplicate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/secret"
)

// The rules of docs/MERGE.md, in points (hundredths of a score). A pair needs a name relation to be
// weighed at all; support adds to it, a penalty takes from it, and a block stops it whatever it scores.
const (
	ptsAlias       = 80 // the title of one is an alias of the other
	ptsSameTitle   = 60 // the same title
	ptsPlural      = 60 // topic titles equal but for plurals
	ptsSharedAlias = 50 // an alias in common
	ptsNickname    = 45 // a person's given name and its nickname, the rest equal
	ptsExtension   = 45 // a person's, place's or org's shorter title begins the longer one

	ptsSameID       = 40 // the same inbox line (block id) is in both
	ptsSharedFact   = 30 // a fact of one says what a fact of the other says; a second one adds ptsMoreFact
	ptsMoreFact     = 10
	ptsSharedLink   = 20 // a third note linked with both, each; at most maxLinks of them count
	maxLinks        = 2
	ptsSharedMap    = 25 // both in a map other than their kind's default one
	ptsDefaultMap   = 5  // both in the kind's default map only
	ptsSomeWords    = 10 // at least minSomeWords distinctive words in common
	ptsManyWords    = 20 // at least minManyWords
	minSomeWords    = 2
	minManyWords    = 4
	ptsDifferentMap = 30 // penalty: each is in a map of its own beyond the default, and they share none
)

// subject is a Subject prepared for the rules.
type subject struct {
	*Subject
	class   string
	title   []string
	names   [][]string // title first, then aliases
	aliases [][]string
	nameSet map[string]bool // every word of every name
	maps    map[string]bool
	links   map[string]bool // notes it links to
	near    map[string]bool // notes it links to or is linked from
	ids     map[string]bool
	facts   [][]string      // the content words of each fact
	words   map[string]bool // the distinctive words of its facts and text
	places  map[string]bool // the places it says it is in (places and orgs only)
	qual    string
	size    int
}

type catalogue struct {
	subs   []*subject
	byName map[string]*subject
	byKey  map[string][]*subject // first word of a name (and its formal name, its singular) → subjects
}

func newCatalogue(subjects []Subject) *catalogue {
	c := &catalogue{byName: map[string]*subject{}, byKey: map[string][]*subject{}}
	for i := range subjects {
		s := prepare(&subjects[i])
		c.subs = append(c.subs, s)
		c.byName[s.Name] = s
	}
	for _, s := range c.subs {
		for t := range s.links {
			if o := c.byName[t]; o != nil {
				o.near[s.Name] = true
			}
		}
		for _, k := range keys(s) {
			if l := c.byKey[k]; len(l) == 0 || l[len(l)-1] != s {
				c.byKey[k] = append(l, s)
			}
		}
	}
	for _, s := range c.subs {
		if s.class == "place" || s.class == "org" {
			for t := range s.near {
				if o := c.byName[t]; o != nil && o.class == "place" && len(o.title) > 0 {
					s.places[strings.Join(o.title, " ")] = true
				}
			}
		}
	}
	return c
}

var inPlace = lazyregexp.New(`\bin ((?:the )?\p{Lu}[\p{L}'’-]*(?: \p{Lu}[\p{L}'’-]*)*)`)

func prepare(in *Subject) *subject {
	s := &subject{Subject: in, class: classOf(in.Kind), nameSet: map[string]bool{}, maps: map[string]bool{},
		links: map[string]bool{}, near: map[string]bool{}, ids: map[string]bool{}, words: map[string]bool{}, places: map[string]bool{}}
	s.title = nameWords(in.Title, s.class)
	if len(s.title) > 0 {
		s.names = append(s.names, s.title)
	}
	for _, a := range in.Aliases {
		if ws := nameWords(a, s.class); len(ws) > 0 && !slices.Equal(ws, s.title) {
			s.names = append(s.names, ws)
			s.aliases = append(s.aliases, ws)
		}
	}
	for _, n := range s.names {
		for _, w := range n {
			s.nameSet[w] = true
		}
	}
	for _, m := range in.Maps {
		s.maps[m] = true
	}
	for _, l := range in.Links {
		s.links[l] = true
		s.near[l] = true
	}
	for _, id := range in.IDs {
		s.ids[id] = true
	}
	for _, f := range in.Facts {
		s.facts = append(s.facts, s.content(f, 2))
	}
	for _, t := range append(slices.Clone(in.Facts), in.Text...) {
		for _, w := range s.content(t, 4) {
			s.words[w] = true
		}
		if s.class == "place" || s.class == "org" {
			for _, m := range inPlace.FindAllStringSubmatch(t, -1) {
				if ws := nameWords(m[1], "place"); len(ws) > 0 && !slices.Equal(ws, s.title) {
					s.places[strings.Join(ws, " ")] = true
				}
			}
		}
	}
	s.qual = qualifier(in.Name, in.Title)
	s.size = len(in.Facts) + len(in.Text) + len(in.Links)
	return s
}

// content is the words of text that say something: no stopwords, none of the note's own name words,
// at least min letters.
func (s *subject) content(text string, min int) []string {
	var out []string
	for _, w := range words(text) {
		if len([]rune(w)) >= min && !secret.Stopwords[w] && !s.nameSet[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// keys are the name keys a subject is found under: the first word of each name, the formal names that
// word may be a nickname of, and (for a topic) its singular.
func keys(s *subject) []string {
	var out []string
	for _, n := range s.names {
		out = append(out, n[0])
		for _, f := range nicknameOf[n[0]] {
			out = append(out, "nick:"+f)
		}
		if s.class == "topic" || s.class == "" {
			out = append(out, "stem:"+stem(n[0]))
		}
	}
	return out
}

// candidates are the pairs whose names may relate (see relate): a name in common, one name beginning
// another, the same singular (topics) or the same formal given name (people). Each pair comes once, in a
// stable order. Looking names up, not pairing every note with every other, keeps a box of many namesakes
// cheap to weigh.
func (c *catalogue) candidates() [][2]*subject {
	byName := map[string][]*subject{}
	add := func(k string, s *subject) {
		if l := byName[k]; len(l) == 0 || l[len(l)-1] != s {
			byName[k] = append(l, s)
		}
	}
	for _, s := range c.subs {
		for _, n := range s.names {
			add(strings.Join(n, " "), s)
			if s.class == "topic" || s.class == "" {
				add("stem:"+strings.Join(stems(n), " "), s)
			}
			if s.class == "person" || s.class == "" {
				for _, f := range nicknameOf[n[0]] {
					add("nick:"+strings.Join(append([]string{f}, n[1:]...), " "), s)
				}
			}
		}
	}
	seen := map[[2]string]bool{}
	var out [][2]*subject
	pair := func(a, b *subject) {
		if a == b {
			return
		}
		if b.Name < a.Name {
			a, b = b, a
		}
		if key := [2]string{a.Name, b.Name}; !seen[key] {
			seen[key] = true
			out = append(out, [2]*subject{a, b})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(byName)) {
		l := byName[k]
		for i, a := range l {
			for _, b := range l[i+1:] {
				pair(a, b)
			}
		}
	}
	for _, s := range c.subs {
		for _, n := range s.names {
			for k := 1; k < len(n); k++ {
				for _, o := range byName[strings.Join(n[:k], " ")] {
					pair(o, s)
				}
			}
		}
	}
	return out
}

// relation is how two subjects' names relate: the rule, its points, the note it would keep when the
// rule decides (nil: decided by keepOf), and the short names a third note could also answer to.
type relation struct {
	rule   string
	pts    int
	keep   *subject
	shorts [][]string
	why    string
}

func relate(a, b *subject) (relation, bool) {
	class := pairClass(a.class, b.class)
	holds := func(h, o *subject) bool {
		return len(o.title) > 0 && slices.ContainsFunc(h.aliases, func(al []string) bool { return slices.Equal(al, o.title) })
	}
	switch {
	case len(a.title) == 0 || len(b.title) == 0:
		return relation{}, false
	case holds(a, b):
		return relation{rule: "alias", pts: ptsAlias, keep: a, shorts: [][]string{b.title}, why: fmt.Sprintf("%q is an alias of %s", b.Title, a.Name)}, true
	case holds(b, a):
		return relation{rule: "alias", pts: ptsAlias, keep: b, shorts: [][]string{a.title}, why: fmt.Sprintf("%q is an alias of %s", a.Title, b.Name)}, true
	case slices.Equal(a.title, b.title):
		return relation{rule: "same title", pts: ptsSameTitle, shorts: [][]string{a.title}, why: fmt.Sprintf("both are titled %q", a.Title)}, true
	case (class == "topic" || class == "") && slices.Equal(stems(a.title), stems(b.title)):
		return relation{rule: "plural", pts: ptsPlural, shorts: [][]string{a.title, b.title}, why: fmt.Sprintf("%q and %q differ only by a plural", a.Title, b.Title)}, true
	}
	for _, x := range a.aliases {
		for _, y := range b.aliases {
			if slices.Equal(x, y) {
				return relation{rule: "shared alias", pts: ptsSharedAlias, shorts: [][]string{x}, why: fmt.Sprintf("both have the alias %q", strings.Join(x, " "))}, true
			}
		}
	}
	if class == "topic" {
		return relation{}, false // a topic whose title begins another's is a narrower topic, not the same one
	}
	if (class == "person" || class == "") && len(a.title) == len(b.title) && sameGivenName(a.title[0], b.title[0]) && slices.Equal(a.title[1:], b.title[1:]) {
		keep := a
		if len(b.title[0]) > len(a.title[0]) {
			keep = b
		}
		return relation{rule: "nickname", pts: ptsNickname, keep: keep, shorts: [][]string{a.title, b.title}, why: fmt.Sprintf("%q and %q may be one given name", a.Title, b.Title)}, true
	}
	short, long := a, b
	if len(b.title) < len(a.title) {
		short, long = b, a
	}
	if isPrefix(short.title, long.title) {
		return relation{rule: "extension", pts: ptsExtension, keep: long, shorts: [][]string{short.title}, why: fmt.Sprintf("%q begins %q", short.Title, long.Title)}, true
	}
	return relation{}, false
}

// pairClass is the class of a pair: either's, when one is unknown.
func pairClass(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// weigh scores a pair and says which note it keeps; ok is false when the names do not relate.
func (c *catalogue) weigh(a, b *subject) (Pair, bool) {
	rel, ok := relate(a, b)
	if !ok {
		return Pair{}, false
	}
	keep := rel.keep
	if keep == nil {
		keep = keepOf(a, b)
	}
	if o := ownFirst(a, b); o != nil {
		keep = o // an outside note never absorbs the owner's own (docs/MERGE.md, "Which note is kept")
	}
	drop := a
	if keep == a {
		drop = b
	}
	pts := rel.pts
	reasons := []string{fmt.Sprintf("%s +%.2f (%s)", rel.rule, float64(rel.pts)/100, rel.why)}
	add := func(n int, format string, args ...any) {
		pts += n
		sign := "+"
		if n < 0 {
			sign = "-"
			n = -n
		}
		reasons = append(reasons, fmt.Sprintf("%s %s%.2f", fmt.Sprintf(format, args...), sign, float64(n)/100))
	}
	support(a, b, add)
	p := Pair{Keep: keep.Name, Drop: drop.Name, Score: float64(min(max(pts, 0), 100)) / 100, Reasons: reasons}
	p.Block = c.block(a, b, rel)
	return p, true
}

// support adds the evidence beyond the names (docs/MERGE.md, "Support").
func support(a, b *subject, add func(n int, format string, args ...any)) {
	for _, id := range sortedKeys(a.ids) {
		if b.ids[id] {
			add(ptsSameID, "the same line ^%s in both", id)
			break
		}
	}
	shared := 0
	for _, fa := range a.facts {
		if slices.ContainsFunc(b.facts, func(fb []string) bool { return sameFact(fa, fb) }) {
			shared++
		}
	}
	switch {
	case shared >= 2:
		add(ptsSharedFact+ptsMoreFact, "%d facts in common", shared)
	case shared == 1:
		add(ptsSharedFact, "a fact in common")
	}
	var links []string
	for _, t := range sortedKeys(a.near) {
		if b.near[t] && t != a.Name && t != b.Name {
			links = append(links, t)
		}
	}
	if n := min(len(links), maxLinks); n > 0 {
		add(n*ptsSharedLink, "linked with %s", strings.Join(links[:n], ", "))
	}
	own := func(s *subject) []string {
		var out []string
		for _, m := range sortedKeys(s.maps) {
			if !defaultMaps[m] {
				out = append(out, m)
			}
		}
		return out
	}
	oa, ob := own(a), own(b)
	var both []string
	for _, m := range oa {
		if slices.Contains(ob, m) {
			both = append(both, m)
		}
	}
	switch {
	case len(both) > 0:
		add(ptsSharedMap, "same map %s", both[0])
	case len(oa) > 0 && len(ob) > 0:
		add(-ptsDifferentMap, "different maps %s and %s", strings.Join(oa, ", "), strings.Join(ob, ", "))
	default:
		for _, m := range sortedKeys(a.maps) {
			if b.maps[m] {
				add(ptsDefaultMap, "same map %s", m)
				break
			}
		}
	}
	var ws []string
	for _, w := range sortedKeys(a.words) {
		if b.words[w] && !a.nameSet[w] && !b.nameSet[w] {
			ws = append(ws, w)
		}
	}
	switch {
	case len(ws) >= minManyWords:
		add(ptsManyWords, "words in common: %s", strings.Join(ws[:minManyWords], ", "))
	case len(ws) >= minSomeWords:
		add(ptsSomeWords, "words in common: %s", strings.Join(ws, ", "))
	}
}

// sameFact reports whether two facts say the same: at least two content words in common, and those are
// at least 60% of the words of both together.
func sameFact(a, b []string) bool {
	common := 0
	for _, w := range a {
		if slices.Contains(b, w) {
			common++
		}
	}
	union := len(a) + len(b) - common
	return common >= 2 && common*10 >= union*6
}

// block is why a related pair may never merge, or "" (docs/MERGE.md, "Blocks").
func (c *catalogue) block(a, b *subject, rel relation) string {
	class := pairClass(a.class, b.class)
	switch {
	case a.class != "" && b.class != "" && a.class != b.class:
		return fmt.Sprintf("kind: %s and %s", article(a.class), article(b.class))
	case a.links[b.Name] || b.links[a.Name]:
		return "linked: one note links the other, so they are two"
	case numbers(a.title) != numbers(b.title):
		return "numbers: the titles carry different numbers"
	case generations(a.title) != generations(b.title):
		return "generation: a junior, senior or second of one name"
	case a.qual != "":
		return fmt.Sprintf("named apart: %s says %q beyond its title", a.Name, a.qual)
	case b.qual != "":
		return fmt.Sprintf("named apart: %s says %q beyond its title", b.Name, b.qual)
	}
	if rel.rule == "extension" && (class == "place" || class == "org") {
		short, long := a.title, b.title
		if len(long) < len(short) {
			short, long = long, short
		}
		for _, w := range long[len(short):] {
			if partWords[w] {
				return fmt.Sprintf("part of: %q names a place or body within or beside %q", strings.Join(long, " "), strings.Join(short, " "))
			}
		}
	}
	if class == "place" || class == "org" {
		pa, pb := without(a.places, a, b), without(b.places, a, b)
		if len(pa) > 0 && len(pb) > 0 && !slices.ContainsFunc(pa, func(p string) bool { return slices.Contains(pb, p) }) {
			return fmt.Sprintf("elsewhere: one is in %s, the other in %s", strings.Join(pa, ", "), strings.Join(pb, ", "))
		}
	}
	if o := c.other(a, b, class, rel.shorts); o != nil {
		return fmt.Sprintf("ambiguous: %s also answers to %q", o.Name, strings.Join(rel.shorts[0], " "))
	}
	return ""
}

// other is a third note, of a kind either could be, that answers to one of shorts as well: with a name
// equal to it, beginning with it (but for a topic, where a longer title is a narrower topic), or, for a
// person, with a given name it may be a nickname of. Then shorts does not say which note is meant.
func (c *catalogue) other(a, b *subject, class string, shorts [][]string) *subject {
	for _, sh := range shorts {
		near := slices.Clone(c.byKey[sh[0]])
		near = append(near, c.byKey["stem:"+stem(sh[0])]...)
		for _, f := range nicknameOf[sh[0]] {
			near = append(near, c.byKey["nick:"+f]...)
		}
		for _, o := range near {
			if o == a || o == b || (o.class != "" && class != "" && o.class != class) {
				continue
			}
			for _, n := range o.names {
				if answers(n, sh, class) {
					return o
				}
			}
		}
	}
	return nil
}

func answers(name, short []string, class string) bool {
	switch {
	case slices.Equal(name, short):
		return true
	case class == "topic":
		return slices.Equal(stems(name), stems(short))
	case isPrefix(short, name):
		return true
	}
	return class != "place" && class != "org" && len(short) == 1 && sameGivenName(short[0], name[0])
}

// keepOf decides which note of a pair is kept when the names do not: the one whose file name is its
// title's, then the richer, then the more recently updated, then the first by name.
func keepOf(a, b *subject) *subject {
	ca, cb := canonical(a), canonical(b)
	switch {
	case ca != cb:
		return pick(ca, a, b)
	case a.size != b.size:
		return pick(a.size > b.size, a, b)
	case a.Updated != b.Updated:
		return pick(a.Updated > b.Updated, a, b)
	}
	return pick(a.Name < b.Name, a, b)
}

func canonical(s *subject) bool { return s.Name == note.Name(s.Kind, s.Title) }

// ownFirst is the note written only by the owner when the other is not, else nil.
func ownFirst(a, b *subject) *subject {
	own := func(s *subject) bool { return s.Source == "" || s.Source == note.SourceOwn }
	if own(a) != own(b) {
		return pick(own(a), a, b)
	}
	return nil
}

func article(class string) string {
	if class == "org" {
		return "an org"
	}
	return "a " + class
}

func pick(first bool, a, b *subject) *subject {
	if first {
		return a
	}
	return b
}

// without is the places of one note of a pair, less the pair's own names ("York Minster is in York"
// places the minster, not elsewhere than York).
func without(places map[string]bool, a, b *subject) []string {
	var out []string
	for _, p := range sortedKeys(places) {
		if !slices.ContainsFunc(append(slices.Clone(a.names), b.names...), func(n []string) bool { return strings.Join(n, " ") == p }) {
			out = append(out, p)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
