package secret

import (
	"strings"

	"github.com/boxmem/box/internal/lazyregexp"
)

// Numbers that identify a person or pay for things (docs/SECRETS.md, "Cards and national ids"): card
// numbers by Luhn, and national ids whose written form is distinctive enough to find without a word
// naming them, each with its own check: the US SSN (area, group and serial rules), the UK National
// Insurance number (prefix rules), the French NIR written in its groups (key mod 97), the Spanish DNI and NIE (check letter),
// the Italian codice fiscale (check letter) and the Brazilian CPF (two check digits). Ids that are just
// nine or eleven digits (a Dutch BSN, a Portuguese NIF, a German tax id) are found by their name
// instead ("my BSN is …"): without it they cannot be told from a phone number.

var (
	cardRe = lazyregexp.New(`\d(?:[ -]?\d){12,18}`)
	ssnRe  = lazyregexp.New(`^(\d{3})-(\d{2})-(\d{4})$`)
	ninoRe = lazyregexp.New(`^([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z])(\d{2})(\d{2})(\d{2})([A-D])$`)
	nirRe  = lazyregexp.New(`^([12]) (\d{2}) (\d{2}) (\d{2}|2[AB]) (\d{3}) (\d{3}) (\d{2})$`)
	dniRe  = lazyregexp.New(`^([XYZ]-?)?(\d{7,8})-?([A-Z])$`)
	cfRe   = lazyregexp.New(`^[A-Z]{6}\d{2}[ABCDEHLMPRST]\d{2}[A-Z]\d{3}[A-Z]$`)
	cpfRe  = lazyregexp.New(`^(\d{3})\.(\d{3})\.(\d{3})-(\d{2})$`)
)

// nationalID finds an id written in its own distinctive form. Each form is one word, or a few words
// joined (the UK and French ids are written in groups), so the expressions run on candidates only.
func nationalID(text string) (string, bool) {
	if d, _ := count(text); d < 6 {
		return "", false
	}
	fields := strings.Fields(text)
	for i := range fields {
		fields[i] = strings.Trim(fields[i], ",;:!?()[]\"'")
	}
	for i, f := range fields {
		if idWord(strings.TrimRight(f, ".")) {
			return ReasonNationalID, true
		}
		// "AB 12 34 56 C", "1 85 05 78 006 084 91": groups of a UK or French id.
		if i+5 <= len(fields) && len(f) == 2 && ninoWord(strings.Join(fields[i:i+5], "")) {
			return ReasonNationalID, true
		}
		if i+7 <= len(fields) && (f == "1" || f == "2") && len(fields[i+1]) == 2 && len(fields[i+4]) == 3 {
			if m := nirRe.FindStringSubmatch(strings.TrimRight(strings.Join(fields[i:i+7], " "), ".")); m != nil && nirValid(m) {
				return ReasonNationalID, true
			}
		}
	}
	return "", false
}

// idWord is one word that is an SSN, a UK NINO, a Spanish DNI or NIE, an Italian codice fiscale or a CPF.
func idWord(f string) bool {
	switch n := len(f); {
	case n < 9 || n > 16:
		return false
	case n == 11 && f[3] == '-':
		m := ssnRe.FindStringSubmatch(f)
		return m != nil && ssnValid(m[1], m[2], m[3])
	case n == 14 && f[3] == '.':
		m := cpfRe.FindStringSubmatch(f)
		return m != nil && cpfValid(m[1]+m[2]+m[3]+m[4])
	case n == 16:
		return cfRe.MatchString(f) && cfValid(f)
	}
	if ninoWord(f) {
		return true
	}
	m := dniRe.FindStringSubmatch(f)
	return m != nil && dniValid(m[1], m[2], m[3])
}

func ninoWord(f string) bool {
	m := ninoRe.FindStringSubmatch(f)
	if m == nil {
		return false
	}
	switch m[1] {
	case "BG", "GB", "NK", "KN", "TN", "NT", "ZZ":
		return false
	}
	return true
}

// ssnValid applies the Social Security Administration's rules: no area 000, 666 or 900–999, no group
// 00, no serial 0000.
func ssnValid(area, group, serial string) bool {
	a := atoi(area)
	return a != 0 && a != 666 && a < 900 && group != "00" && serial != "0000"
}

// nirValid checks the French NIR: month 01–12 (or 20 and over for unknown), and the key, 97 minus the
// first 13 digits mod 97 (Corsica's 2A and 2B count as 19 and 18).
func nirValid(m []string) bool {
	month := atoi(m[3])
	if month == 0 || month > 12 && month < 20 {
		return false
	}
	dept := m[4]
	switch dept {
	case "2A":
		dept = "19"
	case "2B":
		dept = "18"
	}
	n := 0
	for _, c := range m[1] + m[2] + m[3] + dept + m[5] + m[6] {
		n = (n*10 + int(c-'0')) % 97
	}
	return 97-n == atoi(m[7])
}

// dniValid checks the Spanish DNI or NIE letter: the number mod 23 picks it.
func dniValid(prefix, digits, letter string) bool {
	prefix = strings.TrimSuffix(prefix, "-")
	if prefix == "" && len(digits) != 8 || prefix != "" && len(digits) != 7 {
		return false
	}
	n := atoi(digits)
	if prefix != "" {
		n += int(prefix[0]-'X') * 10000000
	}
	return "TRWAGMYFPDXBNJZSQVHLCKE"[n%23] == letter[0]
}

// cfValid checks the Italian codice fiscale's last letter.
func cfValid(cf string) bool {
	odd := [...]int{1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23}
	sum := 0
	for i := 0; i < 15; i++ {
		c := cf[i]
		v := int(c - 'A')
		if c >= '0' && c <= '9' {
			v = int(c - '0')
		}
		if i%2 == 0 {
			sum += odd[v]
		} else {
			sum += v
		}
	}
	return byte('A'+sum%26) == cf[15]
}

// cpfValid checks the Brazilian CPF's two check digits; eleven equal digits are not a CPF.
func cpfValid(d string) bool {
	if strings.Count(d, d[:1]) == len(d) {
		return false
	}
	for k := 9; k <= 10; k++ {
		sum := 0
		for i := 0; i < k; i++ {
			sum += int(d[i]-'0') * (k + 1 - i)
		}
		c := sum * 10 % 11 % 10
		if c != int(d[k]-'0') {
			return false
		}
	}
	return true
}

// hasCardNumber finds 13–19 digits (spaces or dashes between them allowed) that pass Luhn and start
// like a real card network (Visa, Mastercard, Amex, Discover, Diners, JCB, UnionPay). Phone numbers
// written with a leading + are skipped.
func hasCardNumber(text string) bool {
	if longestDigitRun(text) < 13 {
		return false
	}
	for _, loc := range cardRe.FindAllStringIndex(text, -1) {
		if loc[0] > 0 {
			prev := text[loc[0]-1]
			if prev == '+' || prev >= '0' && prev <= '9' {
				continue
			}
		}
		if loc[1] < len(text) && text[loc[1]] >= '0' && text[loc[1]] <= '9' {
			continue
		}
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, text[loc[0]:loc[1]])
		if len(digits) >= 13 && len(digits) <= 19 && cardPrefix(digits) && luhn(digits) {
			return true
		}
	}
	return false
}

// cardPrefix says whether d starts like a card of a real network, with that network's length.
func cardPrefix(d string) bool {
	n := len(d)
	p2, p4, p6 := atoi(d[:2]), atoi(d[:4]), atoi(d[:6])
	switch {
	case d[0] == '4': // Visa
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55 || p4 >= 2221 && p4 <= 2720: // Mastercard
		return n == 16
	case p2 == 34 || p2 == 37: // American Express
		return n == 15
	case p4 == 6011 || p2 == 65 || p6/1000 >= 644 && p6/1000 <= 649 || p6 >= 622126 && p6 <= 622925: // Discover
		return n >= 16
	case p2 == 62: // UnionPay
		return n >= 16
	case p2 == 36 || p2 == 38 || p2 == 39 || p6/1000 >= 300 && p6/1000 <= 305: // Diners Club
		return n >= 14 && n <= 16
	case p4 >= 3528 && p4 <= 3589: // JCB
		return n >= 16
	}
	return false
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func luhn(d string) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

// longestDigitRun counts the digits of the longest run of digits in text where single spaces or dashes
// may stand between them.
func longestDigitRun(text string) int {
	best, n := 0, 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case '0' <= c && c <= '9':
			n++
			best = max(best, n)
		case (c == ' ' || c == '-') && i > 0 && i+1 < len(text) && '0' <= text[i-1] && text[i-1] <= '9' && '0' <= text[i+1] && text[i+1] <= '9':
		default:
			n = 0
		}
	}
	return best
}
