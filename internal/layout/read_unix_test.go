//go:build unix

package layout

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A pipe planted in the tree is refused at once: no read waits for a writer that never comes.
func TestReadFileRefusesAPipeWithoutWaiting(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "_content"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(root, "_content/pipe.md"), 0o644); err != nil {
		t.Skip("no pipes here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(root, "/_content/pipe.md"); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("reading a pipe: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a pipe blocked")
	}
}
