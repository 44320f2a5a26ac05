// Package internal holds the box's capability packages; this test keeps their dependencies one-way.
package internal

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/boxmem/box/"

// rank is the dependency order of docs/ARCHITECTURE.md: a package may import only packages of a lower
// rank. Adapters (rank 7) never import each other. A package missing here fails the test, so a new
// package gets a place on purpose.
var rank = map[string]int{
	"internal/errs": 0, "internal/say": 0, "internal/mcptest": 0, "internal/finding": 0, "internal/passkeytest": 0, "internal/goldenfile": 0, "internal/testbin": 0,
	"internal/lazyregexp": 0, "internal/sitetest": 0,
	"internal/providertest": 0,
	"internal/provider":     1, "internal/layout": 1, "internal/atomicfile": 1, "internal/secret": 1, "internal/markdoc": 1, "internal/egress": 1,
	"internal/css": 1, "internal/js": 1, "internal/tabs": 1, "internal/connector": 1, "internal/sqlitefile": 1, "internal/httpjson": 1,
	"internal/state": 2, "internal/vault": 2, "internal/usage": 2, "internal/git": 2, "internal/egresstest": 2, "internal/ref": 2, "internal/inbox": 2,
	"internal/diary": 2, "internal/page": 2, "internal/sandbox": 2, "internal/imports": 2,
	"internal/route": 3, "internal/card": 3, "internal/note": 3, "internal/look": 3,
	"internal/schema": 4, "internal/box": 4, "internal/exports": 4, "internal/duplicate": 4,
	"internal/validate": 5, "internal/index": 5, "internal/gate": 5, "internal/duplicatetest": 5, "internal/jobs": 5, "internal/backup": 5,
	"internal/memory": 6, "internal/todo": 6, "internal/keys": 6, "internal/grants": 6, "internal/brain": 6, "internal/builds": 6, "internal/routine": 6,
	"internal/connectors":    6,
	"internal/connectortest": 7, "internal/mcp": 7, "internal/web": 7, "internal/hooks": 7, "internal/wire": 7, "internal/oauth": 7,
	"internal/server":  8,
	"internal/app":     9,
	"internal/apptest": 10,
	"internal/cli":     10,
	"cmd/box":          11,
}

const adapterRank = 7

func TestDependencyOrder(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", "github.com/boxmem/box/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		name := strings.TrimPrefix(pkg, module)
		if strings.HasPrefix(name, "bench/") || name == "internal" {
			continue
		}
		r, ok := rank[name]
		if !ok {
			t.Errorf("package %s has no rank in deps_test.go: give it its place in the dependency order", name)
			continue
		}
		seen++
		for _, imp := range strings.Fields(imports) {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			dr, ok := rank[dep]
			if !ok {
				continue // reported on its own line
			}
			if dr >= r && !(dr == r && r != adapterRank && sameLayerAllowed(name, dep)) {
				t.Errorf("%s (rank %d) imports %s (rank %d): lower layers never import higher ones or adapters each other", name, r, dep, dr)
			}
		}
	}
	if seen < 3 {
		t.Fatalf("saw only %d packages: the test is not looking at the module", seen)
	}
}

// sameLayerAllowed lists the few imports inside one layer; keep it short.
func sameLayerAllowed(pkg, dep string) bool {
	// An OAuth grant is a connection: its checkboxes are keys.Caps and its secrets are hashed as keys hashes them.
	// The brain's tools are the memory's operations, and it plans with the memory's rules.
	// The chat's to-do tools are the to-do lists' operations.
	// A routine is a turn of the brain with its read-only tools.
	// A connector's egress list is checked with the box's one rule for public addresses, egress.Blocked.
	// The connectors service runs the connectors the builds registry keeps; the chat calls their tools.
	return (pkg == "internal/grants" && dep == "internal/keys") || (pkg == "internal/brain" && dep == "internal/memory") ||
		(pkg == "internal/brain" && dep == "internal/todo") ||
		(pkg == "internal/connector" && dep == "internal/egress") || (pkg == "internal/connectors" && dep == "internal/builds") ||
		(pkg == "internal/brain" && dep == "internal/connectors") ||
		(pkg == "internal/routine" && dep == "internal/brain")
}

// testOnly are the packages that exist for tests: fake sites, servers and authenticators. None may be
// built into the box binary, whatever its rank allows.
var testOnly = []string{"internal/mcptest", "internal/passkeytest", "internal/goldenfile", "internal/testbin", "internal/sitetest",
	"internal/providertest", "internal/egresstest", "internal/duplicatetest", "internal/connectortest", "internal/apptest"}

func TestTestPackagesStayOutOfTheBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"cmd/box").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, p := range append(testOnly, "net/http/httptest") {
		for _, d := range deps {
			if d == p || d == module+p {
				t.Errorf("the box binary includes the test-only package %s", p)
			}
		}
	}
}
