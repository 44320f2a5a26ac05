// Package sqlitefile holds what the box's two SQLite files (.box/state.db and .box/index.db) share beyond
// their own schemas: emptying a file and its write-ahead log for good, which erase needs
// (docs/GATE.md, "Erase").
package sqlitefile

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// Wait is how long Compact waits, in all, for readers in other processes (a box mcp, a hook, a CLI
// verb) to let go of the log before it reports that it could not empty it.
const Wait = 5 * time.Second

// retryEvery is the pause between two checkpoints while a reader holds the log.
const retryEvery = 50 * time.Millisecond

// Compact makes deleted rows unrecoverable from the file at path, opened as db in WAL mode: the log is
// folded into the file and emptied, the file is rewritten without its free pages (VACUUM), and the log is
// folded in and emptied again. A checkpoint that another process's reader holds up is not an error to
// SQLite (it answers "busy"); here it is tried again until Wait has passed and then reported, naming what
// (the state file, the search index), never taken for a success. The log is checked empty at the end.
func Compact(ctx context.Context, db *sql.DB, path, what string) error {
	const op = "sqlitefile.compact"
	conn, err := db.Conn(ctx)
	if err != nil {
		return errs.Wrap(op, errs.Other, err, "The "+what+" could not be opened to empty it")
	}
	defer conn.Close()
	// Wait in short steps here, not in SQLite's busy handler, so a reader that stays is reported in time.
	var prev int
	if err := conn.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&prev); err != nil {
		return errs.Wrap(op, errs.Other, err, "The "+what+" could not be read")
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout=100`); err != nil {
		return errs.Wrap(op, errs.Other, err, "The "+what+" could not be read")
	}
	deadline := time.Now().Add(Wait)
	err = checkpoint(ctx, conn, what, deadline)
	if err == nil {
		if _, verr := conn.ExecContext(ctx, `VACUUM`); verr != nil {
			err = errs.Wrap(op, errs.Other, verr, "The "+what+" could not be rewritten without its deleted rows")
		}
	}
	if err == nil {
		err = checkpoint(ctx, conn, what, deadline)
	}
	if _, rerr := conn.ExecContext(ctx, `PRAGMA busy_timeout=`+strconv.Itoa(prev)); rerr != nil && err == nil {
		err = errs.Wrap(op, errs.Other, rerr, "The "+what+" could not be read")
	}
	if err != nil {
		return err
	}
	fi, err := os.Stat(path + "-wal")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return errs.Wrap(op, errs.Other, err, "The "+what+"'s log could not be checked")
	case fi.Size() != 0:
		return errs.E(op, errs.Busy, "The %s's log still holds %d bytes after it was emptied; close every other box process (box mcp, box serve) and erase again", what, fi.Size())
	}
	return nil
}

// checkpoint folds the log into the file and truncates it, trying again while a reader holds it.
func checkpoint(ctx context.Context, conn *sql.Conn, what string, deadline time.Time) error {
	const op = "sqlitefile.checkpoint"
	for {
		var busy, logFrames, done int
		if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
			return errs.Wrap(op, errs.Other, err, "The "+what+"'s log could not be folded in")
		}
		if busy == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errs.E(op, errs.Busy, "Another process is still reading the %s, so its log (which may hold deleted rows) could not be emptied; close every other box process (box mcp, box serve) and erase again", what)
		}
		t := time.NewTimer(retryEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return errs.Wrap(op, errs.Other, ctx.Err(), "The "+what+"'s log was not emptied")
		case <-t.C:
		}
	}
}
