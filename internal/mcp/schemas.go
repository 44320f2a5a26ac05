package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segment "github.com/segmentio/encoding/json"
)

// schemaFor is the JSON Schema of a tool's input or output type, with one type per value: a Go slice or
// map is inferred as ["null","array"], which some clients cannot read, and a null never reaches a tool.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: the schema of %T: %v", *new(T), err)) // a programming error, caught by every test
	}
	singleTypes(s)
	return s
}

func singleTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if t := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" }); len(s.Types) > 0 && len(t) == 1 {
		s.Type, s.Types = t[0], nil
	}
	for _, p := range s.Properties {
		singleTypes(p)
	}
	singleTypes(s.Items)
	singleTypes(s.AdditionalProperties)
	for _, p := range s.PrefixItems {
		singleTypes(p)
	}
}

// checkArguments checks a tools/call's arguments against the tool's input schema before the SDK does, so a
// mistake comes back as one plain sentence naming the field, what it takes and, for a choice, every value
// it may be (the SDK's own text is for programmers). It returns "" when the arguments fit.
func checkArguments(tool string, s *jsonschema.Schema, raw json.RawMessage) string {
	if s == nil {
		return ""
	}
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return fmt.Sprintf("The arguments of %s must be one JSON object of named values, like {\"words\": \"leo swim\"}; nothing was done.", tool)
		}
	}
	for _, name := range s.Required {
		if _, ok := args[name]; !ok {
			return fmt.Sprintf("%s needs %q: %s. Nothing was done; call it again with %q.", tool, name, what(s.Properties[name]), name)
		}
	}
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p, ok := s.Properties[name]
		if !ok {
			return fmt.Sprintf("%s takes no %q; it takes %s. Nothing was done.", tool, name, list(propertyNames(s)))
		}
		if msg := checkValue(p, args[name]); msg != "" {
			return fmt.Sprintf("%s: %q %s. Nothing was done; call it again with a value that fits.", tool, name, msg)
		}
	}
	return ""
}

// checkValue says what is wrong with one value, or "".
func checkValue(p *jsonschema.Schema, raw json.RawMessage) string {
	var v any
	if err := parse(raw, &v, segment.UseNumber); err != nil { // numbers as written, to tell 2 from 2.5
		return "is not a JSON value"
	}
	want := p.Type
	ok := true
	switch want {
	case "string":
		_, ok = v.(string)
	case "integer":
		n, isNum := v.(json.Number)
		f, err := n.Float64()
		ok = isNum && err == nil && f == math.Trunc(f)
	case "number":
		_, ok = v.(json.Number)
	case "boolean":
		_, ok = v.(bool)
	case "array":
		_, ok = v.([]any)
	case "object":
		_, ok = v.(map[string]any)
	}
	if !ok {
		return "must be " + typeWord(want) + " (" + what(p) + ")"
	}
	if len(p.Enum) > 0 && !slices.ContainsFunc(p.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		vals := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			vals[i] = fmt.Sprintf("%q", fmt.Sprint(e))
		}
		return fmt.Sprintf("cannot be %q; it is one of %s", fmt.Sprint(v), list(vals))
	}
	if n, isNum := v.(json.Number); isNum {
		f, _ := n.Float64()
		if (p.Minimum != nil && f < *p.Minimum) || (p.Maximum != nil && f > *p.Maximum) {
			return fmt.Sprintf("must be from %g to %g, not %s", deref(p.Minimum, math.Inf(-1)), deref(p.Maximum, math.Inf(1)), n)
		}
	}
	return ""
}

func deref(f *float64, def float64) float64 {
	if f == nil {
		return def
	}
	return *f
}

func typeWord(t string) string {
	switch t {
	case "string":
		return "text"
	case "integer":
		return "a whole number"
	case "number":
		return "a number"
	case "boolean":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return "a value of type " + t
}

// what is a field's own description, or its type in words.
func what(p *jsonschema.Schema) string {
	if p == nil {
		return "a value"
	}
	if p.Description != "" {
		return strings.TrimSuffix(p.Description, ".")
	}
	return typeWord(p.Type)
}

func propertyNames(s *jsonschema.Schema) []string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, fmt.Sprintf("%q", n))
	}
	sort.Strings(names)
	return names
}

// list joins "a", "b" and "c".
func list(items []string) string {
	switch len(items) {
	case 0:
		return "nothing"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// plainValidation replaces the SDK's own text for arguments it could not read (what checkArguments did not
// catch), which is for programmers and can read "<invalid reflect.Value>", with a sentence.
func plainValidation(tool string, res *sdk.CallToolResult) {
	if res == nil || !res.IsError || len(res.Content) != 1 {
		return
	}
	t, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		return
	}
	if strings.HasPrefix(t.Text, `validating "arguments"`) || strings.Contains(t.Text, "reflect.Value") ||
		strings.HasPrefix(t.Text, "json:") || strings.Contains(t.Text, "cannot unmarshal") || strings.HasPrefix(t.Text, "unmarshaling") {
		t.Text = fmt.Sprintf("The arguments of %s don't fit what it takes (see its input schema: the names, and text, numbers or lists as described); nothing was done.", tool)
	}
}
