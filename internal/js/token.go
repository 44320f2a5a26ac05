// Package js owns reading JavaScript source into tokens well enough to tell code from strings, template
// text, regular expressions and comments, with identifier and string escapes decoded. It is not a
// parser and judges nothing; page decides what a script may name. How it tells a regular expression
// from a division is written in docs/PAGES.md ("Reading scripts").
package js

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is a token kind.
type Kind int

const (
	Ident       Kind = iota + 1 // names and reserved words alike: `if`, `WebSocket`, `\u0057ebSocket`
	Punct                       // operators and brackets
	String                      // '…' or "…"
	Template                    // one text piece of a template literal, between ` and ${ or } and `
	Regex                       // /…/flags
	Number                      // 1, .5, 0x1F, 1_000n
	PrivateName                 // #name
)

// Token is one token. Value is decoded for identifiers (escapes resolved), strings and template pieces
// (escapes resolved, quotes dropped); for the other kinds it is the source text.
type Token struct {
	Kind   Kind
	Value  string
	Line   int // 1-based, counting "\n"
	Offset int // byte offset in the source
}

// Error is a script that cannot be read: an unterminated string, comment, template or regular
// expression, a stray closing bracket, a character no script may hold.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Options say how the script is loaded.
type Options struct {
	// Module is true for <script type="module">. A classic script also reads "<!--" and a "-->" that
	// starts a line as the start of a line comment (ECMA-262 Annex B.1.1); a module does not.
	Module bool
}

// Tokenize reads src into tokens, dropping whitespace and comments.
func Tokenize(src string, opt Options) ([]Token, error) {
	l := &lexer{src: src, line: 1, module: opt.Module, lineStart: true}
	if strings.HasPrefix(src, "#!") {
		l.skipLine()
	}
	for {
		more, err := l.next()
		if err != nil {
			return l.toks, err
		}
		if !more {
			break
		}
	}
	if len(l.stack) > 0 {
		return l.toks, l.errf("%s is never closed", l.stack[len(l.stack)-1].what())
	}
	return l.toks, nil
}

// A frame is an open bracket: its kind decides what a following "/" means once it closes.
type frame struct {
	open byte // '(' '[' '{', or '$' for a template substitution ${
	cond bool // '(' after if, while, for or with: a "/" after its ")" starts a regular expression
	obj  bool // '{' that opens an object literal: a "/" after its "}" divides
	line int
}

func (f frame) what() string {
	if f.open == '$' {
		return fmt.Sprintf("the template substitution ${ of line %d", f.line)
	}
	return fmt.Sprintf("the %q of line %d", string(f.open), f.line)
}

type lexer struct {
	src       string
	pos, line int
	module    bool
	lineStart bool // only whitespace and comments since the last line break: "-->" is a comment here
	toks      []Token
	stack     []frame
	// What the last token closed, when it was ")" or "}".
	closedCond, closedBlock bool
}

func (l *lexer) errf(format string, a ...any) error {
	return &Error{Line: l.line, Msg: fmt.Sprintf(format, a...)}
}

func (l *lexer) emit(k Kind, value string, start, line int) {
	l.toks = append(l.toks, Token{Kind: k, Value: value, Line: line, Offset: start})
	l.lineStart = false
}

func (l *lexer) peekByte(k int) byte {
	if l.pos+k < len(l.src) {
		return l.src[l.pos+k]
	}
	return 0
}

func (l *lexer) next() (bool, error) {
	if err := l.skipSpaceAndComments(); err != nil {
		return false, err
	}
	if l.pos >= len(l.src) {
		return false, nil
	}
	start, line := l.pos, l.line
	c := l.src[l.pos]
	switch {
	case c == '"' || c == '\'':
		v, err := l.str(c)
		if err != nil {
			return false, err
		}
		l.emit(String, v, start, line)
	case c == '`':
		l.pos++
		return true, l.template(start, line)
	case isDigit(c) || (c == '.' && isDigit(l.peekByte(1))):
		l.number()
		l.emit(Number, l.src[start:l.pos], start, line)
	case c == '#':
		l.pos++
		name, err := l.identName()
		if err != nil {
			return false, err
		}
		if name == "" {
			return false, l.errf("a stray #")
		}
		l.emit(PrivateName, "#"+name, start, line)
	case c == '/' && l.regexAllowed():
		if err := l.regex(); err != nil {
			return false, err
		}
		l.emit(Regex, l.src[start:l.pos], start, line)
	case c == '\\' || c == '$' || c == '_' || isASCIILetter(c) || c >= utf8.RuneSelf:
		if c >= utf8.RuneSelf {
			if r, _ := utf8.DecodeRuneInString(l.src[l.pos:]); !isIDStart(r) {
				return false, l.errf("the character %q cannot appear here", r)
			}
		}
		name, err := l.identName()
		if err != nil {
			return false, err
		}
		l.emit(Ident, name, start, line)
	default:
		return true, l.punct(start, line)
	}
	return true, nil
}

// skipSpaceAndComments also reads the HTML-like comments of classic scripts.
func (l *lexer) skipSpaceAndComments() error {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.pos++
			l.line++
			l.lineStart = true
		case c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r':
			l.pos++
		case c == '/' && l.peekByte(1) == '/':
			l.skipLine()
		case c == '/' && l.peekByte(1) == '*':
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return l.errf("a /* comment is never closed")
			}
			body := l.src[l.pos : l.pos+2+end+2]
			if n := strings.Count(body, "\n"); n > 0 || strings.ContainsAny(body, "\u2028\u2029") {
				l.line += n
				l.lineStart = true
			}
			l.pos += len(body)
		case !l.module && c == '<' && strings.HasPrefix(l.src[l.pos:], "<!--"):
			l.skipLine()
		case !l.module && l.lineStart && c == '-' && strings.HasPrefix(l.src[l.pos:], "-->"):
			l.skipLine()
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(l.src[l.pos:])
			switch {
			case r == '\u2028' || r == '\u2029':
				l.lineStart = true
			case r == '\uFEFF' || unicode.Is(unicode.Zs, r):
			default:
				return nil
			}
			l.pos += n
		default:
			return nil
		}
	}
	return nil
}

// skipLine skips to the next line terminator, leaving it to be read.
func (l *lexer) skipLine() {
	for l.pos < len(l.src) {
		if l.src[l.pos] == '\n' || strings.HasPrefix(l.src[l.pos:], "\u2028") || strings.HasPrefix(l.src[l.pos:], "\u2029") {
			return
		}
		l.pos++
	}
}

// regexKeywords are the reserved words after which "/" starts a regular expression.
var regexKeywords = map[string]bool{"return": true, "typeof": true, "instanceof": true, "in": true, "of": true,
	"new": true, "delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true,
	"yield": true, "await": true, "extends": true}

// regexAllowed tells a regular expression from a division by the token before it (docs/PAGES.md).
func (l *lexer) regexAllowed() bool {
	if len(l.toks) == 0 {
		return true
	}
	prev := l.toks[len(l.toks)-1]
	switch prev.Kind {
	case Ident:
		return regexKeywords[prev.Value] && !l.afterDot()
	case Punct:
		switch prev.Value {
		case ")":
			return l.closedCond
		case "}":
			return l.closedBlock
		case "]", "++", "--":
			return false
		}
		return true
	}
	return false
}

// afterDot: the last identifier is a property name (x.return), not a keyword.
func (l *lexer) afterDot() bool {
	n := len(l.toks)
	return n >= 2 && l.toks[n-2].Kind == Punct && (l.toks[n-2].Value == "." || l.toks[n-2].Value == "?.")
}

// braceOpensBlock decides whether "{" opens a block or an object literal, by the token before it.
func (l *lexer) braceOpensBlock() bool {
	if len(l.toks) == 0 {
		return true
	}
	prev := l.toks[len(l.toks)-1]
	switch prev.Kind {
	case Ident:
		if l.afterDot() {
			return false
		}
		switch prev.Value {
		case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "yield", "await":
			return false
		}
		return true // else, do, try, finally, a class name before its body
	case Punct:
		switch prev.Value {
		case ")", "=>", ";", "{", "}":
			return true
		case ":":
			return len(l.stack) == 0 || !l.stack[len(l.stack)-1].obj
		}
		return false
	}
	return true // after a literal only a new statement can start (automatic semicolon insertion)
}

var puncts = []string{">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=",
	"|=", "^=", "**", "<<", ">>"}

func (l *lexer) punct(start, line int) error {
	c := l.src[l.pos]
	switch c {
	case '(', '[':
		cond := false
		if c == '(' && len(l.toks) > 0 {
			p := l.toks[len(l.toks)-1]
			cond = p.Kind == Ident && !l.afterDot() && (p.Value == "if" || p.Value == "while" || p.Value == "for" || p.Value == "with")
		}
		l.stack = append(l.stack, frame{open: c, cond: cond, line: l.line})
		l.pos++
		l.emit(Punct, string(c), start, line)
		return nil
	case '{':
		l.stack = append(l.stack, frame{open: '{', obj: !l.braceOpensBlock(), line: l.line})
		l.pos++
		l.emit(Punct, "{", start, line)
		return nil
	case ')', ']', '}':
		want := map[byte]byte{')': '(', ']': '[', '}': '{'}[c]
		if len(l.stack) == 0 {
			return l.errf("a %q closes nothing", string(c))
		}
		top := l.stack[len(l.stack)-1]
		l.stack = l.stack[:len(l.stack)-1]
		if c == '}' && top.open == '$' {
			l.pos++
			return l.template(start, line)
		}
		if top.open != want {
			return l.errf("a %q closes %s", string(c), top.what())
		}
		l.closedCond, l.closedBlock = top.cond, !top.obj
		l.pos++
		l.emit(Punct, string(c), start, line)
		return nil
	}
	for _, p := range puncts {
		if strings.HasPrefix(l.src[l.pos:], p) {
			if p == "?." && isDigit(l.peekByte(2)) {
				break // a ? .5 : b
			}
			l.pos += len(p)
			l.emit(Punct, p, start, line)
			return nil
		}
	}
	if strings.IndexByte("{}()[];,<>+-*%&|^!~?:=.@/", c) < 0 {
		return l.errf("the character %q cannot appear here", rune(c))
	}
	l.pos++
	l.emit(Punct, string(c), start, line)
	return nil
}

// str reads a string literal; the opening quote is at l.pos.
func (l *lexer) str(quote byte) (string, error) {
	l.pos++
	var b strings.Builder
	for {
		if l.pos >= len(l.src) {
			return "", l.errf("a string is never closed")
		}
		c := l.src[l.pos]
		switch {
		case c == quote:
			l.pos++
			return b.String(), nil
		case c == '\n' || c == '\r':
			return "", l.errf("a string runs past the end of its line")
		case c == '\\':
			if err := l.escape(&b); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
			l.pos++
		}
	}
}

// template reads template text after "`" or after the "}" that ends a substitution, up to "${" or "`".
func (l *lexer) template(start, line int) error {
	var b strings.Builder
	for {
		if l.pos >= len(l.src) {
			return &Error{Line: line, Msg: "a template literal is never closed"}
		}
		c := l.src[l.pos]
		switch {
		case c == '`':
			l.pos++
			l.emit(Template, b.String(), start, line)
			l.closedCond, l.closedBlock = false, false
			return nil
		case c == '$' && l.peekByte(1) == '{':
			l.pos += 2
			l.emit(Template, b.String(), start, line)
			l.stack = append(l.stack, frame{open: '$', line: l.line})
			return nil
		case c == '\\':
			if err := l.escape(&b); err != nil {
				return err
			}
		default:
			if c == '\n' {
				l.line++
			}
			b.WriteByte(c)
			l.pos++
		}
	}
}

// escape decodes one escape sequence at l.pos (the backslash) of a string or template.
func (l *lexer) escape(b *strings.Builder) error {
	l.pos++
	if l.pos >= len(l.src) {
		return l.errf("a string ends in a backslash")
	}
	c := l.src[l.pos]
	l.pos++
	switch c {
	case '\n':
		l.line++
	case '\r':
		if l.peekByte(0) == '\n' {
			l.pos++
			l.line++
		}
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'v':
		b.WriteByte('\v')
	case 'x':
		if l.pos+2 <= len(l.src) {
			if v, err := strconv.ParseUint(l.src[l.pos:l.pos+2], 16, 8); err == nil {
				l.pos += 2
				b.WriteRune(rune(v))
				return nil
			}
		}
		return l.errf("a \\x escape needs two hex digits")
	case 'u':
		r, err := l.unicodeEscape()
		if err != nil {
			return err
		}
		b.WriteRune(r)
	default:
		if c >= '0' && c <= '7' { // legacy octal: up to three digits, at most \377
			v := int(c - '0')
			for i := 0; i < 2 && l.pos < len(l.src) && l.src[l.pos] >= '0' && l.src[l.pos] <= '7' && v*8+int(l.src[l.pos]-'0') <= 0377; i++ {
				v = v*8 + int(l.src[l.pos]-'0')
				l.pos++
			}
			b.WriteRune(rune(v))
			return nil
		}
		l.pos-- // any other character stands for itself, whole (it may be several bytes)
		r, n := utf8.DecodeRuneInString(l.src[l.pos:])
		l.pos += n
		if r == '\u2028' || r == '\u2029' {
			return nil // a line continuation
		}
		b.WriteRune(r)
	}
	return nil
}

// unicodeEscape reads the XXXX or {X…} after "\u".
func (l *lexer) unicodeEscape() (rune, error) {
	if l.peekByte(0) == '{' {
		end := strings.IndexByte(l.src[l.pos:], '}')
		if end < 2 || end > 9 {
			return 0, l.errf("a \\u{…} escape is malformed")
		}
		v, err := strconv.ParseUint(l.src[l.pos+1:l.pos+end], 16, 32)
		if err != nil || v > unicode.MaxRune {
			return 0, l.errf("a \\u{…} escape is malformed")
		}
		l.pos += end + 1
		return rune(v), nil
	}
	if l.pos+4 <= len(l.src) {
		if v, err := strconv.ParseUint(l.src[l.pos:l.pos+4], 16, 16); err == nil {
			l.pos += 4
			return rune(v), nil
		}
	}
	return 0, l.errf("a \\u escape needs four hex digits")
}

// identName reads an identifier name at l.pos, decoding \u escapes.
func (l *lexer) identName() (string, error) {
	var b strings.Builder
	first := true
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		var r rune
		n := 1
		switch {
		case c == '\\':
			if l.peekByte(1) != 'u' {
				return "", l.errf("a backslash in a name must start a \\u escape")
			}
			l.pos += 2
			var err error
			if r, err = l.unicodeEscape(); err != nil {
				return "", err
			}
			if !(first && isIDStart(r) || !first && isIDPart(r)) {
				return "", l.errf("the escape \\u%04X cannot appear in a name", r)
			}
			n = 0
		case c < utf8.RuneSelf:
			r = rune(c)
		default:
			r, n = utf8.DecodeRuneInString(l.src[l.pos:])
		}
		if n > 0 {
			if !(first && isIDStart(r) || !first && isIDPart(r)) {
				break
			}
			l.pos += n
		}
		b.WriteRune(r)
		first = false
	}
	return b.String(), nil
}

func (l *lexer) number() {
	if l.src[l.pos] == '0' && strings.IndexByte("xXoObB", l.peekByte(1)) >= 0 {
		l.pos += 2
		for l.pos < len(l.src) && (isHexDigit(l.src[l.pos]) || l.src[l.pos] == '_') {
			l.pos++
		}
	} else {
		l.decimals()
		if l.peekByte(0) == '.' {
			l.pos++
			l.decimals()
		}
		if c := l.peekByte(0); c == 'e' || c == 'E' {
			l.pos++
			if s := l.peekByte(0); s == '+' || s == '-' {
				l.pos++
			}
			l.decimals()
		}
	}
	if l.peekByte(0) == 'n' {
		l.pos++
	}
}

func (l *lexer) decimals() {
	for l.pos < len(l.src) && (isDigit(l.src[l.pos]) || l.src[l.pos] == '_') {
		l.pos++
	}
}

// regex reads a regular expression literal; the "/" is at l.pos.
func (l *lexer) regex() error {
	l.pos++
	inClass := false
	for {
		if l.pos >= len(l.src) {
			return l.errf("a regular expression is never closed")
		}
		c := l.src[l.pos]
		switch {
		case c == '\n' || c == '\r' || strings.HasPrefix(l.src[l.pos:], "\u2028") || strings.HasPrefix(l.src[l.pos:], "\u2029"):
			return l.errf("a regular expression runs past the end of its line")
		case c == '\\':
			l.pos++
			if l.pos < len(l.src) && l.src[l.pos] == '\n' {
				return l.errf("a regular expression runs past the end of its line")
			}
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '/' && !inClass:
			l.pos++
			for l.pos < len(l.src) {
				r, n := utf8.DecodeRuneInString(l.src[l.pos:])
				if !isIDPart(r) {
					break
				}
				l.pos += n
			}
			return nil
		}
		l.pos++
	}
}

func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool    { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isIDStart(r rune) bool {
	return r == '$' || r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r)
}

func isIDPart(r rune) bool {
	return isIDStart(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc) ||
		unicode.Is(unicode.Other_ID_Continue, r) || r == '\u200C' || r == '\u200D'
}
