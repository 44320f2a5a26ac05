package page

import (
	"sort"
	"strings"

	"golang.org/x/net/html"
)

// The tree html.Parse builds carries no positions, so a locator finds where a tree element was
// written: it tokenizes the same source once, keeping each start tag's offset, and matches the tree's
// elements to the tags in order (name and attributes must agree). The tree decides what a page holds;
// the locator only names lines. Where the two disagree (an element the parser moved or made up) the
// line falls back to the first place the text occurs, and to none.
type locator struct {
	src      string
	newlines []int
	tags     []tagPos
	byName   map[string][]int // tag name → indexes into tags
	seen     map[string]int   // tag name → tree elements of that name matched so far
}

type tagPos struct {
	name    string
	off     int
	raw     string
	attrs   []html.Attribute
	textOff int // the raw text after a <script> or <style> tag, -1 when none
	text    string
}

func newLocator(src string) *locator {
	l := &locator{src: src, byName: map[string][]int{}, seen: map[string]int{}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			l.newlines = append(l.newlines, i)
		}
	}
	z := html.NewTokenizer(strings.NewReader(src))
	off := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := string(z.Raw())
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			l.byName[tok.Data] = append(l.byName[tok.Data], len(l.tags))
			l.tags = append(l.tags, tagPos{name: tok.Data, off: off, raw: raw, attrs: tok.Attr, textOff: -1})
		case html.TextToken:
			if n := len(l.tags); n > 0 && l.tags[n-1].textOff < 0 && (l.tags[n-1].name == "script" || l.tags[n-1].name == "style") &&
				l.tags[n-1].off+len(l.tags[n-1].raw) == off {
				l.tags[n-1].textOff, l.tags[n-1].text = off, string(z.Text())
			}
		}
		off += len(raw)
	}
	return l
}

// line is the 1-based line of a byte offset; 0 for none.
func (l *locator) line(off int) int {
	if off < 0 {
		return 0
	}
	return 1 + sort.SearchInts(l.newlines, off)
}

// element finds the start tag of a tree element, or -1. Call it once per element, in document order.
func (l *locator) element(n *html.Node) int {
	name := strings.ToLower(n.Data)
	k := l.seen[name]
	l.seen[name]++
	cands := l.byName[name]
	if k < len(cands) && sameAttrs(n.Attr, l.tags[cands[k]].attrs) {
		return cands[k]
	}
	for _, i := range cands {
		if sameAttrs(n.Attr, l.tags[i].attrs) {
			return i
		}
	}
	return -1
}

// sameAttrs: every attribute of the tree element is on the tag with the same value (the parser drops
// duplicates and splits xlink:href into a namespace and a key).
func sameAttrs(tree, tag []html.Attribute) bool {
	for _, a := range tree {
		key := strings.ToLower(a.Key)
		if a.Namespace != "" {
			key = a.Namespace + ":" + key
		}
		found := false
		for _, b := range tag {
			if strings.ToLower(b.Key) == key && b.Val == a.Val {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// tagLine is the line of a matched tag, or of val's first occurrence when the tag is unknown.
func (l *locator) tagLine(tag int, val string) int {
	if tag >= 0 {
		return l.line(l.tags[tag].off)
	}
	return l.find(val)
}

// attrLine is the line where attribute key is written in a matched tag.
func (l *locator) attrLine(tag int, a html.Attribute) int {
	if tag < 0 {
		return l.find(a.Val)
	}
	t := l.tags[tag]
	key := strings.ToLower(a.Key)
	if a.Namespace != "" {
		key = a.Namespace + ":" + key
	}
	raw := asciiLower(t.raw)
	for from := 1 + len(t.name); from < len(raw); {
		i := strings.Index(raw[from:], key)
		if i < 0 {
			break
		}
		at := from + i
		before, after := raw[at-1], byte(0)
		if at+len(key) < len(raw) {
			after = raw[at+len(key)]
		}
		if isTagSpace(before) && (after == '=' || after == '/' || after == '>' || isTagSpace(after)) {
			return l.line(t.off + at)
		}
		from = at + 1
	}
	return l.line(t.off)
}

func isTagSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '/' || c == '"' || c == '\''
}

// textLine is the line where the text of a matched <script> or <style> starts.
func (l *locator) textLine(tag int, text string) int {
	if tag >= 0 && l.tags[tag].textOff >= 0 && l.tags[tag].text == text {
		return l.line(l.tags[tag].textOff)
	}
	return l.find(text)
}

func (l *locator) find(s string) int {
	if s == "" {
		return 0
	}
	return l.line(strings.Index(l.src, s))
}
