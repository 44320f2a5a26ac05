// Package page owns what a page (the owner's own HTML page; "section" in the server's routes) may be
// and how it is served boxed: the checks a page passes before any card, the sandbox headers, and the box
// bridge injected before its scripts (docs/PAGES.md). It stores nothing and serves nothing: the
// installed pages, their tokens and the /api/sections routes belong to the layer that mounts it.
package page

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/boxmem/box/internal/errs"
	"golang.org/x/net/html"
)

// MaxSize is the largest page, in bytes.
const MaxSize = 512 << 10

// MaxProblems bounds the problems one check reports; the rest are counted, not listed.
const MaxProblems = 20

// Problem is one reason a page is refused: what was found, where, and why.
type Problem struct {
	Line  int    `json:"line,omitempty"` // 1-based; 0 when the whole page is meant or the line is unknown
	Found string `json:"found"`          // what was found: "cdn.example.com", "url(", "new WebSocket", "<iframe>"
	Where string `json:"where"`          // where it was: "<script src>", "a <script>", "the style attribute of <div>"
	Why   string `json:"why"`            // why a page can't have it, and what to do instead
}

func (p Problem) String() string {
	s := fmt.Sprintf("`%s` in %s: %s", p.Found, p.Where, p.Why)
	if p.Where == "" {
		s = fmt.Sprintf("`%s`: %s", p.Found, p.Why)
	}
	if p.Line > 0 {
		s = fmt.Sprintf("line %d: %s", p.Line, s)
	}
	return s
}

// Check refuses a page that breaks a rule of docs/PAGES.md with one sentence naming each problem (the
// first few, then how many more); nil when the page may go on a card.
func Check(src []byte) error {
	ps := Problems(src)
	if len(ps) == 0 {
		return nil
	}
	return errs.E("page.check", errs.Invalid, "%s", Sentence(ps))
}

// Sentence joins problems into one sentence for a refusal.
func Sentence(ps []Problem) string {
	const shown = 5
	var parts []string
	for i, p := range ps {
		if i == shown {
			break
		}
		parts = append(parts, p.String())
	}
	s := strings.Join(parts, "; ")
	if len(ps) > shown {
		s += fmt.Sprintf("; and %d more", len(ps)-shown)
	}
	return s + "."
}

// Problems lists everything a page can't have, in line order (at most MaxProblems, the last of which
// then says how many more there were).
func Problems(src []byte) []Problem {
	switch {
	case len(src) > MaxSize:
		return []Problem{{Found: fmt.Sprintf("%d KB", (len(src)+1023)/1024), Why: "a page is at most 512 KB: make it smaller (inline images count)"}}
	case !utf8.Valid(src):
		return []Problem{{Line: 1 + strings.Count(string(src[:invalidAt(src)]), "\n"), Found: "bytes that are not UTF-8", Why: "a page is UTF-8 text"}}
	case strings.TrimSpace(string(src)) == "":
		return []Problem{{Found: "nothing", Why: "the page is empty"}}
	}
	// The browser's decoder drops a byte order mark and its parser reads CR LF and CR as LF.
	text := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(strings.TrimPrefix(string(src), "\ufeff"))
	doc, err := html.ParseWithOptions(strings.NewReader(text), html.ParseOptionEnableScripting(true))
	if err != nil { // a strings.Reader never fails; kept so that a change there cannot pass a page unread
		return []Problem{{Found: "the page", Why: "it could not be read as HTML: " + err.Error()}}
	}
	c := &checker{loc: newLocator(text), seen: map[Problem]bool{}}
	c.walk(doc)
	return Ordered(c.out)
}

// Ordered puts problems in line order and keeps at most MaxProblems: the last then counts the rest.
func Ordered(ps []Problem) []Problem {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	if len(ps) > MaxProblems {
		more := len(ps) - MaxProblems + 1
		ps = append(ps[:MaxProblems-1], Problem{Found: fmt.Sprintf("%d more", more), Why: "fix the problems above and check again"})
	}
	return ps
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

type checker struct {
	loc  *locator
	out  []Problem
	seen map[Problem]bool
}

func (c *checker) add(p Problem) {
	p.Found = Clip(p.Found)
	if !c.seen[p] {
		c.seen[p] = true
		c.out = append(c.out, p)
	}
}

// walk visits every element in document order, template contents included (the parser keeps them as
// children).
func (c *checker) walk(n *html.Node) {
	if n.Type == html.ElementNode {
		c.element(n)
	}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.walk(ch)
	}
}

// Elements a page can't hold at all: each makes another document, a plug-in, or moves the page's base.
var refusedElements = map[string]string{
	"iframe": whyFrame, "frame": whyFrame, "frameset": whyFrame, "object": whyFrame, "embed": whyFrame,
	"applet": whyFrame, "portal": whyFrame, "fencedframe": whyFrame, "base": whyBase,
}

// Link relations a page may keep: an icon, given as a data: address.
var iconRels = map[string]bool{"icon": true, "shortcut": true, "apple-touch-icon": true, "apple-touch-icon-precomposed": true, "mask-icon": true}

// http-equiv values a page may set: none of them loads, moves or changes anything.
var harmlessHTTPEquiv = map[string]bool{"content-type": true, "content-language": true, "x-ua-compatible": true}

func (c *checker) element(n *html.Node) {
	name := strings.ToLower(n.Data)
	tag := c.loc.element(n)
	line := c.loc.tagLine(tag, firstVal(n))
	el := "<" + name + ">"
	if why, ok := refusedElements[name]; ok {
		c.add(Problem{Line: line, Found: el, Where: "the page", Why: why})
	}
	switch name {
	case "meta":
		if eq, ok := attr(n, "http-equiv"); ok {
			v := strings.ToLower(strings.TrimSpace(eq))
			switch {
			case v == "refresh":
				c.add(Problem{Line: line, Found: `<meta http-equiv="refresh">`, Where: "the page", Why: whyRefresh})
			case !harmlessHTTPEquiv[v]:
				c.add(Problem{Line: line, Found: fmt.Sprintf("<meta http-equiv=%q>", eq), Where: "the page", Why: whyHTTPEquiv})
			}
		}
	case "link":
		rel, _ := attr(n, "rel")
		rels := strings.Fields(strings.ToLower(rel))
		ok := len(rels) > 0
		for _, r := range rels {
			ok = ok && iconRels[r]
		}
		if !ok {
			c.add(Problem{Line: line, Found: fmt.Sprintf("<link rel=%q>", rel), Where: "the page", Why: whyLink})
		}
	case "template":
		for _, mode := range []string{"shadowrootmode", "shadowroot"} {
			if _, ok := attr(n, mode); ok {
				c.add(Problem{Line: line, Found: "<template " + mode + ">", Where: "the page", Why: whyDeclarativeShadow})
			}
		}
	case "script":
		c.scriptElement(n, tag, line)
	case "style":
		if n.Namespace == "" || n.Namespace == "svg" {
			text := childText(n)
			c.style(cssOf(text), c.loc.textLine(tag, text), "a <style>")
		}
	case "animate", "set", "animatetransform", "animatemotion":
		if target, ok := attr(n, "attributeName"); ok && strings.HasSuffix(strings.ToLower(strings.TrimSpace(target)), "href") {
			c.add(Problem{Line: line, Found: "<" + n.Data + ` attributeName="` + target + `">`, Where: "the page", Why: whyAnimateHref})
		}
	}
	for _, a := range n.Attr {
		c.attribute(n, name, tag, a)
	}
}

// nav tells whether following an address opens another document in the page's frame.
func nav(name, key string) bool {
	return key == "action" || key == "formaction" || (key == "href" && (name == "a" || name == "area"))
}

// urlAttributes hold one address.
var urlAttributes = map[string]bool{"href": true, "src": true, "action": true, "formaction": true, "poster": true,
	"background": true, "cite": true, "longdesc": true, "lowsrc": true, "dynsrc": true, "manifest": true,
	"usemap": true, "icon": true, "data": true, "codebase": true, "classid": true, "archive": true, "profile": true}

// listAttributes hold addresses separated by spaces.
var listAttributes = map[string]bool{"ping": true, "attributionsrc": true}

// namespaces are the values an xmlns attribute may have: a name, never fetched.
var namespaces = map[string]bool{"http://www.w3.org/2000/svg": true, "http://www.w3.org/1999/xhtml": true,
	"http://www.w3.org/1999/xlink": true, "http://www.w3.org/1998/Math/MathML": true,
	"http://www.w3.org/XML/1998/namespace": true, "http://www.w3.org/2000/xmlns/": true}

func (c *checker) attribute(n *html.Node, name string, tag int, a html.Attribute) {
	key := strings.ToLower(a.Key)
	full := key
	if a.Namespace != "" {
		full = a.Namespace + ":" + key
	}
	line := func() int { return c.loc.attrLine(tag, a) }
	where := fmt.Sprintf("<%s %s>", name, full)
	switch {
	case name == "script" && key == "src": // reported by scriptElement
	case strings.HasPrefix(key, "on"):
		c.script(a.Val, false, line(), fmt.Sprintf("the %s attribute of <%s>", full, name))
	case key == "style":
		c.style(cssOf(a.Val), line(), fmt.Sprintf("the style attribute of <%s>", name))
	case full == "xml:base":
		c.add(Problem{Line: line(), Found: "xml:base", Where: where, Why: whyBase})
	case key == "xmlns" || a.Namespace == "xmlns" || strings.HasPrefix(key, "xmlns:"):
		if !namespaces[strings.TrimSpace(a.Val)] {
			c.generic(a.Val, line, where)
		}
	case urlAttributes[key] && !(key == "data" && name != "object") && !(key == "icon" && name != "command" && name != "menuitem"):
		c.address(a.Val, nav(name, key), line, where)
	case key == "srcset" || key == "imagesrcset":
		for _, u := range srcsetURLs(a.Val) {
			c.address(u, false, line, where)
		}
	case listAttributes[key]:
		for _, u := range strings.Fields(a.Val) {
			c.address(u, false, line, where)
		}
	default:
		c.generic(a.Val, line, where)
		if n.Namespace != "" && strings.Contains(asciiLower(a.Val), "url(") {
			c.style(cssOf(a.Val), line(), where) // an SVG or MathML presentation attribute is CSS
		}
	}
}

// generic refuses an address on another machine in an attribute that is not an address.
func (c *checker) generic(v string, line func() int, where string) {
	if host, ok := findNetworkAddress(v); ok {
		c.add(Problem{Line: line(), Found: host, Where: where, Why: whyNetwork})
	}
}

// address applies the address rules of docs/PAGES.md to one address.
func (c *checker) address(v string, navigates bool, line func() int, where string) {
	a := classify(v)
	switch a.kind {
	case addrEmpty, addrFragment, addrMail:
	case addrData:
		if navigates {
			c.add(Problem{Line: line(), Found: "data:", Where: where, Why: whyDataNav})
		}
	case addrScript:
		c.script(a.body, false, line(), where)
	case addrNetwork:
		c.add(Problem{Line: line(), Found: a.host, Where: where, Why: whyNetwork})
	case addrRelative:
		c.add(Problem{Line: line(), Found: strings.TrimSpace(v), Where: where, Why: whyRelative})
	case addrScheme:
		c.add(Problem{Line: line(), Found: a.scheme + ":", Where: where, Why: whyScheme})
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

func firstVal(n *html.Node) string {
	if len(n.Attr) > 0 {
		return n.Attr[0].Val
	}
	return ""
}

func childText(n *html.Node) string {
	var b strings.Builder
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type == html.TextNode {
			b.WriteString(ch.Data)
		}
	}
	return b.String()
}
