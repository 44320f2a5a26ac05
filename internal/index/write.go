package index

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// FileDocs is one source file's stamp and every document that came from it.
type FileDocs struct {
	Path  string
	Stamp FileStamp
	Docs  []Doc
}

// ReplaceFile atomically replaces every document that came from filePath with docs. The file's stamp is
// taken from the first doc (all docs of one file carry its ModTime, Size and Hash); with no docs the file
// is recorded with an empty stamp, so the next Reconcile looks at it again.
func (ix *Index) ReplaceFile(filePath string, docs []Doc) error {
	var st FileStamp
	if len(docs) > 0 {
		st = FileStamp{ModTime: docs[0].ModTime, Size: docs[0].Size, Hash: docs[0].Hash}
	}
	return ix.ReplaceFiles([]FileDocs{{Path: filePath, Stamp: st, Docs: docs}})
}

// DeleteFile removes every document that came from filePath, and its stamp.
func (ix *Index) DeleteFile(filePath string) error { return ix.DeleteFiles([]string{filePath}) }

// ReplaceFiles replaces the documents of several files in one transaction.
func (ix *Index) ReplaceFiles(files []FileDocs) error {
	return writeFiles(ix, "index.replace", files, nil, (*writer).replace)
}

// DeleteFiles removes the documents of several files in one transaction.
func (ix *Index) DeleteFiles(paths []string) error {
	return writeFiles(ix, "index.delete", paths, nil, (*writer).deleteFile)
}

// writeFiles does each of one transaction's file writes. With have (Reconcile's scan of the indexed
// stamps), a file whose stamp changed since the scan was indexed by another writer (the watcher, a write's
// own refresh) from a later read than the reconcile's, and is left as that writer left it.
func writeFiles[F FileDocs | string](ix *Index, op string, files []F, have map[string]FileStamp, do func(*writer, F) error) error {
	return ix.write(op, func(w *writer) error {
		for _, f := range files {
			if have != nil {
				same, err := w.stampIs(pathOf(f), have)
				if err != nil {
					return err
				}
				if !same {
					continue
				}
			}
			if err := do(w, f); err != nil {
				return err
			}
		}
		return nil
	})
}

func pathOf[F FileDocs | string](f F) string {
	if fd, ok := any(f).(FileDocs); ok {
		return fd.Path
	}
	return any(f).(string)
}

// Files returns the stamp of every indexed file.
func (ix *Index) Files(ctx context.Context) (map[string]FileStamp, error) {
	return ix.stamps(ctx, `SELECT path, mtime, size, hash FROM files`)
}

// stamps runs a query for (path, mtime, size, hash) rows of the files table and keys them by path.
func (ix *Index) stamps(ctx context.Context, query string, args ...any) (map[string]FileStamp, error) {
	rows, err := ix.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, errs.Wrap("index.files", errs.Other, err, "")
	}
	defer rows.Close()
	out := map[string]FileStamp{}
	for rows.Next() {
		var p, h string
		var mt, size int64
		if err := rows.Scan(&p, &mt, &size, &h); err != nil {
			return nil, errs.Wrap("index.files", errs.Other, err, "")
		}
		out[p] = FileStamp{ModTime: fromNanos(mt), Size: size, Hash: h}
	}
	return out, rows.Err()
}

// Changed reports whether a file with stamp now differs from the indexed stamp old. Hashes decide when
// both sides have one; otherwise the modification time and size do.
func Changed(old, now FileStamp) bool {
	if old.Hash != "" && now.Hash != "" {
		return old.Hash != now.Hash
	}
	return !old.ModTime.Equal(now.ModTime) || old.Size != now.Size || old.Hash != now.Hash
}

// reconcileBatch is how many files one transaction writes during Reconcile: big enough to amortise the
// commit, small enough that readers and other writers are never held up for long.
const reconcileBatch = 500

// optimizeAfter is how many reindexed files make Reconcile merge the full-text index afterwards.
const optimizeAfter = 1000

// Reconcile brings the index in line with current (every file that should be indexed and its stamp):
// new and changed files are loaded and replaced, files no longer present are deleted. It returns how
// many files it changed. progress (may be nil) is called after each batch.
func (ix *Index) Reconcile(ctx context.Context, current map[string]FileStamp, load func(path string) ([]Doc, error), progress func(done, total int)) (int, error) {
	have, err := ix.Files(ctx)
	if err != nil {
		return 0, err
	}
	return ix.ReconcileSince(ctx, have, current, load, progress)
}

// ReconcileSince is Reconcile with the indexed stamps have read before current was scanned: a file
// another writer indexed or removed after have was read is left as that writer left it, so a scan that
// raced a write (the watcher's, or a write's own refresh) undoes neither.
func (ix *Index) ReconcileSince(ctx context.Context, have, current map[string]FileStamp, load func(path string) ([]Doc, error), progress func(done, total int)) (int, error) {
	var gone []string
	for p := range have {
		if _, ok := current[p]; !ok {
			gone = append(gone, p)
		}
	}
	var todo []string
	for p, st := range current {
		if old, ok := have[p]; !ok || Changed(old, st) {
			todo = append(todo, p)
		}
	}
	// Oldest first, so that row ids, which partial matches and broad searches read as "most recently
	// indexed" (docs/SEARCH.md, "Cost"), follow the files' modification times after a rebuild too, and a
	// rebuild is the same every time.
	slices.SortFunc(todo, func(a, b string) int {
		if c := current[a].ModTime.Compare(current[b].ModTime); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	total := len(todo) + len(gone)
	if progress != nil {
		progress(0, total)
	}
	// Several batches are several commits: until the last, the file says it is half filled, so a process
	// killed on the way leaves the next opener reconciling (NeedsRebuild).
	several := len(todo) > reconcileBatch
	if several {
		if _, err := ix.wdb.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES(?, '1')`, metaIncomplete); err != nil {
			return 0, errs.Wrap("index.reconcile", errs.Other, err, "")
		}
	}
	if len(gone) > 0 {
		if err := writeFiles(ix, "index.delete", gone, have, (*writer).deleteFile); err != nil {
			return 0, err
		}
	}
	done := len(gone)
	batch := make([]FileDocs, 0, reconcileBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := writeFiles(ix, "index.replace", batch, have, (*writer).replace); err != nil {
			return err
		}
		done += len(batch)
		batch = batch[:0]
		if progress != nil {
			progress(done, total)
		}
		return nil
	}
	for _, p := range todo {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		docs, err := load(p)
		if err != nil {
			return done, errs.Wrap("index.reconcile", errs.Other, err, "The file "+p+" could not be read into the search index")
		}
		batch = append(batch, FileDocs{Path: p, Stamp: current[p], Docs: docs})
		if len(batch) == reconcileBatch {
			if err := flush(); err != nil {
				return done, err
			}
		}
	}
	if err := flush(); err != nil {
		return done, err
	}
	if several || ix.needsRebuild { // this one, or the one whose half this finished
		if _, err := ix.wdb.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, metaIncomplete); err != nil {
			return done, errs.Wrap("index.reconcile", errs.Other, err, "")
		}
	}
	if len(todo) >= optimizeAfter {
		if err := ix.Optimize(ctx); err != nil {
			return done, err
		}
	}
	return total, nil
}

// writer holds the statements of one write transaction.
type writer struct {
	tx                                                      *sql.Tx
	idsOfFile, idOfPath, delDoc, delFTS, delNames, delStamp *sql.Stmt
	insDoc, insFTS, insNames, putStamp                      *sql.Stmt
}

// stampIs reports whether file's indexed stamp is still the one have holds for it (absent from have: not
// indexed).
func (w *writer) stampIs(file string, have map[string]FileStamp) (bool, error) {
	seen, was := have[file]
	var mt, size int64
	var h string
	switch err := w.tx.QueryRow(`SELECT mtime, size, hash FROM files WHERE path = ?`, file).Scan(&mt, &size, &h); { // Reconcile's only: not prepared for every write
	case errors.Is(err, sql.ErrNoRows):
		return !was, nil
	case err != nil:
		return false, err
	}
	return was && seen.ModTime.Equal(fromNanos(mt)) && seen.Size == size && seen.Hash == h, nil
}

func (ix *Index) write(op string, fn func(*writer) error) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	tx, err := ix.wdb.Begin()
	if err != nil {
		return errs.Wrap(op, errs.Busy, err, "The search index is busy; try again")
	}
	defer tx.Rollback()
	w := &writer{tx: tx}
	for _, s := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&w.idsOfFile, `SELECT id FROM docs WHERE file = ?`},
		{&w.idOfPath, `SELECT id FROM docs WHERE path = ?`},
		{&w.delDoc, `DELETE FROM docs WHERE id = ?`},
		{&w.delFTS, `DELETE FROM fts WHERE rowid = ?`},
		{&w.delNames, `DELETE FROM names WHERE rowid = ?`},
		{&w.delStamp, `DELETE FROM files WHERE path = ?`},
		{&w.insDoc, `INSERT INTO docs(path, file, kind, who, trust, date, map) VALUES(?, ?, ?, ?, ?, ?, ?)`},
		{&w.insFTS, `INSERT INTO fts(rowid, title, aliases, description, body) VALUES(?, ?, ?, ?, ?)`},
		{&w.insNames, `INSERT INTO names(rowid, title, aliases) VALUES(?, ?, ?)`},
		{&w.putStamp, `INSERT OR REPLACE INTO files(path, mtime, size, hash) VALUES(?, ?, ?, ?)`},
	} {
		if *s.dst, err = tx.Prepare(s.q); err != nil {
			return errs.Wrap(op, errs.Other, err, "")
		}
	}
	if err := fn(w); err != nil {
		return errs.Wrap(op, errs.Other, err, "")
	}
	if err := tx.Commit(); err != nil {
		return errs.Wrap(op, errs.Other, err, "")
	}
	if ix.writes++; ix.writes%mergeEvery == 0 {
		ix.merge()
	}
	return nil
}

// mergeEvery is how many writes make the index merge its full-text segments: every write adds a segment
// and every search reads every segment, and FTS5's own merging (four at a level) leaves a one-fact search
// at 10k notes twice as slow after 300 small writes (docs/SEARCH.md, "Cost").
const mergeEvery = 8

// mergePages bounds one merge's work, in leaf pages of the index: merging the few small segments of the
// last writes takes about 0.5 ms at 10k notes.
const mergePages = 1000

// merge merges the full-text tables' segments level by level, two or more at a time, up to mergePages;
// the caller holds wmu. It waits for no other process's lock (a rebuild can hold it for seconds): a merge
// that fails or is skipped leaves every search right, only slower, and the next one tries again, so its
// errors are dropped.
func (ix *Index) merge() {
	_, _ = ix.wdb.Exec(`PRAGMA busy_timeout = 0`) // wdb is one connection, held under wmu
	defer func() { _, _ = ix.wdb.Exec(`PRAGMA busy_timeout = ` + strconv.Itoa(busyMillis)) }()
	set := true
	for _, t := range []string{"fts", "names"} {
		if !ix.merged { // a setting kept in the table (Clear drops it): merge levels of two segments, not four
			_, err := ix.wdb.Exec(`INSERT INTO ` + t + `(` + t + `, rank) VALUES('usermerge', 2)`)
			set = set && err == nil
		}
		_, _ = ix.wdb.Exec(`INSERT INTO `+t+`(`+t+`, rank) VALUES('merge', ?)`, mergePages)
	}
	ix.merged = set
}

func (w *writer) deleteIDs(ids []int64) error {
	for _, id := range ids {
		if _, err := w.delFTS.Exec(id); err != nil {
			return err
		}
		if _, err := w.delNames.Exec(id); err != nil {
			return err
		}
		if _, err := w.delDoc.Exec(id); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) docsOf(file string) ([]int64, error) {
	rows, err := w.idsOfFile.Query(file)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func (w *writer) deleteFile(file string) error {
	ids, err := w.docsOf(file)
	if err != nil {
		return err
	}
	if err := w.deleteIDs(ids); err != nil {
		return err
	}
	_, err = w.delStamp.Exec(file)
	return err
}

func (w *writer) replace(f FileDocs) error {
	if f.Path == "" {
		return errs.E("index.replace", errs.Invalid, "A document's file path is empty")
	}
	ids, err := w.docsOf(f.Path)
	if err != nil {
		return err
	}
	if err := w.deleteIDs(ids); err != nil {
		return err
	}
	for _, d := range f.Docs {
		if d.Path == "" {
			return errs.E("index.replace", errs.Invalid, "A document from %s has no path", f.Path)
		}
		// A doc path claimed earlier by another file moves to this one.
		var old int64
		switch err := w.idOfPath.QueryRow(d.Path).Scan(&old); err {
		case nil:
			if err := w.deleteIDs([]int64{old}); err != nil {
				return err
			}
		case sql.ErrNoRows:
		default:
			return err
		}
		res, err := w.insDoc.Exec(d.Path, f.Path, d.Kind, d.Who, d.Trust, docDate(d), d.Map)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		aliases := strings.Join(d.Aliases, "\n")
		if _, err := w.insFTS.Exec(id, d.Title, aliases, d.Description, d.Body); err != nil {
			return err
		}
		if d.Title != "" || aliases != "" {
			if _, err := w.insNames.Exec(id, d.Title, aliases); err != nil {
				return err
			}
		}
	}
	_, err = w.putStamp.Exec(f.Path, toNanos(f.Stamp.ModTime), f.Stamp.Size, f.Stamp.Hash)
	return err
}

// docDate is the date a document is filtered and ordered by: its own Date, else its file's ModTime.
func docDate(d Doc) int64 {
	if !d.Date.IsZero() {
		return d.Date.Unix()
	}
	if !d.ModTime.IsZero() {
		return d.ModTime.Unix()
	}
	return 0
}

func toNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Optimize merges the full-text index into one segment, which makes searches faster after many
// writes; Reconcile calls it after a large rebuild.
func (ix *Index) Optimize(ctx context.Context) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	for _, q := range []string{`INSERT INTO fts(fts) VALUES('optimize')`, `INSERT INTO names(names) VALUES('optimize')`} {
		if _, err := ix.wdb.ExecContext(ctx, q); err != nil {
			return errs.Wrap("index.optimize", errs.Other, err, "")
		}
	}
	if _, err := ix.wdb.ExecContext(ctx, `PRAGMA optimize`); err != nil {
		return errs.Wrap("index.optimize", errs.Other, err, "")
	}
	return nil
}
