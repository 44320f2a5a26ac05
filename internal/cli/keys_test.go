package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// Keys live outside the tree, so the diary is their history: making and revoking one each write a line.
func TestKeysAreInTheDiary(t *testing.T) {
	root := initBox(t)
	made := runCLI(t, run{args: []string{"keys", "new", "--name", "Claude Code", "--memory", "--json"}, cwd: root})
	if made.code != 0 {
		t.Fatalf("keys new: %d %s", made.code, made.stderr)
	}
	var k struct{ ID, Key string }
	if err := json.Unmarshal([]byte(made.stdout), &k); err != nil || !strings.HasPrefix(k.Key, "mbx_") {
		t.Fatalf("keys new --json: %v %s", err, made.stdout)
	}
	if got := runCLI(t, run{args: []string{"keys", "revoke", k.ID}, cwd: root}); got.code != 0 {
		t.Fatalf("keys revoke: %d %s", got.code, got.stderr)
	}
	diary := runCLI(t, run{args: []string{"diary", "--n", "2"}, cwd: root}).stdout
	for _, want := range []string{"owner made a key for Claude Code (" + k.ID + ")", "owner revoked the key for Claude Code (" + k.ID + ")"} {
		if !strings.Contains(diary, want) {
			t.Errorf("the diary lacks %q:\n%s", want, diary)
		}
	}
	if strings.Contains(diary, k.Key) {
		t.Error("the key itself reached the diary")
	}
}
