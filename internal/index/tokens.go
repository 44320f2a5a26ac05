package index

import (
	"unicode"
	"unicode/utf8"
)

// The Go reading of a document's text: the same words the FTS5 table's tokenizer (unicode61,
// remove_diacritics 2) sees, folded the same way, with their byte offsets so a snippet can quote the
// text around them.

// isWordRune is unicode61's token character: letters, numbers and private-use characters, but for the few
// its older tables do not count as letters.
func isWordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)) && !unicode.Is(ftsBreaks, r)
}

// isDiacritic is a combining accent unicode61 keeps in a word and remove_diacritics drops: 25 of
// U+0300–U+0331, as SQLite's sqlite3Fts5UnicodeIsdiacritic sets them. Any other combining mark ends a word.
func isDiacritic(r rune) bool {
	const mask0, mask1 = 0x08029FDF, 0x000361F8
	switch {
	case r < 0x300 || r > 0x331:
		return false
	case r < 0x320:
		return mask0&(1<<(r-0x300)) != 0
	}
	return mask1&(1<<(r-0x320)) != 0
}

// ftsBreaks are the characters Go's Unicode tables call letters and unicode61 breaks words at (New Tai Lue
// vowel signs, two Vedic signs). Counted as letters, one query word could stand for thousands of the
// index's words ("a" and one of them, repeated). TestWordRunesAreTheTokenizers checks the list against
// the tokenizer, every character.
var ftsBreaks = &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0x19B0, Hi: 0x19C0, Stride: 1}, {Lo: 0x19C8, Hi: 0x19C9, Stride: 1}, {Lo: 0x1CF2, Hi: 0x1CF3, Stride: 1}}}

// fold lowercases r and drops its diacritic where it decomposes into a Latin letter and marks.
func fold(r rune) rune {
	r = unicode.ToLower(r)
	if f, ok := diacriticFold[r]; ok {
		return f
	}
	return r
}

// diacriticFold maps the accented Latin letters (Latin-1 and Latin Extended-A, lowercase) to their base.
var diacriticFold = func() map[rune]rune {
	m := map[rune]rune{}
	for base, accented := range map[rune]string{
		'a': "àáâãäåāăą", 'c': "çćĉċč", 'd': "ď", 'e': "èéêëēĕėęě", 'g': "ĝğġģ", 'h': "ĥ",
		'i': "ìíîïĩīĭį", 'j': "ĵ", 'k': "ķ", 'l': "ĺļľ", 'n': "ñńņň", 'o': "òóôõöōŏő",
		'r': "ŕŗř", 's': "śŝşš", 't': "ţť", 'u': "ùúûüũūŭůűų", 'w': "ŵ", 'y': "ýÿŷ", 'z': "źżž",
	} {
		for _, r := range accented {
			if r != base {
				m[r] = base
			}
		}
	}
	return m
}()

// scanWords calls fn with each word of s (folded) and its byte range in s, until fn returns false.
// buf is reused between words; fn must copy the word to keep it.
func scanWords(s string, fn func(word []byte, start, end int) bool) {
	var buf []byte
	i := 0
	for i < len(s) {
		// Skip to the next word character.
		c := s[i]
		if c < utf8.RuneSelf {
			if !isASCIIWord(c) {
				i++
				continue
			}
		} else if r, n := utf8.DecodeRuneInString(s[i:]); !isWordRune(r) {
			i += n
			continue
		}
		start := i
		buf = buf[:0]
		for i < len(s) {
			c := s[i]
			if c < utf8.RuneSelf {
				if !isASCIIWord(c) {
					break
				}
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf = append(buf, c)
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if !isWordRune(r) {
				if !isDiacritic(r) { // a combining accent is dropped, not a break
					break
				}
				i += n
				continue
			}
			buf = utf8.AppendRune(buf, fold(r))
			i += n
		}
		if !fn(buf, start, i) {
			return
		}
	}
}

func isASCIIWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
