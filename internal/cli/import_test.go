package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// box import and box export end to end through Main: --json shapes, exit codes, nothing written on a
// dry run, the refused PIN named by place only, and the export outside the box.
func TestImportExportVerbs(t *testing.T) {
	root := initBox(t)
	sample, _ := filepath.Abs("../imports/testdata/server-memory/memory.jsonl")

	dry := mem(t, root, ExitOK, "import", "server-memory", sample, "--dry-run")
	hasKeys(t, "import --dry-run", dry, "kind", "source", "path", "lines", "changed", "documents", "unchanged", "refused", "refusedAt", "sample", "text", "dryRun")
	if dry["lines"] != 9.0 || dry["entry"] != nil {
		t.Fatalf("dry run: %v", dry)
	}
	if st := mem(t, root, ExitOK, "overview"); st["inbox"] != 0.0 {
		t.Fatalf("a dry run wrote lines: %v", st)
	}
	res := mem(t, root, ExitOK, "import", "server-memory", sample)
	if res["lines"] != 9.0 || res["refused"] != 1.0 || res["entry"] == nil {
		t.Fatalf("import: %v", res)
	}
	human := runCLI(t, run{args: []string{"--box", root, "import", "server-memory", sample}, cwd: root})
	if human.code != ExitOK || !strings.Contains(human.stdout, "Nothing new in memory.jsonl") || !strings.Contains(human.stderr, "left out: memory.jsonl line 2") || strings.Contains(human.stderr, "4821") {
		t.Errorf("again: exit %d\n%s\n%s", human.code, human.stdout, human.stderr)
	}

	// Nothing came in and something was left out: exit 4.
	onlySecret := filepath.Join(t.TempDir(), "secret.jsonl")
	os.WriteFile(onlySecret, []byte(`{"type":"entity","name":"Me","entityType":"person","observations":["my password is hunter2hunter2"]}`+"\n"), 0o644)
	if got := runCLI(t, run{args: []string{"--box", root, "import", "server-memory", onlySecret}, cwd: root}); got.code != ExitRefused || strings.Contains(got.stderr, "hunter2") {
		t.Errorf("only a secret: exit %d\n%s", got.code, got.stderr)
	}
	// A malformed source: exit 4 with the place; an unknown kind: exit 2.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{\"type\":\"entity\"\n"), 0o644)
	if got := runCLI(t, run{args: []string{"--box", root, "import", "server-memory", bad}, cwd: root}); got.code != ExitRefused || !strings.Contains(got.stderr, "bad.jsonl line 1") {
		t.Errorf("malformed: exit %d\n%s", got.code, got.stderr)
	}
	if got := runCLI(t, run{args: []string{"--box", root, "import", "evernote", bad}, cwd: root}); got.code != ExitUsage {
		t.Errorf("unknown kind: exit %d", got.code)
	}

	mem(t, root, ExitOK, "tidy")
	out := filepath.Join(t.TempDir(), "graph.jsonl")
	exp := mem(t, root, ExitOK, "export", "server-memory", out)
	hasKeys(t, "export", exp, "kind", "path", "notes", "lines", "facts", "relations", "bytes", "text")
	data, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(data), `"Leo: Swims on Thursdays at 5:30"`) {
		t.Fatalf("export file: %v\n%s", err, data)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var v map[string]any
		if json.Unmarshal([]byte(l), &v) != nil {
			t.Fatalf("not JSONL: %q", l)
		}
	}
	if got := runCLI(t, run{args: []string{"--box", root, "export", "markdown", filepath.Join(root, "_tmp", "x")}, cwd: root}); got.code != ExitRefused {
		t.Errorf("export into the box: exit %d\n%s", got.code, got.stderr)
	}
	vault := filepath.Join(t.TempDir(), "vault")
	mem(t, root, ExitOK, "export", "markdown", vault)
	if _, err := os.Stat(filepath.Join(vault, "_content", "memory", "notes", "entity-leo.md")); err != nil {
		t.Error(err)
	}
	if got := runCLI(t, run{args: []string{"--box", root, "export", "markdown", vault}, cwd: root}); got.code != ExitConflict {
		t.Errorf("a non-empty folder: exit %d", got.code)
	}
}
