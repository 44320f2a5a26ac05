package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The owner's web UI never shows a file that a link in the box points to outside it: not on the note
// page, the edit page, the memory tab's inbox or its search.
func TestPagesStayInTheBox(t *testing.T) {
	f := newFx(t)
	f.signedIn()
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "passwd"), []byte("root:x:0:0:quokkaroot:/root:/bin/bash\n"), 0o644)
	os.WriteFile(filepath.Join(out, "day.md"), []byte("---\ntype: inbox-day\ndate: 2026-11-28\n---\n# Inbox 2026-11-28\n- 09:00:00 · owner · cli · own · The quokkaroot code is 4411. ^k3f9a2qd\n"), 0o644)
	for l, target := range map[string]string{
		"_content/memory/notes/entity-p.md": "passwd",
		"_content/inbox/2026-11-28.md":      "day.md",
	} {
		if err := os.Symlink(filepath.Join(out, target), filepath.Join(f.b.Root, l)); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{"/memory/note?name=entity-p", "/memory/edit?name=entity-p", "/memory", "/memory?q=bash", "/memory?q=4411"} {
		if _, body := f.get(f.c, path); strings.Contains(body, "quokkaroot") {
			t.Errorf("%s shows a file outside the box", path)
		}
	}
	if st, body := f.get(f.c, "/memory/note?name=entity-p"); st == 200 || !strings.Contains(body, "outside the box") {
		t.Errorf("the note page of a link out: %d\n%.400s", st, body)
	}
}
