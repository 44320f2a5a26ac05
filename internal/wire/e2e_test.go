package wire_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bin builds the real binary once per test run.
func bin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("BOX_BIN"); b != "" {
		return b
	}
	out := filepath.Join(t.TempDir(), "box")
	cmd := exec.Command("go", "build", "-o", out, "github.com/boxmem/box/cmd/box")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}

func run(t *testing.T, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "BOX_DIR=", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// TestWireEndToEnd: box wire in a fresh box and in a plain git repository, with the real binary: the
// dry run, the apply, the second apply changing nothing, the git hook refusing a broken card on a real
// commit, and the hooks answering through the wired command.
func TestWireEndToEnd(t *testing.T) {
	box := bin(t)
	tmp := t.TempDir()
	root := filepath.Join(tmp, "mybox")
	if _, msg, code := run(t, tmp, "", box, "init", root); code != 0 {
		t.Fatalf("init: %s", msg)
	}
	os.Remove(filepath.Join(root, ".git", "hooks", "pre-commit")) // wire must put it back

	dry, _, code := run(t, root, "", box, "wire")
	if code != 0 || !strings.Contains(dry, "+++ b/.claude/settings.json") || !strings.Contains(dry, "git hooks: would install pre-commit") {
		t.Fatalf("dry run (%d):\n%s", code, dry)
	}
	if _, err := os.Stat(filepath.Join(root, ".claude")); err == nil {
		t.Fatal("the dry run wrote files")
	}
	if out, msg, code := run(t, root, "", box, "wire", "--apply"); code != 0 || !strings.Contains(out, "created .claude/settings.json") {
		t.Fatalf("apply (%d): %s %s", code, out, msg)
	}
	if out, msg, _ := run(t, root, "", box, "wire", "--apply"); out != "" || !strings.Contains(msg, "nothing to change") {
		t.Fatalf("second apply: %q %q", out, msg)
	}
	// in a box, wiring is a change like any other: committed, in the diary, nothing left uncommitted
	if out, _, _ := run(t, root, "", "git", "status", "--porcelain"); out != "" {
		t.Fatalf("wire left uncommitted changes in the box:\n%s", out)
	}
	if out, _, _ := run(t, root, "", box, "diary", "--n", "1"); !strings.Contains(out, "wire") {
		t.Fatalf("no diary line for box wire: %q", out)
	}

	// the git hook fires on a real commit
	os.WriteFile(filepath.Join(root, "_content", "todos", "broken.todo.card"), []byte("---\n[unclosed\n---\n"), 0o644)
	run(t, root, "", "git", "add", "-A")
	if _, msg, code := run(t, root, "", "git", "commit", "-m", "broken"); code == 0 || !strings.Contains(msg, "broken.todo.card") {
		t.Fatalf("the pre-commit hook did not refuse a broken card (%d): %s", code, msg)
	}

	// the wired command answers a hook
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	data, _ := os.ReadFile(filepath.Join(root, ".claude", "settings.json"))
	json.Unmarshal(data, &settings)
	cmdline := settings.Hooks["PreToolUse"][2].Hooks[0].Command
	payload := `{"session_id":"e2e","cwd":"` + root + `","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"` + root + `/_config/switches.card","content":"x"}}`
	out, _, code := run(t, root, payload, "sh", "-c", cmdline)
	if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Fatalf("wired PreToolUse (%d): %s", code, out)
	}

	// a plain git repository, wired to the box with --box
	proj := filepath.Join(tmp, "proj")
	os.MkdirAll(proj, 0o755)
	run(t, proj, "", "git", "init", "-q")
	if _, msg, code := run(t, proj, "", box, "--box", root, "wire", "--apply"); code != 0 {
		t.Fatalf("wire in a project: %s", msg)
	}
	data, _ = os.ReadFile(filepath.Join(proj, ".claude", "settings.json"))
	if !strings.Contains(string(data), "--box "+root+" hook SessionStart") {
		t.Fatalf("the project's hooks do not name the box:\n%s", data)
	}
	start := `{"session_id":"p1","cwd":"` + proj + `","hook_event_name":"SessionStart","source":"startup"}`
	out, _, _ = run(t, proj, start, box, "--box", root, "hook", "SessionStart")
	if !strings.Contains(out, "The owner's box") {
		t.Fatalf("SessionStart in the project: %q", out)
	}
	if out, _, code := run(t, proj, start, box, "--box", filepath.Join(tmp, "nowhere"), "hook", "SessionStart"); out != "" || code != 0 {
		t.Fatalf("a missing box must fail open: %q %d", out, code)
	}
	if _, msg, code := run(t, proj, "", box, "unwire", "--apply"); code != 0 {
		t.Fatalf("unwire: %s", msg)
	}
	if left, _ := os.ReadDir(proj); len(left) != 1 {
		t.Errorf("unwire left %v in a project wire filled", left)
	}
}
