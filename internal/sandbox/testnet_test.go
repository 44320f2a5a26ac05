package sandbox

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// The test network maps hosts to loopback past the address rules, so only a Go test binary may turn it
// on: a plain binary (as the box is) asking for it is refused.
func TestTestNetOnlyInTestBinaries(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "testnetprobe")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/testnetprobe").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "the test network is for tests only" {
		t.Fatalf("a plain binary got %q", out)
	}
}
