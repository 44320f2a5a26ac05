package schema

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/markdoc"
)

// Finding codes.
const (
	CodeInvalidCard    = "invalid-card"
	CodeUnknownType    = "unknown-type"
	CodeUnchecked      = "unchecked"
	CodeUnknownKey     = "unknown-key"
	CodeMissingKey     = "missing-key"
	CodeWrongType      = "wrong-type"
	CodeBadValue       = "bad-value"
	CodeBodyNotAllowed = "body-not-allowed"
	CodeTooLong        = "too-long"
	CodeUndefinedTag   = "undefined-tag"
)

// Check checks a parsed card against its type: keys, values, body and Markdoc. Untyped Markdown
// documents are not checked. Findings carry the card's box path and the lines of the keys.
func (r *Registry) Check(c *card.Card) []finding.Finding {
	if c.Type == "" {
		return nil
	}
	ck := &checker{path: c.Path}
	s, ok := r.schemas[c.Type]
	if !ok {
		if file, broken := r.broken[c.Type]; broken {
			ck.warn(1, CodeUnchecked, "not checked: the schema for %s in %s is malformed", c.Type, file)
		} else {
			// A .card must have a known type; a Markdown document's own type: key only warns, since
			// notes brought from elsewhere (Obsidian) often use type: for their own purposes.
			report := ck.err
			if !strings.HasSuffix(c.Path, ".card") {
				report = ck.warn
			}
			report(1, CodeUnknownType, "no card type %q: use one of %s, or add /_config/schemas/%s.yaml",
				c.Type, strings.Join(r.Types(), ", "), c.Type)
		}
		return ck.out
	}
	ck.mapping(c.Node, s.Fields, "", true, max(c.FrontLine-1, 1))
	ck.body(c, s)
	finding.Sort(ck.out)
	return ck.out
}

type checker struct {
	path string
	out  []finding.Finding
}

func (ck *checker) err(line int, code, format string, a ...any) {
	ck.out = append(ck.out, finding.Errorf(ck.path, line, code, format, a...))
}

func (ck *checker) warn(line int, code, format string, a ...any) {
	ck.out = append(ck.out, finding.Warnf(ck.path, line, code, format, a...))
}

// mapping checks the keys of m against fields; top adds the keys every type accepts.
func (ck *checker) mapping(m *yaml.Node, fields map[string]*Field, prefix string, top bool, line int) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := prefix + k.Value
		seen[k.Value] = true
		f := fields[k.Value]
		if f == nil && top {
			if k.Value == "type" {
				continue // card.Parse already checked it
			}
			f = common[k.Value]
		}
		if f == nil {
			ck.warn(k.Line, CodeUnknownKey, "unknown key %s: the schema does not define it (check the spelling)", name)
			continue
		}
		if isNull(v) {
			if f.Required {
				ck.err(k.Line, CodeMissingKey, "%s is required but empty", name)
			}
			continue
		}
		ck.value(k.Line, name, f, v)
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if fields[name].Required && !seen[name] {
			ck.err(line, CodeMissingKey, "%s%s is required: add it to the frontmatter", prefix, name)
		}
	}
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

var dateRE = lazyregexp.New(`^\d{4}-\d{2}-\d{2}$`)

// value checks one non-null value against its field.
func (ck *checker) value(line int, name string, f *Field, v *yaml.Node) {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	scalar := v.Kind == yaml.ScalarNode
	switch f.Type {
	case "any":
	case "string", "ref":
		if !scalar {
			ck.err(line, CodeWrongType, "%s must be a single value, not a %s", name, shape(v))
			return
		}
		ck.text(line, name, f, v.Value)
	case "int":
		if !scalar || v.Tag != "!!int" {
			ck.err(line, CodeWrongType, "%s must be a whole number (found %s)", name, show(v))
		}
	case "number":
		if !scalar || (v.Tag != "!!int" && v.Tag != "!!float") {
			ck.err(line, CodeWrongType, "%s must be a number (found %s)", name, show(v))
		}
	case "bool":
		if !scalar || v.Tag != "!!bool" {
			ck.err(line, CodeWrongType, "%s must be true or false (found %s)", name, show(v))
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, v.Value); !scalar || !dateRE.MatchString(v.Value) || err != nil {
			ck.err(line, CodeWrongType, "%s must be a date like 2026-11-29 (found %s)", name, show(v))
		}
	case "datetime":
		if _, err := time.Parse(time.RFC3339, v.Value); !scalar || err != nil {
			ck.err(line, CodeWrongType, "%s must be a time like 2026-11-29T14:05:00Z (found %s)", name, show(v))
		}
	case "enum":
		if !scalar || !contains(f.Values, v.Value) {
			ck.err(line, CodeBadValue, "%s must be one of %s (found %s)", name, strings.Join(f.Values, ", "), show(v))
		}
	case "list", "refs":
		ck.list(line, name, f, v)
	case "map":
		if v.Kind != yaml.MappingNode {
			ck.err(line, CodeWrongType, "%s must be a set of key: value lines, not a %s", name, shape(v))
			return
		}
		ck.mapping(v, f.Fields, name+".", false, line)
	}
}

func (ck *checker) list(line int, name string, f *Field, v *yaml.Node) {
	if v.Kind != yaml.SequenceNode {
		ck.err(line, CodeWrongType, "%s must be a list, like [a, b] (found %s)", name, show(v))
		return
	}
	if f.Max > 0 && len(v.Content) > f.Max {
		ck.err(line, CodeBadValue, "%s has %d items; at most %d are allowed", name, len(v.Content), f.Max)
	}
	for i, it := range v.Content {
		item := fmt.Sprintf("%s[%d]", name, i)
		switch {
		case it.Kind != yaml.ScalarNode || isNull(it):
			ck.err(it.Line, CodeWrongType, "%s must be a single value, not a %s", item, shape(it))
		case len(f.Values) > 0 && !contains(f.Values, it.Value):
			ck.err(it.Line, CodeBadValue, "%s must be one of %s (found %s)", item, strings.Join(f.Values, ", "), show(it))
		case f.re != nil && !f.re.MatchString(it.Value):
			ck.err(it.Line, CodeBadValue, "%s does not look right (found %s; expected %s)", item, show(it), f.Pattern)
		}
	}
}

// text applies pattern and max to a string value.
func (ck *checker) text(line int, name string, f *Field, s string) {
	if f.re != nil && !f.re.MatchString(s) {
		ck.err(line, CodeBadValue, "%s does not look right (found %q; expected %s)", name, s, f.Pattern)
	}
	if n := utf8.RuneCountInString(s); f.Max > 0 && n > f.Max {
		ck.err(line, CodeBadValue, "%s is %d characters; at most %d are allowed", name, n, f.Max)
	}
}

// body checks whether a body is allowed, its length, and its Markdoc.
func (ck *checker) body(c *card.Card, s *Schema) {
	if len(bytes.TrimSpace(c.Body)) == 0 {
		return
	}
	if !s.BodyAllowed() {
		ck.err(c.BodyLine, CodeBodyNotAllowed, "a %s card has no body: remove the text after the closing ---", s.Type)
		return
	}
	if lines := bytes.Count(bytes.TrimRight(c.Body, "\r\n"), []byte{'\n'}) + 1; s.MaxLines > 0 && lines > s.MaxLines {
		ck.warn(c.BodyLine, CodeTooLong, "the body is %d lines; a %s keeps to %d", lines, s.Type, s.MaxLines)
	}
	doc := markdoc.Parse(c.Body)
	at := func(l int) int { return c.BodyLine - 1 + l }
	for _, e := range doc.Errors {
		ck.warn(at(e.Line), e.Code, "%s", e.Msg)
	}
	for _, t := range doc.Tags {
		if !contains(coreTags, t.Name) && !contains(s.MarkdocTags, t.Name) {
			ck.warn(at(t.Line), CodeUndefinedTag, "Undefined tag: '%s' (a %s card may use: %s)", t.Name, s.Type, allowed(s))
		}
	}
}

func allowed(s *Schema) string {
	return strings.Join(append(append([]string(nil), s.MarkdocTags...), coreTags...), ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func shape(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "set of keys"
	}
	return "value"
}

// show renders a value for a message.
func show(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return "a " + shape(n)
	}
	v := n.Value
	if utf8.RuneCountInString(v) > 40 {
		v = string([]rune(v)[:40]) + "…"
	}
	return fmt.Sprintf("%q", v)
}
