package keys

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
)

// The box-wide flags kept in state.db.
const (
	FlagFrozen = "frozen" // the owner froze the box: no reading, doing or talking
	FlagLocked = "locked" // the box's data is locked until the owner opens it with their passkey
)

// flagTTL is how long a flag read is reused: every call checks frozen and locked, and a change made by
// another process (the owner's CLI) is seen within this long; one made through this Store at once.
const flagTTL = 250 * time.Millisecond

type flagCache struct {
	at    time.Time
	flags map[string]bool
}

// Flag reports a flag; a flag never set is false.
func (s *Store) Flag(ctx context.Context, name string) (bool, error) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if c := s.flags; c.flags != nil && time.Since(c.at) < flagTTL {
		return c.flags[name], nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT name, value FROM flags`)
	if err != nil {
		return false, errs.Wrap("keys.flag", errs.Other, err, "")
	}
	defer rows.Close()
	flags := map[string]bool{}
	for rows.Next() {
		var n string
		var v bool
		if err := rows.Scan(&n, &v); err != nil {
			return false, errs.Wrap("keys.flag", errs.Other, err, "")
		}
		flags[n] = v
	}
	if err := rows.Err(); err != nil {
		return false, errs.Wrap("keys.flag", errs.Other, err, "")
	}
	s.flags = flagCache{at: time.Now(), flags: flags}
	return flags[name], nil
}

// SetFlag sets or clears a flag; this Store sees it at once, other processes within flagTTL.
func (s *Store) SetFlag(ctx context.Context, name string, on bool) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO flags(name,value) VALUES(?,?) ON CONFLICT(name) DO UPDATE SET value=excluded.value`, name, on)
	s.fmu.Lock()
	s.flags = flagCache{}
	s.fmu.Unlock()
	if err != nil {
		return errs.Wrap("keys.setflag", errs.Other, err, "")
	}
	return nil
}

// Frozen reports whether the owner froze the box.
func (s *Store) Frozen(ctx context.Context) (bool, error) { return s.Flag(ctx, FlagFrozen) }

// Locked reports whether the box's data is locked.
func (s *Store) Locked(ctx context.Context) (bool, error) { return s.Flag(ctx, FlagLocked) }

// SetFrozen freezes or unfreezes the box.
func (s *Store) SetFrozen(ctx context.Context, on bool) error { return s.SetFlag(ctx, FlagFrozen, on) }

// SetLocked locks or unlocks the box's data.
func (s *Store) SetLocked(ctx context.Context, on bool) error { return s.SetFlag(ctx, FlagLocked, on) }

// accessNever reads the access switch from _config/switches.card; a missing file or key is the default, Ask me.
func (s *Store) accessNever() (bool, error) {
	b, err := layout.ReadFile(s.root, layout.Switches)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, errs.Wrap("keys.new", errs.Other, err, "")
	}
	var sw map[string]any
	if err := yaml.Unmarshal(frontmatter(b), &sw); err != nil {
		return false, errs.Wrap("keys.new", errs.Invalid, err, "_config/switches.card could not be read, so no key was made; `box validate` shows why")
	}
	v, _ := sw["access"].(string)
	return strings.EqualFold(strings.TrimSpace(v), "never"), nil
}

// frontmatter returns the YAML between the --- fences of a card, or the whole file when it has none.
func frontmatter(b []byte) []byte {
	rest, ok := bytes.CutPrefix(b, []byte("---\n"))
	if !ok {
		return b
	}
	if i := bytes.Index(rest, []byte("\n---")); i >= 0 {
		return rest[:i+1]
	}
	return rest
}
