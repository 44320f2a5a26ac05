package cli

import (
	"strings"
	"testing"
)

// Through the real command line: four remembered lines give Leo and Leo Costa (one boy, both linked with
// Ana); box merge --dry-run lists the pair and writes nothing, box merge joins them, undo splits them.
func TestMergeVerb(t *testing.T) {
	root := initBox(t)
	for _, l := range []string{"Leo Costa has swim practice Thursdays.", "Ana drives Leo Costa to school.",
		"Leo lost his goggles at swim practice.", "Ana picks up Leo on Fridays."} {
		mem(t, root, ExitOK, "remember", l)
	}
	mem(t, root, ExitOK, "tidy")

	dry := mem(t, root, ExitOK, "merge", "--dry-run")
	hasKeys(t, "merge --dry-run", dry, "dryRun", "merged", "held", "text")
	merged, _ := dry["merged"].([]any)
	if len(merged) != 1 {
		t.Fatalf("dry run: %v", dry)
	}
	hasKeys(t, "merged pair", merged[0], "kept", "archived", "score", "reasons")
	if p := merged[0].(map[string]any); p["kept"] != "entity-leo-costa" || p["archived"] != "entity-leo" {
		t.Fatalf("dry run pair: %v", p)
	}
	if n := mem(t, root, ExitOK, "read", "entity-leo"); n["name"] != "entity-leo" {
		t.Fatalf("the dry run changed the box: %v", n)
	}

	res := mem(t, root, ExitOK, "merge")
	hasKeys(t, "merge", res, "merged", "held", "entry", "commit", "text")
	if p := res["merged"].([]any)[0].(map[string]any); p["archive"] != "/_bookkeeping/archive/notes/entity-leo.md" {
		t.Errorf("merge: %v", res)
	}
	mem(t, root, ExitNotFound, "read", "entity-leo")
	if n := mem(t, root, ExitOK, "read", "entity-leo-costa"); !strings.Contains(n["text"].(string), "goggles") {
		t.Errorf("the kept note: %v", n["text"])
	}
	human := runCLI(t, run{args: []string{"--box", root, "merge"}, cwd: root})
	if human.code != ExitOK || strings.TrimSpace(human.stdout) != "No likely duplicates: nothing to merge." {
		t.Errorf("second pass: exit %d, %q", human.code, human.stdout)
	}
	if u := mem(t, root, ExitOK, "undo"); u["undoOf"] != res["entry"] {
		t.Errorf("undo: %v", u)
	}
	mem(t, root, ExitOK, "read", "entity-leo")
	if v := runCLI(t, run{args: []string{"--box", root, "validate"}, cwd: root}); v.code != ExitOK {
		t.Errorf("validate after undo: %d\n%s%s", v.code, v.stdout, v.stderr)
	}
}
