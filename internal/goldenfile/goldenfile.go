// Package goldenfile owns the golden files of the tests: comparing output with them, and rewriting them
// under `go test -update`. Only tests import it; it must not touch anything outside the file it is given.
package goldenfile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Update reports whether this test run rewrites its golden files, for tests whose golden data is more
// than one file.
func Update() bool { return *update }

// Check fails t when got differs from the file at path. Under -update it writes got there instead,
// making the folder, so a new golden file is made by running the test once with -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update after checking the new output):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
