package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePayload is a PreToolUse payload for the Write tool run in cwd.
func writePayload(t *testing.T, cwd, path string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"session_id": "s-link", "cwd": cwd, "hook_event_name": PreToolUse, "tool_name": "Write",
		"tool_input": map[string]any{"file_path": path, "content": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGuardsFollowLinksToTheBox: the write guard and the Bash guard hold when the box is named through a
// symlink (--box LINK, the session in the real folder) and when the session works through one (--box the
// real folder, cwd and paths through the link).
func TestGuardsFollowLinksToTheBox(t *testing.T) {
	f := newFixture(t)
	link := filepath.Join(t.TempDir(), "boxlink")
	if err := os.Symlink(f.box, link); err != nil {
		t.Fatal(err)
	}
	viaLinkFlag := f.env
	viaLinkFlag.BoxFlag = link
	for _, c := range []struct {
		name string
		env  Env
		cwd  string // where the session works; paths are spelt under it
	}{
		{"--box through a link, cwd real", viaLinkFlag, f.box},
		{"--box real, cwd through a link", f.env, link},
	} {
		for _, p := range []string{".box/hooks.json", "_config/switches.card", "_config/settings.card"} {
			if denied(Run(context.Background(), PreToolUse, writePayload(t, c.cwd, filepath.Join(c.cwd, p)), c.env)) == "" {
				t.Errorf("%s: a Write to %s went through", c.name, p)
			}
		}
		for _, cmd := range []string{"echo x > .box/hooks.json", "git remote add evil https://x", "git config remote.github.url https://x",
			"cp /tmp/s.card _config/switches.card"} {
			if denied(Run(context.Background(), PreToolUse, bashPayload(t, c.cwd, cmd), c.env)) == "" {
				t.Errorf("%s: %q went through", c.name, cmd)
			}
		}
		if why := denied(Run(context.Background(), PreToolUse, writePayload(t, c.cwd, filepath.Join(c.cwd, "_content/memory/inbox/x.md")), c.env)); why != "" {
			t.Errorf("%s: an inbox write was denied: %s", c.name, why)
		}
	}
	// A project elsewhere that names the box through the link, by path.
	for _, cmd := range []string{"echo x > " + filepath.Join(link, ".box", "hooks.json"), "git -C " + link + " remote add evil https://x"} {
		if denied(Run(context.Background(), PreToolUse, bashPayload(t, f.project, cmd), f.env)) == "" {
			t.Errorf("in the project: %q went through", cmd)
		}
	}
}

// TestRulesOfTheBoxStayInTheBox: after a compaction in the box, the rules restated are the box's own
// CLAUDE.md, never a file it links to outside the box.
func TestRulesOfTheBoxStayInTheBox(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	mustWrite(t, outside, "OUTSIDE: the owner's private file\n")
	guide := filepath.Join(f.box, "CLAUDE.md")
	if err := os.Remove(guide); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, guide); err != nil {
		t.Fatal(err)
	}
	p, _ := json.Marshal(map[string]any{"session_id": "rules", "cwd": f.box, "hook_event_name": SessionStart, "source": "compact"})
	got := Run(context.Background(), SessionStart, p, f.env).text()
	if !strings.Contains(got, "Session record after compaction") {
		t.Fatalf("no restatement:\n%s", got)
	}
	if strings.Contains(got, "OUTSIDE") {
		t.Errorf("the rules restated a file outside the box:\n%s", got)
	}
}
