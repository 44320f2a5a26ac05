package card

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/boxmem/box/internal/errs"
)

// SetField sets the value at path (keys through mappings, numbers through lists) and leaves every
// other byte as it was: comments, quoting, key order, line endings. A missing top-level key is added
// at the end of the frontmatter (a file without one gets one). value is as for Field; a []Field (a
// nested mapping) only for a top-level key that is not there yet.
// The result is parsed again before it is returned, so a successful edit never corrupts the card.
func SetField(data []byte, path []string, value any) ([]byte, error) {
	const op = "card.set"
	if !settable(value) {
		return nil, errs.E(op, errs.Invalid, "SetField writes text, numbers, true/false, null, times and lists of text, not %T", value)
	}
	_, mapping := value.([]Field)
	if !validText(value) || !validText(path) {
		return nil, errs.E(op, errs.Invalid, "the new value is not valid UTF-8 text")
	}
	c, err := parseRaw(data)
	if err != nil {
		return nil, err
	}
	eol := c.eol()
	key, val, err := c.find(op, path)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch {
	case mapping && (key != nil || len(path) != 1):
		return nil, errs.E(op, errs.Invalid, "a mapping can only be added as a new top-level key; delete %s first", strings.Join(path, "."))
	case key == nil && !c.HasFront:
		var b bytes.Buffer
		b.WriteString("---" + eol)
		writeField(&b, "", path[0], value, eol)
		b.WriteString("---" + eol)
		out = append(b.Bytes(), data...)
	case key == nil:
		var b bytes.Buffer
		writeField(&b, "", path[0], value, eol)
		out = splice(data, c.frontEnd(), c.frontEnd(), b.String())
	default:
		start, end, text, err := c.replacement(op, key, val, value, eol)
		if err != nil {
			return nil, err
		}
		out = splice(data, start, end, text)
	}
	if _, err := parseRaw(out); err != nil {
		return nil, errs.Wrap(op, errs.Invalid, err, "the edit would break the frontmatter, so it was not made")
	}
	return out, nil
}

// DeleteField removes the key at path with its value and the rest of their lines. Deleting a key
// that is not there returns data unchanged.
func DeleteField(data []byte, path []string) ([]byte, error) {
	const op = "card.delete"
	c, err := parseRaw(data)
	if err != nil {
		return nil, err
	}
	key, val, err := c.find(op, path)
	if err != nil || key == nil {
		return data, err
	}
	ks, err := c.offset(key)
	if err != nil {
		return nil, err
	}
	ls := lineStartOf(c.Raw, ks)
	if !onlySpacesBefore(c.Raw, ks) || c.inFlow(key) {
		return nil, errs.E(op, errs.Invalid, "cannot delete %s: it shares its line with other YAML; edit it by hand", strings.Join(path, "."))
	}
	_, ve, err := c.Span(val)
	if err != nil {
		return nil, errs.Wrap(op, errs.Invalid, err, "")
	}
	out := splice(data, ls, nextLineStart(c.Raw, ve, c.frontEnd()), "")
	if _, err := parseRaw(out); err != nil {
		return nil, errs.Wrap(op, errs.Invalid, err, "the edit would break the frontmatter, so it was not made")
	}
	return out, nil
}

// parseRaw parses the format only (no type rules), for edits.
func parseRaw(data []byte) (*Card, error) {
	c, err := split("", data)
	if err != nil {
		return nil, err
	}
	return c, c.parseFront()
}

func (c *Card) eol() string {
	if c.CRLF {
		return "\r\n"
	}
	return "\n"
}

func (c *Card) inFlow(n *yaml.Node) bool {
	return c.inFlowNodes[n]
}

// find walks path; a missing last top-level key gives nil nodes and no error.
func (c *Card) find(op string, path []string) (key, val *yaml.Node, err error) {
	if len(path) == 0 {
		return nil, nil, errs.E(op, errs.Usage, "no field named")
	}
	cur := c.Node
	for i, p := range path {
		switch cur.Kind {
		case yaml.MappingNode:
			key, val = lookup(cur, p)
		case yaml.SequenceNode:
			j, convErr := strconv.Atoi(p)
			if convErr != nil || j < 0 || j >= len(cur.Content) {
				return nil, nil, errs.E(op, errs.NotFound, "%s has no item %s", strings.Join(path[:i], "."), p)
			}
			key, val = cur.Content[j], cur.Content[j]
		default:
			key, val = nil, nil
		}
		if val == nil {
			if i == 0 && len(path) == 1 {
				return nil, nil, nil
			}
			return nil, nil, errs.E(op, errs.NotFound, "the frontmatter has no %s", strings.Join(path[:i+1], "."))
		}
		if val.Anchor != "" {
			return nil, nil, errs.E(op, errs.Invalid, "%s is anchored (&%s) and other keys may use it; edit it by hand", strings.Join(path[:i+1], "."), val.Anchor)
		}
		cur = val
	}
	return key, val, nil
}

// replacement works out which bytes to replace to give key the new value.
func (c *Card) replacement(op string, key, val *yaml.Node, value any, eol string) (start, end int, text string, err error) {
	vs, ve, err := c.Span(val)
	if err != nil {
		return 0, 0, "", errs.Wrap(op, errs.Invalid, err, "")
	}
	if val.Style&yaml.TaggedStyle != 0 {
		vs, _ = c.offset(val) // replace the explicit tag too
	}
	block := val.Kind != yaml.ScalarNode && val.Kind != yaml.AliasNode && val.Style&yaml.FlowStyle == 0 && !c.inFlow(val)
	list, isList := value.([]string)
	switch {
	case block && isList && len(list) > 0 && val.Kind == yaml.SequenceNode && onlySpacesBefore(c.Raw, vs):
		ls := lineStartOf(c.Raw, vs)
		return ls, ve, blockList(string(c.Raw[ls:vs]), list, eol), nil
	case val.Kind == yaml.ScalarNode && val.Tag == "!!null" && val.Value == "" && val.Style == 0:
		return vs, vs, " " + c.render(val, value), nil // an empty value: write after the colon or dash
	case block:
		// Replace from just after the key's colon.
		colon, err := c.colonAfter(key)
		if err != nil {
			return 0, 0, "", errs.Wrap(op, errs.Invalid, err, "")
		}
		if isList && !c.inFlow(val) && len(list) > 0 {
			return colon, max(ve, colon), eol + blockList(c.childIndent(key), list, eol), nil
		}
		return colon, max(ve, colon), " " + c.render(val, value), nil
	}
	return vs, ve, c.render(val, value), nil
}

// render writes value in the style of the value it replaces where it can.
func (c *Card) render(old *yaml.Node, value any) string {
	s, ok := value.(string)
	if !ok {
		return scalar(value)
	}
	switch {
	case old.Style&yaml.DoubleQuotedStyle != 0:
		return doubleQuote(s)
	case old.Style&yaml.SingleQuotedStyle != 0:
		if q, ok := singleQuote(s); ok {
			return q
		}
		return doubleQuote(s)
	case c.inFlow(old):
		return quoteFlow(s)
	}
	return quote(s)
}

// colonAfter is the offset just past the ":" that follows a mapping key.
func (c *Card) colonAfter(key *yaml.Node) (int, error) {
	_, ke, err := c.Span(key)
	if err != nil {
		return 0, err
	}
	i := ke
	for i < c.frontEnd() && (c.Raw[i] == ' ' || c.Raw[i] == '\t') {
		i++
	}
	if i >= c.frontEnd() || c.Raw[i] != ':' {
		return 0, errs.E("card.set", errs.Invalid, "cannot find the colon after %s", key.Value)
	}
	return i + 1, nil
}

// childIndent is the indentation for items under key: two spaces deeper than the key's line.
func (c *Card) childIndent(key *yaml.Node) string {
	ks, _ := c.offset(key)
	return strings.Repeat(" ", indentOf(c.Raw, lineStartOf(c.Raw, ks))+2)
}

func splice(data []byte, start, end int, text string) []byte {
	out := make([]byte, 0, len(data)-(end-start)+len(text))
	out = append(out, data[:start]...)
	out = append(out, text...)
	return append(out, data[end:]...)
}

// onlySpacesBefore reports whether offset i is preceded on its line by spaces only.
func onlySpacesBefore(src []byte, i int) bool {
	return strings.TrimLeft(string(src[lineStartOf(src, i):i]), " ") == ""
}

func validText(v any) bool {
	switch v := v.(type) {
	case string:
		return utf8.ValidString(v)
	case []string:
		for _, s := range v {
			if !utf8.ValidString(s) {
				return false
			}
		}
	}
	return true
}

func settable(v any) bool {
	switch v := v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, time.Time, []string:
		return true
	case []Field:
		for _, f := range v {
			if !settable(f.Value) || !validText(f.Key) || !validText(f.Value) {
				return false
			}
		}
		return true
	}
	return false
}
