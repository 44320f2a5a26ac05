package markdoc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// scanner reads the inside of one {% … %}.
type scanner struct {
	src     []byte
	pos, to int
}

func (s *scanner) peek() byte {
	if s.pos < s.to {
		return s.src[s.pos]
	}
	return 0
}

func (s *scanner) at(lit string) bool {
	return s.pos+len(lit) <= s.to && string(s.src[s.pos:s.pos+len(lit)]) == lit
}

func (s *scanner) space() {
	for s.pos < s.to {
		switch s.src[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || c == '-' || c >= '0' && c <= '9' }

func (s *scanner) ident() string {
	start := s.pos
	if !isIdentStart(s.peek()) {
		return ""
	}
	for s.pos < s.to && isIdent(s.src[s.pos]) {
		s.pos++
	}
	return string(s.src[start:s.pos])
}

// tagBody parses from after {% through %}. skip is true for annotations ({% .class %}) and
// interpolations ({% $var %}, {% fn() %}), which are valid Markdoc but not tags.
func (s *scanner) tagBody() (t Tag, closing, skip bool, err error) {
	s.space()
	if s.peek() == '/' {
		s.pos++
		s.space()
		if t.Name = s.ident(); t.Name == "" {
			return t, false, false, errors.New("a closing tag needs a name: {% /name %}")
		}
		s.space()
		if !s.at("%}") {
			return t, false, false, fmt.Errorf("closing tag {%% /%s %%} has extra text", t.Name)
		}
		s.pos += 2
		return t, true, false, nil
	}
	save := s.pos
	t.Name = s.ident()
	if t.Name == "" || s.peek() == '(' {
		s.pos = save
		skip = true
		if c := s.peek(); c == '$' || isIdentStart(c) {
			if _, err := s.value(); err != nil {
				return t, false, false, err
			}
		}
	} else if s.pos < s.to && !isSpace(s.peek()) && !s.at("%}") && !s.at("/%}") {
		return t, false, false, fmt.Errorf("bad character %q after tag name %s", s.peek(), t.Name)
	}
	for {
		s.space()
		switch {
		case s.pos >= s.to:
			return t, false, false, errors.New("a tag is never ended with %}")
		case s.at("/%}"):
			s.pos += 3
			t.SelfClosing = true
			return t, false, skip, nil
		case s.at("%}"):
			s.pos += 2
			return t, false, skip, nil
		}
		a, err := s.attr(len(t.Attrs) == 0 && !skip)
		if err != nil {
			return t, false, false, err
		}
		t.Attrs = append(t.Attrs, a)
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// attr parses name=value, .class, #id, or (first only) a primary value.
func (s *scanner) attr(primaryOK bool) (Attr, error) {
	if c := s.peek(); c == '.' || c == '#' {
		s.pos++
		start := s.pos
		name := s.ident()
		if name == "" {
			return Attr{}, fmt.Errorf("%q needs a name after it", c)
		}
		key := map[byte]string{'.': "class", '#': "id"}[c]
		return Attr{Name: key, Value: Value{Kind: String, Str: name, Start: start, End: s.pos}}, nil
	}
	save := s.pos
	if name := s.ident(); name != "" && s.peek() == '=' {
		s.pos++
		v, err := s.value()
		return Attr{Name: name, Value: v}, err
	}
	s.pos = save
	if !primaryOK {
		return Attr{}, fmt.Errorf("expected name=value, found %q", s.word())
	}
	v, err := s.value()
	return Attr{Name: "primary", Value: v, Primary: true}, err
}

// word is the text up to the next space, for error messages.
func (s *scanner) word() string {
	end := s.pos
	for end < s.to && !isSpace(s.src[end]) && end-s.pos < 40 {
		end++
	}
	return string(s.src[s.pos:end])
}

const maxDepth = 64

func (s *scanner) value() (Value, error) { return s.valueDepth(0) }

func (s *scanner) valueDepth(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, errors.New("values nested too deeply")
	}
	start := s.pos
	c := s.peek()
	var v Value
	var err error
	switch {
	case c == '"':
		return s.str()
	case c == '-' || c >= '0' && c <= '9':
		v, err = s.number()
	case c == '[':
		v, err = s.array(depth)
	case c == '{':
		v, err = s.hash(depth)
	case c == '$':
		s.pos++
		v, err = Value{Kind: Variable, Str: s.path()}, nil
		if v.Str == "" {
			err = errors.New("a variable needs a name: $name")
		}
	case isIdentStart(c):
		v, err = s.word2(depth)
	default:
		return v, fmt.Errorf("expected a value, found %q", s.word())
	}
	v.Start, v.End = start, s.pos
	return v, err
}

// word2 parses true, false, null or a function call.
func (s *scanner) word2(depth int) (Value, error) {
	name := s.ident()
	switch {
	case name == "true" || name == "false":
		return Value{Kind: Bool, Bool: name == "true"}, nil
	case name == "null":
		return Value{Kind: Null}, nil
	case s.peek() == '(':
		s.pos++
		v := Value{Kind: Function, Str: name}
		items, _, err := s.list(')', false, depth)
		v.Items = items
		return v, err
	}
	return Value{}, fmt.Errorf("unquoted text %q: put strings in double quotes", name)
}

// path reads a variable path: name(.name|[n]|["k"])*.
func (s *scanner) path() string {
	start := s.pos
	if s.ident() == "" {
		return ""
	}
	for s.pos < s.to {
		switch c := s.peek(); {
		case c == '.' && s.pos+1 < s.to && isIdentStart(s.src[s.pos+1]):
			s.pos++
			s.ident()
		case c == '[':
			end := strings.IndexByte(string(s.src[s.pos:min(s.to, s.pos+256)]), ']')
			if end < 0 {
				return string(s.src[start:s.pos])
			}
			s.pos += end + 1
		default:
			return string(s.src[start:s.pos])
		}
	}
	return string(s.src[start:s.pos])
}

func (s *scanner) number() (Value, error) {
	start := s.pos
	if s.peek() == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for s.pos < s.to && s.src[s.pos] >= '0' && s.src[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if digits() == 0 {
		return Value{}, errors.New("a number needs digits")
	}
	if s.peek() == '.' {
		s.pos++
		if digits() == 0 {
			return Value{}, errors.New("a number needs digits after the point")
		}
	}
	f, err := strconv.ParseFloat(string(s.src[start:s.pos]), 64)
	if err != nil {
		return Value{}, fmt.Errorf("bad number %q", s.src[start:s.pos])
	}
	return Value{Kind: Number, Num: f}, nil
}

// str parses a double-quoted string with JSON-style escapes.
func (s *scanner) str() (Value, error) {
	s.pos++ // opening quote
	start := s.pos
	var b strings.Builder
	for s.pos < s.to {
		c := s.src[s.pos]
		switch {
		case c == '"':
			v := Value{Kind: String, Str: b.String(), Start: start, End: s.pos}
			s.pos++
			return v, nil
		case c == '\\':
			if s.pos+1 >= s.to {
				return Value{}, errors.New("a string ends in a backslash")
			}
			s.pos++
			if err := s.escape(&b); err != nil {
				return Value{}, err
			}
		default:
			r, n := utf8.DecodeRune(s.src[s.pos:s.to])
			b.WriteRune(r)
			s.pos += n
		}
	}
	return Value{}, errors.New("a string is never closed with \"")
}

func (s *scanner) escape(b *strings.Builder) error {
	c := s.src[s.pos]
	s.pos++
	simple := map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
	if r, ok := simple[c]; ok {
		b.WriteByte(r)
		return nil
	}
	if c != 'u' || s.pos+4 > s.to {
		return fmt.Errorf("bad escape \\%c in a string", c)
	}
	n, err := strconv.ParseUint(string(s.src[s.pos:s.pos+4]), 16, 32)
	if err != nil {
		return fmt.Errorf("bad escape \\u%s in a string", s.src[s.pos:s.pos+4])
	}
	s.pos += 4
	b.WriteRune(rune(n))
	return nil
}

func (s *scanner) array(depth int) (Value, error) {
	s.pos++
	items, _, err := s.list(']', false, depth)
	return Value{Kind: Array, Items: items}, err
}

func (s *scanner) hash(depth int) (Value, error) {
	s.pos++
	items, keys, err := s.list('}', true, depth)
	return Value{Kind: Hash, Items: items, Keys: keys}, err
}

// list parses comma-separated values (or key: value pairs) up to end; a trailing comma is allowed.
func (s *scanner) list(end byte, keyed bool, depth int) (items []Value, keys []string, err error) {
	for {
		s.space()
		if s.peek() == end {
			s.pos++
			return items, keys, nil
		}
		if s.pos >= s.to {
			return nil, nil, fmt.Errorf("missing %q", end)
		}
		if keyed {
			k, err := s.key()
			if err != nil {
				return nil, nil, err
			}
			keys = append(keys, k)
		}
		v, err := s.valueDepth(depth + 1)
		if err != nil {
			return nil, nil, err
		}
		items = append(items, v)
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case end:
		default:
			return nil, nil, fmt.Errorf("expected \",\" or %q, found %q", end, s.word())
		}
	}
}

// key parses a hash key (identifier or string) and its colon.
func (s *scanner) key() (string, error) {
	var k string
	if s.peek() == '"' {
		v, err := s.str()
		if err != nil {
			return "", err
		}
		k = v.Str
	} else if k = s.ident(); k == "" {
		return "", fmt.Errorf("expected a key, found %q", s.word())
	}
	s.space()
	if s.peek() != ':' {
		return "", fmt.Errorf("expected \":\" after key %s", k)
	}
	s.pos++
	s.space()
	return k, nil
}
