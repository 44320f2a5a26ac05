package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzOpenGates: any ledger text reads without panicking, and every open gate it names is text from a
// line of the ledger.
func FuzzOpenGates(f *testing.F) {
	f.Add("| OWNS | CHECK | EXPECT | STATUS |\n|---|---|---|---|\n| internal/x | go test | ok | open |\n")
	f.Add("- [ ] OWNS: a | CHECK: b | EXPECT: c\n- [x] OWNS: d | CHECK: e | EXPECT: f\n")
	f.Add("|||\n|-|\n| a |\n")
	f.Fuzz(func(t *testing.T, text string) {
		for _, g := range OpenGates(text) {
			if strings.Contains(g, "\n") {
				t.Fatalf("an open gate spans lines: %q", g)
			}
		}
	})
}

// FuzzShellSearch: any command line parses without panicking; compound commands are never answered.
func FuzzShellSearch(f *testing.F) {
	f.Fuzz(func(t *testing.T, cmd string) {
		if _, ok := parseShellSearch(cmd); ok && strings.ContainsAny(cmd, ";&><`\n") {
			t.Fatalf("a compound command was taken for a search: %q", cmd)
		}
	})
}

// FuzzReadTranscript: any transcript file reads without panicking and never counts negative tokens.
func FuzzReadTranscript(f *testing.F) {
	p := filepath.Join(f.TempDir(), "t.jsonl") // one file, rewritten: a folder per input exhausts the disk's inodes
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		u, err := ReadTranscript(p)
		if err == nil && (u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheCreation < 0) {
			t.Fatalf("negative usage %+v", u)
		}
	})
}

func TestGuardDeniesTheOwnersOwnFiles(t *testing.T) {
	for _, c := range []struct {
		path string
		deny bool
	}{
		{"/.box/state.db", true},
		{"/_config/switches.card", true},
		{"/_config/Switches.card", true},
		{"/_config/settings.card", true},
		{"/_config/interface/settings.card", false},
		{"/_bookkeeping/approvals/20261129T1-x.approval.card", true},
		{"/_bookkeeping/archive/approvals/x.approval.card", true},
		{"/_content/a/_config/x.md", true},
		{"/_content/memory/notes/entity-leo.md", false},
		{"/_bookkeeping/diary-notes.md", false},
	} {
		if got := guard(c.path) != ""; got != c.deny {
			t.Errorf("guard(%q) denies=%v, want %v", c.path, got, c.deny)
		}
	}
}
