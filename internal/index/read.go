package index

import "math"

// Reading a candidate's text in Go: where each query term occurs, for the proximity score and the
// snippet (docs/SEARCH.md, "Ranking" and "Snippets"). The cost is linear in the text read and bounded
// by maxReadBytes per document; the work checks the request's context as it goes.

// maxReadBytes is how much of one document's text search reads for proximity and the snippet: a huge
// note is still found by every word it holds (FTS5 indexes all of it), but only its first 256 KiB are
// read to rank and quote it.
const maxReadBytes = 256 << 10

// checkEvery is how many bytes are read between two looks at the request's context.
const checkEvery = 64 << 10

// fieldGap separates the fields' positions so no window spans two fields.
const fieldGap = 1 << 20

// matcher finds a query's terms in text the way the FTS5 table does: same words, same stems.
type matcher struct {
	terms  []term
	words  map[string]int // stem of a query word → its word id
	prefix []wordPrefix   // the prefix words
	first  [256]bool      // first bytes of every query stem: a quick no for most words
	plan   []termPlan
	maxLen int              // the longest term, in words
	cache  map[string][]int // word → its word ids: words repeat, and stemming costs more than a look-up
	// tick is called after each checkEvery bytes read; an error (the context's) stops the reading.
	tick func() error
}

type wordPrefix struct {
	stem string
	id   int
}

// termPlan is a term as a sequence of word ids (one for a word or prefix, several for a phrase).
type termPlan []int

func newMatcher(terms []term, tick func() error) *matcher {
	m := &matcher{terms: terms, words: map[string]int{}, tick: tick, cache: map[string][]int{}}
	id := func(w string, prefix bool) int {
		s := stem(folded(w))
		if prefix {
			for _, p := range m.prefix {
				if p.stem == s {
					return p.id
				}
			}
			n := len(m.words) + len(m.prefix)
			m.prefix = append(m.prefix, wordPrefix{s, n})
			m.first[s[0]] = true
			return n
		}
		if n, ok := m.words[s]; ok {
			return n
		}
		n := len(m.words) + len(m.prefix)
		m.words[s] = n
		m.first[s[0]] = true
		return n
	}
	for _, t := range terms {
		var p termPlan
		for i, w := range t.words {
			p = append(p, id(w, t.prefix && i == len(t.words)-1))
		}
		m.plan = append(m.plan, p)
		m.maxLen = max(m.maxLen, len(p))
	}
	return m
}

// folded is w as the tokenizer folds it (diacritics dropped).
func folded(w string) string {
	out := w
	scanWords(w, func(f []byte, _, _ int) bool {
		out = string(f)
		return false
	})
	return out
}

// wordIDs returns the ids of the query words w is (a word may be one word and the prefix of others).
func (m *matcher) wordIDs(w []byte) []int {
	if len(w) == 0 || !m.first[w[0]] {
		return nil
	}
	if ids, ok := m.cache[string(w)]; ok {
		return ids
	}
	var ids []int
	s := stem(string(w))
	if id, ok := m.words[s]; ok {
		ids = append(ids, id)
	}
	for _, p := range m.prefix {
		if len(s) >= len(p.stem) && s[:len(p.stem)] == p.stem {
			ids = append(ids, p.id)
		}
	}
	m.cache[string(w)] = ids
	return ids
}

// docText is what one candidate's fields say about the query.
type docText struct {
	fields [nFields]string
	// hits[t] are the positions where term t starts, ascending; field f's positions start at f × fieldGap.
	hits   [][]int
	length int  // words read
	cut    bool // the text was longer than maxReadBytes
}

const nFields = 4 // title, aliases, description, body: the FTS5 columns

const bodyField = 3

// read finds the terms in one document's fields.
func (m *matcher) read(fields [nFields]string) (*docText, error) {
	d := &docText{fields: fields, hits: make([][]int, len(m.terms))}
	budget := maxReadBytes
	// recent[k] holds the word ids of the token k places back, for phrases.
	recent := make([][]int, m.maxLen)
	for f, text := range fields {
		if len(text) > budget {
			text, d.cut = text[:budget], true
		}
		budget -= len(text)
		pos := f * fieldGap
		for k := range recent {
			recent[k] = recent[k][:0]
		}
		next := checkEvery
		var err error
		scanWords(text, func(w []byte, start, end int) bool {
			if start >= next {
				next = start + checkEvery
				if err = m.tick(); err != nil {
					return false
				}
			}
			d.length++
			ids := m.wordIDs(w)
			// Shift the window of recent tokens and put this one first.
			last := recent[len(recent)-1]
			copy(recent[1:], recent[:len(recent)-1])
			recent[0] = append(last[:0], ids...)
			if len(ids) > 0 {
				m.matchAt(d, recent, pos)
			}
			pos++
			return true
		})
		if err != nil {
			return nil, err
		}
		if budget <= 0 {
			break
		}
	}
	return d, nil
}

// matchAt records every term that ends at position pos (recent[0] is the token at pos).
func (m *matcher) matchAt(d *docText, recent [][]int, pos int) {
	for t, plan := range m.plan {
		n := len(plan)
		if n > pos%fieldGap+1 {
			continue
		}
		ok := true
		for k := 0; k < n && ok; k++ {
			ok = contains(recent[n-1-k], plan[k])
		}
		if ok {
			d.hits[t] = append(d.hits[t], pos-n+1)
		}
	}
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// weights are the terms' local inverse document frequencies over the candidates read: a term every
// candidate holds (a name in every note of a conversation) weighs little, a rare one much.
func weights(docs []*docText, nTerms int) []float64 {
	w := make([]float64, nTerms)
	n := float64(len(docs))
	for t := range w {
		df := 0.0
		for _, d := range docs {
			if len(d.hits[t]) > 0 {
				df++
			}
		}
		w[t] = math.Log1p((n - df + 0.5) / (df + 0.5))
	}
	return w
}

// bm25 scores a document from what was read, with the local weights and the mean length of the
// documents read, fields weighted as in the index's BM25: the score of partial matches, which are
// fetched unscored.
func bm25(d *docText, w []float64, meanLength float64) float64 {
	fieldWeight := [nFields]float64{weightTitle, weightAliases, weightDescription, weightBody}
	norm := 0.25 + 0.75*float64(d.length)/max(meanLength, 1)
	s := 0.0
	for t, hs := range d.hits {
		tf := 0.0
		for _, p := range hs {
			tf += fieldWeight[p/fieldGap]
		}
		s += w[t] * tf * 2.2 / (tf + 1.2*norm)
	}
	return s
}

// proximity is the term-dependence score of docs/SEARCH.md: for each pair of query terms at most
// pairSpan apart, how often they occur in order within orderedWindow positions and in any order within
// unorderedWindow, each count saturated like BM25's and weighted by the pair's weight (farPairWeight
// times less for terms not next to each other in the query).
func proximity(d *docText, w []float64) float64 {
	s := 0.0
	for t := range d.hits {
		for u := t + 1; u < len(d.hits) && u-t <= pairSpan; u++ {
			a, b := d.hits[t], d.hits[u]
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			pw := (w[t] + w[u]) / 2
			if u > t+1 {
				pw *= farPairWeight
			}
			s += pw * (saturate(within(a, b, 1, orderedWindow)) + saturate(within(a, b, -unorderedWindow, unorderedWindow)))
		}
	}
	return s
}

// within counts the pairs (x in a, y in b) with lo ≤ y−x ≤ hi and y ≠ x, in time linear in a and b
// (both ascending).
func within(a, b []int, lo, hi int) int {
	n, i, j, k := 0, 0, 0, 0
	for _, x := range a {
		for i < len(b) && b[i] < x+lo {
			i++
		}
		for j < len(b) && b[j] <= x+hi {
			j++
		}
		n += max(0, j-i)
		if lo <= 0 && 0 <= hi {
			for k < len(b) && b[k] < x {
				k++
			}
			for e := k; e < len(b) && b[e] == x; e++ {
				n-- // one token matching both terms is not a pair
			}
		}
	}
	return n
}

// saturate is BM25's term-frequency curve (k1 = 1.2): the first co-occurrences count most.
func saturate(c int) float64 {
	f := float64(c)
	return f * 2.2 / (f + 1.2)
}
