package markdoc

// Test helpers: what the tests read of a parse (the binary reads Doc and its fields directly).

var kindNames = [...]string{"string", "number", "bool", "null", "array", "hash", "variable", "function"}

// String names a value's kind in a failing test's message.
func (k Kind) String() string { return kindNames[k] }

// Attr returns the named attribute's value.
func (t Tag) Attr(name string) (Value, bool) {
	for _, a := range t.Attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return Value{}, false
}

// Code returns the code ranges of src (see Doc.Code).
func Code(src []byte) []Span { return Parse(src).Code }
