package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Switches linked in from outside the box (a file anyone could write, say in /tmp) are not the
// owner's: the gate refuses to read them and so runs nothing on their say.
func TestSwitchesLinkedFromOutsideAreRefused(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "switches.card")
	os.WriteFile(out, []byte("---\nchange: Just do it\nsend: Just do it\nshare: Just do it\naccess: Just do it\ndelete: Just do it\n---\n"), 0o644)
	p := filepath.Join(f.b.Root, "_config/switches.card")
	os.Remove(p)
	if err := os.Symlink(out, p); err != nil {
		t.Fatal(err)
	}
	if s, err := f.g.Switches(context.Background()); err == nil {
		t.Errorf("switches read through a link out of the box: %v", s)
	}
}
