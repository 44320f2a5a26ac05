package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// TestGlobAnswersOnlyForTheBox: a Glob by name is answered from the box's file names when it searches
// the box (a session in the box, or a path in it); a code project's Glob finds the project's own files.
func TestGlobAnswersOnlyForTheBox(t *testing.T) {
	f := newFixture(t)
	mustWrite(t, filepath.Join(f.project, "docs", "MEMORY.md"), "# The project's own memory notes\n")
	for i, c := range []struct {
		cwd, pattern, path string
		answered           bool
	}{
		{f.project, "**/MEMORY.md", "", false},
		{f.project, "**/entity-leo-silva.md", "", false},
		{f.project, "**/MEMORY.md", f.project, false},
		{f.project, "docs/MEMORY.md", "docs", false},
		{f.project, "**/entity-leo-silva.md", f.box, true},
		{f.project, "**/MEMORY.md", filepath.Join(f.box, "_content"), true},
		{f.box, "**/MEMORY.md", "", true},
		{f.box, "**/entity-leo-silva.md", "_content/memory", true},
	} {
		p, _ := json.Marshal(map[string]any{"session_id": fmt.Sprintf("glob-%d", i), "cwd": c.cwd, "hook_event_name": PreToolUse, "tool_name": "Glob",
			"tool_input": map[string]any{"pattern": c.pattern, "path": c.path}})
		why := denied(Run(context.Background(), PreToolUse, p, f.env))
		if (why != "") != c.answered {
			t.Errorf("%d: Glob %s in %s (cwd %s) answered=%v, want %v: %s", i, c.pattern, c.path, c.cwd, why != "", c.answered, why)
		}
	}
}
