// Package css owns reading CSS the way a browser does: the tokenizer of CSS Syntax Module Level 3 (§4)
// and its grouping into rules, blocks, functions and declarations (§5). It judges nothing and touches
// no files: page and look decide what a page or a look change may contain.
package css

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Type is a token type of CSS Syntax Level 3 §4.
type Type int

const (
	Ident Type = iota + 1
	Function
	AtKeyword
	Hash
	String
	BadString
	URL
	BadURL
	Delim
	Number
	Percentage
	Dimension
	Whitespace
	CDO
	CDC
	Colon
	Semicolon
	Comma
	LeftBracket
	RightBracket
	LeftParen
	RightParen
	LeftBrace
	RightBrace
)

var typeNames = [...]string{"", "ident", "function", "at-keyword", "hash", "string", "bad-string", "url",
	"bad-url", "delim", "number", "percentage", "dimension", "whitespace", "<!--", "-->", ":", ";", ",",
	"[", "]", "(", ")", "{", "}"}

func (t Type) String() string {
	if t > 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// Token is one CSS token with its escapes already decoded, as the browser sees it: `u\72l(` is the
// function "url", `pos\ition` the ident "position".
type Token struct {
	Type Type
	// Value is the name of an ident, function, at-keyword or hash; the text of a string or url; the
	// character of a delim.
	Value string
	Num   float64 // number, percentage, dimension
	Unit  string  // dimension: the unit as written (compare with strings.EqualFold)
	ID    bool    // hash: the name would start an identifier (#abc, not #123)
	Line  int     // 1-based line of the token's first character
}

// String renders the token for a sentence: what was found, not the source bytes.
func (t Token) String() string {
	switch t.Type {
	case Ident, Delim:
		return t.Value
	case Function:
		return t.Value + "("
	case AtKeyword:
		return "@" + t.Value
	case Hash:
		return "#" + t.Value
	case String:
		return strconv.Quote(t.Value)
	case URL:
		return "url(" + t.Value + ")"
	case BadURL:
		return "url("
	case Number:
		return formatNum(t.Num)
	case Percentage:
		return formatNum(t.Num) + "%"
	case Dimension:
		return formatNum(t.Num) + t.Unit
	case Whitespace:
		return " "
	}
	return t.Type.String()
}

func formatNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

const eof = -1

type tokenizer struct {
	in       []rune
	pos      int
	newlines []int // positions of '\n' in in, for line numbers
}

// Tokenize reads src into tokens (comments dropped) after the input preprocessing of §3.3: CR LF, CR
// and FF become LF, NUL and invalid UTF-8 become U+FFFD. It never fails: broken input yields
// bad-string, bad-url and delim tokens, as in a browser.
func Tokenize(src string) []Token {
	z := &tokenizer{in: preprocess(src)}
	for i, r := range z.in {
		if r == '\n' {
			z.newlines = append(z.newlines, i)
		}
	}
	var out []Token
	for {
		t, ok := z.next()
		if !ok {
			return out
		}
		out = append(out, t)
	}
}

func preprocess(src string) []rune {
	out := make([]rune, 0, len(src))
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		i += n
		switch r {
		case '\r':
			if i < len(src) && src[i] == '\n' {
				i++
			}
			r = '\n'
		case '\f':
			r = '\n'
		case 0:
			r = utf8.RuneError
		}
		out = append(out, r)
	}
	return out
}

func (z *tokenizer) line(pos int) int { return 1 + sort.SearchInts(z.newlines, pos) }

func (z *tokenizer) peek(k int) rune {
	if z.pos+k < len(z.in) {
		return z.in[z.pos+k]
	}
	return eof
}

func (z *tokenizer) next() (Token, bool) {
	z.skipComments()
	start := z.pos
	c := z.peek(0)
	if c == eof {
		return Token{}, false
	}
	t := z.consume(c)
	t.Line = z.line(start)
	return t, true
}

func (z *tokenizer) skipComments() {
	for z.peek(0) == '/' && z.peek(1) == '*' {
		z.pos += 2
		for z.pos < len(z.in) && !(z.in[z.pos] == '*' && z.peek(1) == '/') {
			z.pos++
		}
		z.pos = min(z.pos+2, len(z.in))
	}
}

func (z *tokenizer) consume(c rune) Token {
	switch {
	case isSpace(c):
		for isSpace(z.peek(0)) {
			z.pos++
		}
		return Token{Type: Whitespace}
	case c == '"' || c == '\'':
		z.pos++
		return z.consumeString(c)
	case c == '#':
		if isName(z.peek(1)) || validEscape(z.peek(1), z.peek(2)) {
			z.pos++
			id := startsIdent(z.peek(0), z.peek(1), z.peek(2))
			return Token{Type: Hash, Value: z.consumeName(), ID: id}
		}
	case c == '(':
		z.pos++
		return Token{Type: LeftParen}
	case c == ')':
		z.pos++
		return Token{Type: RightParen}
	case c == '[':
		z.pos++
		return Token{Type: LeftBracket}
	case c == ']':
		z.pos++
		return Token{Type: RightBracket}
	case c == '{':
		z.pos++
		return Token{Type: LeftBrace}
	case c == '}':
		z.pos++
		return Token{Type: RightBrace}
	case c == ',':
		z.pos++
		return Token{Type: Comma}
	case c == ':':
		z.pos++
		return Token{Type: Colon}
	case c == ';':
		z.pos++
		return Token{Type: Semicolon}
	case c == '+' || c == '.':
		if startsNumber(c, z.peek(1), z.peek(2)) {
			return z.consumeNumeric()
		}
	case c == '-':
		if startsNumber(c, z.peek(1), z.peek(2)) {
			return z.consumeNumeric()
		}
		if z.peek(1) == '-' && z.peek(2) == '>' {
			z.pos += 3
			return Token{Type: CDC}
		}
		if startsIdent(c, z.peek(1), z.peek(2)) {
			return z.consumeIdentLike()
		}
	case c == '<':
		if z.peek(1) == '!' && z.peek(2) == '-' && z.peek(3) == '-' {
			z.pos += 4
			return Token{Type: CDO}
		}
	case c == '@':
		if startsIdent(z.peek(1), z.peek(2), z.peek(3)) {
			z.pos++
			return Token{Type: AtKeyword, Value: z.consumeName()}
		}
	case c == '\\':
		if validEscape(c, z.peek(1)) {
			return z.consumeIdentLike()
		}
	case isDigit(c):
		return z.consumeNumeric()
	case isNameStart(c):
		return z.consumeIdentLike()
	}
	z.pos++
	return Token{Type: Delim, Value: string(c)}
}

// consumeString is §4.3.5; the opening quote is consumed.
func (z *tokenizer) consumeString(quote rune) Token {
	var b strings.Builder
	for {
		c := z.peek(0)
		switch {
		case c == eof:
			return Token{Type: String, Value: b.String()}
		case c == quote:
			z.pos++
			return Token{Type: String, Value: b.String()}
		case c == '\n':
			return Token{Type: BadString, Value: b.String()}
		case c == '\\':
			switch z.peek(1) {
			case eof:
				z.pos++
			case '\n':
				z.pos += 2
			default:
				z.pos++
				b.WriteRune(z.consumeEscape())
			}
		default:
			z.pos++
			b.WriteRune(c)
		}
	}
}

// consumeEscape is §4.3.7; the backslash is consumed.
func (z *tokenizer) consumeEscape() rune {
	c := z.peek(0)
	if c == eof {
		return utf8.RuneError
	}
	z.pos++
	if !isHex(c) {
		return c
	}
	v := hexVal(c)
	for i := 1; i < 6 && isHex(z.peek(0)); i++ {
		v = v*16 + hexVal(z.peek(0))
		z.pos++
	}
	if isSpace(z.peek(0)) {
		z.pos++
	}
	if v == 0 || (v >= 0xD800 && v <= 0xDFFF) || v > utf8.MaxRune {
		return utf8.RuneError
	}
	return rune(v)
}

func (z *tokenizer) consumeName() string {
	var b strings.Builder
	for {
		c := z.peek(0)
		switch {
		case isName(c):
			z.pos++
			b.WriteRune(c)
		case validEscape(c, z.peek(1)):
			z.pos++
			b.WriteRune(z.consumeEscape())
		default:
			return b.String()
		}
	}
}

// consumeNumeric is §4.3.3 with §4.3.12 (consume a number).
func (z *tokenizer) consumeNumeric() Token {
	start := z.pos
	if c := z.peek(0); c == '+' || c == '-' {
		z.pos++
	}
	z.digits()
	if z.peek(0) == '.' && isDigit(z.peek(1)) {
		z.pos++
		z.digits()
	}
	if c := z.peek(0); c == 'e' || c == 'E' {
		if isDigit(z.peek(1)) {
			z.pos++
			z.digits()
		} else if s := z.peek(1); (s == '+' || s == '-') && isDigit(z.peek(2)) {
			z.pos += 2
			z.digits()
		}
	}
	num, err := strconv.ParseFloat(string(z.in[start:z.pos]), 64)
	if err != nil { // only a value out of range: the browser clamps too
		num = math.Copysign(math.MaxFloat64, num)
	}
	switch {
	case startsIdent(z.peek(0), z.peek(1), z.peek(2)):
		return Token{Type: Dimension, Num: num, Unit: z.consumeName()}
	case z.peek(0) == '%':
		z.pos++
		return Token{Type: Percentage, Num: num}
	}
	return Token{Type: Number, Num: num}
}

func (z *tokenizer) digits() {
	for isDigit(z.peek(0)) {
		z.pos++
	}
}

// consumeIdentLike is §4.3.4, including the url( special case.
func (z *tokenizer) consumeIdentLike() Token {
	name := z.consumeName()
	if z.peek(0) != '(' {
		return Token{Type: Ident, Value: name}
	}
	z.pos++
	if strings.EqualFold(name, "url") {
		for isSpace(z.peek(0)) && isSpace(z.peek(1)) {
			z.pos++
		}
		q := z.peek(0)
		if isSpace(q) {
			q = z.peek(1)
		}
		if q != '"' && q != '\'' {
			return z.consumeURL()
		}
	}
	return Token{Type: Function, Value: name}
}

// consumeURL is §4.3.6; "url(" is consumed.
func (z *tokenizer) consumeURL() Token {
	var b strings.Builder
	for isSpace(z.peek(0)) {
		z.pos++
	}
	for {
		c := z.peek(0)
		switch {
		case c == ')':
			z.pos++
			return Token{Type: URL, Value: b.String()}
		case c == eof:
			return Token{Type: URL, Value: b.String()}
		case isSpace(c):
			for isSpace(z.peek(0)) {
				z.pos++
			}
			if z.peek(0) == ')' || z.peek(0) == eof {
				continue
			}
			z.badURLRemnants()
			return Token{Type: BadURL, Value: b.String()}
		case c == '"' || c == '\'' || c == '(' || nonPrintable(c):
			z.badURLRemnants()
			return Token{Type: BadURL, Value: b.String()}
		case c == '\\':
			if !validEscape(c, z.peek(1)) {
				z.badURLRemnants()
				return Token{Type: BadURL, Value: b.String()}
			}
			z.pos++
			b.WriteRune(z.consumeEscape())
		default:
			z.pos++
			b.WriteRune(c)
		}
	}
}

func (z *tokenizer) badURLRemnants() {
	for {
		c := z.peek(0)
		switch {
		case c == eof:
			return
		case c == ')':
			z.pos++
			return
		case validEscape(c, z.peek(1)):
			z.pos++
			z.consumeEscape()
		default:
			z.pos++
		}
	}
}

func isSpace(c rune) bool        { return c == ' ' || c == '\t' || c == '\n' }
func isDigit(c rune) bool        { return c >= '0' && c <= '9' }
func isHex(c rune) bool          { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
func isNameStart(c rune) bool    { return c >= 0x80 || c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isName(c rune) bool         { return isNameStart(c) || isDigit(c) || c == '-' }
func validEscape(a, b rune) bool { return a == '\\' && b != '\n' }
func nonPrintable(c rune) bool {
	return (c >= 0 && c <= 8) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F
}

func hexVal(c rune) int {
	if isDigit(c) {
		return int(c - '0')
	}
	return int(c|0x20-'a') + 10
}

func startsIdent(a, b, c rune) bool {
	switch {
	case a == '-':
		return isNameStart(b) || b == '-' || validEscape(b, c)
	case isNameStart(a):
		return true
	case a == '\\':
		return validEscape(a, b)
	}
	return false
}

func startsNumber(a, b, c rune) bool {
	switch {
	case a == '+' || a == '-':
		return isDigit(b) || (b == '.' && isDigit(c))
	case a == '.':
		return isDigit(b)
	}
	return isDigit(a)
}
