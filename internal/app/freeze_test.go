package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/apptest"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/state"
)

// Freezing and unfreezing write a diary line (docs/GATE.md). When that line cannot be committed (here
// another git holds the index lock) the box is left frozen, the safe side, and the error says so: an
// unfreeze is taken back, a freeze holds.
func TestFreezeWithoutItsDiaryLineLeavesTheBoxFrozen(t *testing.T) {
	ctx := context.Background()
	a := apptest.Open(t, app.Options{})
	if _, err := a.Freeze(ctx, apptest.Local, true); err != nil {
		t.Fatal(err)
	}
	// Without the owner's proof (a signed-in web session alone) an unfreeze is refused before anything.
	if _, err := a.Freeze(ctx, gate.By{Via: "web"}, false); !errs.Is(err, errs.Forbidden) {
		t.Fatalf("an unfreeze without a passkey: %v", err)
	}
	if frozen, err := a.State.Frozen(ctx); err != nil || !frozen {
		t.Fatalf("an unfreeze without a passkey thawed the box: %v %v", frozen, err)
	}
	lock := filepath.Join(a.Root, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := a.Freeze(ctx, apptest.Local, false)
	if err == nil || !strings.Contains(errs.Sentence(err), "stays frozen") {
		t.Fatalf("an unfreeze without its diary line: %v", err)
	}
	if frozen, err := a.State.Frozen(ctx); err != nil || !frozen {
		t.Fatalf("the box was unfrozen without its diary line: %v %v", frozen, err)
	}
	if err := os.Remove(lock); err != nil && !os.IsNotExist(err) { // the box's recovery may have taken it
		t.Fatal(err)
	}
	if _, err := a.Freeze(ctx, apptest.Local, false); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Freeze(ctx, apptest.Local, true); err == nil || !strings.Contains(errs.Sentence(err), "is frozen, but") {
		t.Fatalf("a freeze without its diary line: %v", err)
	}
	if frozen, _ := a.State.Frozen(ctx); !frozen {
		t.Fatal("a freeze did not hold")
	}
}

// Once a freeze returns, every other process of the box sees it: a running box serve has read the flag
// just before (its cache is warm), and still reads the box frozen right after.
func TestFreezeHoldsEverywhereOnceSaid(t *testing.T) {
	ctx := context.Background()
	a := apptest.Open(t, app.Options{})
	other, err := state.Open(a.Root, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if err := other.Quiet(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Freeze(ctx, apptest.Local, true); err != nil {
		t.Fatal(err)
	}
	if err := other.Quiet(ctx); !errs.Is(err, errs.Frozen) {
		t.Fatalf("another process right after the freeze: %v", err)
	}
}

// A freeze that waits on SQLite's lock (another process is writing the state) holds everywhere once
// said, though another process read the flags while it waited: the wait counts from the commit.
func TestFreezeWaitingOnTheLockHoldsEverywhere(t *testing.T) {
	ctx := context.Background()
	a := apptest.Open(t, app.Options{})
	open := func() *state.Store {
		s, err := state.Open(a.Root, state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	writer, other := open(), open()
	tx, err := writer.DB().BeginTx(ctx, nil) // IMMEDIATE: holds the write lock until it ends
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.Freeze(ctx, apptest.Local, true)
		done <- err
	}()
	// Longer than a flag read is reused, so a wait counted from before the lock would be over already.
	time.Sleep(2 * state.FlagTTL)
	if err := other.Quiet(ctx); err != nil { // read while the freeze waits: thawed, and cached
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := other.Quiet(ctx); !errs.Is(err, errs.Frozen) {
		t.Fatalf("another process right after the freeze: %v", err)
	}
}
