package schema

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
)

// Registry is the set of schemas a box checks against. It is read-only once made.
type Registry struct {
	schemas  map[string]*Schema
	broken   map[string]string // type → box path of its malformed schema file
	findings []finding.Finding
}

// Load returns the built-in schemas overlaid with the box's own from <boxRoot>/_config/schemas/*.yaml.
// A malformed schema file does not fail the load: it is in Findings, and cards of its type are
// reported as unchecked. The error is only for a folder that cannot be read.
func Load(boxRoot string) (*Registry, error) {
	r := &Registry{schemas: map[string]*Schema{}, broken: map[string]string{}}
	for k, s := range builtins() {
		r.schemas[k] = s
	}
	dir := filepath.Join(boxRoot, "_config", "schemas")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".yaml")
		boxPath := "/_config/schemas/" + e.Name()
		data, err := layout.ReadFile(boxRoot, boxPath)
		if errors.Is(err, layout.ErrOutside) || errors.Is(err, layout.ErrNotRegular) {
			r.broken[name] = boxPath
			r.findings = append(r.findings, finding.Errorf(boxPath, 0, "schema-invalid",
				"the schema for %s is not read: %v; put the file itself in the box", name, errors.Unwrap(err)))
			continue
		}
		if err != nil {
			return nil, err
		}
		s, err := parse(name, data)
		if err != nil {
			delete(r.schemas, name)
			r.broken[name] = boxPath
			r.findings = append(r.findings, finding.Errorf(boxPath, yamlLine(err), "schema-invalid",
				"the schema for %s is malformed: %v", name, err))
			continue
		}
		s.Source = boxPath
		r.schemas[name] = s
	}
	return r, nil
}

var lineRE = lazyregexp.New(`line (\d+)`)

func yamlLine(err error) int {
	if m := lineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// Types returns the known type names, sorted.
func (r *Registry) Types() []string { return slices.Sorted(maps.Keys(r.schemas)) }

// Findings are the problems with the box's own schema files.
func (r *Registry) Findings() []finding.Finding { return append([]finding.Finding(nil), r.findings...) }
