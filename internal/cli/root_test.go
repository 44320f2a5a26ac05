package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every verb takes its services from the composition root (g.read, g.write, g.open): only open.go, which
// opens through it, and serve.go, which may make a new box first, find the box's folder themselves.
func TestEveryVerbOpensThroughTheRoot(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "open.go" || f == "serve.go" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "g.boxRoot()") {
			t.Errorf("%s finds the box's folder itself (g.boxRoot()); take the services from the root with g.read or g.write", f)
		}
	}
}
