package connector

import (
	"encoding/json"
	"fmt"

	"github.com/boxmem/box/internal/errs"
	"github.com/google/jsonschema-go/jsonschema"
)

// CheckArgs checks a call's arguments against the tool's inputSchema before anything runs.
func (b *Bundle) CheckArgs(tool string, args json.RawMessage) error {
	const op = "connector.args"
	t := b.Manifest.Tool(tool)
	if t == nil {
		return errs.E(op, errs.NotFound, "%s has no tool %q; its tools are %s", b.Manifest.Name, tool, toolNames(b.Manifest.Tools))
	}
	if err := checkArgs(b.schemas[tool], args); err != nil {
		return errs.E(op, errs.Invalid, "the arguments do not fit %s's inputSchema: %v", tool, err)
	}
	return nil
}

func checkArgs(s *jsonschema.Resolved, args json.RawMessage) error {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("they are not JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("they should be an object of named arguments")
	}
	if s == nil {
		return nil
	}
	return s.Validate(v)
}

func toolNames(tools []Tool) string {
	out := ""
	for i, t := range tools {
		if i > 0 {
			out += ", "
		}
		out += t.Name
	}
	return out
}
