package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcptest"
)

// An assistant's memory_remember never runs a program the box's .git/config names: a fixed key is
// neutralised and the line is saved; a driver makes the tool refuse with the key and how to remove it.
func TestRememberOverMCPNeverRunsGitConfig(t *testing.T) {
	for _, tc := range []struct {
		config  [][2]string
		refused string
	}{
		{config: [][2]string{{"core.fsmonitor", "$PWN"}}},
		{config: [][2]string{{"filter.evil.clean", "$PWN"}}, refused: "filter.evil.clean"},
	} {
		tb := newTestBox(t, nil)
		aside := t.TempDir()
		marker, pwn := filepath.Join(aside, "pwned"), filepath.Join(aside, "pwn.sh")
		os.WriteFile(pwn, []byte(fmt.Sprintf("#!/bin/sh\necho ran >> %s\ncat\n", marker)), 0o755)
		os.WriteFile(filepath.Join(tb.box.Root, ".gitattributes"), []byte("* filter=evil\n"), 0o644)
		for _, kv := range tc.config {
			cmd := exec.Command("git", "-C", tb.box.Root, "config", kv[0], strings.ReplaceAll(kv[1], "$PWN", pwn))
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
		cs := connect(t, tb.service(), Conn{Who: "writer", Host: "10.0.0.4", Caps: keys.Caps{Memory: true}}, "node")
		txt, isErr := mcptest.Call(t, cs, "memory_remember", map[string]any{"text": "Leo swims on Thursdays."})
		if data, _ := os.ReadFile(marker); len(data) > 0 {
			t.Fatalf("memory_remember ran the program %s names", tc.config[0][0])
		}
		if tc.refused == "" && isErr || tc.refused != "" && (!isErr || !strings.Contains(txt, tc.refused) || !strings.Contains(txt, "--unset-all")) {
			t.Errorf("%s: isError %v: %s", tc.config[0][0], isErr, txt)
		}
	}
}
