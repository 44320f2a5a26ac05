package internal

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// userFacing are the packages whose errors reach a person (the CLI, MCP, the web UI, the hooks): every
// error they make is an errs kind with a sentence, never a bare fmt.Errorf (docs/ARCHITECTURE.md, errs).
var userFacing = []string{"app", "cli", "web", "server", "state", "gate", "keys", "todo", "brain", "memory", "box",
	"diary", "index", "wire", "hooks", "validate", "note", "card", "inbox", "sqlitefile", "jobs", "routine", "backup",
	"usage", "egress"}

// errorAssertion is a type assertion on an error, which misses a wrapped one: errors.As finds it.
var errorAssertion = regexp.MustCompile(`\berr[A-Za-z]*\.\(\*?[A-Za-z.]+\)`)

func TestOneErrorModel(t *testing.T) {
	for _, pkg := range userFacing {
		forEachSource(t, filepath.Join(".", pkg), func(p, src string) {
			if i := strings.Index(src, "fmt.Errorf("); i >= 0 {
				t.Errorf("%s:%d: a bare fmt.Errorf in a package whose errors reach the owner; use errs.E or errs.Wrap with a kind", p, 1+strings.Count(src[:i], "\n"))
			}
		})
	}
	forEachSource(t, ".", func(p, src string) {
		if loc := errorAssertion.FindStringIndex(src); loc != nil {
			t.Errorf("%s:%d: a type assertion on an error (%s); use errors.As, which sees wrapped errors", p, 1+strings.Count(src[:loc[0]], "\n"), src[loc[0]:loc[1]])
		}
	})
}

// forEachSource calls fn with every production Go file under dir (tests left out).
func forEachSource(t *testing.T, dir string, fn func(path, src string)) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fn(p, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
