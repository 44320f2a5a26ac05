// Package schema owns card types: the built-in schemas embedded in the binary, a box's own in
// /_config/schemas/, and checking a parsed card against its type. It reads no cards from disk and knows no refs.
//
// A schema is one YAML file per type (builtin/<type>.yaml, or <box>/_config/schemas/<type>.yaml, which
// overrides a built-in of the same name):
//
//	type: note                  # optional; must equal the file name when given
//	description: One subject.   # for people and the docs
//	body: true                  # may the card have a body (default true)
//	maxLines: 40                # body lines before a warning (0: no limit)
//	fields:                     # frontmatter keys; title, description, tags, aliases are always accepted
//	  kind: {type: enum, values: [person, org], required: true}
//	  maps: {type: list, pattern: "^moc-", max: 10}
//	  who:  {type: map, fields: {name: {type: string}}}
//	markdocTags: [ref, section] # Markdoc tags the body may use besides if, else, table, partial, slot
//
// Field types: string, int, number, bool, date (YYYY-MM-DD), datetime (RFC 3339), enum (values),
// list (of strings; values or pattern apply to each item), ref, refs (list), map (fields), any.
// pattern is a regular expression a string (or each list item) must match; max is the most
// characters of a string or items of a list.
package schema

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/boxmem/box/internal/card"
)

// Schema is one card type.
type Schema struct {
	Type        string            `yaml:"type"`
	Description string            `yaml:"description"`
	Body        *bool             `yaml:"body"`
	MaxLines    int               `yaml:"maxLines"`
	Fields      map[string]*Field `yaml:"fields"`
	MarkdocTags []string          `yaml:"markdocTags"`
	Source      string            `yaml:"-"` // "builtin" or the schema file's box path
}

// Field describes one frontmatter key.
type Field struct {
	Type        string            `yaml:"type"`
	Required    bool              `yaml:"required"`
	Values      []string          `yaml:"values"`
	Pattern     string            `yaml:"pattern"`
	Max         int               `yaml:"max"`
	Fields      map[string]*Field `yaml:"fields"`
	Description string            `yaml:"description"`

	re *regexp.Regexp
}

// BodyAllowed reports whether the type allows a body.
func (s *Schema) BodyAllowed() bool { return s.Body == nil || *s.Body }

// common are the keys every type accepts; a schema may redefine them (to require a title, say).
var common = map[string]*Field{
	"title":       {Type: "string"},
	"description": {Type: "string"},
	"tags":        {Type: "list"},
	"aliases":     {Type: "list"},
}

// coreTags are Markdoc's own tags, allowed in every body.
var coreTags = []string{"if", "else", "table", "partial", "slot"}

var fieldTypes = map[string]bool{"string": true, "int": true, "number": true, "bool": true, "date": true,
	"datetime": true, "enum": true, "list": true, "ref": true, "refs": true, "map": true, "any": true}

// parse reads one schema file; name is the type the file name gives.
func parse(name string, data []byte) (*Schema, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Schema
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("not a valid schema: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if !card.ValidType(name) {
		return nil, fmt.Errorf("%q is not a type name: use lowercase words joined by -", name)
	}
	if s.Type != "" && s.Type != name {
		return nil, fmt.Errorf("type: %s does not match the file name %s.yaml", s.Type, name)
	}
	s.Type = name
	if err := prepare(s.Fields, ""); err != nil {
		return nil, err
	}
	for _, t := range s.MarkdocTags {
		if t == "" || strings.ContainsAny(t, " {}%/") {
			return nil, fmt.Errorf("markdocTags: %q is not a tag name", t)
		}
	}
	return &s, nil
}

// prepare checks field definitions and compiles their patterns.
func prepare(fields map[string]*Field, prefix string) error {
	for name, f := range fields {
		if f == nil {
			return fmt.Errorf("field %s%s has no definition", prefix, name)
		}
		if !fieldTypes[f.Type] {
			return fmt.Errorf("field %s%s: type %q is not one of string, int, number, bool, date, datetime, enum, list, ref, refs, map, any", prefix, name, f.Type)
		}
		if f.Type == "enum" && len(f.Values) == 0 {
			return fmt.Errorf("field %s%s: an enum needs values", prefix, name)
		}
		if f.Pattern != "" {
			re, err := regexp.Compile(f.Pattern)
			if err != nil {
				return fmt.Errorf("field %s%s: pattern: %v", prefix, name, err)
			}
			f.re = re
		}
		if err := prepare(f.Fields, prefix+name+"."); err != nil {
			return err
		}
	}
	return nil
}

//go:embed builtin/*.yaml
var builtinFS embed.FS

var builtins = sync.OnceValue(func() map[string]*Schema {
	out := map[string]*Schema{}
	files, _ := fs.Glob(builtinFS, "builtin/*.yaml")
	for _, f := range files {
		data, _ := builtinFS.ReadFile(f)
		name := strings.TrimSuffix(strings.TrimPrefix(f, "builtin/"), ".yaml")
		s, err := parse(name, data)
		if err != nil {
			panic(fmt.Sprintf("schema: built-in %s: %v", f, err)) // a bug in the binary; TestBuiltin catches it
		}
		s.Source = "builtin"
		out[name] = s
	}
	return out
})
