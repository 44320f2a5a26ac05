package look

import (
	"strings"

	"github.com/boxmem/box/internal/css"
)

// Types are the elements a look may style: text, headings, lists, links, tables, media around text.
var Types = set("html", "body", "main", "header", "footer", "nav", "section", "article", "aside", "h1", "h2", "h3",
	"h4", "h5", "h6", "p", "a", "ul", "ol", "li", "dl", "dt", "dd", "small", "strong", "b", "em", "i", "u", "s",
	"code", "pre", "kbd", "samp", "blockquote", "q", "cite", "abbr", "mark", "time", "span", "div", "hr", "table",
	"thead", "tbody", "tfoot", "tr", "th", "td", "caption", "figure", "figcaption", "img", "svg", "sub", "sup",
	"del", "ins", "address", "label")

// protectedTypes are refused with their own reason: the controls and dialogs the owner decides with.
var protectedTypes = set("button", "input", "select", "textarea", "option", "optgroup", "dialog", "form",
	"fieldset", "legend", "details", "summary", "output", "meter", "progress", "datalist")

// Classes are the web UI's classes a look may style: none of them is on a button, a field, a card or a
// dialog. The web UI keeps its controls and cards under other classes (docs/PAGES.md, Looks).
var Classes = set("top", "brand", "mark", "tabs", "ico", "muted", "lede", "hero", "empty", "timeline", "diary",
	"notes", "inbox", "hits", "todos", "chat", "chips", "who", "op", "router", "notetext", "me")

var pseudoClasses = set("hover", "focus", "focus-visible", "focus-within", "active", "visited", "link", "any-link",
	"first-child", "last-child", "only-child", "first-of-type", "last-of-type", "only-of-type", "empty", "root", "target")

var pseudoElements = set("before", "after", "first-line", "first-letter", "marker", "selection")

var nthFunctions = set("nth-child", "nth-last-child", "nth-of-type", "nth-last-of-type")

var attributes = set("aria-current", "lang", "dir")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// selector checks a rule's selector list: compound selectors of allowed types, classes, attributes and
// pseudo-classes, joined by descendant, >, + and ~.
func (c *checker) selector(ns []css.Node) {
	empty := true
	for i := 0; i < len(ns); i++ {
		n := ns[i]
		lower := strings.ToLower(n.Value)
		switch {
		case n.Type == css.Whitespace:
			continue
		case n.Type == css.Comma:
			if empty {
				c.add(Problem{Line: n.Line, Found: ",", Why: whySelector})
			}
			empty = true
			continue
		case n.Type == css.Delim && (n.Value == ">" || n.Value == "+" || n.Value == "~"):
		case n.Type == css.Ident && protectedTypes[lower]:
			c.add(Problem{Line: n.Line, Found: lower, Why: whyProtected})
		case n.Type == css.Ident && !Types[lower]:
			c.add(Problem{Line: n.Line, Found: lower, Why: whyType})
		case n.Type == css.Ident:
		case n.Type == css.Delim && n.Value == "*":
			c.add(Problem{Line: n.Line, Found: "*", Why: whyUniversal})
		case n.Type == css.Delim && n.Value == "." && i+1 < len(ns) && ns[i+1].Type == css.Ident:
			i++
			if !Classes[ns[i].Value] {
				c.add(Problem{Line: n.Line, Found: "." + ns[i].Value, Why: whyClass})
			}
		case n.Type == css.Hash:
			c.add(Problem{Line: n.Line, Found: "#" + n.Value, Why: whyID})
		case n.Type == css.Colon:
			i = c.pseudo(ns, i)
		case n.Block && n.Type == css.LeftBracket:
			c.attribute(n)
		default:
			c.add(Problem{Line: n.Line, Found: show([]css.Node{n}), Why: whySelector})
		}
		empty = false
	}
	if empty {
		line := 0
		if len(ns) > 0 {
			line = ns[len(ns)-1].Line
		}
		c.add(Problem{Line: line, Found: show(ns) + "{", Why: whySelector})
	}
}

// pseudo checks ":name", "::name" or ":nth-child(…)" starting at the colon ns[i]; it returns the index
// of the last node it read.
func (c *checker) pseudo(ns []css.Node, i int) int {
	element := i+1 < len(ns) && ns[i+1].Type == css.Colon
	if element {
		i++
	}
	if i+1 >= len(ns) {
		c.add(Problem{Line: ns[i].Line, Found: ":", Why: whySelector})
		return i
	}
	i++
	n := ns[i]
	name := strings.ToLower(n.Value)
	switch {
	case element && n.Type == css.Ident && pseudoElements[name]:
	case !element && n.Type == css.Ident && pseudoClasses[name]:
	case !element && n.Type == css.Function && nthFunctions[name]:
		for _, a := range n.Children {
			ok := a.Type == css.Whitespace || a.Type == css.Number ||
				(a.Type == css.Delim && (a.Value == "+" || a.Value == "-")) ||
				((a.Type == css.Dimension || a.Type == css.Ident) && anPlusB(strings.ToLower(a.Unit+a.Value)))
			if !ok {
				c.add(Problem{Line: a.Line, Found: show([]css.Node{n}), Why: whyPseudo})
				break
			}
		}
	case !element && n.Type == css.Function && (name == "lang" || name == "dir"):
		for _, a := range n.Children {
			if a.Type != css.Ident && a.Type != css.Whitespace {
				c.add(Problem{Line: a.Line, Found: show([]css.Node{n}), Why: whyPseudo})
				break
			}
		}
	default:
		prefix := ":"
		if element {
			prefix = "::"
		}
		c.add(Problem{Line: n.Line, Found: prefix + show([]css.Node{n}), Why: whyPseudo})
	}
	return i
}

// anPlusB accepts the identifier parts of An+B: odd, even, n, -n, n-, 2n (unit n), 2n-1 (unit n-1) …
func anPlusB(s string) bool {
	if s == "odd" || s == "even" {
		return true
	}
	s = strings.TrimPrefix(s, "-")
	if !strings.HasPrefix(s, "n") {
		return false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(s, "n"), "-")
	for _, r := range rest {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// attribute checks "[name]" or "[name=value]" with an allowed name.
func (c *checker) attribute(n css.Node) {
	var parts []css.Node
	for _, ch := range n.Children {
		if ch.Type != css.Whitespace {
			parts = append(parts, ch)
		}
	}
	ok := len(parts) > 0 && parts[0].Type == css.Ident && attributes[strings.ToLower(parts[0].Value)]
	rest := parts
	if ok {
		rest = parts[1:]
	}
	if ok && len(rest) > 0 {
		ops := 0
		for ops < len(rest) && rest[ops].Type == css.Delim {
			ops++
		}
		op := show(rest[:ops])
		ok = (op == "=" || op == "~=" || op == "|=" || op == "^=" || op == "$=" || op == "*=") && len(rest) == ops+1 &&
			(rest[ops].Type == css.Ident || rest[ops].Type == css.String)
	}
	if !ok || n.Unclosed {
		c.add(Problem{Line: n.Line, Found: show([]css.Node{n}), Why: whyAttribute})
	}
}
