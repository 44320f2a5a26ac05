// Package testbin builds the box binary for tests that run it as a real process (git hooks, crashes).
// Test code only; it imports nothing of the box.
package testbin

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Build builds cmd/box into dir and returns the binary's path; the error carries go build's output.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "box")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/boxmem/box/cmd/box").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// Main is a package's TestMain when its tests run the box: it builds the binary once into a temporary
// folder, sets *bin to its path, runs the tests, removes the folder and exits with the tests' code.
func Main(m *testing.M, bin *string) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "box-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *bin, err = Build(dir); err != nil {
		fmt.Fprint(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
