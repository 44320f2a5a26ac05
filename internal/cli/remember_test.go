package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBin runs the real box binary in dir and returns its output and exit code.
func runBin(t *testing.T, dir string, args ...string) ran {
	t.Helper()
	cmd := exec.Command(boxBin, args...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// runCmd runs cmd and returns its output and exit code; a command that cannot start fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) ran {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ran{out.String(), errb.String(), code}
}

// TestRememberTakesAnyText: text that begins with a dash is text, not a flag, through the real binary.
// A PEM key is refused by the secret rules (exit 4, the key not quoted), never as an unknown flag that
// echoes it; flags before or after the text still work; "--" and --help keep their meaning.
func TestRememberTakesAnyText(t *testing.T) {
	root := initBox(t)
	const pem = "-----BEGIN RSA PRIVATE KEY----- MIIEowIBAAKCAQEAuX9Lm2Qr8Tv4Wb6Yc1Nd3Pf5Hg7Jk0AsDfGh"
	got := runBin(t, root, "--box", root, "remember", pem)
	if got.code != ExitRefused || !strings.Contains(got.stderr, "private key") || strings.Contains(got.stderr, "MIIE") || strings.Contains(got.stderr, "flag") {
		t.Errorf("remember PEM: exit %d\nstderr: %s", got.code, got.stderr)
	}
	got = runBin(t, root, "remember", "-5 degrees was the coldest night in Lisbon this year.", "--as", "Claude", "--json", "--box", root)
	if got.code != ExitOK {
		t.Fatalf("remember -5 …: exit %d\nstdout: %s\nstderr: %s", got.code, got.stdout, got.stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(got.stdout), &res); err != nil {
		t.Fatalf("--json after the text was not applied: %v\n%s", err, got.stdout)
	}
	day, _ := res["path"].(string)
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(day)))
	if err != nil || !strings.Contains(string(data), " · Claude · cli · outside · -5 degrees was the coldest night in Lisbon this year. ^") {
		t.Errorf("the line is not the text as given, written by Claude (%v):\n%s", err, data)
	}
	if got = runBin(t, root, "--box", root, "remember", "--", "--core is a word Leo made up."); got.code != ExitOK {
		t.Errorf("remember -- --core …: exit %d\n%s", got.code, got.stderr)
	}
	if got = runBin(t, root, "remember", "--help"); got.code != ExitOK || !strings.Contains(got.stdout, "--core") {
		t.Errorf("remember --help: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
	if got = runBin(t, root, "--box", root, "remember", "--as"); got.code != ExitUsage {
		t.Errorf("remember --as without a value: exit %d\n%s", got.code, got.stderr)
	}
}
