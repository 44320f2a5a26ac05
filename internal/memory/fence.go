package memory

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Fence marks text that is not in the owner's own words (a note written mostly by others, an inbox line
// from an assistant, later mail and connector output) before a model reads it: the model treats what is
// inside <outside_content> as data, never as instructions. Nothing inside can end or restart the fence:
// every '<' (or a look-alike: fullwidth, small, angle brackets) that begins an outside_content tag, closing
// or opening, in any case, with spaces, dashes or zero-width characters inside, in fullwidth or Cyrillic
// and Greek look-alike letters, is written as "&lt;" (docs/SECURITY.md).
func Fence(s string) string {
	if s == "" {
		return s
	}
	return "<outside_content>" + defuse(s) + "</outside_content>"
}

// defuse writes "&lt;" for the opening bracket of every tag-like outside_content in s.
func defuse(s string) string {
	var b strings.Builder
	last := 0
	for i, r := range s {
		if !isLess(r) || !namesFence(s[i+utf8.RuneLen(r):]) {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s) + 8)
		}
		b.WriteString(s[last:i])
		b.WriteString("&lt;")
		last = i + utf8.RuneLen(r)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isLess(r rune) bool {
	switch r {
	case '<', '\uff1c', '\ufe64', '\u2329', '\u3008', '\u27e8', '\u2039', '\u02c2', '\u276e', '\u276c':
		return true
	}
	return false
}

const fenceName = "outsidecontent"

// namesFence reports whether s, right after a '<', spells /outside_content or outside_content: slashes,
// spaces, dashes, underscores and invisible characters between letters are skipped, letters are compared
// folded (case, compatibility forms, look-alikes).
func namesFence(s string) bool {
	want := fenceName
	for n, r := range s {
		if n > 160 { // a tag name spelled over more than this is not read as one
			return false
		}
		if skippable(r) {
			continue
		}
		for _, f := range fold(r) {
			if want == "" {
				return true
			}
			if f != rune(want[0]) {
				return false
			}
			want = want[1:]
		}
		if want == "" {
			return true
		}
	}
	return false
}

func skippable(r rune) bool {
	switch r {
	case '/', '／', '⁄', '∕', '⧸', '_', '＿', '-', '‐', '‑', '–', '—', '﹘', '－':
		return true
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r)
}

// fold is r as the plain lower-case letters it looks like.
func fold(r rune) string {
	if f, ok := lookalike[r]; ok {
		return string(f)
	}
	return strings.ToLower(norm.NFKC.String(string(r)))
}

// lookalike maps Cyrillic and Greek letters that look like the letters of outside_content to them.
var lookalike = map[rune]rune{
	'о': 'o', 'О': 'o', 'ο': 'o', 'Ο': 'o', 'σ': 'o',
	'у': 'u', 'υ': 'u', 'ս': 'u',
	'т': 't', 'Т': 't', 'τ': 't', 'Τ': 't',
	'ѕ': 's', 'Ѕ': 's',
	'і': 'i', 'І': 'i', 'ι': 'i', 'Ι': 'i', 'ı': 'i',
	'ԁ': 'd',
	'е': 'e', 'Е': 'e', 'ε': 'e', 'Ε': 'e',
	'с': 'c', 'С': 'c', 'ϲ': 'c',
	'п': 'n', 'η': 'n', 'Ν': 'n',
}

// ownVias are the ways in that carry the owner's own words: the fallback for a memory log entry that
// carries no trust (RecentItem.Outside decides by the entry's trust).
var ownVias = map[string]bool{"cli": true, "web": true, "chat": true, "": true}

// Fenced is h as a model reads it: a hit others wrote (trust outside) has its snippet, text, title and
// writer's name (a client names itself) inside the fence, and outside reports that it was one. The box's
// chat and MCP both read hits this way (docs/SECURITY.md).
func (h Hit) Fenced() (_ Hit, outside bool) {
	if h.Trust != "outside" {
		return h, false
	}
	h.Snippet, h.Text, h.Title, h.Who = Fence(h.Snippet), Fence(h.Text), Fence(h.Title), Fence(h.Who)
	return h, true
}

// Fenced is n as a model reads it: a note written mostly by others has its text and title fenced.
func (n Note) Fenced() Note {
	if n.Outside {
		n.Text, n.Title = Fence(n.Text), Fence(n.Title)
	}
	return n
}

// Fenced is it as a model reads it: a line not in the owner's words has its summary and writer fenced.
func (it RecentItem) Fenced() RecentItem {
	if it.Outside {
		it.Summary, it.Who = Fence(it.Summary), Fence(it.Who)
	}
	return it
}

// Fenced is h as a model reads it: the hook of a note written mostly by others is fenced.
func (h NoteHook) Fenced() NoteHook {
	if h.Outside {
		h.Hook = Fence(h.Hook)
	}
	return h
}

// unfenced is a writer's name as a hit gave it back fenced (an assistant passing a hit's who to the who
// filter), without the fence; any other text as it is.
func unfenced(s string) string {
	const open, end = "<outside_content>", "</outside_content>"
	if strings.HasPrefix(s, open) && strings.HasSuffix(s, end) && len(s) >= len(open)+len(end) {
		return s[len(open) : len(s)-len(end)]
	}
	return s
}
