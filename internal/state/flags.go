package state

import (
	"context"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// The box-wide flags.
const (
	FlagFrozen = "frozen" // the owner froze the box: no reading, doing or talking
	// FlagLocked: the box's data is locked until the owner opens it with their passkey. No verb of this
	// version sets it ("Lock my box" is not built yet, docs/GATE.md); every surface still reads it and
	// fails closed, so a box a later version locked stays closed here.
	FlagLocked = "locked"
)

// FlagTTL is how long a flag read is reused: every call checks frozen and locked, and a change made by
// another process (the owner's CLI) is seen within this long; one made through this Store at once.
const FlagTTL = 250 * time.Millisecond

type flagCache struct {
	at    time.Time
	flags map[string]bool
}

// Flag reports a flag; a flag never set is false. A read that fails is an error, never false: every
// caller fails closed on it.
func (s *Store) Flag(ctx context.Context, name string) (bool, error) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if c := s.flags; c.flags != nil && time.Since(c.at) < FlagTTL {
		return c.flags[name], nil
	}
	// Stamped before the query: a read that began before another process's change ends its reuse within
	// FlagTTL of that change, which is what SeenEverywhere waits for.
	at := time.Now()
	rows, err := s.db.QueryContext(ctx, `SELECT name, value FROM flags`)
	if err != nil {
		return false, errs.Wrap("state.flag", errs.Other, err, "The box could not read whether it is frozen or locked")
	}
	defer rows.Close()
	flags := map[string]bool{}
	for rows.Next() {
		var n string
		var v bool
		if err := rows.Scan(&n, &v); err != nil {
			return false, errs.Wrap("state.flag", errs.Other, err, "The box could not read whether it is frozen or locked")
		}
		flags[n] = v
	}
	if err := rows.Err(); err != nil {
		return false, errs.Wrap("state.flag", errs.Other, err, "The box could not read whether it is frozen or locked")
	}
	s.flags = flagCache{at: at, flags: flags}
	return flags[name], nil
}

// SeenEverywhere waits until a flag set at set (read after its commit) is seen by every process: a flag
// read is reused for FlagTTL from its start. A freeze's "nothing reads any more" is true once it returns.
func SeenEverywhere(ctx context.Context, set time.Time) error {
	t := time.NewTimer(time.Until(set.Add(FlagTTL)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SetFlag sets or clears a flag; this Store sees it at once, other processes within FlagTTL.
func (s *Store) SetFlag(ctx context.Context, name string, on bool) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO flags(name,value) VALUES(?,?) ON CONFLICT(name) DO UPDATE SET value=excluded.value`, name, on)
	s.fmu.Lock()
	s.flags = flagCache{}
	s.fmu.Unlock()
	if err != nil {
		return errs.Wrap("state.setflag", errs.Other, err, "")
	}
	return nil
}

// Frozen reports whether the owner froze the box.
func (s *Store) Frozen(ctx context.Context) (bool, error) { return s.Flag(ctx, FlagFrozen) }

// Locked reports whether the box's data is locked.
func (s *Store) Locked(ctx context.Context) (bool, error) { return s.Flag(ctx, FlagLocked) }

// SetFrozen freezes or unfreezes the box.
func (s *Store) SetFrozen(ctx context.Context, on bool) error { return s.SetFlag(ctx, FlagFrozen, on) }

// Quiet is nil when the box may read, do and talk, and an error of kind Locked or Frozen otherwise; a
// flag that cannot be read is an error too (closed, not open).
func (s *Store) Quiet(ctx context.Context) error {
	locked, err := s.Locked(ctx)
	if err != nil {
		return err
	}
	if locked {
		return errs.E("state.quiet", errs.Locked, "The box is locked; the owner opens it with their passkey.")
	}
	frozen, err := s.Frozen(ctx)
	if err != nil {
		return err
	}
	if frozen {
		return errs.E("state.quiet", errs.Frozen, "The box is frozen, so it is not reading, doing or talking; the owner unfreezes it (box unfreeze, or Settings → Safety).")
	}
	return nil
}
