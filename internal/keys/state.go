package keys

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/boxmem/box/internal/errs"
)

// The box-wide flags kept in state.db.
const (
	FlagFrozen = "frozen" // the owner froze the box: no reading, doing or talking
	FlagLocked = "locked" // the box's data is locked until the owner opens it with their passkey
)

// Flag reports a flag; a flag never set is false.
func (s *Store) Flag(ctx context.Context, name string) (bool, error) {
	var v bool
	err := s.db.QueryRowContext(ctx, `SELECT value FROM flags WHERE name=?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, errs.Wrap("keys.flag", errs.Other, err, "")
	}
	return v, nil
}

// SetFlag sets or clears a flag; every process sees it on its next call.
func (s *Store) SetFlag(ctx context.Context, name string, on bool) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO flags(name,value) VALUES(?,?) ON CONFLICT(name) DO UPDATE SET value=excluded.value`, name, on)
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
	b, err := os.ReadFile(filepath.Join(s.root, "_config", "switches.card"))
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
