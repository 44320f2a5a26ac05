// Package index owns the search index in <box>/.box/index.db: documents derived from files, FTS5 search with
// the rules and ranking of docs/SEARCH.md, reconciliation and the file watcher; it never writes the files it
// indexes.
package index

import (
	"golang.org/x/sys/unix"
	"strconv"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boxmem/box/internal/errs"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Version is the schema version. An index of any other version is deleted and rebuilt, never trusted.
// 2: the names table.
const Version = 2

// Doc is one searchable document. Path is its key (a box path, with a "#id" fragment for a document
// inside a file such as one inbox line or one core fact); every doc belongs to exactly one source file.
type Doc struct {
	Path        string
	Kind        string // router, map, note, inbox, core, doc, …
	Title       string
	Aliases     []string
	Description string
	Body        string
	Who         string
	Trust       string // own or outside
	Date        time.Time
	Map         string
	ModTime     time.Time // of the source file
	Size        int64     // of the source file
	Hash        string    // of the source file
}

// FileStamp is what reconciliation compares to decide whether a file changed.
type FileStamp struct {
	ModTime time.Time
	Size    int64
	Hash    string // optional; when both sides have one it decides alone
}

// Index is an open index. It is safe for concurrent use; writes are serialised.
type Index struct {
	path         string
	rdb          *sql.DB // readers: a pool
	wdb          *sql.DB // the writer: one connection, IMMEDIATE transactions
	needsRebuild bool

	stmts  sync.Map // SQL text → *sql.Stmt on rdb
	wmu    sync.Mutex
	writes int  // writes committed by this Index, under wmu: every mergeEvery, a merge
	merged bool // usermerge is set (once per Index, under wmu)

	// readBytes counts the text searches have read in Go (docs/SEARCH.md, "Cost"), in steps of
	// checkEvery; onRead, when set (tests only), runs after each step.
	readBytes atomic.Int64
	onRead    func()
}

const schema = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, mtime INTEGER NOT NULL, size INTEGER NOT NULL, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs(
	id INTEGER PRIMARY KEY,
	path TEXT NOT NULL UNIQUE,
	file TEXT NOT NULL,
	kind TEXT NOT NULL,
	who TEXT NOT NULL,
	trust TEXT NOT NULL,
	date INTEGER NOT NULL,
	map TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_file ON docs(file);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, aliases, description, body,
	tokenize='` + tokenizerArgs + `');
-- names holds again the titles and aliases of the documents that have one: a broad search ranks the
-- older documents named by its words without walking every match (docs/SEARCH.md, "Cost").
CREATE VIRTUAL TABLE IF NOT EXISTS names USING fts5(title, aliases,
	tokenize='` + tokenizerArgs + `');
`

// tokenizerArgs configure FTS5's tokenizer: Porter's stemmer over unicode61, accents dropped.
// docs/SEARCH.md, "Words", says where the Go readers of text and it still differ, and why the characters
// it keeps inside a word are not given to it as separators.
const tokenizerArgs = "porter unicode61 remove_diacritics 2"

// Open opens or creates the index at path. A file of another version, or one that cannot be read, is
// deleted and recreated empty; NeedsRebuild then reports true, as it does for a new file.
func Open(path string) (*Index, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, errs.Wrap("index.open", errs.Other, err, "")
	}
	// Open deletes a file it cannot trust, and a file another process is creating at that moment looks
	// untrustworthy: every opener (memory, hooks, tests) holds an OS lock beside it while it decides.
	unlock, err := lockBeside(path)
	if err != nil {
		return nil, err
	}
	defer unlock()
	_, statErr := os.Stat(path)
	fresh := errors.Is(statErr, os.ErrNotExist)
	ix, err := open(path)
	if err == nil && !fresh {
		err = ix.check()
	}
	if err != nil && busy(err) {
		// Another process holds the file: that is no reason to distrust it.
		if ix != nil {
			_ = ix.Close()
		}
		return nil, errs.Wrap("index.open", errs.Busy, err, "The search index is busy; try again")
	}
	if err != nil || fresh {
		if ix != nil {
			_ = ix.Close()
		}
		if !fresh {
			removeDB(path)
		}
		if ix, err = open(path); err != nil {
			return nil, errs.Wrap("index.open", errs.Other, err, "The search index could not be created")
		}
		ix.needsRebuild = true
	}
	if err := ix.init(); err != nil {
		_ = ix.Close()
		return nil, errs.Wrap("index.open", errs.Other, err, "The search index could not be created")
	}
	if !ix.needsRebuild {
		// A reconcile of several batches that never finished (a hook killed at its time budget) left the
		// file half filled: the caller should reconcile it whatever its mode.
		var v string
		switch err := ix.wdb.QueryRow(`SELECT value FROM meta WHERE key = ?`, metaIncomplete).Scan(&v); {
		case err == nil:
			ix.needsRebuild = true
		case !errors.Is(err, sql.ErrNoRows):
			_ = ix.Close()
			return nil, errs.Wrap("index.open", errs.Other, err, "The search index could not be read")
		}
	}
	return ix, nil
}

// metaIncomplete is the meta key a reconcile of several batches holds while it runs.
const metaIncomplete = "incomplete"

func busy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked") ||
		strings.Contains(msg, "SQLITE_LOCKED")
}

func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		_ = os.Remove(path + suffix)
	}
}

// busyMillis is how long a statement waits for another connection's lock before it fails.
const busyMillis = 10000

func dsn(path string, writer bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(busyMillis)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if writer {
		q.Set("_txlock", "immediate")
	} else {
		// Readers map the file and keep a larger page cache: a search touches many FTS5 pages.
		q.Add("_pragma", "query_only(1)")
		q.Add("_pragma", "mmap_size(268435456)")
		q.Add("_pragma", "cache_size(-32000)")
	}
	return "file:" + path + "?" + q.Encode()
}

func open(path string) (*Index, error) {
	wdb, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, err
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetConnMaxIdleTime(0)
	ix := &Index{path: path, wdb: wdb}
	// Creating the schema before any reader connects means readers never see a half-made file.
	if _, err := wdb.Exec(`PRAGMA user_version`); err != nil {
		_ = wdb.Close()
		return nil, err
	}
	rdb, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		_ = wdb.Close()
		return nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0))
	rdb.SetMaxOpenConns(n)
	rdb.SetMaxIdleConns(n)
	ix.rdb = rdb
	return ix, nil
}

// check trusts an existing file only if it is a readable SQLite database of this Version and tokenizer.
func (ix *Index) check() error {
	var v int
	if err := ix.wdb.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v != Version {
		return errs.E("index.check", errs.Invalid, "The search index is of version %d; this box writes %d, so it is rebuilt", v, Version)
	}
	var stored string
	if err := ix.wdb.QueryRow(`SELECT value FROM meta WHERE key='version'`).Scan(&stored); err != nil {
		return err
	}
	if stored != fmt.Sprint(Version) {
		return errs.E("index.check", errs.Invalid, "The search index says it is of version %s; this box writes %d, so it is rebuilt", stored, Version)
	}
	// The tokenizer decides the words the index holds: a file made with another is rebuilt too.
	var same int
	if err := ix.wdb.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('fts', 'names') AND instr(sql, ?) > 0`,
		`tokenize='`+tokenizerArgs+`'`).Scan(&same); err != nil {
		return err
	}
	if same != 2 {
		return errs.E("index.check", errs.Invalid, "The search index reads words with another tokenizer than this box, so it is rebuilt")
	}
	var n int
	return ix.wdb.QueryRow(`SELECT count(*) FROM fts WHERE rowid = 0`).Scan(&n)
}

func (ix *Index) init() error {
	tx, err := ix.wdb.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(schema); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT OR REPLACE INTO meta(key, value) VALUES('version', ?)`, fmt.Sprint(Version)); err != nil {
		return err
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, Version)); err != nil {
		return err
	}
	return tx.Commit()
}

// NeedsRebuild reports whether Open found no usable index and started an empty one, or one a reconcile
// left half filled: the caller should index every file (Reconcile does).
func (ix *Index) NeedsRebuild() bool { return ix.needsRebuild }

// Path is the database file.
func (ix *Index) Path() string { return ix.path }

// Count returns the number of documents.
func (ix *Index) Count(ctx context.Context) (int, error) {
	var n int
	if err := ix.rdb.QueryRowContext(ctx, `SELECT count(*) FROM docs`).Scan(&n); err != nil {
		return 0, errs.Wrap("index.count", errs.Other, err, "")
	}
	return n, nil
}

// Close closes the index.
func (ix *Index) Close() error {
	ix.stmts.Range(func(_, v any) bool { v.(*sql.Stmt).Close(); return true })
	var err error
	if ix.rdb != nil {
		err = ix.rdb.Close()
	}
	if ix.wdb != nil {
		err = errors.Join(err, ix.wdb.Close())
	}
	return err
}

// stmt returns a prepared statement on the reader pool, prepared once per distinct SQL text.
func (ix *Index) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if s, ok := ix.stmts.Load(q); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := ix.rdb.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if old, loaded := ix.stmts.LoadOrStore(q, s); loaded {
		s.Close()
		return old.(*sql.Stmt), nil
	}
	return s, nil
}

// lockBeside takes an exclusive OS lock on path+".lock" and returns its release.
func lockBeside(path string) (func(), error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, errs.Wrap("index.open", errs.Other, err, "The search index could not be locked")
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, errs.Wrap("index.open", errs.Other, err, "The search index could not be locked")
	}
	return func() { _ = f.Close() }, nil // closing the descriptor releases the lock
}
