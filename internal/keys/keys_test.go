package keys

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/state"
)

func mustOpen(tb testing.TB, root string, now func() time.Time) *Store {
	tb.Helper()
	st, err := state.Open(root, state.Options{Now: now})
	if err != nil {
		tb.Fatal(err)
	}
	s := NewStore(st)
	tb.Cleanup(func() {
		if err := errors.Join(s.Close(), st.Close()); err != nil {
			tb.Error(err)
		}
	})
	return s
}

func TestNewKeyIsShownOnceAndStoredHashed(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, nil)
	ctx := context.Background()
	c, key, err := s.New(ctx, "Claude Code", Caps{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, "mbx_") || len(key) < 4+50 {
		t.Fatalf("key %q", key)
	}
	if want := c.Created.AddDate(0, 6, 0); !c.Expires.Equal(want) {
		t.Errorf("expires %v, want %v", c.Expires, want)
	}
	b, _, _ := s.New(ctx, "Builder", Caps{Build: true})
	if got := b.Expires.Sub(b.Created); got != BuildLifetime {
		t.Errorf("build lifetime %v", got)
	}
	s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	for _, f := range []string{"state.db", "state.db-wal"} {
		data, _ := os.ReadFile(filepath.Join(root, ".box", f))
		if strings.Contains(string(data), key) || strings.Contains(string(data), strings.TrimPrefix(key, "mbx_")) {
			t.Fatalf("%s holds the key in plain text", f)
		}
	}
	got, err := s.Verify(ctx, key)
	if err != nil || got.ID != c.ID || !got.Caps.Memory || got.Caps.Build {
		t.Fatalf("Verify: %+v %v", got, err)
	}
}

func TestVerifyRefusals(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	past := mustOpen(t, root, func() time.Time { return time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC) })
	_, expired, _ := past.New(ctx, "old", Caps{})
	s := mustOpen(t, root, nil)
	rc, revoked, _ := s.New(ctx, "gone", Caps{})
	if _, err := s.Revoke(ctx, rc.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Revoke(ctx, rc.ID); !errs.Is(err, errs.Conflict) {
		t.Errorf("second revoke: %v", err)
	}
	if _, err := s.Revoke(ctx, "k_nothere"); !errs.Is(err, errs.NotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
	for _, tc := range []struct{ key, want string }{
		{"mbx_" + strings.Repeat("a", 52), "not known to this box"},
		{"sk-123", "not a box key"},
		{revoked, "was revoked on"},
		{expired, "This key expired on 2 July 2020; make a new one with `box keys new`"},
	} {
		_, err := s.Verify(ctx, tc.key)
		if !errs.Is(err, errs.Unauthorized) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Verify(%.10s…) = %v, want %q", tc.key, err, tc.want)
		}
	}
}

func TestLastUseIsCoalesced(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, nil)
	ctx := context.Background()
	c, _, _ := s.New(ctx, "x", Caps{})
	for range 1000 {
		s.Touch(c.ID, "127.0.0.1", "")
	}
	s.Touch(c.ID, "", "claude-code")
	var used int64
	s.db.QueryRow(`SELECT last_used FROM connections WHERE id=?`, c.ID).Scan(&used)
	if used != 0 {
		t.Fatal("a touch was written at once; they should be coalesced")
	}
	list, _ := s.List(ctx) // List flushes first
	if list[0].LastUsed.IsZero() || list[0].LastHost != "127.0.0.1" || list[0].LastClient != "claude-code" {
		t.Fatalf("%+v", list[0])
	}
}

// TestRevokeElsewhereEndsACachedKeyAtOnce: Verify keeps what it read of a key, but a revoke by another
// opener of state.db (the owner's `box keys revoke` while box serve runs), a revoke here, and erase's
// DeleteAll are each seen by the very next call.
func TestRevokeElsewhereEndsACachedKeyAtOnce(t *testing.T) {
	root := t.TempDir()
	serve, cli := mustOpen(t, root, nil), mustOpen(t, root, nil)
	ctx := context.Background()
	c, key, err := cli.New(ctx, "Claude", Caps{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // read once, then from the cache
		if _, err := serve.Verify(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	kept := func(k string) bool {
		_, err := serve.cache.Get(ctx, k, func() (Connection, error) { return Connection{}, errors.New("not kept") })
		return err == nil
	}
	if !kept(Hash(key)) || kept(key) {
		t.Fatalf("the key's hash was not kept (%v), or the key itself was (%v)", kept(Hash(key)), kept(key))
	}
	if _, err := cli.Revoke(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := serve.Verify(ctx, key); !errs.Is(err, errs.Unauthorized) || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("a key revoked by another process still works: %v", err)
	}

	c2, key2, _ := serve.New(ctx, "Codex", Caps{})
	serve.Verify(ctx, key2)
	if _, err := serve.Revoke(ctx, c2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := serve.Verify(ctx, key2); !errs.Is(err, errs.Unauthorized) {
		t.Fatalf("a key revoked here still works: %v", err)
	}

	_, key3, _ := cli.New(ctx, "Gemini", Caps{})
	serve.Verify(ctx, key3)
	if err := cli.DeleteAll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := serve.Verify(ctx, key3); !errs.Is(err, errs.Unauthorized) {
		t.Fatalf("a key erased by another process still works: %v", err)
	}
}

// BenchmarkVerify is one call's key check with the key already seen.
func BenchmarkVerify(b *testing.B) {
	s := mustOpen(b, b.TempDir(), nil)
	_, key, _ := s.New(context.Background(), "bench", Caps{})
	for b.Loop() {
		if _, err := s.Verify(context.Background(), key); err != nil {
			b.Fatal(err)
		}
	}
}

// No account can be plugged in, so a key that could read messages would promise nothing: it is refused,
// and nothing is stored.
func TestNoKeyReadsMessagesWhileNoAccountIsPluggedIn(t *testing.T) {
	s := mustOpen(t, t.TempDir(), nil)
	ctx := context.Background()
	_, key, err := s.New(ctx, "Claude", Caps{Memory: true, Messages: true})
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "No message or mail account") || key != "" {
		t.Fatalf("New with messages: key %q, err %v", key, err)
	}
	if list, err := s.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("stored after a refusal: %+v %v", list, err)
	}
}
