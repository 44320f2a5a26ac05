package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// box read, search and status never show a file that a link in the box points to outside it.
func TestReadAndSearchStayInTheBox(t *testing.T) {
	root := initBox(t)
	out := t.TempDir()
	secret := filepath.Join(out, "passwd")
	os.WriteFile(secret, []byte("root:x:0:0:quokkaroot:/root:/bin/bash\n"), 0o644)
	if err := os.Symlink(secret, filepath.Join(root, "_content/memory/notes/entity-p.md")); err != nil {
		t.Fatal(err)
	}
	got := runCLI(t, run{args: []string{"--box", root, "read", "entity-p"}, cwd: root})
	if got.code != ExitRefused || strings.Contains(got.stdout+got.stderr, "quokkaroot") || !strings.Contains(got.stderr, "outside the box") {
		t.Errorf("box read of a link out: exit %d\nstdout: %s\nstderr: %s", got.code, got.stdout, got.stderr)
	}
	if h := mem(t, root, ExitOK, "search", "quokkaroot")["hits"].([]any); len(h) != 0 {
		t.Errorf("box search found a file outside the box: %v", h)
	}
}
