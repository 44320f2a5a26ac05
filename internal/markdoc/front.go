package markdoc

import "strings"

// IsFrontDelimiter reports whether a line (without its \n) opens or closes a card's YAML frontmatter:
// "---", allowing trailing spaces, the \r of a CRLF file and the byte-order mark some editors put first
// in a file. Every reader of cards, notes and inbox days uses this one rule, so a note saved that way is
// read the same by all of them (its frontmatter is never taken for body text, nor a second one added).
func IsFrontDelimiter[T ~string | ~[]byte](line T) bool {
	s := strings.TrimPrefix(string(line), "\uFEFF")
	return strings.HasPrefix(s, "---") && strings.TrimRight(s[3:], " \t\r") == ""
}
