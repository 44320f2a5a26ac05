package index

import (
	"context"
	"sort"
	"strings"
)

// rerank reads the candidates' text, adds each one's proximity score, orders them (matches first, then
// partial ones; by score, then the newer, then by path) and makes the title, snippet and text of the
// first limit. Reading is bounded per document (maxReadBytes) and stops when ctx ends.
func (ix *Index) rerank(ctx context.Context, terms []term, cands []candidate, limit int) error {
	m := newMatcher(terms, func() error {
		ix.readBytes.Add(checkEvery)
		if ix.onRead != nil {
			ix.onRead()
		}
		return ctx.Err()
	})
	docs := make([]*docText, len(cands))
	for i := range cands {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if docs[i], err = m.read(cands[i].fields); err != nil {
			return err
		}
		cands[i].doc = docs[i]
	}
	w := weights(docs, len(terms))
	mean := 0.0
	for _, d := range docs {
		mean += float64(d.length) / float64(len(docs))
	}
	for i := range cands {
		if cands[i].hit.Partial {
			cands[i].hit.Score = bm25(docs[i], w, mean)
		}
		cands[i].hit.Score += proximityWeight * proximity(docs[i], w)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i].hit, cands[j].hit
		switch {
		case a.Partial != b.Partial:
			return !a.Partial
		case a.Score != b.Score:
			return a.Score > b.Score
		case !a.Date.Equal(b.Date):
			return a.Date.After(b.Date)
		}
		return a.Path < b.Path
	})
	for i := range cands[:min(limit, len(cands))] {
		c := &cands[i]
		c.hit.Title = c.doc.fields[0]
		c.hit.Snippet, c.hit.Text = m.snippet(c.doc, w)
	}
	return nil
}

// The snippet: at most snippetTokens words around the passage that holds the most weight of distinct
// terms, matched terms marked ** **, "…" where the field goes on; and the plain text: the whole lines
// that passage sits in, or the snippet's words unmarked when those lines are longer than maxPlainBytes.
const (
	snippetTokens = 16
	maxPlainBytes = 400
)

type span struct{ start, end int }

// instance is one occurrence of a term: its first position and how many words it spans.
type instance struct{ pos, n, term int }

func (m *matcher) snippet(d *docText, w []float64) (snippet, text string) {
	var ins []instance
	for t, hs := range d.hits {
		for _, p := range hs {
			ins = append(ins, instance{p, len(m.plan[t]), t})
		}
	}
	sort.Slice(ins, func(i, j int) bool { return ins[i].pos < ins[j].pos })
	field, first, last := snippetWindow(saying(d, ins, len(w)), w)
	if first < 0 { // nothing matched in what was read: the start of the body, else of the title
		field = bodyField
		if strings.TrimSpace(d.fields[bodyField]) == "" {
			field = 0
		}
		first, last = 0, 0
	}
	return quote(d.fields[field], field == bodyField && d.cut, first, last, ins, field)
}

// saying is ins without a term's words on heading lines when the term is also elsewhere: the heading
// "# Leo" repeats the title, and the line "- Leo swims on Thursdays" is what a search for Leo wants shown.
// It reads the body only for a document quoted, and only as far as its last match.
func saying(d *docText, ins []instance, nTerms int) []instance {
	last := -1
	for _, in := range ins {
		if in.pos/fieldGap == bodyField {
			last = in.pos % fieldGap
		}
	}
	if last < 0 || !strings.Contains(d.fields[bodyField], "#") {
		return ins
	}
	heading := headingWords(d.fields[bodyField], last)
	inHeading := func(in instance) bool {
		p := in.pos - bodyField*fieldGap
		return in.pos/fieldGap == bodyField && p < len(heading) && heading[p]
	}
	elsewhere := make([]bool, nTerms)
	for _, in := range ins {
		if !inHeading(in) {
			elsewhere[in.term] = true
		}
	}
	out := make([]instance, 0, len(ins))
	for _, in := range ins {
		if !elsewhere[in.term] || !inHeading(in) {
			out = append(out, in)
		}
	}
	return out
}

// headingWords reports, for each word of text up to word last, whether it stands on a heading line.
func headingWords(text string, last int) []bool {
	out := make([]bool, 0, last+1)
	lineEnd, heading := -1, false
	scanWords(text, func(_ []byte, start, _ int) bool {
		if start > lineEnd { // the first word of a line
			ls := strings.LastIndexByte(text[:start], '\n') + 1
			heading = atxHeading(text[ls:start])
			if lineEnd = strings.IndexByte(text[start:], '\n'); lineEnd < 0 {
				lineEnd = len(text)
			} else {
				lineEnd += start
			}
		}
		out = append(out, heading)
		return len(out) <= last
	})
	return out
}

// atxHeading reports whether a line that goes on from prefix (what stands before its first word) is a
// Markdown heading: at most three spaces, one to six '#', then a space or a tab ("#tag" is no heading;
// "# Leo" and "## Key facts" are).
func atxHeading(prefix string) bool {
	p := strings.TrimLeft(prefix, " ")
	if len(prefix)-len(p) > 3 {
		return false
	}
	n := len(p) - len(strings.TrimLeft(p, "#"))
	return n >= 1 && n <= 6 && len(p) > n && (p[n] == ' ' || p[n] == '\t')
}

// snippetWindow returns the field and the first and last token of the run of at most snippetTokens
// tokens that holds the most weight of distinct terms (on a tie, the later field: a body says more
// than a title), or first = −1 when there is no instance.
func snippetWindow(ins []instance, w []float64) (field, first, last int) {
	first = -1
	count := make([]int, len(w))
	best, sum, lo := -1.0, 0.0, 0
	for _, in := range ins {
		if count[in.term] == 0 {
			sum += w[in.term] + 1e-3 // every term counts a little, even one all candidates hold
		}
		count[in.term]++
		for ins[lo].pos/fieldGap != in.pos/fieldGap || in.pos+in.n-1-ins[lo].pos >= snippetTokens {
			count[ins[lo].term]--
			if count[ins[lo].term] == 0 {
				sum -= w[ins[lo].term] + 1e-3
			}
			lo++
		}
		if f := in.pos / fieldGap; sum > best || sum == best && f > field {
			best, field = sum, f
			first, last = ins[lo].pos%fieldGap, in.pos%fieldGap+in.n-1
		}
	}
	return field, first, last
}

// quote makes the snippet and plain text of tokens first..last of text, widened to snippetTokens.
func quote(text string, cut bool, first, last int, ins []instance, field int) (snippet, plain string) {
	extra := max(0, snippetTokens-(last-first+1))
	from := max(0, first-extra/2)
	to := last + (extra - (first - from))
	var spans []span
	n := 0
	scanWords(text, func(_ []byte, start, end int) bool {
		if n >= from && n <= to {
			spans = append(spans, span{start, end})
		}
		n++
		return n <= to+1 // one token past the snippet says whether the text goes on
	})
	if len(spans) == 0 {
		return "", ""
	}
	more := n > to+1 || cut
	start, end := spans[0].start, spans[len(spans)-1].end
	if from == 0 { // the whole start of the field, and its whole end when nothing follows
		start = 0
	}
	if !more {
		end = len(text)
	}
	var b strings.Builder
	if from > 0 {
		b.WriteString("…")
	}
	at := start
	for _, in := range ins {
		p := in.pos - field*fieldGap
		if in.pos/fieldGap != field || p < from || p+in.n-1 > from+len(spans)-1 {
			continue
		}
		s, e := spans[p-from].start, spans[p+in.n-1-from].end
		if s < at {
			continue // overlaps the previous mark
		}
		b.WriteString(text[at:s])
		b.WriteString("**" + text[s:e] + "**")
		at = e
	}
	b.WriteString(text[at:end])
	if more {
		b.WriteString("…")
	}
	w0, w1 := spans[min(first-from, len(spans)-1)].start, spans[min(last-from, len(spans)-1)].end
	return strings.TrimSpace(b.String()), plainText(text, w0, w1, strings.ReplaceAll(b.String(), "**", ""))
}

// plainText is the whole lines that text[start:end] (the matched words) sit in, or the snippet's own
// words when those lines are too long.
func plainText(text string, start, end int, snippet string) string {
	ls := strings.LastIndexByte(text[:start], '\n') + 1
	le := len(text)
	if i := strings.IndexByte(text[end:], '\n'); i >= 0 {
		le = end + i
	}
	if le-ls <= maxPlainBytes {
		return strings.TrimSpace(text[ls:le])
	}
	return strings.TrimSpace(snippet)
}
