package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNameWalkStopsAtItsCap: once the code walk has indexed maxCodeFiles files it opens no folder more
// (inotify sees every folder the walk opens).
func TestNameWalkStopsAtItsCap(t *testing.T) {
	f := newFixture(t)
	old := maxCodeFiles
	maxCodeFiles = 1 // internal/real.go, the first source file in the walk's order; tools/ and web/ come after
	t.Cleanup(func() { maxCodeFiles = old })
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Close(fd) }()
	if _, err := unix.InotifyAddWatch(fd, filepath.Join(f.project, "web"), unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	p, _ := json.Marshal(map[string]any{"session_id": "cap", "cwd": f.project, "hook_event_name": PreToolUse, "tool_name": "Grep",
		"tool_input": map[string]any{"pattern": "func ParseThing"}})
	if denied(Run(context.Background(), PreToolUse, p, f.env)) == "" {
		t.Fatal("the walk indexed nothing: the cap's first file was not answered")
	}
	buf := make([]byte, 4096)
	n, err := unix.Read(fd, buf)
	if !errors.Is(err, unix.EAGAIN) {
		t.Errorf("the walk opened web/ after its cap (%d bytes of events, %v)", n, err)
	}
}
