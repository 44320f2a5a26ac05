package secret

import (
	"strings"
	"unicode"
)

// The phrase rules read text in one normal form (docs/SECRETS.md, "Look-alike spellings"), so a secret
// written to slip past them is read like the plain one: look-alike letters from other scripts (Cyrillic
// "а", Greek "ο", fullwidth "ｐ", mathematical "𝐩", circled "ⓟ") become Latin, accents drop, case folds,
// invisible characters go, other spaces and dashes become plain ones, and a secret word spelt with digits
// or symbols ("passw0rd", "p@ssword", "pa$$wort") is read as the word. Values keep their digits.

// lookAlike maps letters of other scripts that render like a Latin letter to that letter.
var lookAlike = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c',
	'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w',
	'һ': 'h', 'ӏ': 'l', 'ɡ': 'g', 'ь': 'b', 'п': 'n', 'г': 'r', 'ц': 'u',
	'А': 'a', 'В': 'b', 'Е': 'e', 'К': 'k', 'М': 'm', 'Н': 'h', 'О': 'o', 'Р': 'p', 'С': 'c', 'Т': 't',
	'У': 'y', 'Х': 'x', 'Ѕ': 's', 'І': 'i', 'Ј': 'j', 'Ԁ': 'd', 'Ԛ': 'q', 'Ԝ': 'w', 'Һ': 'h', 'Ӏ': 'l',
	// Greek
	'α': 'a', 'β': 'b', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u',
	'χ': 'x', 'ω': 'w', 'ϲ': 'c', 'ϳ': 'j',
	'Α': 'a', 'Β': 'b', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'Ι': 'i', 'Κ': 'k', 'Μ': 'm', 'Ν': 'n', 'Ο': 'o',
	'Ρ': 'p', 'Τ': 't', 'Υ': 'y', 'Χ': 'x', 'Ϲ': 'c',
	// Latin look-alikes
	'ı': 'i', 'ȷ': 'j', 'ſ': 's', 'ℓ': 'l', 'ⅰ': 'i', 'ⅼ': 'l', 'ⅽ': 'c', 'ⅾ': 'd', 'ⅿ': 'm',
	// punctuation that stands for a plain one
	'＝': '=', '：': ':', '—': '-', '–': '-', '‐': '-', '‑': '-', '−': '-', '’': '\'', '‘': '\'', '＠': '@',
}

// leet maps the digits and symbols that stand for letters in a disguised word.
var leet = map[byte]byte{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', '$': 's', '!': 'i', '|': 'l'}

// normalize returns text in the phrase rules' normal form.
func normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r < 0x80:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Cf, r):
			continue // combining accents, zero-width and direction marks
		case unicode.IsSpace(r):
			b.WriteByte(' ')
			continue
		case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
			r -= 0xFEE0
		case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumerics: bold, italic, script … A–Z a–z
			i := (r - 0x1D400) % 52
			r = 'A' + i
			if i >= 26 {
				r = 'a' + i - 26
			}
		case r >= 0x24B6 && r <= 0x24CF: // circled capitals
			r = 'a' + r - 0x24B6
		case r >= 0x24D0 && r <= 0x24E9: // circled small letters
			r = 'a' + r - 0x24D0
		}
		if l, ok := lookAlike[r]; ok {
			r = l
		}
		if f, ok := foldTable[r]; ok {
			b.WriteString(strings.ToLower(f))
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	s := b.String()
	if spelledOut(s) {
		s = respace(s)
	}
	if !strings.ContainsAny(s, "0134579@$!|") {
		return s
	}
	return unleet(s)
}

// spelledOut reports four letters or more in a row written one at a time: "p a s s".
func spelledOut(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		single := s[i] != ' ' && (i == 0 || s[i-1] == ' ') && (i+1 == len(s) || s[i+1] == ' ')
		switch {
		case single:
			if n++; n >= 4 {
				return true
			}
		case s[i] != ' ':
			n = 0
		}
	}
	return false
}

// respace joins words spelt one letter at a time ("m y p a s s w o r d i s") back into words: at each
// letter the longest secret word or small joining word that the letters spell is taken.
func respace(s string) string {
	fields := strings.Split(s, " ")
	var out []string
	for i := 0; i < len(fields); {
		j := i
		for j < len(fields) && j < i+12 && len(strings.TrimRight(fields[j], ":=.,")) == 1 {
			j++ // no word respace knows is longer than twelve letters
		}
		if w := longestWord(fields[i:j]); w > 1 {
			out = append(out, strings.Join(fields[i:i+w], ""))
			i += w
			continue
		}
		out = append(out, fields[i])
		i++
	}
	return strings.Join(out, " ")
}

// spelledWords are the words respace puts back together besides the secret words.
var spelledWords = set(`my is the our your his her es ist est e ma mon mi mein meine mijn il la le el de`)

// longestWord is how many one-letter fields from the start spell the longest known word, or 0.
func longestWord(fs []string) int {
	for n := len(fs); n >= 2; n-- {
		var b strings.Builder
		for _, f := range fs[:n] {
			b.WriteString(strings.TrimRight(f, ":=.,"))
		}
		if w := b.String(); leetWords[w] || spelledWords[w] {
			return n
		}
	}
	return 0
}

// unleet reads each word that holds a letter and a leet character as letters when that spells a secret
// word ("passw0rd" → "password"); other words, values among them, are left as they are.
func unleet(s string) string {
	fields := strings.Split(s, " ")
	changed := false
	for i, f := range fields {
		core := strings.TrimRight(f, ".,;:!?)\"'")
		if len(core) < 3 || !hasLetter(core) || !strings.ContainsAny(core, "0134579@$!|") {
			continue
		}
		for _, one := range []byte("il") { // a 1 stands for i or l
			m := []byte(core)
			for j := range m {
				if l, ok := leet[m[j]]; ok {
					m[j] = l
				}
				if core[j] == '1' {
					m[j] = one
				}
			}
			if leetWords[string(m)] {
				fields[i] = string(m) + f[len(core):]
				changed = true
				break
			}
		}
	}
	if !changed {
		return s
	}
	return strings.Join(fields, " ")
}

// leetWords are the secret words looked for under a leet disguise.
var leetWords = set(`password passwords passwort passwd pwd pass passcode passphrase pin pincode secret kennwort
	wachtwoord senha contrasena clave login credentials code token`)

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}
