package index

// The index's FTS5 table stems words with SQLite's porter tokenizer. Snippets and the ranking features
// of docs/SEARCH.md read a document's text in Go, so Go must turn a word into the same stem SQLite does:
// stem is the Porter (1980) algorithm with SQLite's reading of it (words under 3 or over 64 bytes are
// left alone; "y" counts as a vowel after any first letter in *v*; the first matching suffix of a step
// ends the step even when its condition fails). TestStemsMatchSQLite holds the two together.

const (
	minStemLen = 3
	maxStemLen = 64
)

// stem returns the stem of w, a lowercase word as the unicode61 tokenizer emits it.
func stem(w string) string {
	if len(w) < minStemLen || len(w) > maxStemLen {
		return w
	}
	var buf [maxStemLen + 8]byte
	b := append(buf[:0], w...)
	b = step1a(b)
	b = step1b(b)
	if b[len(b)-1] == 'y' && hasVowel(b[:len(b)-1]) {
		b[len(b)-1] = 'i'
	}
	b = applyRules(b, step2Rules)
	b = applyRules(b, step3Rules)
	b = applyRules(b, step4Rules)
	if n := len(b); b[n-1] == 'e' && (measure(b[:n-1]) > 1 || measure(b[:n-1]) == 1 && !cvc(b[:n-1])) {
		b = b[:n-1]
	}
	if n := len(b); n > 1 && b[n-1] == 'l' && b[n-2] == 'l' && measure(b[:n-1]) > 1 {
		b = b[:n-1]
	}
	return string(b)
}

func isVowel(c byte, yIsVowel bool) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	case 'y':
		return yIsVowel
	}
	return false
}

// consonants marks each byte of s: a "y" after a consonant is a vowel.
func consonant(s []byte, i int, prevConsonant bool) bool { return !isVowel(s[i], prevConsonant) }

// measure is Porter's m: the number of vowel-consonant sequences in s, counted up to 2 (all the rules ask).
func measure(s []byte) int {
	m, prev, i := 0, false, 0
	for m < 2 {
		for i < len(s) && consonant(s, i, prev) { // leading consonants
			prev = true
			i++
		}
		for i < len(s) && !consonant(s, i, prev) { // vowels
			prev = false
			i++
		}
		if i >= len(s) {
			return m
		}
		prev = true // the consonant that closes a VC
		i++
		m++
	}
	return m
}

// hasVowel is *v*: a vowel anywhere, "y" counting as one after the first letter.
func hasVowel(s []byte) bool {
	for i, c := range s {
		if isVowel(c, i > 0) {
			return true
		}
	}
	return false
}

// cvc is *o: s ends consonant-vowel-consonant and the last is not w, x or y.
func cvc(s []byte) bool {
	n := len(s)
	if n < 3 {
		return false
	}
	switch s[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	prev := false
	var mask int
	for i := range s {
		prev = consonant(s, i, prev)
		mask <<= 1
		if prev {
			mask |= 1
		}
	}
	return mask&7 == 5
}

func hasSuffix(b []byte, s string) bool {
	return len(b) > len(s) && string(b[len(b)-len(s):]) == s
}

func step1a(b []byte) []byte {
	n := len(b)
	switch {
	case b[n-1] != 's':
		return b
	case b[n-2] == 'e' && (n > 4 && b[n-4] == 's' && b[n-3] == 's' || n > 3 && b[n-3] == 'i'):
		return b[:n-2] // sses → ss, ies → i
	case b[n-2] == 'e' || b[n-2] != 's':
		return b[:n-1]
	}
	return b // ss
}

func step1b(b []byte) []byte {
	var cut int
	switch {
	case hasSuffix(b, "eed"):
		if measure(b[:len(b)-3]) > 0 {
			return b[:len(b)-1]
		}
		return b
	case hasSuffix(b, "ed") && hasVowel(b[:len(b)-2]):
		cut = 2
	case hasSuffix(b, "ing") && hasVowel(b[:len(b)-3]):
		cut = 3
	default:
		return b
	}
	b = b[:len(b)-cut]
	for _, r := range []struct{ from, to string }{{"at", "ate"}, {"bl", "ble"}, {"iz", "ize"}} {
		if hasSuffix(b, r.from) {
			return append(b[:len(b)-len(r.from)], r.to...)
		}
	}
	n := len(b)
	if c := b[n-1]; n > 1 && !isVowel(c, false) && c != 'l' && c != 's' && c != 'z' && c == b[n-2] {
		return b[:n-1]
	}
	if measure(b) == 1 && cvc(b) {
		return append(b, 'e')
	}
	return b
}

// rule replaces suffix by replacement when the stem left before it satisfies cond.
type rule struct {
	suffix, replacement string
	cond                func([]byte) bool
}

func mGt0(s []byte) bool { return measure(s) > 0 }
func mGt1(s []byte) bool { return measure(s) > 1 }
func mGt1ST(s []byte) bool {
	n := len(s)
	return n > 0 && (s[n-1] == 's' || s[n-1] == 't') && measure(s) > 1
}

// applyRules applies the first rule whose suffix b ends with, if its condition holds; a matching
// suffix whose condition fails still ends the step.
func applyRules(b []byte, rules []rule) []byte {
	for _, r := range rules {
		if !hasSuffix(b, r.suffix) {
			continue
		}
		stem := b[:len(b)-len(r.suffix)]
		if r.cond(stem) {
			return append(stem, r.replacement...)
		}
		return b
	}
	return b
}

// The rules of steps 2–4, in the order Porter lists them; where one suffix ends another ("ement",
// "ment", "ent"), the longer comes first.
var (
	step2Rules = []rule{
		{"ational", "ate", mGt0}, {"tional", "tion", mGt0}, {"enci", "ence", mGt0}, {"anci", "ance", mGt0},
		{"izer", "ize", mGt0}, {"logi", "log", mGt0}, {"bli", "ble", mGt0}, {"alli", "al", mGt0},
		{"entli", "ent", mGt0}, {"eli", "e", mGt0}, {"ousli", "ous", mGt0}, {"ization", "ize", mGt0},
		{"ation", "ate", mGt0}, {"ator", "ate", mGt0}, {"alism", "al", mGt0}, {"iveness", "ive", mGt0},
		{"fulness", "ful", mGt0}, {"ousness", "ous", mGt0}, {"aliti", "al", mGt0}, {"iviti", "ive", mGt0},
		{"biliti", "ble", mGt0},
	}
	step3Rules = []rule{
		{"icate", "ic", mGt0}, {"ative", "", mGt0}, {"alize", "al", mGt0}, {"iciti", "ic", mGt0},
		{"ical", "ic", mGt0}, {"ful", "", mGt0}, {"ness", "", mGt0},
	}
	step4Rules = []rule{
		{"al", "", mGt1}, {"ance", "", mGt1}, {"ence", "", mGt1}, {"er", "", mGt1}, {"ic", "", mGt1},
		{"able", "", mGt1}, {"ible", "", mGt1}, {"ant", "", mGt1}, {"ement", "", mGt1}, {"ment", "", mGt1},
		{"ent", "", mGt1}, {"ion", "", mGt1ST}, {"ou", "", mGt1}, {"ism", "", mGt1}, {"ate", "", mGt1},
		{"iti", "", mGt1}, {"ous", "", mGt1}, {"ive", "", mGt1}, {"ize", "", mGt1},
	}
)
