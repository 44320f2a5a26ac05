package index

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// Query is one search. Text follows the rules of docs/MEMORY.md, "Search": lowercase alphanumeric words, stopwords
// dropped (stopwords alone match nothing), "quoted phrases" and word* prefixes count as one term each;
// one or two terms must all match, more than two at least half (rounded up).
type Query struct {
	Text  string
	Limit int // 0 means DefaultLimit; at most MaxLimit
	Kind  string
	Map   string
	Who   string    // case-insensitive
	Trust string    // own or outside
	Since time.Time // inclusive, on Doc.Date (else the file's ModTime)
	Until time.Time // inclusive
	// Relaxed: when fewer than Limit documents meet the match rule, the rest of the list is filled
	// with the best documents matching any term, ranked after every document that meets the rule and
	// marked Hit.Relaxed. Off by default: the product rule is strict.
	Relaxed bool
}

// Hit is one result. Score is higher for better matches; Snippet marks matched words with ** **.
type Hit struct {
	Path    string
	Kind    string
	Title   string
	Snippet string
	Score   float64
	Date    time.Time
	Who     string
	Trust   string
	Relaxed bool // found only by Query.Relaxed: matches fewer terms than the rule asks
}

// Limits on a query.
const (
	DefaultLimit = 10
	MaxLimit     = 1000
	maxTextBytes = 8 << 10
)

// Field weights for BM25, in that order: title, aliases, description, then body. LoCoMo does not move
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

// Search runs q and returns hits best first; equal scores go to the newer document.
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
	hits, err := ix.strict(ctx, q, terms)
	if err == nil && q.Relaxed && len(hits) < q.Limit && len(terms) > 1 {
		hits, err = ix.fill(ctx, q, terms, hits)
	}
	if err != nil {
		return nil, fmt.Errorf("index.search: %w", err)
	}
	return hits, nil
}

// fill appends to the rule's hits the best documents matching any term.
func (ix *Index) fill(ctx context.Context, q Query, terms []term, hits []Hit) ([]Hit, error) {
	seen := make(map[string]bool, len(hits))
	for _, h := range hits {
		seen[h.Path] = true
	}
	wide := q
	wide.Limit = q.Limit + len(hits)
	more, err := ix.run(ctx, wide, anyOf(terms), nil)
	for _, h := range more {
		if !seen[h.Path] && len(hits) < q.Limit {
			h.Relaxed = true
			hits = append(hits, h)
		}
	}
	return hits, err
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

func (ix *Index) strict(ctx context.Context, q Query, terms []term) ([]Hit, error) {
	if need(len(terms)) == len(terms) {
		return ix.run(ctx, q, allOf(terms), nil)
	}
	if len(terms) <= maxExpand {
		return ix.run(ctx, q, atLeast(terms, need(len(terms))), nil)
	}
	return ix.run(ctx, q, anyOf(terms), terms)
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

// run executes one FTS5 expression with q's filters in two steps: rank every matching row on cheap
// columns, then make titles and snippets for the few rows returned only. counted, when not nil, adds
// the "at least half" rule for long queries: SQLite counts the terms each row matches (a UNION ALL of
// one MATCH per term, grouped), and BM25 is computed only for rows that pass.
func (ix *Index) run(ctx context.Context, q Query, expr string, counted []term) ([]Hit, error) {
	var b strings.Builder
	var args []any
	if counted == nil {
		fmt.Fprintf(&b, `SELECT fts.rowid, bm25(fts, %g, %g, %g, %g) AS score, d.path, d.kind, d.date, d.who, d.trust
FROM fts JOIN docs d ON d.id = fts.rowid`, weightTitle, weightAliases, weightDescription, weightBody)
	} else {
		// CROSS JOIN keeps the FTS5 scan as the outer loop: driven the other way, FTS5 would re-run the
		// match once per candidate row id.
		fmt.Fprintf(&b, `SELECT fts.rowid, bm25(fts, %g, %g, %g, %g) * (1 + %g * c.n) AS score, d.path, d.kind, d.date, d.who, d.trust
FROM fts CROSS JOIN (SELECT rowid AS id, count(*) AS n FROM (`, weightTitle, weightAliases, weightDescription, weightBody, coordination)
		for i, t := range counted {
			if i > 0 {
				b.WriteString(" UNION ALL ")
			}
			b.WriteString("SELECT rowid FROM fts WHERE fts MATCH ?")
			args = append(args, t.fts())
		}
		b.WriteString(`) GROUP BY rowid HAVING count(*) >= ?) c ON c.id = fts.rowid JOIN docs d ON d.id = fts.rowid`)
		args = append(args, need(len(counted)))
	}
	b.WriteString(` WHERE fts MATCH ?`)
	args = append(args, expr)
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
	if !q.Since.IsZero() {
		filter("d.date >= ?", q.Since.Unix())
	}
	if !q.Until.IsZero() {
		filter("d.date BETWEEN 1 AND ?", q.Until.Unix()) // an undated doc is outside every range
	}
	b.WriteString(` ORDER BY score, d.date DESC, d.path LIMIT ?`)
	args = append(args, q.Limit)

	hits, ids, err := ix.rank(ctx, b.String(), args)
	if err != nil || len(hits) == 0 {
		return hits, err
	}
	return hits, ix.snippets(ctx, expr, hits, ids)
}

func (ix *Index) rank(ctx context.Context, query string, args []any) ([]Hit, []int64, error) {
	s, err := ix.stmt(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	rows, err := s.QueryContext(ctx, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var hits []Hit
	var ids []int64
	for rows.Next() {
		var h Hit
		var id, date int64
		if err := rows.Scan(&id, &h.Score, &h.Path, &h.Kind, &date, &h.Who, &h.Trust); err != nil {
			return nil, nil, err
		}
		h.Score = -h.Score
		if date != 0 {
			h.Date = time.Unix(date, 0).UTC()
		}
		hits = append(hits, h)
		ids = append(ids, id)
	}
	return hits, ids, rows.Err()
}

// snippets fills in each hit's title and snippet; FTS5 seeks each row id within the match.
func (ix *Index) snippets(ctx context.Context, expr string, hits []Hit, ids []int64) error {
	s, err := ix.stmt(ctx, `SELECT title, snippet(fts, -1, '**', '**', '…', 16) FROM fts WHERE fts MATCH ? AND rowid = ?`)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if err := s.QueryRowContext(ctx, expr, id).Scan(&hits[i].Title, &hits[i].Snippet); err != nil {
			return err
		}
	}
	return nil
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
