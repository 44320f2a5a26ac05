package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// constructors are the calls that make a box handle, a gate, a state store, a vault or a validator: only the composition root
// may make them, once per process (docs/ARCHITECTURE.md).
var constructors = map[string][]string{
	"github.com/boxmem/box/internal/box":   {"Open", "OpenWith", "Init"},
	"github.com/boxmem/box/internal/gate":  {"New"},
	"github.com/boxmem/box/internal/state": {"Open"},
	"github.com/boxmem/box/internal/vault": {"Open"},
	// The validator: the write transaction's and box validate's are one.
	"github.com/boxmem/box/internal/validate": {"New"},
}

// TestOnlyTheRootConstructs reads every non-test Go file of the module: outside internal/app (and the
// package that defines it), nothing calls a constructor of a box handle, a gate, a state store or a vault; inside
// it, each is called in one place.
func TestOnlyTheRootConstructs(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	inApp := map[string]int{}
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".") && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files++
		for _, call := range constructorCalls(t, p) {
			switch {
			case filepath.Dir(rel) == filepath.FromSlash("internal/app"):
				inApp[call]++
			default:
				t.Errorf("%s calls %s: only the composition root (internal/app) makes a box handle, a gate or a state store", rel, call)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read only %d files: the test is not looking at the module", files)
	}
	for _, call := range []string{"box.OpenWith", "box.Init", "gate.New", "state.Open", "vault.Open", "validate.New"} {
		if inApp[call] != 1 {
			t.Errorf("internal/app calls %s in %d places, want 1", call, inApp[call])
		}
	}
	if inApp["box.Open"] != 0 {
		t.Error("internal/app opens a box without its options (box.Open): every handle validates and keeps the index")
	}
}

// constructorCalls lists the constructor calls in one file, as "pkg.Func", by the import each file names.
func constructorCalls(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // local name → import path, for the packages watched
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := constructors[p]; !ok {
			continue
		}
		name := filepath.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		names[name] = p
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		p, ok := names[id.Name]
		if !ok {
			return true
		}
		for _, fn := range constructors[p] {
			if sel.Sel.Name == fn {
				out = append(out, filepath.Base(p)+"."+fn)
			}
		}
		return true
	})
	return out
}
