package state

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// leapNight is every test's clock: the last second of a leap day, local time.
func leapNight() time.Time { return time.Date(2028, 2, 29, 23, 59, 59, 0, time.Local) }

var opts = Options{Now: leapNight}

func mustOpen(tb testing.TB, root string) *Store {
	tb.Helper()
	s, err := Open(root, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

func TestOpenMakesAPrivateFileAtTheLatestVersion(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root)
	fi, err := os.Stat(filepath.Join(root, File))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state.db mode %v, want 0600", fi.Mode().Perm())
	}
	v, err := s.version(context.Background())
	if err != nil || v != Version() {
		t.Fatalf("version %d %v, want %d", v, err, Version())
	}
	var applied int64
	if err := s.db.QueryRow(`SELECT applied FROM migrations WHERE version=1`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if got := time.Unix(applied, 0); got.Month() != time.February || got.Day() != 29 {
		t.Errorf("migration stamped %v, not with the injected clock", got)
	}
}

// A file the stores made before this package owned it (no migrations table) is adopted with its rows.
func TestOldFileIsMigratedWithItsRows(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, File)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE connections(id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, memory INTEGER NOT NULL,
			messages INTEGER NOT NULL, build INTEGER NOT NULL, created INTEGER NOT NULL, expires INTEGER NOT NULL,
			revoked INTEGER NOT NULL DEFAULT 0, last_used INTEGER NOT NULL DEFAULT 0, last_host TEXT NOT NULL DEFAULT '',
			last_client TEXT NOT NULL DEFAULT '')`,
		`INSERT INTO connections(id,name,hash,memory,messages,build,created,expires) VALUES('k_1','Claude','h',1,0,0,1,2)`,
		`CREATE TABLE flags(name TEXT PRIMARY KEY, value INTEGER NOT NULL)`,
		`INSERT INTO flags VALUES('frozen', 1)`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, root)
	var name string
	if err := s.db.QueryRow(`SELECT name FROM connections WHERE id='k_1'`).Scan(&name); err != nil || name != "Claude" {
		t.Fatalf("the old row: %q %v", name, err)
	}
	if frozen, err := s.Frozen(context.Background()); err != nil || !frozen {
		t.Errorf("the old flag: %v %v", frozen, err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM migrations`).Scan(&n); err != nil || n != len(migrations) {
		t.Errorf("%d migrations recorded (%v), want %d", n, err, len(migrations))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("an old file is made private too: %v %v", fi, err)
	}
}

// A migration that fails leaves the file at the version before it, and the next open tries again.
func TestFailedMigrationLeavesTheFileAsItWas(t *testing.T) {
	root := t.TempDir()
	if err := mustOpen(t, root).Close(); err != nil {
		t.Fatal(err)
	}
	saved := migrations
	t.Cleanup(func() { migrations = saved })
	migrations = append(append([]migration(nil), saved...), migration{Version() + 1, "a broken step", `CREATE TABLE broken(x); SELECT nope FROM nowhere;`})
	if _, err := Open(root, opts); err == nil {
		t.Fatal("a broken migration was reported as done")
	}
	migrations = append(append([]migration(nil), saved...), migration{len(saved) + 1, "a working step", `CREATE TABLE later(x)`})
	s := mustOpen(t, root)
	if v, err := s.version(context.Background()); err != nil || v != len(saved)+1 {
		t.Errorf("version %d after the retry (%v)", v, err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name='broken'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the failed step left its table behind (%d, %v)", n, err)
	}
}

func TestNewerFileIsRefusedUntouched(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root)
	if _, err := s.db.Exec(`INSERT INTO migrations(version, what, applied) VALUES(?, 'from the future', 0)`, Version()+5); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(root, File))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(root, opts)
	if !errs.Is(err, errs.NotABox) || !bytes.Contains([]byte(err.Error()), []byte("newer box")) {
		t.Fatalf("a newer file: %v", err)
	}
	after, err := os.ReadFile(filepath.Join(root, File))
	if err != nil || !bytes.Equal(before, after) {
		t.Error("the newer file was changed")
	}
}

func TestFlagsAndQuiet(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, t.TempDir())
	if err := s.Quiet(ctx); err != nil {
		t.Fatalf("a new box is quiet: %v", err)
	}
	if err := s.SetFrozen(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Quiet(ctx); !errs.Is(err, errs.Frozen) {
		t.Errorf("frozen: %v", err)
	}
	if err := s.SetFlag(ctx, FlagLocked, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Quiet(ctx); !errs.Is(err, errs.Locked) {
		t.Errorf("locked wins over frozen: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.flags = flagCache{} // past the cache: the next read goes to the closed file
	if err := s.Quiet(ctx); err == nil || errs.Is(err, errs.Locked) || errs.Is(err, errs.Frozen) {
		t.Errorf("a flag that cannot be read: %v, want a read error (the callers fail closed on it)", err)
	}
}

func TestCompactLeavesNoDeletedText(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := mustOpen(t, root)
	const planted = "violet-ostrich-planted-phrase"
	if _, err := s.db.Exec(`INSERT INTO connections(id,name,hash,memory,messages,build,created,expires) VALUES('k_2',?,'h2',0,0,0,1,2)`, planted); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`DELETE FROM connections`); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{File, File + "-wal"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(planted)) {
			t.Errorf("%s still holds the deleted text", f)
		}
	}
}

func TestFlagsAreSharedBetweenProcesses(t *testing.T) {
	root := t.TempDir()
	a, b := mustOpen(t, root), mustOpen(t, root)
	ctx := context.Background()
	if err := a.SetFrozen(ctx, true); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{true, false} {
		if err := a.SetFlag(ctx, FlagLocked, on); err != nil {
			t.Fatal(err)
		}
	}
	if f, err := b.Frozen(ctx); err != nil || !f {
		t.Errorf("frozen not seen by the other store (%v)", err)
	}
	if l, err := b.Locked(ctx); err != nil || l {
		t.Errorf("locked still set (%v)", err)
	}
	if err := a.SetFrozen(ctx, false); err != nil { // b read the flags a moment ago: it sees the change within FlagTTL
		t.Fatal(err)
	}
	time.Sleep(FlagTTL + 50*time.Millisecond)
	if f, err := b.Frozen(ctx); err != nil || f {
		t.Errorf("an unfreeze by another store is not seen after FlagTTL (%v)", err)
	}
}

// Many processes open a new box's state at once (many `box remember`): each migration runs once, and no
// opener fails for another's.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	root := t.TempDir()
	errc := make(chan error, 12)
	for range 12 {
		go func() {
			s, err := Open(root, opts)
			if err == nil {
				err = s.Close()
			}
			errc <- err
		}()
	}
	for range 12 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	s := mustOpen(t, root)
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM migrations`).Scan(&n); err != nil || n != len(migrations) {
		t.Fatalf("%d migrations recorded (%v), want %d", n, err, len(migrations))
	}
}
