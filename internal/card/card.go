// Package card owns the card file format: `---` YAML `---` body, its type from the file name or the
// frontmatter, byte-exact round trips and text-surgical frontmatter edits. It knows no schemas or refs.
package card

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/markdoc"
)

// MaxSize is the largest card the box reads: 1 MiB.
const MaxSize = 1 << 20

// Card is a parsed card. Raw is never modified: Bytes reassembles exactly Raw from the parts.
type Card struct {
	Path      string     // box path, "/_content/memory/notes/entity-leo.md"
	Type      string     // "note", "kind-job", or "" for an untyped Markdown document
	Raw       []byte     // the file as read
	CRLF      bool       // the first line ends in \r\n; new lines written into the card use \r\n too
	HasFront  bool       // the file starts with a frontmatter block
	Front     []byte     // the YAML text between the delimiter lines
	FrontLine int        // file line of Front's first line (2), 0 without frontmatter
	Node      *yaml.Node // the frontmatter mapping (empty when there is none); node lines are file lines
	Body      []byte     // everything after the closing delimiter line
	BodyLine  int        // file line where Body starts

	open, close []byte              // the delimiter lines as written, with their line endings
	starts      []int               // offsets in Raw where frontmatter lines start (see lineStarts)
	inFlowNodes map[*yaml.Node]bool // nodes inside a flow collection ([…] or {…})
}

// Error is a problem in a card file at a line (0: the whole file). Parse wraps it in an
// errs.Invalid; validate turns it into a finding with errors.As.
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

func invalid(path string, line int, format string, a ...any) error {
	return errs.Wrap("card.parse", errs.Invalid, &Error{Path: path, Line: line, Msg: fmt.Sprintf(format, a...)}, "")
}

// Parse reads a card: size, NUL bytes and UTF-8 first, then the frontmatter (a YAML mapping), then
// the type (TypeOf). A .md file without frontmatter is fine; a .card needs one.
func Parse(boxPath string, data []byte) (*Card, error) {
	if len(data) > MaxSize {
		return nil, invalid(boxPath, 0, "the file is %d bytes, over the 1 MiB limit for a card: split it or move the data to an attachment", len(data))
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, invalid(boxPath, lineOf(data, i), "the file contains a NUL byte: cards are text")
	}
	if !utf8.Valid(data) {
		return nil, invalid(boxPath, lineOf(data, firstInvalid(data)), "the file is not valid UTF-8: save it as UTF-8")
	}
	c, err := split(boxPath, data)
	if err != nil {
		return nil, err
	}
	if !c.HasFront && isCardFile(boxPath) {
		return nil, invalid(boxPath, 1, "a .card file needs frontmatter: start it with a --- line, then YAML, then a --- line")
	}
	if err := c.parseFront(); err != nil {
		return nil, err
	}
	front, err := c.frontType()
	if err != nil {
		return nil, err
	}
	if c.Type, err = TypeOf(boxPath, front); err != nil {
		var e *errs.Error
		line := 0
		if n := c.Get("type"); n != nil {
			line = n.Line
		}
		if errors.As(err, &e) {
			return nil, invalid(boxPath, line, "%s", e.Msg)
		}
		return nil, err
	}
	return c, nil
}

// Get returns the value node of a top-level frontmatter key, or nil.
func (c *Card) Get(key string) *yaml.Node {
	_, v := lookup(c.Node, key)
	return v
}

// String returns a top-level scalar value as text ("" when missing or not a scalar).
func (c *Card) String(key string) string {
	if n := c.Get(key); n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return n.Value
	}
	return ""
}

// Decode decodes the frontmatter into v (a struct with yaml tags, or a map).
func (c *Card) Decode(v any) error {
	if err := c.Node.Decode(v); err != nil {
		return errs.Wrap("card.decode", errs.Invalid, err, c.Path+": frontmatter")
	}
	return nil
}

// lookup finds a key in a mapping node, returning the key and value nodes.
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Tag == "!!str" && k.Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// Split cuts a Markdown file into its frontmatter (the YAML between the --- lines, not read) and its body.
// ok is false, and body all of data, when the file has no frontmatter or it is never closed: a reader that
// only wants the text then keeps every word.
func Split(data []byte) (front, body []byte, ok bool) {
	c, err := split("", data)
	if err != nil || !c.HasFront {
		return nil, data, false
	}
	return c.Front, c.Body, true
}

// split cuts data into delimiter lines, frontmatter and body without parsing YAML.
func split(path string, data []byte) (*Card, error) {
	c := &Card{Path: path, Raw: data, Body: data, BodyLine: 1}
	first := lineEnd(data, 0)
	c.CRLF = first < len(data) && first > 0 && data[first-1] == '\r'
	if !markdoc.IsFrontDelimiter(data[:first]) || first == len(data) {
		if markdoc.IsFrontDelimiter(data[:first]) {
			return nil, invalid(path, 1, "the frontmatter is never closed: add a --- line after the YAML")
		}
		return c, nil
	}
	c.HasFront, c.FrontLine = true, 2
	c.open = data[:first+1]
	line := 2
	for ls := first + 1; ls < len(data); line++ {
		le := lineEnd(data, ls)
		if markdoc.IsFrontDelimiter(data[ls:le]) {
			end := min(le+1, len(data))
			c.Front, c.close, c.Body = data[first+1:ls], data[ls:end], data[end:]
			c.BodyLine = line + 1
			return c, nil
		}
		ls = le + 1
	}
	return nil, invalid(path, 1, "the frontmatter is never closed: add a --- line after the YAML")
}

var yamlLineRE = lazyregexp.New(`^yaml: line (\d+): (.*)$`)

// parseFront decodes the frontmatter into c.Node, a mapping whose node lines are file lines.
func (c *Card) parseFront() (err error) {
	c.Node = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1}
	if !c.HasFront {
		return nil
	}
	defer func() { // the YAML library has panicked on hostile input before; a card must not crash the box
		if r := recover(); r != nil {
			err = invalid(c.Path, c.FrontLine, "the frontmatter is not valid YAML (%v)", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(c.Front))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return c.yamlError(err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); err != io.EOF {
		if err != nil {
			return c.yamlError(err)
		}
		return invalid(c.Path, c.FrontLine-1+more.Line, "the frontmatter holds a second YAML document: remove the extra --- or ... line")
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return invalid(c.Path, c.FrontLine-1+root.Line, "the frontmatter must be key: value lines, not a %s", kindName(root))
	}
	c.shift(root, c.FrontLine-1, false, map[*yaml.Node]bool{})
	c.Node = root
	c.starts = c.lineStarts()
	return duplicates(c.Path, root)
}

func (c *Card) yamlError(err error) error {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		if strings.HasPrefix(m[2], "did not find expected") {
			n++ // the YAML parser (not its scanner) counts lines from 0
		}
		last := bytes.Count(bytes.TrimRight(c.Front, "\r\n"), []byte{'\n'}) + 1
		return invalid(c.Path, c.FrontLine-1+min(n, last), "the frontmatter is not valid YAML: %s", m[2])
	}
	return invalid(c.Path, c.FrontLine, "the frontmatter is not valid YAML: %s", bytes.TrimPrefix([]byte(err.Error()), []byte("yaml: ")))
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	}
	return "YAML node"
}

// shift turns frontmatter lines into file lines and notes the nodes inside flow collections.
func (c *Card) shift(n *yaml.Node, by int, flow bool, seen map[*yaml.Node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	n.Line += by
	if flow {
		if c.inFlowNodes == nil {
			c.inFlowNodes = map[*yaml.Node]bool{}
		}
		c.inFlowNodes[n] = true
	}
	for _, ch := range n.Content {
		c.shift(ch, by, flow || n.Style&yaml.FlowStyle != 0, seen)
	}
}

// duplicates refuses a key written twice in one mapping, at any depth.
func duplicates(path string, n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				continue
			}
			if prev, ok := seen[k.Value]; ok {
				return invalid(path, k.Line, "the key %q appears twice (lines %d and %d): keep one", k.Value, prev, k.Line)
			}
			seen[k.Value] = k.Line
		}
	}
	for _, ch := range n.Content {
		if err := duplicates(path, ch); err != nil {
			return err
		}
	}
	return nil
}

// frontType returns the frontmatter's top-level type: value, refusing a non-text one.
func (c *Card) frontType() (string, error) {
	n := c.Get("type")
	if n == nil || n.Tag == "!!null" {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", invalid(c.Path, n.Line, "type: must be a single word like note, not a %s", kindName(n))
	}
	return n.Value, nil
}

func lineEnd(data []byte, from int) int {
	if i := bytes.IndexByte(data[from:], '\n'); i >= 0 {
		return from + i
	}
	return len(data)
}

// lineOf is the 1-based line of byte offset off.
func lineOf(data []byte, off int) int { return bytes.Count(data[:off], []byte{'\n'}) + 1 }

func firstInvalid(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}
