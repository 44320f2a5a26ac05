package index

import (
	"context"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// Listed is one indexed document as a listing shows it: no text, no score.
type Listed struct {
	Path        string
	Kind        string
	Title       string
	Description string
	Trust       string // own or outside, as the document was indexed
	Date        time.Time
}

// listIndexSQL makes List an index walk rather than a sort of every document of a kind. It is made on
// first use (an additive index: no schema version change; TODO(index): move it into the schema).
const listIndexSQL = `CREATE INDEX IF NOT EXISTS docs_kind_date ON docs(kind, date)`

func (ix *Index) listIndex(ctx context.Context) error {
	var n int
	if err := ix.rdb.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'docs_kind_date'`).Scan(&n); err != nil || n > 0 {
		return err
	}
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	_, err := ix.wdb.ExecContext(ctx, listIndexSQL)
	return err
}

// List returns up to limit documents of the given kinds, newest first (by Doc.Date, then the newest
// indexed), and
// how many documents of those kinds there are in all. It reads the index only, so a listing stays
// cheap however many files the box holds.
func (ix *Index) List(ctx context.Context, kinds []string, limit int) ([]Listed, int, error) {
	if len(kinds) == 0 || limit < 0 {
		return nil, 0, nil
	}
	if err := ix.listIndex(ctx); err != nil {
		return nil, 0, errs.Wrap("index.list", errs.Other, err, "")
	}
	in := strings.TrimSuffix(strings.Repeat("?,", len(kinds)), ",")
	args := make([]any, 0, len(kinds)+1)
	for _, k := range kinds {
		args = append(args, k)
	}
	var total int
	if err := ix.rdb.QueryRowContext(ctx, `SELECT count(*) FROM docs WHERE kind IN (`+in+`)`, args...).Scan(&total); err != nil {
		return nil, 0, errs.Wrap("index.list", errs.Other, err, "")
	}
	rows, err := ix.rdb.QueryContext(ctx, `SELECT d.path, d.kind, d.date, d.trust, f.title, f.description FROM docs d
JOIN fts f ON f.rowid = d.id WHERE d.kind IN (`+in+`) ORDER BY d.date DESC, d.id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, 0, errs.Wrap("index.list", errs.Other, err, "")
	}
	defer rows.Close()
	var out []Listed
	for rows.Next() {
		var l Listed
		var date int64
		if err := rows.Scan(&l.Path, &l.Kind, &date, &l.Trust, &l.Title, &l.Description); err != nil {
			return nil, 0, errs.Wrap("index.list", errs.Other, err, "")
		}
		if date != 0 {
			l.Date = time.Unix(date, 0).UTC()
		}
		out = append(out, l)
	}
	return out, total, rows.Err()
}

// FilesUnder returns the stamp of every indexed file whose path starts with prefix (a range scan of
// the primary key, so it costs what it returns, not what the index holds).
func (ix *Index) FilesUnder(ctx context.Context, prefix string) (map[string]FileStamp, error) {
	return ix.stamps(ctx, `SELECT path, mtime, size, hash FROM files WHERE path >= ? AND path < ?`, prefix, prefix+"\U0010FFFF")
}

// Clear empties the index in place, for a rebuild: every process that has it open sees the empty index
// at once, where deleting the file would leave them writing to the old one.
func (ix *Index) Clear(ctx context.Context) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return errs.Wrap("index.clear", errs.Other, err, "")
	}
	defer tx.Rollback()
	for _, q := range []string{`DROP TABLE IF EXISTS fts`, `DROP TABLE IF EXISTS names`, `DROP TABLE IF EXISTS docs`, `DROP TABLE IF EXISTS files`, schema} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return errs.Wrap("index.clear", errs.Other, err, "")
		}
	}
	if err := tx.Commit(); err != nil {
		return errs.Wrap("index.clear", errs.Other, err, "")
	}
	ix.merged = false // the new tables hold no merge setting
	return nil
}
