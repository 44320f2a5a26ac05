package ref

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/markdoc"
	"go.yaml.in/yaml/v3"
)

// Kind says where a ref was written.
type Kind string

const (
	Frontmatter Kind = "frontmatter" // a frontmatter key ref or refs, at any depth
	Markdoc     Kind = "markdoc"     // a body Markdoc attribute ref="…"
	Link        Kind = "link"        // a Markdown link or image, inline or a reference definition
	Wikilink    Kind = "wikilink"    // [[name]], [[name|alias]], [[name#heading]], ![[embed]]
)

// Ref is one reference to another box file. Start and End are byte offsets of the target in the whole
// file; when Verbatim, data[Start:End] == Raw and a rewrite may replace exactly those bytes.
type Ref struct {
	Kind     Kind   `json:"kind"`
	Raw      string `json:"raw"`                // the target: YAML and Markdoc strings unquoted, links as written
	Path     string `json:"path"`               // Raw without its ?query and #fragment
	Query    string `json:"query,omitempty"`    // "?…" or ""
	Fragment string `json:"fragment,omitempty"` // "#…" or ""
	Start    int    `json:"start"`
	End      int    `json:"end"`
	Line     int    `json:"line"`
	Verbatim bool   `json:"verbatim"`
}

// URLRef is one external http(s) URL in a file's body (links, autolinks, bare URLs) or in a ref key.
type URLRef struct {
	URL   string `json:"url"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Line  int    `json:"line"`
}

// Extract returns every ref in a card or Markdown file, in file order. When the frontmatter does not
// parse it still returns the body's refs, with an Invalid error naming the file and line.
func Extract(boxPath string, data []byte) ([]Ref, error) {
	d := split(data)
	refs, _, err := d.frontmatter()
	if err != nil {
		err = errs.Wrap("ref.extract", errs.Invalid, err, fmt.Sprintf("%s: the frontmatter is not valid YAML", boxPath))
	}
	body, _ := d.body()
	refs = append(refs, body...)
	for i := range refs {
		refs[i].Line = d.line(refs[i].Start)
	}
	return refs, err
}

// ExternalURLs returns the http(s) URLs of a file, in file order; fenced code and code spans are skipped.
func ExternalURLs(data []byte) []URLRef {
	d := split(data)
	_, urls, _ := d.frontmatter()
	_, body := d.body()
	urls = append(urls, body...)
	for i := range urls {
		urls[i].Line = d.line(urls[i].Start)
	}
	return urls
}

// doc is a file split into its frontmatter YAML and its body, by byte offsets.
type doc struct {
	data               []byte
	yamlStart, yamlEnd int // the YAML between the --- lines; yamlStart < 0 when there is no frontmatter
	bodyStart          int
	lines              []int // offsets of line starts ("\n" lines, as editors count them)
}

func split(data []byte) *doc {
	d := &doc{data: data, yamlStart: -1, yamlEnd: -1}
	d.lines = append(d.lines, 0)
	for i, c := range data {
		if c == '\n' {
			d.lines = append(d.lines, i+1)
		}
	}
	start := 0
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		start = 3
	}
	first, next := lineAt(data, start)
	if !markdoc.IsFrontDelimiter(first) {
		d.bodyStart = start
		return d
	}
	for pos := next; pos < len(data); {
		l, n := lineAt(data, pos)
		if markdoc.IsFrontDelimiter(l) {
			d.yamlStart, d.yamlEnd, d.bodyStart = next, pos, n
			return d
		}
		pos = n
	}
	d.bodyStart = start // an unclosed frontmatter is the card parser's error; read it all as body
	return d
}

// lineAt returns the line starting at pos without its line break, and the offset of the next line.
func lineAt(data []byte, pos int) ([]byte, int) {
	end := bytes.IndexByte(data[pos:], '\n')
	if end < 0 {
		return data[pos:], len(data)
	}
	return bytes.TrimSuffix(data[pos:pos+end], []byte("\r")), pos + end + 1
}

// line is the 1-based line of a byte offset.
func (d *doc) line(off int) int {
	return sort.Search(len(d.lines), func(i int) bool { return d.lines[i] > off })
}

func (d *doc) body() ([]Ref, []URLRef) {
	s := &scanner{data: d.data}
	s.scan(d.bodyStart, len(d.data))
	return s.refs, s.urls
}

// frontmatter returns the refs under every ref/refs key, and the http(s) URLs among them.
func (d *doc) frontmatter() ([]Ref, []URLRef, error) {
	if d.yamlStart < 0 {
		return nil, nil, nil
	}
	src := d.data[d.yamlStart:d.yamlEnd]
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, nil, fmt.Errorf("line %d: %w", d.line(d.yamlStart), err)
	}
	w := &yamlWalk{d: d, breaks: yamlLines(src)}
	w.walk(&root)
	return w.refs, w.urls, nil
}

type yamlWalk struct {
	d      *doc
	breaks []int // offsets (in the YAML) of line starts, counting breaks the way the YAML scanner does
	refs   []Ref
	urls   []URLRef
}

func (w *yamlWalk) walk(n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			w.walk(c)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && (k.Value == "ref" || k.Value == "refs") {
				w.collect(v)
				continue
			}
			w.walk(v)
		}
	}
}

// collect takes the refs of a ref/refs value: a scalar, a list of them, or mappings holding more ref keys.
func (w *yamlWalk) collect(n *yaml.Node) {
	switch n.Kind {
	case yaml.ScalarNode:
		w.scalar(n)
	case yaml.SequenceNode:
		for _, c := range n.Content {
			w.collect(c)
		}
	case yaml.MappingNode:
		w.walk(n)
	}
}

func (w *yamlWalk) scalar(n *yaml.Node) {
	// Block scalars are prose, not refs; null means "no ref".
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 || n.Tag == "!!null" {
		return
	}
	start, verbatim := w.locate(n)
	end := start + len(n.Value)
	if !verbatim {
		end = start
	}
	switch classify(n.Value) {
	case external:
		return
	case webURL:
		w.urls = append(w.urls, URLRef{URL: n.Value, Start: start, End: end})
		return
	}
	r := newRef(Frontmatter, n.Value, start, end)
	r.Verbatim = verbatim
	w.refs = append(w.refs, r)
}

// locate finds the byte offset of a scalar's value in the file and whether the bytes there are the value
// itself (no escapes, folding or quote doubling in between).
func (w *yamlWalk) locate(n *yaml.Node) (int, bool) {
	if n.Line < 1 || n.Line > len(w.breaks) {
		return w.d.yamlStart, false
	}
	src := w.d.data[w.d.yamlStart:w.d.yamlEnd]
	off := w.breaks[n.Line-1]
	for i := 1; i < n.Column && off < len(src); i++ {
		_, size := utf8.DecodeRune(src[off:])
		off += size
	}
	off = skipProperties(src, off)
	abs := w.d.yamlStart + off
	v := n.Value
	switch n.Style & (yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle) {
	case 0:
		return abs, bytes.HasPrefix(src[off:], []byte(v))
	default:
		if off >= len(src) || (src[off] != '"' && src[off] != '\'') {
			return abs, false
		}
		q := src[off]
		rest := src[off+1:]
		ok := bytes.HasPrefix(rest, []byte(v)) && len(rest) > len(v) && rest[len(v)] == q &&
			!strings.ContainsRune(v, rune(q)) && (q == '\'' || !strings.Contains(v, `\`))
		return abs + 1, ok
	}
}

// skipProperties steps over an anchor (&a) or a tag (!x) before a scalar, where the node's mark points.
func skipProperties(src []byte, off int) int {
	for off < len(src) && (src[off] == '&' || src[off] == '!') {
		for off < len(src) && src[off] != ' ' && src[off] != '\t' && src[off] != '\n' && src[off] != '\r' {
			off++
		}
		for off < len(src) && (src[off] == ' ' || src[off] == '\t') {
			off++
		}
	}
	return off
}

// yamlLines returns line-start offsets using YAML's line breaks: CRLF, CR, LF, NEL, LS and PS.
func yamlLines(src []byte) []int {
	out := []int{0}
	for i := 0; i < len(src); i++ {
		switch {
		case src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n':
			i++
			out = append(out, i+1)
		case src[i] == '\r' || src[i] == '\n':
			out = append(out, i+1)
		case src[i] == 0xC2 && i+1 < len(src) && src[i+1] == 0x85:
			i++
			out = append(out, i+1)
		case src[i] == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && (src[i+2] == 0xA8 || src[i+2] == 0xA9):
			i += 2
			out = append(out, i+1)
		}
	}
	return out
}

// newRef splits a target into path, ?query and #fragment. The fragment starts at the first '#'; the
// query at the first '?' before it.
func newRef(k Kind, raw string, start, end int) Ref {
	r := Ref{Kind: k, Raw: raw, Start: start, End: end, Verbatim: true}
	p := raw
	if i := strings.IndexByte(p, '#'); i >= 0 {
		r.Fragment, p = p[i:], p[:i]
	}
	if k != Wikilink {
		if i := strings.IndexByte(p, '?'); i >= 0 {
			r.Query, p = p[i:], p[:i]
		}
	}
	r.Path = p
	return r
}

// target is what a written target is: a box ref, a pure #anchor, an http(s) URL or another scheme.
type target int

const (
	boxRef target = iota
	anchor
	webURL
	external
)

func classify(s string) target {
	switch {
	case strings.HasPrefix(s, "#"):
		return anchor
	case strings.HasPrefix(s, "//"):
		return external
	}
	scheme, ok := schemeOf(s)
	switch {
	case !ok:
		return boxRef
	case strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"):
		return webURL
	}
	return external
}

// schemeOf reports a URL scheme ("https", "mailto", "tel", …) at the start of s.
func schemeOf(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return s[:i], i > 0
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return "", false
		}
	}
	return "", false
}
