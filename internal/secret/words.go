package secret

import (
	"strings"
	"unicode"
)

// Stopwords are words too common to pick a line to forget: a query of stopwords alone matches nothing.
// It is not the search index's list on purpose: it also drops the words of a forget request itself
// ("please", "forget", "memory", "note", "thing"), which a search must still find.
var Stopwords = set(`a an the and or but nor so yet if then than that this these those there here it its
	it's itself i me my mine myself you your yours yourself he him his himself she her hers herself we us
	our ours ourselves they them their theirs themselves one ones s t d ll re ve m o
	is am are was were be been being have has had having do does did doing done will would shall should can
	could may might must need ought
	of in on at to for from by with about above below over under into onto out off up down through during
	before after again further once as until while against between among per via upon within without
	what which who whom whose when where why how all any both each few more most other some such no not
	only own same too very just also now ever
	everything anything something nothing everyone anyone someone nobody thing things stuff
	please forget remove delete erase memory memories fact facts line lines note notes`)

// Words turns a forget query into the lowercase, accent-folded words it must match, minus stopwords and
// repeats. A query of stopwords alone ("it", "that thing") gives no words, which matches nothing.
func Words(query string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range split(query) {
		if Stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// MatchesAll reports whether text contains every word as a whole word, ignoring case and accents:
// "leo" matches "Leo's swim" but not "Leonard". No words match nothing.
func MatchesAll(text string, words []string) bool {
	if len(words) == 0 {
		return false
	}
	have := map[string]bool{}
	for _, w := range split(text) {
		have[w] = true
	}
	for _, w := range words {
		if !have[Fold(strings.ToLower(w))] {
			return false
		}
	}
	return true
}

// split lowercases and folds s and cuts it into words of letters and digits; apostrophes and hyphens
// split words ("Leo's" → leo, s; "Ana-Maria" → ana, maria).
func split(s string) []string {
	return strings.FieldsFunc(Fold(strings.ToLower(s)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

var foldTable = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'ā': "a", 'ă': "a", 'ą': "a",
	'ç': "c", 'ć': "c", 'č': "c", 'ĉ': "c", 'ċ': "c", 'ď': "d", 'đ': "d", 'ð': "d",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ē': "e", 'ė': "e", 'ę': "e", 'ě': "e",
	'ğ': "g", 'ģ': "g", 'ĥ': "h", 'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ī': "i", 'į': "i", 'ı': "i",
	'ķ': "k", 'ĺ': "l", 'ļ': "l", 'ľ': "l", 'ł': "l", 'ñ': "n", 'ń': "n", 'ņ': "n", 'ň': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'ō': "o", 'ő': "o",
	'ŕ': "r", 'ř': "r", 'ś': "s", 'ş': "s", 'š': "s", 'ș': "s", 'ť': "t", 'ţ': "t", 'ț': "t",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ū': "u", 'ů': "u", 'ű': "u", 'ų': "u",
	'ý': "y", 'ÿ': "y", 'ź': "z", 'ż': "z", 'ž': "z",
	'ß': "ss", 'æ': "ae", 'œ': "oe", 'þ': "th",
	'À': "A", 'Á': "A", 'Â': "A", 'Ã': "A", 'Ä': "A", 'Å': "A", 'Ç': "C", 'Č': "C", 'È': "E", 'É': "E",
	'Ê': "E", 'Ë': "E", 'Ì': "I", 'Í': "I", 'Î': "I", 'Ï': "I", 'Ñ': "N", 'Ò': "O", 'Ó': "O", 'Ô': "O",
	'Õ': "O", 'Ö': "O", 'Ø': "O", 'Ù': "U", 'Ú': "U", 'Û': "U", 'Ü': "U", 'Ý': "Y", 'Š': "S", 'Ž': "Z",
	'Ł': "L", 'Æ': "AE", 'Œ': "OE", 'Þ': "TH", 'Ś': "S", 'Ż': "Z", 'Ź': "Z", 'Ć': "C", 'Ń': "N",
	'’': "'", '‘': "'",
}

// Fold replaces accented Latin letters by their plain ASCII forms ("José" → "Jose", "Straße" →
// "Strasse"); other characters are kept.
func Fold(s string) string {
	if isASCII(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if f, ok := foldTable[r]; ok {
			b.WriteString(f)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
