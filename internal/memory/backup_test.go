package memory

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/boxmem/box/internal/git"
)

// A box pushed to a bare repository, deleted and cloned back opens as a memory that finds every line it
// acknowledged (docs/BACKUP.md).
func TestBackupAndRestoreKeepsEveryLine(t *testing.T) {
	ctx := context.Background()
	m := mustOpen(t, nil)
	words := []string{"avocado", "bassoon", "cormorant", "dulcimer", "egret", "fennel", "gazebo", "hyacinth",
		"iguana", "jasmine", "kestrel", "lantern"}
	for _, w := range words {
		remember(t, m, own, fmt.Sprintf("Leo keeps a %s in the garden shed.", w))
	}
	dst := filepath.Join(t.TempDir(), "backup.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", dst).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	r := m.Box().Git()
	if err := r.AddRemote(ctx, "usb", dst); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Push(ctx, "usb", false, git.Auth{}); err != nil {
		t.Fatal(err)
	}
	root := m.root
	m.Close()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if _, err := git.Clone(ctx, dst, root, git.CloneOptions{Remote: "usb"}); err != nil {
		t.Fatal(err)
	}
	back := openAt(t, root, Options{}, m.now)
	for _, w := range words {
		if hs := hits(t, back, SearchInput{Words: w}); len(hs) != 1 {
			t.Errorf("the restored box does not find the line about the %s: %+v", w, hs)
		}
	}
	if rs, err := back.Box().Git().Remotes(ctx); err != nil || len(rs) != 1 || rs[0].Behind != 0 {
		t.Errorf("the restored box's backup: %+v %v", rs, err)
	}
}
