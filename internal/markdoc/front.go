package markdoc

import "strings"

// IsFrontDelimiter reports whether a line (without its \n) opens or closes a card's YAML frontmatter:
// "---", allowing trailing spaces and the \r of a CRLF file. Every reader of cards, notes and inbox days
// uses this one rule, so a note saved with CRLF line ends is read the same by all of them.
func IsFrontDelimiter[T ~string | ~[]byte](line T) bool {
	s := string(line)
	return strings.HasPrefix(s, "---") && strings.TrimRight(s[3:], " \t\r") == ""
}
