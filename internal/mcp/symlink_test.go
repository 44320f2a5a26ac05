package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcptest"
	"github.com/boxmem/box/internal/todo"
)

// A read-only key reaches nothing a link in the box points to outside it: not a note, not a search
// hit, not a to-do list.
func TestReadOnlyKeyCannotReadThroughLinksOut(t *testing.T) {
	tb := newTestBox(t, nil)
	out := t.TempDir()
	secret := filepath.Join(out, "passwd")
	os.WriteFile(secret, []byte("root:x:0:0:quokkaroot:/root:/bin/bash\n- [ ] quokkaroot todo\n"), 0o644)
	for _, l := range []string{"_content/memory/notes/entity-p.md", "_content/todos/stolen.todo.card"} {
		h := filepath.Join(tb.box.Root, l)
		os.MkdirAll(filepath.Dir(h), 0o755)
		if err := os.Symlink(secret, h); err != nil {
			t.Fatal(err)
		}
	}
	svc := tb.service()
	svc.Todos = todo.New(tb.box)
	cs := connect(t, svc, Conn{Who: "reader", Host: "10.0.0.3", Caps: keys.Caps{}}, "node")
	txt, isErr := mcptest.Call(t, cs, "memory_read_note", map[string]any{"name": "entity-p"})
	if !isErr || strings.Contains(txt, "quokkaroot") || !strings.Contains(txt, "outside the box") {
		t.Errorf("memory_read_note of a link out: isError %v, %s", isErr, txt)
	}
	for tool, args := range map[string]map[string]any{
		"memory_search":   {"words": "quokkaroot"},
		"todos_list":      {},
		"memory_overview": {},
	} {
		if txt, _ := mcptest.Call(t, cs, tool, args); strings.Contains(txt, "quokkaroot") {
			t.Errorf("%s showed a file outside the box: %s", tool, txt)
		}
	}
}
