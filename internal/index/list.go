package index

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Listed is one indexed document as a listing shows it: no text, no score.
type Listed struct {
	Path        string
	Kind        string
	Title       string
	Description string
	Date        time.Time
}

// List returns up to limit documents of the given kinds, newest first (by Doc.Date, then path), and
// how many documents of those kinds there are in all. It reads the index only, so a listing stays
// cheap however many files the box holds.
func (ix *Index) List(ctx context.Context, kinds []string, limit int) ([]Listed, int, error) {
	if len(kinds) == 0 || limit < 0 {
		return nil, 0, nil
	}
	in := strings.TrimSuffix(strings.Repeat("?,", len(kinds)), ",")
	args := make([]any, 0, len(kinds)+1)
	for _, k := range kinds {
		args = append(args, k)
	}
	var total int
	if err := ix.rdb.QueryRowContext(ctx, `SELECT count(*) FROM docs WHERE kind IN (`+in+`)`, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("index.list: %w", err)
	}
	rows, err := ix.rdb.QueryContext(ctx, `SELECT d.path, d.kind, d.date, f.title, f.description FROM docs d
JOIN fts f ON f.rowid = d.id WHERE d.kind IN (`+in+`) ORDER BY d.date DESC, d.path LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, 0, fmt.Errorf("index.list: %w", err)
	}
	defer rows.Close()
	var out []Listed
	for rows.Next() {
		var l Listed
		var date int64
		if err := rows.Scan(&l.Path, &l.Kind, &date, &l.Title, &l.Description); err != nil {
			return nil, 0, fmt.Errorf("index.list: %w", err)
		}
		if date != 0 {
			l.Date = time.Unix(date, 0).UTC()
		}
		out = append(out, l)
	}
	return out, total, rows.Err()
}
