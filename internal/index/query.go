package index

import (
	"strings"
)

// term is one unit of a query: a word, a word prefix (word*) or a quoted phrase.
type term struct {
	words  []string // lowercase alphanumeric
	prefix bool
}

// fts renders the term as an FTS5 string token, which no user input can break out of: every word is
// alphanumeric and the whole is double-quoted.
func (t term) fts() string {
	s := `"` + strings.Join(t.words, " ") + `"`
	if t.prefix {
		s += "*"
	}
	return s
}

func (t term) key() string {
	k := strings.Join(t.words, " ")
	if t.prefix {
		k += "*"
	}
	return k
}

// maxTerms bounds a query's words, each word of a phrase counted: words past it are ignored, and a phrase
// is cut where they end (a pasted page is not a query). FTS5 walks the documents of every word of a phrase,
// so a long phrase costs as much as as many terms.
const maxTerms = 32

// Words splits text into the lowercase words the query rules count, stopwords included: where the index's
// tokenizer splits it, without the combining accents it drops ("the" and a combining acute is "the").
func Words(text string) []string {
	text = strings.Map(func(r rune) rune {
		if isDiacritic(r) {
			return -1
		}
		return r
	}, strings.ToLower(text))
	return strings.FieldsFunc(text, func(r rune) bool { return !isWordRune(r) })
}

// parse turns user text into distinct terms: "quoted phrases" (kept whole, stopwords and all, dropped
// only when every word is a stopword), word* prefixes, and words with stopwords dropped.
func parse(text string) []term {
	var out []term
	seen := map[string]bool{}
	words := 0
	add := func(t term) {
		t.words = t.words[:min(len(t.words), maxTerms-words)]
		if len(t.words) == 0 || (!t.prefix && allStop(t.words)) || seen[t.key()] { // a phrase cut to stopwords too
			return
		}
		seen[t.key()] = true
		out = append(out, t)
		words += len(t.words)
	}
	for i, part := range strings.Split(text, `"`) {
		if i%2 == 1 { // inside quotes (an unclosed quote runs to the end)
			add(term{words: Words(part)})
			continue
		}
		for _, field := range strings.Fields(part) {
			ws := Words(field)
			if len(ws) == 0 {
				continue
			}
			// word* is a prefix; "e-mail*" makes "e" and the prefix "mail*".
			prefix := strings.HasSuffix(field, "*")
			for j, w := range ws {
				if prefix && j == len(ws)-1 {
					add(term{words: []string{w}, prefix: true})
					continue
				}
				if !stopwords[w] {
					add(term{words: []string{w}})
				}
			}
		}
	}
	return out
}

func allStop(ws []string) bool {
	for _, w := range ws {
		if !stopwords[w] {
			return false
		}
	}
	return true
}

// need is how many of n terms a document must match: all of one or two, at least half of more.
func need(n int) int {
	if n <= 2 {
		return n
	}
	return (n + 1) / 2
}

// IsStopword reports whether w (lowercase) is on the stopword list.
func IsStopword(w string) bool { return stopwords[w] }

// stopwords is the English list queries drop: the NLTK list plus the question words and auxiliaries a
// question adds ("would", "could", "likely", "ever"), less "won": NLTK has it for "won't", but it is the
// past of "win" ("How many tournaments has Nate won?"; docs/SEARCH.md, "Words"). A query of stopwords
// alone matches nothing. It is not secret.Stopwords on purpose: that list also drops forget's request
// words ("memory", "note"), which a search must still find.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all am an and any are aren as at be because been before being below
between both but by can couldn d did didn do does doesn doing don down during each few for from further
had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn it
its itself just ll m ma me mightn more most mustn my myself needn no nor not now o of off on once only or
other our ours ourselves out over own re s same shan she should shouldn so some such t than that the
their theirs them themselves then there these they this those through to too under until up ve very was
wasn we were weren what when where which while who whom why will with wouldn y you your yours
yourself yourselves
would could might must shall may also ever likely yes
`) {
		m[w] = true
	}
	return m
}()
