package duplicate

import (
	"slices"
	"strings"
	"unicode"

	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/secret"
)

var possessive = strings.NewReplacer("'s ", " ", "'s,", ",", "'s.", ".")

// words cuts text into lowercase, accent-folded words of letters and digits; a possessive "'s" goes
// with its word ("Leo's" → leo).
func words(text string) []string {
	s := possessive.Replace(strings.ToLower(secret.Fold(text)) + " ")
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// nameWords is a title or an alias as the rules compare it (docs/MERGE.md, "Names"): its words, without
// a leading "the", "and", a person's leading honorific, or an org's trailing legal form.
func nameWords(name, class string) []string {
	ws := words(name)
	ws = slices.DeleteFunc(ws, func(w string) bool { return w == "and" })
	if len(ws) > 1 && ws[0] == "the" {
		ws = ws[1:]
	}
	if class == "person" || class == "" {
		for len(ws) > 1 && honorifics[ws[0]] {
			ws = ws[1:]
		}
	}
	if class == "org" || class == "" {
		for len(ws) > 1 && legalForms[ws[len(ws)-1]] {
			ws = ws[:len(ws)-1]
		}
	}
	return ws
}

// classOf is a kind's class: person, org and place stand alone; every other kind is a topic; "" is unknown.
func classOf(kind string) string {
	k := strings.ToLower(strings.TrimSpace(kind))
	switch {
	case k == "":
		return ""
	case slices.Contains(note.EntityKinds, k):
		return k
	}
	return "topic"
}

// qualifier is what a note's file name says beyond its title: "entity-leo-work" titled Leo → "work".
// Numbers are not qualifiers ("entity-leo-2" is a second file, not a second Leo).
func qualifier(name, title string) string {
	slug := name
	for _, p := range []string{"entity-", "topic-"} {
		slug = strings.TrimPrefix(slug, p)
	}
	extra := slices.DeleteFunc(strings.Split(slug, "-"), func(w string) bool {
		return w == "" || isNumber(w) || slices.Contains(strings.Split(note.Slug(title), "-"), w)
	})
	return strings.Join(extra, " ")
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}

// numbers are the numbers in a name ("Taxes 2024" → 2024).
func numbers(ws []string) string {
	var out []string
	for _, w := range ws {
		if isNumber(w) {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// generations are the words in a name that say which of a family's namesakes it is ("Leo Jr").
func generations(ws []string) string {
	var out []string
	for _, w := range ws {
		if generational[w] {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// isPrefix reports whether short is a proper prefix of long, word by word.
func isPrefix(short, long []string) bool {
	return len(short) > 0 && len(short) < len(long) && slices.Equal(short, long[:len(short)])
}

// stem folds an English plural to its singular for topic names ("taxes" → tax, "recipes" → recipe,
// "hobbies" → hobby); short words and words in -ss are left alone.
func stem(w string) string {
	switch {
	case len(w) <= 3 || strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

func stems(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = stem(w)
	}
	return out
}

// nicknameOf maps a given name to the formal names it may stand for ("bob" → robert). A formal name
// maps to itself.
var nicknameOf = func() map[string][]string {
	groups := []string{
		"robert bob rob bobby robbie", "william bill will billy liam", "elizabeth liz beth lizzie betty eliza",
		"michael mike mick mikey", "katherine kate katie kathy kat", "catherine cathy cat kate katie",
		"jennifer jen jenny", "james jim jimmy jamie", "joseph joe joey", "thomas tom tommy",
		"richard rick ricky rich dick", "margaret maggie meg peggy", "alexander alex sasha", "alexandra alex sandra sasha",
		"christopher chris", "christine chris chrissy", "nicholas nick nicky", "daniel dan danny", "matthew matt",
		"anthony tony", "edward ed eddie ted", "samuel sam sammy", "samantha sam sammy", "benjamin ben benny",
		"jonathan jon", "susan sue susie", "patricia pat patty trish", "andrew andy drew", "steven steve",
		"stephen steve", "david dave davy", "charles charlie chuck", "leonardo leo", "francisco chico paco",
		"jose ze", "antonio toni tony", "isabel isa bel", "isabella bella isa", "gabriel gabe", "gabriela gabi",
		"frederick fred freddie", "theodore theo ted teddy", "victoria vicky tori", "rebecca becky becca",
		"deborah debbie deb", "abigail abby", "zachary zach zack", "timothy tim timmy", "gregory greg",
		"jacob jake", "joshua josh", "nathaniel nate nat", "kimberly kim", "madeline maddie", "olivia liv",
	}
	out := map[string][]string{}
	for _, g := range groups {
		ws := strings.Fields(g)
		for _, w := range ws {
			if !slices.Contains(out[w], ws[0]) {
				out[w] = append(out[w], ws[0])
			}
		}
	}
	return out
}()

// sameGivenName reports whether two single given names may be the same person's: one is a nickname of
// the other, or both of one formal name ("Bob", "Robert"; "Bob", "Rob").
func sameGivenName(a, b string) bool {
	if a == b {
		return false // not a variant: the same word
	}
	for _, fa := range nicknameOf[a] {
		if slices.Contains(nicknameOf[b], fa) {
			return true
		}
	}
	return false
}

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var (
	honorifics   = set("mr mrs ms miss mx dr prof sir dame dona dom")
	legalForms   = set("inc incorporated ltd limited llc llp corp corporation co company plc gmbh ag sa sas srl bv nv lda")
	generational = set("jr junior sr senior ii iii iv v 2nd 3rd filho neto sobrinho elder younger")
	// partWords make a longer place or org name a different thing inside or beside the shorter one
	// ("Lisbon" → "Lisbon Airport", "Acme" → "Acme Bank").
	partWords = set(`street st road rd avenue ave lane park lake beach city town village island mountain river square
		airport station centre center mall market museum zoo hotel restaurant cafe bar pub bridge tower port harbour
		harbor bay hill valley county district campus hall office branch store shop clinic hospital school university
		college academy church club bank team group foundation agency studio institute library gym pool theatre theater
		stadium garden gardens house building north south east west old new upper lower`)
	// defaultMaps are the maps tidy files every note of a kind in: sharing one says little.
	defaultMaps = set("moc-people moc-orgs moc-places moc-topics")
)
