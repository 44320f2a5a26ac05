package schema

import (
	"errors"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/finding"
)

// Test helpers: the built-in registry alone, and a card checked from its bytes (the binary loads the
// box's registry with Load, and validate parses and checks a card with its other rules).

// Builtin returns the registry of the schemas embedded in the binary.
func Builtin() *Registry {
	return &Registry{schemas: builtins(), broken: map[string]string{}}
}

// Schema returns the schema of a type.
func (r *Registry) Schema(typ string) (*Schema, bool) {
	s, ok := r.schemas[typ]
	return s, ok
}

// CheckFile parses data as the card at boxPath and checks it; a card that does not parse is one
// error finding at the line the parser names.
func (r *Registry) CheckFile(boxPath string, data []byte) []finding.Finding {
	c, err := card.Parse(boxPath, data)
	if err != nil {
		var ce *card.Error
		if errors.As(err, &ce) {
			return []finding.Finding{finding.Errorf(boxPath, ce.Line, CodeInvalidCard, "%s", ce.Msg)}
		}
		return []finding.Finding{finding.Errorf(boxPath, 0, CodeInvalidCard, "%v", err)}
	}
	return r.Check(c)
}

// Types returns the built-in type names, sorted.
func Types() []string { return Builtin().Types() }
