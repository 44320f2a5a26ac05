package connector

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Slug is the id a name gives when the manifest has none: lowercase ASCII letters and digits, every other
// run of characters a single hyphen, accents dropped ("Bus times" → "bus-times", "Café Météo" →
// "cafe-meteo"), cut at a hyphen to at most 30 characters.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFKD.String(name) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		default:
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	s := b.String()
	for len(s) > maxIDLen {
		i := strings.LastIndexByte(s[:maxIDLen+1], '-')
		if i <= 0 {
			s = strings.TrimRight(s[:maxIDLen], "-")
			break
		}
		s = s[:i]
	}
	return s
}
