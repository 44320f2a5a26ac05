package card

import (
	"errors"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Span returns the byte range [start, end) in c.Raw of a frontmatter node's text: a scalar's token
// with its quotes (without a tag or anchor), a flow collection with its brackets, a block collection
// from its first item to the end of its last. n must come from c.Node. The ref resolver uses it to
// rewrite a value in place.
func (c *Card) Span(n *yaml.Node) (start, end int, err error) {
	start, err = c.offset(n)
	if err != nil {
		return 0, 0, err
	}
	start = skipProps(c.Raw, start)
	end, err = c.end(n, c.inFlowNodes[n])
	return start, end, err
}

// lineStarts are the offsets in Raw where frontmatter lines start, by YAML's idea of a line break
// (\n, \r\n, \r, NEL, LS, PS), so node lines and columns map to bytes.
func (c *Card) lineStarts() []int {
	base := len(c.open)
	starts := []int{base}
	f := c.Front
	for i := 0; i < len(f); {
		n := breakLen(f, i)
		if n == 0 {
			i++
			continue
		}
		i += n
		starts = append(starts, base+i)
	}
	return starts
}

// breakLen is the length of a YAML line break at f[i], or 0.
func breakLen(f []byte, i int) int {
	switch {
	case f[i] == '\n':
		return 1
	case f[i] == '\r':
		if i+1 < len(f) && f[i+1] == '\n' {
			return 2
		}
		return 1
	case f[i] == 0xC2 && i+1 < len(f) && f[i+1] == 0x85:
		return 2
	case f[i] == 0xE2 && i+2 < len(f) && f[i+1] == 0x80 && (f[i+2] == 0xA8 || f[i+2] == 0xA9):
		return 3
	}
	return 0
}

// offset maps a node's line and (rune) column to a byte offset in Raw.
func (c *Card) offset(n *yaml.Node) (int, error) {
	starts := c.starts
	l := n.Line - (c.FrontLine - 1) - 1
	if !c.HasFront || l < 0 || l >= len(starts) || n.Column < 1 {
		return 0, errors.New("the node has no position in the frontmatter")
	}
	off := starts[l]
	for col := 1; col < n.Column && off < len(c.Raw); col++ {
		_, size := utf8.DecodeRune(c.Raw[off:])
		off += size
	}
	return off, nil
}

// frontEnd is the offset in Raw just past the frontmatter text.
func (c *Card) frontEnd() int { return len(c.open) + len(c.Front) }

func (c *Card) end(n *yaml.Node, flow bool) (int, error) {
	start, err := c.offset(n)
	if err != nil {
		return 0, err
	}
	src, limit := c.Raw, c.frontEnd()
	start = skipProps(src, start)
	switch {
	case n.Kind == yaml.AliasNode:
		i := start + 1
		for i < limit && !isSpaceOrBreak(src[i]) && !isFlowIndicator(src[i]) {
			i++
		}
		return i, nil
	case n.Kind == yaml.ScalarNode:
		return c.scalarEnd(n, start, flow)
	case flow || n.Style&yaml.FlowStyle != 0:
		return flowEnd(src, start, limit)
	case len(n.Content) == 0:
		return start, nil
	}
	return c.end(n.Content[len(n.Content)-1], false)
}

func (c *Card) scalarEnd(n *yaml.Node, start int, flow bool) (int, error) {
	src, limit := c.Raw, c.frontEnd()
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := start + 1; i < limit; i++ {
			switch src[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := start + 1; i < limit; i++ {
			if src[i] == '\'' {
				if i+1 < limit && src[i+1] == '\'' {
					i++
					continue
				}
				return i + 1, nil
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return blockEnd(src, start, limit), nil
	case n.Tag == "!!null" && n.Value == "":
		return start, nil
	default:
		return plainEnd(src, start, limit, flow, n.Value), nil
	}
	return 0, errors.New("a quoted value is never closed")
}

// skipProps skips a tag (!x) and an anchor (&x) and the spaces after them.
func skipProps(src []byte, i int) int {
	for i < len(src) && (src[i] == '!' || src[i] == '&') {
		for i < len(src) && !isSpaceOrBreak(src[i]) {
			i++
		}
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
	}
	return i
}

func isSpaceOrBreak(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
func isFlowIndicator(b byte) bool {
	return b == ',' || b == '[' || b == ']' || b == '{' || b == '}'
}

// plainEnd finds the end of a plain scalar: the end of its line before a comment (and, in flow
// context, before an indicator), continued over more-indented lines when the value spans lines.
func plainEnd(src []byte, start, limit int, flow bool, value string) int {
	end := plainLineEnd(src, start, limit, flow)
	if flow || string(src[start:end]) == value {
		return end
	}
	base := indentOf(src, lineStartOf(src, start))
	if onlySpacesBefore(src, start) {
		base-- // a scalar opening its own line may continue at the same indentation
	}
	for ls := nextLineStart(src, end, limit); ls < limit; ls = nextLineStart(src, ls, limit) {
		ind := indentOf(src, ls)
		i := ls + ind
		if i >= limit || src[i] == '\n' || src[i] == '\r' || src[i] == '#' || ind <= base {
			break
		}
		end = plainLineEnd(src, i, limit, false)
	}
	return end
}

func plainLineEnd(src []byte, i, limit int, flow bool) int {
	end := i
	for ; i < limit; i++ {
		b := src[i]
		if b == '\n' || b == '\r' {
			break
		}
		if b == '#' && i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
			break
		}
		if b == ':' && (i+1 >= limit || isSpaceOrBreak(src[i+1]) || flow && isFlowIndicator(src[i+1])) {
			break // a key ends here
		}
		if flow && isFlowIndicator(b) {
			break
		}
		if b != ' ' && b != '\t' {
			end = i + 1
		}
	}
	return end
}

// blockEnd finds the end of a | or > block scalar whose indicator is at start: the last non-blank
// line indented at least as much as its first content line.
func blockEnd(src []byte, start, limit int) int {
	end := plainLineEnd(src, start, limit, false)
	base := indentOf(src, lineStartOf(src, start))
	content := -1
	for ls := nextLineStart(src, start, limit); ls < limit; ls = nextLineStart(src, ls, limit) {
		ind := indentOf(src, ls)
		i := ls + ind
		if i >= limit || src[i] == '\n' || src[i] == '\r' {
			continue // blank lines belong to the block
		}
		if content < 0 {
			if ind <= base {
				break
			}
			content = ind
		}
		if ind < content {
			break
		}
		end = lineContentEnd(src, ls, limit)
	}
	return end
}

// flowEnd finds the bracket closing the flow collection opening at start.
func flowEnd(src []byte, start, limit int) (int, error) {
	depth := 0
	for i := start; i < limit; i++ {
		switch src[i] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		case '"':
			for i++; i < limit && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < limit && !(src[i] == '\'' && (i+1 >= limit || src[i+1] != '\'')); i++ {
				if src[i] == '\'' {
					i++
				}
			}
		case '#':
			if i > 0 && isSpaceOrBreak(src[i-1]) {
				for i < limit && src[i] != '\n' {
					i++
				}
			}
		}
	}
	return 0, errors.New("a [ or { is never closed")
}

func lineStartOf(src []byte, i int) int {
	for i > 0 && src[i-1] != '\n' && src[i-1] != '\r' {
		i--
	}
	return i
}

func nextLineStart(src []byte, i, limit int) int {
	for i < limit && src[i] != '\n' && src[i] != '\r' {
		i++
	}
	if i < limit && src[i] == '\r' {
		i++
	}
	if i < limit && src[i] == '\n' {
		i++
	}
	return i
}

func lineContentEnd(src []byte, ls, limit int) int {
	end := ls
	for i := ls; i < limit && src[i] != '\n' && src[i] != '\r'; i++ {
		if src[i] != ' ' && src[i] != '\t' {
			end = i + 1
		}
	}
	return end
}

func indentOf(src []byte, ls int) int {
	n := 0
	for ls+n < len(src) && src[ls+n] == ' ' {
		n++
	}
	return n
}
