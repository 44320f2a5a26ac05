package ref

import (
	"bytes"
	"sort"
	"strings"
	"unicode"

	"github.com/boxmem/box/internal/markdoc"
)

// Bounds that keep the scanner linear on hostile input; real link texts and tags are far shorter.
const (
	maxLinkText = 1000
	maxTag      = 2048
	maxWikilink = 1024
	maxDest     = 4096 // a link destination with its title
)

// scanner finds refs and URLs in a Markdown body. It is deliberately small: fenced code blocks, code
// spans and HTML comments are skipped; indented code blocks are not (nested list content looks the
// same, and missing a real ref is worse than checking a quoted one).
type scanner struct {
	data []byte
	refs []Ref
	urls []URLRef

	ticks      map[int][]int // backtick-run starts by run length, sorted
	blanks     []int         // offsets of blank lines: a paragraph ends there
	closers    []int         // offsets of "]"
	match      map[int]int   // "[" offset → its matching "]" within the paragraph
	tagEnds    []int         // offsets of "%}"
	noComments bool          // no "-->" after the last search: stop looking
}

func (s *scanner) scan(start, end int) {
	for _, seg := range textSegments(s.data, start, end) {
		s.index(seg[0], seg[1])
		s.matchBrackets(seg[0], seg[1])
		s.inline(seg[0], seg[1])
	}
}

// textSegments returns the [start, end) ranges of the body outside fenced code blocks. The fences are
// markdoc's (one definition of where code is); code spans are left to the scanner, which pairs them
// with brackets.
func textSegments(data []byte, start, end int) [][2]int {
	body := data[start:end]
	var out [][2]int
	segStart := 0
	for _, sp := range markdoc.Fences(body) {
		if sp.Start > segStart {
			out = append(out, [2]int{start + segStart, start + sp.Start})
		}
		segStart = sp.End
	}
	if segStart < len(body) {
		out = append(out, [2]int{start + segStart, end})
	}
	return out
}

// index records backtick runs and blank lines of a segment, so that code spans resolve in O(log n).
func (s *scanner) index(a, b int) {
	s.ticks = map[int][]int{}
	s.blanks, s.closers, s.tagEnds = s.blanks[:0], s.closers[:0], s.tagEnds[:0]
	for i := a; i < b; {
		switch s.data[i] {
		case ']':
			s.closers = append(s.closers, i)
		case '%':
			if i+1 < b && s.data[i+1] == '}' {
				s.tagEnds = append(s.tagEnds, i)
			}
		case '`':
			j := i
			for j < b && s.data[j] == '`' {
				j++
			}
			s.ticks[j-i] = append(s.ticks[j-i], i)
			i = j
			continue
		case '\n':
			j := i + 1
			for j < b && (s.data[j] == ' ' || s.data[j] == '\t' || s.data[j] == '\r') {
				j++
			}
			if j < b && s.data[j] == '\n' {
				s.blanks = append(s.blanks, i)
			}
		}
		i++
	}
}

// matchBrackets pairs every "[" with its "]" in one pass, skipping escapes and code spans; a blank
// line closes every open bracket.
func (s *scanner) matchBrackets(a, b int) {
	s.match = map[int]int{}
	var open []int
	blank := 0
	for i := a; i < b; i++ {
		for blank < len(s.blanks) && s.blanks[blank] < i {
			blank++
			open = open[:0]
		}
		switch s.data[i] {
		case '\\':
			i++
		case '`':
			end, _ := s.codeSpan(i, b)
			i = end - 1
		case '[':
			open = append(open, i)
		case ']':
			if n := len(open); n > 0 {
				s.match[open[n-1]] = i
				open = open[:n-1]
			}
		}
	}
}

// next returns the first offset in sorted at or after i, or -1.
func next(sorted []int, i int) int {
	k := sort.SearchInts(sorted, i)
	if k == len(sorted) {
		return -1
	}
	return sorted[k]
}

// paraEnd is the end of the paragraph holding i, or b.
func (s *scanner) paraEnd(i, b int) int {
	k := sort.SearchInts(s.blanks, i)
	if k < len(s.blanks) && s.blanks[k] < b {
		return s.blanks[k]
	}
	return b
}

// codeSpan returns the end of the code span opening with the backtick run at i, or the end of the
// run when nothing closes it (then the backticks are literal).
func (s *scanner) codeSpan(i, b int) (int, bool) {
	j := i
	for j < b && s.data[j] == '`' {
		j++
	}
	n := j - i
	starts := s.ticks[n]
	k := sort.SearchInts(starts, j)
	limit := s.paraEnd(i, b)
	if k < len(starts) && starts[k] < limit && starts[k]+n <= b {
		return starts[k] + n, true
	}
	return j, false
}

// inline scans text in [a, b) for links, wikilinks, Markdoc tags, autolinks and bare URLs.
func (s *scanner) inline(a, b int) {
	d := s.data
	for i := a; i < b; {
		switch c := d[i]; {
		case c == '\\':
			i += 2
		case c == '`':
			i, _ = s.codeSpan(i, b)
		case c == '<':
			i = s.angle(i, b)
		case c == '{' && i+1 < b && d[i+1] == '%':
			i = s.markdoc(i, b)
		case c == '[' && i+1 < b && d[i+1] == '[':
			if end, ok := s.wikilink(i, b); ok {
				i = end
			} else {
				i = s.link(i, b)
			}
		case c == '[':
			i = s.link(i, b)
		case (c == 'h' || c == 'H') && (i == a || !isWord(d[i-1])):
			i = s.bareURL(i, b)
		default:
			i++
		}
	}
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// angle handles "<" : an HTML comment (skipped), an autolink <scheme:…>, or a plain "<".
func (s *scanner) angle(i, b int) int {
	d := s.data
	if bytes.HasPrefix(d[i:b], []byte("<!--")) {
		if s.noComments {
			return i + 4
		}
		k := bytes.Index(d[i+4:b], []byte("-->"))
		if k < 0 {
			s.noComments = true
			return i + 4
		}
		return i + 4 + k + 3
	}
	j := i + 1
	for j < b && d[j] != '>' && d[j] != '<' && d[j] > ' ' {
		j++
	}
	if j >= b || d[j] != '>' {
		return i + 1
	}
	inner := string(d[i+1 : j])
	if _, ok := schemeOf(inner); ok {
		if classify(inner) == webURL {
			s.urls = append(s.urls, URLRef{URL: inner, Start: i + 1, End: j})
		}
		return j + 1
	}
	return i + 1
}

// wikilink reads [[target]], [[target|alias]] or [[target#heading]] on one line.
func (s *scanner) wikilink(i, b int) (int, bool) {
	d := s.data
	limit := min(b, i+maxWikilink)
	if c := next(s.closers, i); c < 0 || c+2 > limit {
		return 0, false
	}
	k := bytes.Index(d[i+2:limit], []byte("]]"))
	if k < 0 {
		return 0, false
	}
	inner := d[i+2 : i+2+k]
	if len(inner) == 0 || bytes.ContainsAny(inner, "[]\n\r") {
		return 0, false
	}
	t := inner
	if p := bytes.IndexByte(t, '|'); p >= 0 {
		t = bytes.TrimSuffix(t[:p], []byte(`\`)) // "\|" is a table-escaped pipe
	}
	left := bytes.TrimLeftFunc(t, unicode.IsSpace)
	start := i + 2 + len(t) - len(left)
	t = bytes.TrimRightFunc(left, unicode.IsSpace)
	raw := string(t)
	if raw != "" && !strings.HasPrefix(raw, "#") {
		s.refs = append(s.refs, newRef(Wikilink, raw, start, start+len(t)))
	}
	return i + 2 + k + 2, true
}

// link handles "[": an inline link or image [text](dest "title"), or a reference definition
// [label]: dest at the start of a line. Nested links in the text (an image in a link) are scanned too.
func (s *scanner) link(i, b int) int {
	d := s.data
	j, ok := s.closeBracket(i, b)
	if !ok {
		return i + 1
	}
	b = s.paraEnd(j, b) // a link never crosses a blank line
	switch {
	case j+1 < b && d[j+1] == '(':
		ds, de, end, ok := s.destination(j+2, b)
		if !ok {
			return i + 1
		}
		s.inline(i+1, j)
		s.addLink(ds, de)
		return end
	case j+1 < b && d[j+1] == ':' && atLineStart(d, i):
		ds, de, ok := s.definition(j+2, b)
		if !ok {
			return i + 1
		}
		s.addLink(ds, de)
		return de
	}
	return i + 1
}

// closeBracket returns the "]" matching the "[" at i, if it is before b and near enough.
func (s *scanner) closeBracket(i, b int) (int, bool) {
	j, ok := s.match[i]
	return j, ok && j < b && j-i <= maxLinkText
}

// destination parses "dest "title")" after "(" and returns the dest span and the offset after ")".
func (s *scanner) destination(p, b int) (ds, de, end int, ok bool) {
	d := s.data
	b = min(b, p+maxDest)
	p = skipSpace(d, p, b)
	if p < b && d[p] == '<' {
		k := p + 1
		for k < b && d[k] != '>' && d[k] != '<' && d[k] != '\n' {
			if d[k] == '\\' {
				k++
			}
			k++
		}
		if k >= b || d[k] != '>' {
			return 0, 0, 0, false
		}
		ds, de, p = p+1, k, k+1
	} else {
		depth := 0
		ds = p
	loop:
		for p < b {
			switch c := d[p]; {
			case c == '\\' && p+1 < b:
				p++
			case c <= ' ':
				break loop
			case c == '(':
				if depth++; depth > 32 {
					return 0, 0, 0, false
				}
			case c == ')':
				if depth == 0 {
					break loop
				}
				depth--
			}
			p++
		}
		if depth != 0 {
			return 0, 0, 0, false
		}
		de = p
	}
	p = skipSpace(d, p, b)
	if p < b && (d[p] == '"' || d[p] == '\'' || d[p] == '(') && p > de {
		closer := d[p]
		if closer == '(' {
			closer = ')'
		}
		k := p + 1
		for k < b && d[k] != closer {
			if d[k] == '\\' {
				k++
			}
			k++
		}
		if k >= b {
			return 0, 0, 0, false
		}
		p = skipSpace(d, k+1, b)
	}
	if p >= b || d[p] != ')' {
		return 0, 0, 0, false
	}
	return ds, de, p + 1, true
}

// definition parses the destination of a reference definition "[label]: dest".
func (s *scanner) definition(p, b int) (ds, de int, ok bool) {
	d := s.data
	p = skipSpace(d, p, b)
	if p < b && d[p] == '<' {
		k := bytes.IndexByte(d[p:b], '>')
		if k < 0 || bytes.ContainsAny(d[p+1:p+k], "\n<") {
			return 0, 0, false
		}
		return p + 1, p + k, true
	}
	k := p
	for k < b && d[k] > ' ' {
		k++
	}
	return p, k, k > p
}

// skipSpace skips spaces and tabs and at most one line break.
func skipSpace(d []byte, p, b int) int {
	nl := false
	for p < b {
		switch d[p] {
		case ' ', '\t', '\r':
		case '\n':
			if nl {
				return p
			}
			nl = true
		default:
			return p
		}
		p++
	}
	return p
}

// atLineStart reports whether only up to three spaces stand between the line start and i.
func atLineStart(d []byte, i int) bool {
	n := 0
	for k := i - 1; k >= 0 && d[k] != '\n'; k-- {
		if d[k] != ' ' || n == 3 {
			return false
		}
		n++
	}
	return true
}

func (s *scanner) addLink(ds, de int) {
	raw := string(s.data[ds:de])
	switch classify(raw) {
	case boxRef:
		s.refs = append(s.refs, newRef(Link, raw, ds, de))
	case webURL:
		s.urls = append(s.urls, URLRef{URL: raw, Start: ds, End: de})
	}
}

// markdoc reads a {% … %} tag and takes its ref="…" / ref='…' attributes.
func (s *scanner) markdoc(i, b int) int {
	d := s.data
	limit := min(b, i+maxTag)
	if c := next(s.tagEnds, i+2); c < 0 || c+2 > limit {
		return i + 2 // no "%}" near enough: not a tag
	}
	for k := i + 2; k < limit; k++ {
		switch c := d[k]; {
		case c == '%' && k+1 < limit && d[k+1] == '}':
			return k + 2
		case c == '"' || c == '\'':
			end, ok := quoted(d, k, limit)
			if !ok {
				return i + 2
			}
			k = end - 1
		case c == 'r' && bytes.HasPrefix(d[k:limit], []byte("ref=")) && isSpace(d[k-1]):
			q := k + 4
			if q >= limit || (d[q] != '"' && d[q] != '\'') {
				continue
			}
			end, ok := quoted(d, q, limit)
			if !ok {
				return i + 2
			}
			s.addMarkdoc(q+1, end-1)
			k = end - 1
		}
	}
	return i + 2
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// quoted returns the offset after the string opening at q, honouring backslash escapes.
func quoted(d []byte, q, limit int) (int, bool) {
	for k := q + 1; k < limit; k++ {
		switch d[k] {
		case '\\':
			k++
		case d[q]:
			return k + 1, true
		}
	}
	return 0, false
}

func (s *scanner) addMarkdoc(start, end int) {
	text := s.data[start:end]
	raw := string(text)
	verbatim := !bytes.ContainsRune(text, '\\')
	if !verbatim {
		var b strings.Builder
		for k := 0; k < len(text); k++ {
			if text[k] == '\\' && k+1 < len(text) {
				k++
			}
			b.WriteByte(text[k])
		}
		raw = b.String()
	}
	switch classify(raw) {
	case webURL:
		s.urls = append(s.urls, URLRef{URL: raw, Start: start, End: end})
	case external:
	default:
		r := newRef(Markdoc, raw, start, end)
		r.Verbatim = verbatim
		s.refs = append(s.refs, r)
	}
}

// bareURL takes an http(s) URL written as plain text.
func (s *scanner) bareURL(i, b int) int {
	d := s.data
	rest := d[i:b]
	if !hasPrefixFold(rest, "http://") && !hasPrefixFold(rest, "https://") {
		return i + 1
	}
	k := i
	for k < b && d[k] > ' ' && !bytes.ContainsRune([]byte("<>\"`"), rune(d[k])) {
		k++
	}
	// Trailing punctuation belongs to the sentence, as does a ")" that opens nowhere in the URL.
	for k > i {
		c := d[k-1]
		if bytes.ContainsRune([]byte(".,:;!?*_~'"), rune(c)) {
			k--
			continue
		}
		if c == ')' && bytes.Count(d[i:k], []byte(")")) > bytes.Count(d[i:k], []byte("(")) {
			k--
			continue
		}
		break
	}
	if k-i <= len("https://") {
		return i + 1
	}
	s.urls = append(s.urls, URLRef{URL: string(d[i:k]), Start: i, End: k})
	return k
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}
