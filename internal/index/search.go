package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// Query is one search. Text follows docs/SEARCH.md: lowercase alphanumeric words, stopwords dropped
// (stopwords alone match nothing), "quoted phrases" and word* prefixes count as one term each; one or
// two terms must all match, more than two at least half (rounded up).
type Query struct {
	Text   string
	Limit  int // 0 means DefaultLimit; at most MaxLimit
	Kind   string
	Map    string
	Who    string    // case-insensitive
	Trust  string    // own or outside
	Prefix string    // only documents whose path starts with this
	Since  time.Time // inclusive, on Doc.Date (else the file's ModTime)
	Until  time.Time // inclusive
	// Partial: when fewer than Limit documents meet the match rule, the list goes on with the best
	// documents that hold at least one term, ranked after every match and marked Hit.Partial.
	Partial bool
}

// Hit is one result. Score is higher for better matches; Snippet marks matched words with ** **; Text
// is the plain text around the match (docs/SEARCH.md, "Snippets").
type Hit struct {
	Path    string
	Kind    string
	Title   string
	Snippet string
	Text    string
	Score   float64
	Date    time.Time
	Who     string
	Trust   string
	Partial bool // holds fewer terms than the rule asks: found by Query.Partial
}

// Limits on a query.
const (
	DefaultLimit = 10
	MaxLimit     = 1000
	maxTextBytes = 8 << 10
)

// Field weights for BM25 (docs/SEARCH.md): title, aliases, description, then body. LoCoMo does not move
// with them (its titles hold no content words; 1/1/1/1 to 10/8/4/1 changed R@5 by under 0.001), so they
// are set for real notes: a note titled with the word beats a note that mentions it.
const (
	weightTitle       = 10.0
	weightAliases     = 8.0
	weightDescription = 4.0
	weightBody        = 1.0
)

// coordination rewards a document for each query term it matches, on top of BM25: score × (1 + c·n).
// Under the half rule this lifts the documents that match most of a long question (LoCoMo MRR 0.772
// → 0.787 for c from 0 to 0.5; 0.25 to 4 all within 0.002 of that).
const coordination = 0.5

// The re-ranking of docs/SEARCH.md ("Ranking"): the best rerankDepth matches by BM25 (or Limit, if
// larger) are read, and twice as many partial matches as the list has room for, and each gains
// proximityWeight × its term-dependence score. The windows are those of the sequential dependence
// model (Metzler and Croft, 2005); pairs of query terms up to pairSpan apart count, the ones not next to
// each other at farPairWeight (their full dependence model, bounded so a long query costs at most
// pairSpan times the adjacent pairs). The weights were chosen on one half of the LoCoMo dev set and
// checked on the other (BENCHMARKS.md).
const (
	rerankDepth     = 20
	orderedWindow   = 3
	unorderedWindow = 8
	proximityWeight = 4.0
	pairSpan        = 4
	farPairWeight   = 0.5
)

// Search runs q and returns hits best first: every document that meets the match rule, then (with
// q.Partial) the partial ones; within each group by score, equal scores to the newer document.
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	terms := parse(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	hits, err := ix.search(ctx, q, terms)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, errs.Wrap("index.search", errs.Other, err, "")
	}
	return hits, nil
}

func (ix *Index) search(ctx context.Context, q Query, terms []term) ([]Hit, error) {
	depth := max(q.Limit, rerankDepth)
	if len(terms) == 1 { // no pair of terms, so nothing for proximity to reorder
		depth = q.Limit
	}
	ctx = statements(ctx, q, terms)
	cands, err := ix.strict(ctx, q, terms, depth)
	if err != nil {
		return nil, err
	}
	if q.Partial && len(cands) < q.Limit && len(terms) > 1 {
		// Read twice as many partial matches as the list has room for: enough for proximity to reorder.
		more, err := ix.partial(ctx, q, terms, min(depth, 2*(q.Limit-len(cands))), cands)
		if err != nil {
			return nil, err
		}
		cands = append(cands, more...)
	}
	if len(cands) == 0 {
		return nil, nil
	}
	if err := ix.rerank(ctx, terms, cands, q.Limit); err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, min(q.Limit, len(cands)))
	for _, c := range cands[:min(q.Limit, len(cands))] {
		hits = append(hits, c.hit)
	}
	return hits, nil
}

// candidate is a document on its way to being a hit.
type candidate struct {
	id     int64
	date   int64 // as the index holds it (0: none), for ordering like the statement
	after  int64 // the horizon of the statement that found it (docs/SEARCH.md, "Cost"), or 0
	hit    Hit
	fields [nFields]string // the body cut to maxReadBytes characters
	doc    *docText
}

// partial returns up to depth documents that hold a term but are not among the rule's matches. Scoring
// every document that holds a common word would cost a BM25 score each, so it takes, for each term, the
// partialPool most recently indexed documents that hold it (FTS5 walks its row ids backwards and stops),
// keeps those whose terms are rarest in that pool, then the newest, and reads only those; they are
// scored in Go (docs/SEARCH.md, "Cost").
func (ix *Index) partial(ctx context.Context, q Query, terms []term, depth int, matches []candidate) ([]candidate, error) {
	var b strings.Builder
	var args []any
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		join := ""
		if q.filtered() { // the filters are on docs; without them FTS5 alone answers
			join = " JOIN docs d ON d.id = fts.rowid"
		}
		fmt.Fprintf(&b, `SELECT * FROM (SELECT fts.rowid, %d FROM fts%s WHERE fts MATCH ?`, i, join)
		args = filters(&b, q, append(args, t.fts()))
		b.WriteString(` ORDER BY fts.rowid DESC LIMIT ?)`)
		args = append(args, partialPool+len(matches))
	}
	pool, err := ix.pairs(ctx, b.String(), args)
	if err != nil {
		return nil, err
	}
	seen := make(map[int64]bool, len(matches))
	for _, c := range matches {
		seen[c.id] = true
	}
	held := make([]float64, len(terms)) // how many pool documents hold each term
	for _, p := range pool {
		held[p[1]]++
	}
	prio := map[int64]float64{}
	for _, p := range pool {
		if !seen[p[0]] {
			c := held[p[1]]
			prio[p[0]] += math.Log1p((partialPool - c + 0.5) / (c + 0.5))
		}
	}
	keep := make([]int64, 0, len(prio))
	for id := range prio {
		keep = append(keep, id)
	}
	sort.Slice(keep, func(i, j int) bool {
		if prio[keep[i]] != prio[keep[j]] {
			return prio[keep[i]] > prio[keep[j]]
		}
		return keep[i] > keep[j]
	})
	if keep = keep[:min(depth, len(keep))]; len(keep) == 0 {
		return nil, nil
	}
	list, _ := json.Marshal(keep)
	out, err := ix.rank(ctx, fmt.Sprintf(`SELECT d.id, 0, d.path, d.kind, d.date, d.who, d.trust, f.title, f.aliases, f.description,
substr(f.body, 1, %d), 0 FROM docs d JOIN fts f ON f.rowid = d.id WHERE d.id IN (SELECT value FROM json_each(?))`, maxReadBytes), []any{string(list)})
	for i := range out {
		out[i].hit.Partial = true
	}
	return out, err
}

// statements marks the context of a search whose SQLite statements may run unwatched. The driver can
// interrupt a statement when its context ends only by watching that context, with goroutines (two or
// three per statement, database/sql's included): more than a small search's statement itself costs. A
// search of one or two single words with no filter and at most DefaultLimit results asks for the documents
// that hold all of them, so its statements' work is bounded by the documents holding those words and the
// bodies of the few it returns (docs/SEARCH.md, "Cost"): they run unwatched, and scanAll checks ctx before
// each one and between rows instead. Longer searches, phrases (a walk per word), prefixes (which stand for
// many words), filtered searches (which walk every document holding the words to find those that pass) and
// longer lists (a body read for each) can run far longer: their statements are interrupted as ctx ends.
func statements(ctx context.Context, q Query, terms []term) context.Context {
	if len(terms) > 2 || q.filtered() || q.Limit > DefaultLimit {
		return ctx
	}
	for _, t := range terms {
		if t.prefix || len(t.words) > 1 {
			return ctx
		}
	}
	return context.WithValue(ctx, unwatchedKey{}, true)
}

type unwatchedKey struct{}

// partialPool is how many documents holding one term a partial search looks at.
const partialPool = 50

// pairs runs a query of two integer columns.
func (ix *Index) pairs(ctx context.Context, query string, args []any) ([][2]int64, error) {
	return scanAll(ctx, ix, query, args, func(r *sql.Rows, p *[2]int64) error { return r.Scan(&p[0], &p[1]) })
}

// scanAll runs a query on the reader pool (prepared once) and scans each row into a T; unwatched when
// statements says so.
func scanAll[T any](ctx context.Context, ix *Index, query string, args []any, scan func(*sql.Rows, *T) error) ([]T, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := ix.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	run := ctx
	if ctx.Value(unwatchedKey{}) != nil {
		run = context.WithoutCancel(ctx)
	}
	rows, err := s.QueryContext(run, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		if err := ctx.Err(); err != nil { // the rows of an unwatched statement are not closed for us
			return nil, err
		}
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (q Query) check() error {
	const op = "index.search"
	switch {
	case q.Limit < 0 || q.Limit > MaxLimit:
		return errs.E(op, errs.Invalid, "The result limit must be between 1 and %d", MaxLimit)
	case len(q.Text) > maxTextBytes:
		return errs.E(op, errs.Invalid, "The search text is too long; use a few words")
	case q.Trust != "" && q.Trust != "own" && q.Trust != "outside":
		return errs.E(op, errs.Invalid, "Trust must be own or outside, not %q", q.Trust)
	case !q.Since.IsZero() && !q.Until.IsZero() && q.Until.Before(q.Since):
		return errs.E(op, errs.Invalid, "The date range ends before it starts")
	}
	return nil
}

// strict returns up to depth documents that meet the match rule, best by BM25 first.
func (ix *Index) strict(ctx context.Context, q Query, terms []term, depth int) ([]candidate, error) {
	q.Limit = depth
	if need(len(terms)) == len(terms) {
		return ix.run(ctx, q, allOf(terms), nil, terms)
	}
	if len(terms) <= maxExpand {
		return ix.run(ctx, q, atLeast(terms, need(len(terms))), nil, terms)
	}
	return ix.run(ctx, q, anyOf(terms), terms, terms)
}

func allOf(terms []term) string { return join(terms, " AND ") }
func anyOf(terms []term) string { return join(terms, " OR ") }

func join(terms []term, sep string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = t.fts()
	}
	return strings.Join(parts, sep)
}

// run executes one FTS5 expression with q's filters, best first. counted, when not nil, adds the "at
// least half" rule for long queries: SQLite counts the terms each row matches (a UNION ALL of one MATCH
// per term, grouped), and BM25 is computed only for rows that pass. Without it, an expression more than
// broadPool documents match is ranked on a bounded pool (docs/SEARCH.md, "Cost"): the statement that
// ranks finds the horizon itself, and only past one are the named documents looked up and ranked too.
func (ix *Index) run(ctx context.Context, q Query, expr string, counted []term, terms []term) ([]candidate, error) {
	var b strings.Builder
	args := ranked(&b, q, expr, counted, nil)
	cands, err := ix.rank(ctx, b.String(), args)
	if err != nil || counted != nil || len(cands) == 0 || cands[0].after == 0 {
		return cands, err
	}
	named, err := ix.ids(ctx, `SELECT rowid FROM names WHERE names MATCH ? AND rowid <= ? ORDER BY rowid DESC LIMIT ?`,
		[]any{anyOf(terms), cands[0].after, broadPool})
	if err != nil || len(named) == 0 {
		return cands, err
	}
	b.Reset()
	args = ranked(&b, q, expr, nil, &horizon{after: cands[0].after, named: named})
	more, err := ix.rank(ctx, b.String(), args)
	if err != nil {
		return nil, err
	}
	// Both lists are best first; the best q.Limit of the two, in the order the statement gives (score, then
	// the newer, then by path).
	cands = append(cands, more...)
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := &cands[i], &cands[j]
		switch {
		case a.hit.Score != b.hit.Score:
			return a.hit.Score > b.hit.Score
		case a.date != b.date:
			return a.date > b.date
		}
		return a.hit.Path < b.hit.Path
	})
	return cands[:min(q.Limit, len(cands))], nil
}

// ranked writes one SELECT of the best q.Limit rows for expr, in two steps: rank every matching row on
// cheap columns, then read the text of the rows kept only (the body's first maxReadBytes characters),
// best first. It returns the arguments. With named nil and counted nil, it ranks the matches newer than
// the horizon (every match when there is none) and gives the horizon as the last column (0 for none);
// with named, the named documents at or before it.
func ranked(b *strings.Builder, q Query, expr string, counted []term, named *horizon) []any {
	var args []any
	fmt.Fprintf(b, `SELECT r.id, -r.score, r.path, r.kind, r.date, r.who, r.trust, f.title, f.aliases, f.description,
substr(f.body, 1, %d), r.after FROM (`, maxReadBytes)
	scored := fmt.Sprintf(`SELECT fts.rowid AS id, bm25(fts, %g, %g, %g, %g) AS score, d.path AS path, d.kind, d.date AS date, d.who, d.trust, %%s AS after
FROM %%sfts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ?`, weightTitle, weightAliases, weightDescription, weightBody)
	switch {
	case counted != nil:
		// CROSS JOIN keeps the FTS5 scan as the outer loop: driven the other way, FTS5 would re-run the
		// match once per candidate row id.
		fmt.Fprintf(b, `SELECT fts.rowid AS id, bm25(fts, %g, %g, %g, %g) * (1 + %g * c.n) AS score, d.path AS path, d.kind, d.date AS date, d.who, d.trust, 0 AS after
FROM fts CROSS JOIN (SELECT rowid AS id, count(*) AS n FROM (`, weightTitle, weightAliases, weightDescription, weightBody, coordination)
		for i, t := range counted {
			if i > 0 {
				b.WriteString(" UNION ALL ")
			}
			b.WriteString("SELECT rowid FROM fts WHERE fts MATCH ?")
			args = append(args, t.fts())
		}
		b.WriteString(`) GROUP BY rowid HAVING count(*) >= ?) c ON c.id = fts.rowid JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ?`)
		args = filters(b, q, append(args, need(len(counted)), expr))
	case named == nil:
		// The horizon, walked unscored, newest first: the newest match past the broadPool newest, or 0. A
		// one-row table joined first, so FTS5 seeks to the row ids past it and scores no older match.
		var h strings.Builder
		h.WriteString(`(SELECT coalesce((SELECT fts.rowid FROM fts`)
		if q.filtered() {
			h.WriteString(` JOIN docs d ON d.id = fts.rowid`)
		}
		h.WriteString(` WHERE fts MATCH ?`)
		args = filters(&h, q, []any{expr})
		fmt.Fprintf(&h, ` ORDER BY fts.rowid DESC LIMIT 1 OFFSET %d), 0) AS after) h CROSS JOIN `, broadPool)
		fmt.Fprintf(b, scored+` AND fts.rowid > h.after`, "h.after", h.String())
		args = filters(b, q, append(args, expr))
	default:
		// From the oldest of the named documents to the horizon, only those (the unary + keeps SQLite from
		// driving FTS5 once per listed id).
		list, _ := json.Marshal(named.named)
		fmt.Fprintf(b, scored+` AND fts.rowid BETWEEN ? AND ? AND +fts.rowid IN (SELECT value FROM json_each(?))`, "0", "")
		args = filters(b, q, append(args, expr, named.named[len(named.named)-1], named.after, string(list)))
	}
	b.WriteString(` ORDER BY score, date DESC, path LIMIT ?) r JOIN fts f ON f.rowid = r.id
ORDER BY 2 DESC, 5 DESC, 3`)
	return append(args, q.Limit)
}

// rank runs a query of candidates: id, score, path, kind, date, who, trust, the four fields and the horizon.
func (ix *Index) rank(ctx context.Context, query string, args []any) ([]candidate, error) {
	return scanAll(ctx, ix, query, args, func(r *sql.Rows, c *candidate) error {
		f := &c.fields
		if err := r.Scan(&c.id, &c.hit.Score, &c.hit.Path, &c.hit.Kind, &c.date, &c.hit.Who, &c.hit.Trust, &f[0], &f[1], &f[2], &f[3], &c.after); err != nil {
			return err
		}
		if c.date != 0 {
			c.hit.Date = time.Unix(c.date, 0).UTC()
		}
		return nil
	})
}

// filtered reports whether q has a filter.
func (q Query) filtered() bool {
	return q.Kind != "" || q.Map != "" || q.Who != "" || q.Trust != "" || q.Prefix != "" || !q.Since.IsZero() || !q.Until.IsZero()
}

// filters writes q's filters on the docs table d, and returns args with their values appended.
func filters(b *strings.Builder, q Query, args []any) []any {
	filter := func(cond string, v any) {
		b.WriteString(" AND " + cond)
		args = append(args, v)
	}
	if q.Kind != "" {
		filter("d.kind = ?", q.Kind)
	}
	if q.Map != "" {
		filter("d.map = ?", q.Map)
	}
	if q.Who != "" {
		filter("d.who = ? COLLATE NOCASE", q.Who)
	}
	if q.Trust != "" {
		filter("d.trust = ?", q.Trust)
	}
	if q.Prefix != "" {
		filter("instr(d.path, ?) = 1", q.Prefix)
	}
	if !q.Since.IsZero() {
		filter("d.date >= ?", q.Since.Unix())
	}
	if !q.Until.IsZero() {
		filter("d.date BETWEEN 1 AND ?", q.Until.Unix()) // an undated doc is outside every range
	}
	return args
}

// maxExpand is the largest term count for which the half rule is written into the FTS5 expression as an
// OR of AND-combinations (at most C(6,3) = 20 groups); past it, matched terms are counted instead.
// Measured at 10k generated notes: 3 terms 2.1 ms (expanded) against 3.7–4.3 ms (counted), 5 terms
// 0.3 ms against 0.75 ms; past 6 the combinations multiply (C(8,4) = 70 groups).
const maxExpand = 6

// atLeast writes "at least k of terms" as an OR of every k-combination ANDed. FTS5 reports a phrase's
// hits only from the groups that matched, so a row matching more terms also scores higher: the
// coordination the counted path adds by hand.
func atLeast(terms []term, k int) string {
	var groups []string
	pick := make([]term, 0, k)
	var rec func(start int)
	rec = func(start int) {
		if len(pick) == k {
			groups = append(groups, "("+allOf(pick)+")")
			return
		}
		for i := start; i <= len(terms)-(k-len(pick)); i++ {
			pick = append(pick, terms[i])
			rec(i + 1)
			pick = pick[:len(pick)-1]
		}
	}
	rec(0)
	return strings.Join(groups, " OR ")
}

// broadPool bounds the ranking of a broad search (docs/SEARCH.md, "Cost"): when more than broadPool
// documents match, BM25 ranks the broadPool most recently indexed of them and the broadPool most recently
// indexed that hold a term in their title or aliases, not every match.
const broadPool = 256

// horizon is where a broad search stops looking: the newest match it does not rank unless named, and
// the named ones, newest first: the broadPool newest older matches that hold a term in a title or aliases.
type horizon struct {
	after int64
	named []int64
}

// ids runs a query of one integer column.
func (ix *Index) ids(ctx context.Context, query string, args []any) ([]int64, error) {
	return scanAll(ctx, ix, query, args, func(r *sql.Rows, id *int64) error { return r.Scan(id) })
}
