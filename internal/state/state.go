// Package state owns <box>/.box/state.db, the box's runtime state outside the tree: its one connection
// setup, its versioned schema migrations and the box-wide flags (frozen, locked). The typed stores of
// connections (keys), OAuth grants (grants) and the owner's passkeys and sessions (web) are built on the
// one Store the composition root opens; none of them opens the file itself. It knows no rule of theirs.
package state

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/sqlitefile"
)

// File is the state file, under the box root.
const File = ".box/state.db"

// Options tune Open.
type Options struct {
	// Now is the clock the typed stores stamp their rows with; nil is the wall clock.
	Now func() time.Time
}

// Store is the open state.db of one box: one pool of connections. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time

	fmu   sync.Mutex
	flags flagCache
	watch watch
}

// Open opens (or creates, mode 0600) the state file of the box at root and brings its schema to the
// version this binary knows. A file made by a newer box is refused with a sentence, never touched.
func Open(root string, opts Options) (*Store, error) {
	const op = "state.open"
	if opts.Now == nil {
		opts.Now = time.Now
	}
	path := filepath.Join(root, filepath.FromSlash(File))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "The box's .box folder could not be made")
	}
	if err := private(path); err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "The box's state file "+path+" could not be made private (mode 0600)")
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "")
	}
	db.SetMaxOpenConns(16) // every call reads a key; WAL readers do not block each other
	db.SetMaxIdleConns(16)
	s := &Store{db: db, path: path, now: opts.Now}
	err = s.migrate(context.Background())
	// Openers of a new file race to make it a WAL database, and SQLite refuses a loser at once ("database
	// is locked") rather than waiting: such an opener tries again, briefly.
	for try := 0; err != nil && isLocked(err) && try < 100; try++ {
		time.Sleep(10 * time.Millisecond)
		err = s.migrate(context.Background())
	}
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return s, nil
}

// isLocked reports whether err is SQLite's SQLITE_BUSY (the file is locked by another connection).
func isLocked(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

// dsn is the one connection setup: WAL, a busy timeout, and IMMEDIATE write transactions so that two
// writers queue on the lock instead of failing halfway.
func dsn(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// private makes the file (and its WAL companions, when present) readable by the owner only: it holds
// credential hashes.
func private(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// DB is the connection pool, for the typed stores built on it.
func (s *Store) DB() *sql.DB { return s.db }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// Path is the state file on the host.
func (s *Store) Path() string { return s.path }

// Close closes the pool.
func (s *Store) Close() error { return errors.Join(s.closeWatch(), s.db.Close()) }

// Compact makes deleted rows unrecoverable from the file: the write-ahead log is folded in and emptied,
// and the file is rewritten without its free pages (erase needs both). A log another process's reader
// holds past sqlitefile.Wait is an error, never a silent success.
func (s *Store) Compact(ctx context.Context) error {
	return sqlitefile.Compact(ctx, s.db, s.path, "state file")
}

// EndSessions ends every session of the owner's web UI and spends every setup link (sign out everywhere,
// erase): whoever holds one signs in again with their passkey.
func (s *Store) EndSessions(ctx context.Context) error {
	return s.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions`); err != nil {
			return errs.Wrap("state.endsessions", errs.Other, err, "The web UI's sessions could not be ended")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_setup`); err != nil {
			return errs.Wrap("state.endsessions", errs.Other, err, "The web UI's setup links could not be ended")
		}
		return nil
	})
}

// Tx runs fn in one IMMEDIATE transaction: all of it is written, or none.
func (s *Store) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errs.Wrap("state.tx", errs.Other, err, "")
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, rollback(tx))
	}
	if err := tx.Commit(); err != nil {
		return errs.Wrap("state.tx", errs.Other, err, "")
	}
	return nil
}

func rollback(tx *sql.Tx) error {
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return errs.Wrap("state.tx", errs.Other, err, "")
	}
	return nil
}
