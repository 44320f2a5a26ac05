package hooks

import (
	"strings"
	"unicode/utf8"
)

// Tokens estimates how many model tokens text costs: ceil(characters/4), but never fewer than its
// whitespace-separated words (short words and code symbols cost about a token each). It is deliberately
// a little pessimistic, so a cap it enforces holds for real tokenizers on English and code.
func Tokens(text string) int {
	byChars := (utf8.RuneCountInString(text) + 3) / 4
	return max(byChars, len(strings.Fields(text)))
}

// ellipsis ends a trimmed text.
const ellipsis = "…"

// Trim keeps the whole lines of text that fit in limit tokens, ending with a line "…" when it cut
// anything. A first line that alone is over the limit is cut inside, at a rune boundary.
func Trim(text string, limit int) string {
	text = strings.TrimRight(text, "\n")
	if Tokens(text) <= limit {
		return text
	}
	lines := strings.Split(text, "\n")
	// the estimate is additive over lines: count runes and words as lines are kept (linear, not quadratic)
	keep, runes, words := 0, utf8.RuneCountInString(ellipsis), 1
	for _, l := range lines {
		r, w := runes+utf8.RuneCountInString(l)+1, words+len(strings.Fields(l))
		if max((r+3)/4, w) > limit {
			break
		}
		keep, runes, words = keep+1, r, w
	}
	if keep == 0 {
		return cutLine(lines[0], limit)
	}
	return strings.Join(lines[:keep], "\n") + "\n" + ellipsis
}

// cutLine shortens one line to fit limit tokens, ending it with "…".
func cutLine(line string, limit int) string {
	runes := []rune(line)
	n := min(len(runes), max(0, limit*4-4))
	for n > 0 && Tokens(string(runes[:n])+ellipsis) > limit {
		n -= max(1, n/8)
	}
	return string(runes[:max(n, 0)]) + ellipsis
}
