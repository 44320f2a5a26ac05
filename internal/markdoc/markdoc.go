// Package markdoc owns the Markdoc tag syntax of card bodies: tags, typed attribute values with their
// byte offsets, nesting errors, and where code is. It knows no card types or refs (schema and ref do).
package markdoc

import (
	"bytes"
	"fmt"
)

// Kind is the type of an attribute value.
type Kind int

const (
	String Kind = iota
	Number
	Bool
	Null
	Array
	Hash
	Variable // $name or $name.path[0]; Str holds the path without the $
	Function // name(args); Str holds the name, Items the arguments
)

// Value is a typed attribute value. Start and End are byte offsets in the parsed source: for a
// string, the raw text between the quotes (so a resolver can rewrite it in place); otherwise the
// whole value.
type Value struct {
	Kind       Kind
	Str        string  // String: the unescaped text; Variable: the path; Function: the name
	Num        float64 // Number
	Bool       bool    // Bool
	Items      []Value // Array items, Hash values (in order), Function arguments
	Keys       []string
	Start, End int
}

// Attr is one attribute. A primary attribute ({% tag "x" %}) has the name "primary".
type Attr struct {
	Name    string
	Value   Value
	Primary bool
}

// Tag is an opening or self-closing tag. Start and End are the byte offsets of {% … %}; Line is the
// 1-based line of its start; CloseLine is the line of its closing tag (0 if self-closing or unclosed).
type Tag struct {
	Name        string
	Attrs       []Attr
	Line        int
	CloseLine   int
	Start, End  int
	SelfClosing bool
}

// Error codes.
const (
	CodeSyntax     = "markdoc-syntax"
	CodeUnclosed   = "markdoc-unclosed"
	CodeMismatched = "markdoc-mismatched-close"
	CodeStray      = "markdoc-stray-close"
)

// Error is a syntax or nesting problem at a 1-based line. It is a finding, not a Go error: the schema
// check reports each by its Code and Msg.
type Error struct {
	Line int
	Code string
	Msg  string
}

// Doc is the result of parsing a body.
type Doc struct {
	Tags   []Tag   // in source order
	Errors []Error // in the order found
	Code   []Span  // fenced blocks and code spans, in order
}

// Parse scans src for Markdoc tags outside code. It never fails: problems are in Doc.Errors.
func Parse(src []byte) *Doc {
	p := &parser{src: src, line: 1}
	pos := 0
	for _, f := range Fences(src) {
		p.inline(pos, f.Start)
		p.doc.Code = append(p.doc.Code, f)
		pos = f.End
	}
	if pos < len(src) {
		p.inline(pos, len(src))
	}
	for i := len(p.stack) - 1; i >= 0; i-- {
		t := p.doc.Tags[p.stack[i]]
		p.errorf(t.Line, CodeUnclosed, "{%% %s %%} is never closed: add {%% /%s %%}", t.Name, t.Name)
	}
	return &p.doc
}

// Fences returns the fenced code blocks of src in order: Doc.Code without the code spans. Each starts
// at a line start and ends after its closing line (or at the end of src when it is never closed).
func Fences(src []byte) []Span {
	var out []Span
	for pos := 0; pos < len(src); {
		fs, fe := nextFence(src, pos)
		if fs < 0 {
			break
		}
		out = append(out, Span{fs, fe})
		pos = fe
	}
	return out
}

type parser struct {
	src      []byte
	doc      Doc
	stack    []int // indexes of open tags
	line     int   // line at lineOff
	lineOff  int
	inlineTo int // end of the current segment without fences

	// Indexes that keep scanning linear on hostile input (a megabyte of unmatched ` or {%).
	nextClose int           // offset of the next "%}" in the segment at or after the last search; inlineTo if none
	runs      map[int][]int // backtick runs in the segment by length: their start offsets
	blanks    []int         // starts of blank lines in the segment
}

// maxTag bounds how far one tag may reach, so one bad tag cannot make every later one rescan.
const maxTag = 16 << 10

func (p *parser) lineAt(off int) int {
	if off < p.lineOff {
		p.line, p.lineOff = 1, 0
	}
	p.line += bytes.Count(p.src[p.lineOff:off], []byte{'\n'})
	p.lineOff = off
	return p.line
}

// MaxErrors is how many problems one body reports; the rest are summed up in one last error.
const MaxErrors = 100

func (p *parser) errorf(line int, code, format string, a ...any) {
	switch n := len(p.doc.Errors); {
	case n < MaxErrors:
		p.doc.Errors = append(p.doc.Errors, Error{Line: line, Code: code, Msg: fmt.Sprintf(format, a...)})
	case n == MaxErrors:
		p.doc.Errors = append(p.doc.Errors, Error{Line: line, Code: CodeSyntax, Msg: "too many Markdoc problems: fix the ones above first"})
	}
}

// inline scans src[from:to] (no fences inside) for code spans and tags.
func (p *parser) inline(from, to int) {
	p.inlineTo, p.nextClose, p.runs, p.blanks = to, -1, nil, nil
	src := p.src
	for i := from; i < to; {
		switch {
		case src[i] == '\\':
			i += 2
		case src[i] == '`':
			n := runLen(src, i, to, '`')
			if end := p.spanClose(from, i, n); end >= 0 {
				p.doc.Code = append(p.doc.Code, Span{i, end})
				i = end
			} else {
				i += n
			}
		case src[i] == '{' && i+1 < to && src[i+1] == '%':
			i = p.tag(i)
		default:
			i++
		}
	}
}

// tag parses the tag starting at {% and returns where scanning continues.
func (p *parser) tag(start int) int {
	line := p.lineAt(start)
	if p.nextClose < start+2 {
		p.nextClose = p.inlineTo
		if i := bytes.Index(p.src[start+2:p.inlineTo], []byte("%}")); i >= 0 {
			p.nextClose = start + 2 + i
		}
	}
	if p.nextClose == p.inlineTo {
		p.errorf(line, CodeSyntax, "a tag opened with {%% is never ended with %%}")
		return start + 2
	}
	s := &scanner{src: p.src, pos: start + 2, to: min(p.inlineTo, start+maxTag)}
	t, closing, skip, err := s.tagBody()
	if err != nil {
		p.errorf(line+bytes.Count(p.src[start:min(s.pos, s.to)], []byte{'\n'}), CodeSyntax, "%s", err)
		// Resume after the first %} so one bad tag costs one error.
		return p.nextClose + 2
	}
	end := s.pos
	if skip { // an annotation or an interpolation: not a tag
		return end
	}
	t.Line, t.Start, t.End = line, start, end
	switch {
	case closing:
		p.close(t.Name, line)
	case t.SelfClosing:
		p.doc.Tags = append(p.doc.Tags, t)
	default:
		p.doc.Tags = append(p.doc.Tags, t)
		p.stack = append(p.stack, len(p.doc.Tags)-1)
	}
	return end
}

func (p *parser) close(name string, line int) {
	for i := len(p.stack) - 1; i >= 0; i-- {
		open := &p.doc.Tags[p.stack[i]]
		if open.Name != name {
			continue
		}
		if i != len(p.stack)-1 {
			inner := p.doc.Tags[p.stack[len(p.stack)-1]]
			p.errorf(line, CodeMismatched, "{%% /%s %%} closes %s while {%% %s %%} from line %d is still open",
				name, name, inner.Name, inner.Line)
		}
		open.CloseLine = line
		p.stack = p.stack[:i]
		return
	}
	p.errorf(line, CodeStray, "{%% /%s %%} closes a tag that is not open", name)
}
