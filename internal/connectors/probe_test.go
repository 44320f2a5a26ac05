package connectors_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/passkeytest"
)

// A failed probe is believed for a minute, not for the process's life: once the sandbox can start, the
// box can build again without a restart. A success stays.
func TestCanBuildRetriesAFailedProbe(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "box")
	clock := passkeytest.NewClock()
	s := connectors.New(connectors.Options{Exe: exe, Now: clock.Now})
	ctx := context.Background()
	if s.CanBuild(ctx) {
		t.Fatal("a probe of a missing binary passed")
	}
	if err := os.Symlink(self, exe); err != nil {
		t.Fatal(err)
	}
	if s.CanBuild(ctx) {
		t.Error("a failed probe was tried again within the minute")
	}
	clock.Advance(time.Minute)
	if !s.CanBuild(ctx) {
		t.Fatal("a failed probe was not tried again after a minute")
	}
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	if !s.CanBuild(ctx) {
		t.Error("a passed probe was not remembered")
	}
}
