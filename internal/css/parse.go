package css

import "strings"

// Node is a component value (§5): a token, a function with its arguments, or a simple block ((), [] or
// {}) with what is inside it.
type Node struct {
	Token
	// Children are a function's arguments or a block's contents; nil for a plain token.
	Children []Node
	// Block is true when Token is the opening bracket of a simple block.
	Block bool
	// Unclosed is true when the input ended before the function or block closed.
	Unclosed bool
}

// Rule is a qualified rule (selector { … }) or an at-rule (@media … { … }, @import …;).
type Rule struct {
	At      string // the at-keyword's name without "@"; empty for a qualified rule
	Prelude []Node
	Body    *Node // the {} block; nil for an at-rule ended by ";" or a rule cut off by the end
	Line    int
}

// Declaration is one "name: value" inside a block or a style attribute.
type Declaration struct {
	Name      string
	Value     []Node // without the surrounding whitespace and without "!important"
	Important bool
	Line      int
}

// Item is one entry of a declaration list: a declaration, or what the list holds that is not one (an
// at-rule, a nested rule, a name without a colon: Junk, with its first line).
type Item struct {
	Decl *Declaration
	Rule *Rule  // an at-rule inside the list
	Junk []Node // anything else, up to the next ";"
	Line int
}

// MaxDepth bounds nesting of blocks and functions; deeper input is cut into flat tokens so that hostile
// input cannot exhaust the stack. No style sheet a person writes comes near it.
const MaxDepth = 64

type parser struct {
	toks []Token
	pos  int
}

// Components reads src as a list of component values (§5.3.8: parse a list of component values).
func Components(src string) []Node {
	p := &parser{toks: Tokenize(src)}
	var out []Node
	for p.pos < len(p.toks) {
		out = append(out, p.component(0))
	}
	return out
}

// Stylesheet reads src as a style sheet (§5.3.3): its top-level rules. "<!--" and "-->" are skipped at
// the top level as the specification says.
func Stylesheet(src string) []Rule {
	return rules(Components(src), true)
}

// Rules reads a list of rules from component values, such as the contents of an @media block.
func Rules(nodes []Node) []Rule { return rules(nodes, false) }

func rules(nodes []Node, top bool) []Rule {
	var out []Rule
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		switch {
		case n.Type == Whitespace:
		case top && (n.Type == CDO || n.Type == CDC):
		case n.Type == AtKeyword:
			r, next := atRule(nodes, i)
			out = append(out, r)
			i = next
		default:
			r := Rule{Line: n.Line}
			for ; i < len(nodes); i++ {
				if nodes[i].Block && nodes[i].Type == LeftBrace {
					b := nodes[i]
					r.Body = &b
					break
				}
				r.Prelude = append(r.Prelude, nodes[i])
			}
			out = append(out, r)
		}
	}
	return out
}

// atRule consumes an at-rule starting at nodes[i]; it returns the rule and the index of its last node.
func atRule(nodes []Node, i int) (Rule, int) {
	r := Rule{At: nodes[i].Value, Line: nodes[i].Line}
	for i++; i < len(nodes); i++ {
		n := nodes[i]
		if n.Type == Semicolon && !n.Block {
			return r, i
		}
		if n.Block && n.Type == LeftBrace {
			b := n
			r.Body = &b
			return r, i
		}
		r.Prelude = append(r.Prelude, n)
	}
	return r, i
}

// Declarations reads a declaration list (§5.4.5) from component values: a {} block's children or a
// style attribute's components.
func Declarations(nodes []Node) []Item {
	var out []Item
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		switch {
		case n.Type == Whitespace || (n.Type == Semicolon && !n.Block):
		case n.Type == AtKeyword:
			r, next := atRule(nodes, i)
			out = append(out, Item{Rule: &r, Line: r.Line})
			i = next
		default:
			j := i
			for j < len(nodes) && !(nodes[j].Type == Semicolon && !nodes[j].Block) {
				j++
			}
			part := nodes[i:j]
			if d, ok := declaration(part); ok {
				out = append(out, Item{Decl: &d, Line: d.Line})
			} else {
				out = append(out, Item{Junk: part, Line: n.Line})
			}
			i = j
		}
	}
	return out
}

// declaration is §5.4.6 on one ";"-free run of component values.
func declaration(part []Node) (Declaration, bool) {
	if len(part) == 0 || part[0].Type != Ident || part[0].Block {
		return Declaration{}, false
	}
	d := Declaration{Name: part[0].Value, Line: part[0].Line}
	rest := trim(part[1:])
	if len(rest) == 0 || rest[0].Type != Colon || rest[0].Block {
		return Declaration{}, false
	}
	rest = trim(rest[1:])
	if k := len(rest); k >= 2 && rest[k-1].Type == Ident && strings.EqualFold(rest[k-1].Value, "important") {
		bang := trim(rest[:k-1])
		if m := len(bang); m >= 1 && bang[m-1].Type == Delim && bang[m-1].Value == "!" {
			d.Important = true
			rest = trim(bang[:m-1])
		}
	}
	d.Value = rest
	return d, true
}

// trim drops whitespace at both ends.
func trim(ns []Node) []Node {
	for len(ns) > 0 && ns[0].Type == Whitespace {
		ns = ns[1:]
	}
	for len(ns) > 0 && ns[len(ns)-1].Type == Whitespace {
		ns = ns[:len(ns)-1]
	}
	return ns
}

var closer = map[Type]Type{LeftParen: RightParen, LeftBracket: RightBracket, LeftBrace: RightBrace}

// component is §5.4.7 (consume a component value).
func (p *parser) component(depth int) Node {
	t := p.toks[p.pos]
	p.pos++
	end, isBlock := closer[t.Type]
	if t.Type != Function && !isBlock {
		return Node{Token: t}
	}
	if t.Type == Function {
		end = RightParen
	}
	n := Node{Token: t, Block: isBlock}
	if depth >= MaxDepth {
		n.Unclosed = true // cut here: its contents follow as siblings
		return n
	}
	for {
		if p.pos >= len(p.toks) {
			n.Unclosed = true
			return n
		}
		if p.toks[p.pos].Type == end {
			p.pos++
			return n
		}
		n.Children = append(n.Children, p.component(depth+1))
	}
}

// Walk calls fn for every node of ns and their children, depth first; fn returning false skips a
// node's children.
func Walk(ns []Node, fn func(n Node) bool) {
	for _, n := range ns {
		if fn(n) {
			Walk(n.Children, fn)
		}
	}
}
