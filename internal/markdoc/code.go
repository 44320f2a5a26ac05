package markdoc

import (
	"bytes"
	"sort"
)

// Span is a half-open byte range [Start, End) of the parsed source.
type Span struct{ Start, End int }

// nextFence finds the first fenced block whose opening line starts at or after pos (pos is always a
// line start); it returns -1 when there is none.
func nextFence(src []byte, pos int) (start, end int) {
	for ls := pos; ls < len(src); {
		le := lineEnd(src, ls)
		if ch, n, ok := fenceOpen(src[ls:le]); ok {
			return ls, fenceClose(src, nextLine(src, le), ch, n)
		}
		ls = nextLine(src, le)
	}
	return -1, -1
}

// fenceOpen reports whether line opens a fence: optional indentation, then three or more ` or ~.
// A backtick fence's info string may not contain a backtick.
func fenceOpen(line []byte) (ch byte, n int, ok bool) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, false
	}
	ch = line[i]
	for i+n < len(line) && line[i+n] == ch {
		n++
	}
	if n < 3 || (ch == '`' && bytes.IndexByte(line[i+n:], '`') >= 0) {
		return 0, 0, false
	}
	return ch, n, true
}

// fenceClose returns the end of the line that closes a fence of n ch characters, or len(src).
func fenceClose(src []byte, pos int, ch byte, n int) int {
	for ls := pos; ls < len(src); {
		le := lineEnd(src, ls)
		t := bytes.TrimRight(bytes.TrimLeft(src[ls:le], " \t"), " \t\r")
		if len(t) >= n && len(bytes.Trim(t, string(ch))) == 0 {
			return nextLine(src, le)
		}
		ls = nextLine(src, le)
	}
	return len(src)
}

// spanClose returns the end of the run of exactly n backticks that closes the code span opening at
// i, or -1: a code span does not cross a blank line. The runs and blank lines of the segment starting
// at from are indexed on first use.
func (p *parser) spanClose(from, i, n int) int {
	if p.runs == nil {
		p.indexTicks(from)
	}
	runs := p.runs[n]
	k := sort.SearchInts(runs, i+n)
	if k == len(runs) {
		return -1
	}
	if b := sort.SearchInts(p.blanks, i); b < len(p.blanks) && p.blanks[b] < runs[k] {
		return -1
	}
	return runs[k] + n
}

func (p *parser) indexTicks(from int) {
	src, to := p.src, p.inlineTo
	p.runs = map[int][]int{}
	blankLine := true
	for i := from; i < to; {
		switch c := src[i]; {
		case c == '`':
			n := runLen(src, i, to, '`')
			p.runs[n] = append(p.runs[n], i)
			i += n
			blankLine = false
			continue
		case c == '\n':
			if blankLine {
				p.blanks = append(p.blanks, i)
			}
			blankLine = true
		case c != ' ' && c != '\t' && c != '\r':
			blankLine = false
		}
		i++
	}
}

func runLen(src []byte, i, to int, ch byte) int {
	n := 0
	for i+n < to && src[i+n] == ch {
		n++
	}
	return n
}

func lineEnd(src []byte, ls int) int {
	if i := bytes.IndexByte(src[ls:], '\n'); i >= 0 {
		return ls + i
	}
	return len(src)
}

func nextLine(src []byte, le int) int {
	if le < len(src) {
		return le + 1
	}
	return le
}
