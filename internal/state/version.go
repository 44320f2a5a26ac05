package state

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/boxmem/box/internal/errs"
)

// watch is one connection of the pool kept aside to ask SQLite whether state.db changed: PRAGMA
// data_version on a connection changes whenever any other connection, of this process or another, commits.
type watch struct {
	mu   sync.Mutex
	conn *sql.Conn
	stmt *sql.Stmt
}

// Version is a number that changes whenever anything commits to state.db, in this process or another (a
// key revoked by the owner's CLI while box serve runs). A cache of what state.db holds is good only while
// Version reads the same; an error means nothing may be taken from a cache.
func (s *Store) Version(ctx context.Context) (int64, error) {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	if s.watch.conn == nil {
		c, err := s.db.Conn(ctx)
		if err != nil {
			return 0, errs.Wrap("state.version", errs.Other, err, "")
		}
		st, err := c.PrepareContext(ctx, `PRAGMA data_version`)
		if err != nil {
			return 0, errs.Wrap("state.version", errs.Other, errors.Join(err, c.Close()), "")
		}
		s.watch.conn, s.watch.stmt = c, st
	}
	// The pragma reads a counter, and a statement run under a context that can end costs the driver two
	// goroutines to watch it: more than the pragma, on every request that checks a key. In WAL mode it
	// waits for no writer; only another process's recovery of the file could hold it (busy_timeout).
	var v int64
	if err := s.watch.stmt.QueryRowContext(context.WithoutCancel(ctx)).Scan(&v); err != nil {
		return 0, errs.Wrap("state.version", errs.Other, errors.Join(err, s.closeWatchLocked()), "")
	}
	return v, nil
}

// closeWatch gives the kept connection back before the pool closes.
func (s *Store) closeWatch() error {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	return s.closeWatchLocked()
}

func (s *Store) closeWatchLocked() error {
	if s.watch.conn == nil {
		return nil
	}
	err := errors.Join(s.watch.stmt.Close(), s.watch.conn.Close())
	s.watch.conn, s.watch.stmt = nil, nil
	return err
}
