package card

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Field is one frontmatter key for Build. Value is a string, bool, integer, float, nil, time.Time
// (a date when it has no clock time, else RFC 3339), []string, or []Field (a nested mapping).
type Field struct {
	Key   string
	Value any
}

// Build writes a new card: the fields in the given order, then the body. Long lines are never folded;
// strings are quoted only when YAML needs it. It panics on a value type it does not know (a bug).
func Build(fields []Field, body string) []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	for _, f := range fields {
		writeField(&b, "", f.Key, f.Value, "\n")
	}
	b.WriteString("---\n")
	b.WriteString(body)
	return b.Bytes()
}

// writeField writes "key: value" (or a block list or mapping) at an indent, ending lines with eol.
func writeField(b *bytes.Buffer, indent, key string, v any, eol string) {
	b.WriteString(indent + quote(key) + ":")
	switch v := v.(type) {
	case []string:
		if len(v) == 0 {
			b.WriteString(" []" + eol)
			return
		}
		b.WriteString(eol)
		b.WriteString(blockList(indent+"  ", v, eol))
		b.WriteString(eol)
	case []Field:
		if len(v) == 0 {
			b.WriteString(" {}" + eol)
			return
		}
		b.WriteString(eol)
		for _, f := range v {
			writeField(b, indent+"  ", f.Key, f.Value, eol)
		}
	default:
		b.WriteString(" " + scalar(v) + eol)
	}
}

func blockList(indent string, items []string, eol string) string {
	lines := make([]string, len(items))
	for i, s := range items {
		lines[i] = indent + "- " + quote(s)
	}
	return strings.Join(lines, eol)
}

func flowList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = quoteFlow(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// scalar renders a single value on one line.
func scalar(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return quote(v)
	case bool:
		return strconv.FormatBool(v)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(v)
	case float32:
		return formatFloat(float64(v))
	case float64:
		return formatFloat(v)
	case time.Time:
		if v.Equal(time.Date(v.Year(), v.Month(), v.Day(), 0, 0, 0, 0, v.Location())) && v.Location() == time.UTC {
			return v.Format(time.DateOnly)
		}
		return v.Format(time.RFC3339Nano)
	case []string:
		return flowList(v)
	}
	panic(fmt.Sprintf("card: cannot write a %T into frontmatter", v))
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// quote returns s as a YAML scalar that reads back as the string s: plain when that is safe,
// else double-quoted on one line.
func quote(s string) string {
	if plainSafe(s, false) {
		return s
	}
	return doubleQuote(s)
}

// quoteFlow is quote for an item inside [ ].
func quoteFlow(s string) string {
	if plainSafe(s, true) {
		return s
	}
	return doubleQuote(s)
}

// doubleQuote uses Go's escapes, which are all valid YAML double-quoted escapes for valid UTF-8.
func doubleQuote(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strconv.Quote(s)
}

func singleQuote(s string) (string, bool) {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xFEFF {
			return "", false
		}
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'", utf8.ValidString(s)
}

// ambiguous words other YAML readers (YAML 1.1, Obsidian) take for booleans.
var ambiguous = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true}

// plainSafe reports whether s can be written unquoted and read back as the same string.
func plainSafe(s string, flow bool) bool {
	if s == "" || s != strings.TrimSpace(s) || ambiguous[strings.ToLower(s)] {
		return false
	}
	if strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`") || strings.Contains(s, ": ") || strings.Contains(s, " #") ||
		strings.HasSuffix(s, ":") || (flow && strings.ContainsAny(s, ",[]{}")) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xA0 || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == utf8.RuneError {
			return false
		}
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil || len(n.Content) != 1 {
		return false
	}
	v := n.Content[0]
	return v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value == s && v.Style == 0
}
