package page

import (
	"strings"
)

// addrKind is what an address in a page points at, read the way a browser's URL parser reads it.
type addrKind int

const (
	addrEmpty    addrKind = iota
	addrFragment          // #name: inside the page
	addrData              // data:
	addrScript            // javascript:
	addrMail              // mailto:, tel:, sms:
	addrNetwork           // http(s), ws(s), ftp, or //host
	addrRelative          // a path beside the page: nothing is served there
	addrScheme            // any other scheme: blob:, file:, about:, intent: …
)

type address struct {
	kind   addrKind
	scheme string // lower case, when the address has one
	host   string // for addrNetwork: the host, or the address itself when it has none
	body   string // for addrScript: the script after "javascript:", percent-decoded
}

// dropBreaks removes what a URL parser removes anywhere in an address: tabs and line breaks.
var dropBreaks = strings.NewReplacer("\t", "", "\n", "", "\r", "")

// networkSchemes reach another machine.
var networkSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true}

// classify reads v as a URL parser does: leading and trailing spaces and controls go, tabs and line
// breaks anywhere go, and a backslash counts as a slash ("\\cdn.x" is "//cdn.x").
func classify(v string) address {
	v = strings.TrimFunc(v, func(r rune) bool { return r <= 0x20 })
	v = dropBreaks.Replace(v)
	switch {
	case v == "":
		return address{kind: addrEmpty}
	case v[0] == '#':
		return address{kind: addrFragment}
	}
	slashed := strings.ReplaceAll(v, `\`, "/")
	if strings.HasPrefix(slashed, "//") {
		return address{kind: addrNetwork, host: hostOf(slashed, v)}
	}
	scheme, rest, ok := strings.Cut(v, ":")
	if !ok || !isScheme(scheme) {
		return address{kind: addrRelative}
	}
	scheme = strings.ToLower(scheme)
	switch {
	case scheme == "data":
		return address{kind: addrData, scheme: scheme}
	case scheme == "javascript":
		return address{kind: addrScript, scheme: scheme, body: percentDecode(rest)}
	case scheme == "mailto" || scheme == "tel" || scheme == "sms":
		return address{kind: addrMail, scheme: scheme}
	case networkSchemes[scheme]:
		return address{kind: addrNetwork, scheme: scheme, host: hostOf(strings.ReplaceAll(rest, `\`, "/"), v)}
	}
	return address{kind: addrScheme, scheme: scheme}
}

func isScheme(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// hostOf takes the host out of "//host/…" (slashes already normalised); whole is shown when there is
// no host to name.
func hostOf(s, whole string) string {
	s = strings.TrimLeft(s, "/")
	if i := strings.IndexAny(s, "/?# \"'<>`"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return Clip(whole)
	}
	return Clip(strings.ToLower(s))
}

// percentDecode decodes %XX sequences as the URL parser does for a javascript: address; a "%" not
// followed by two hex digits stays.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(hexVal(s[i+1])<<4 | hexVal(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool { return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f') }

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// findNetworkAddress finds an address on another machine anywhere in free text (an attribute that is
// not an address, a string in a script, a CSS string): a network scheme at a word start followed by a
// host, or text that starts with "//host". It returns the host.
func findNetworkAddress(s string) (string, bool) {
	flat := dropBreaks.Replace(s)
	lower := asciiLower(flat) // byte for byte, so indexes into lower are indexes into flat
	if t := strings.TrimLeft(strings.ReplaceAll(lower[:min(len(lower), 256)], `\`, "/"), " "); strings.HasPrefix(t, "//") && len(t) > 2 && isHostStart(t[2]) {
		return hostOf(t, flat), true
	}
	for i := strings.IndexByte(lower, ':'); i >= 0; {
		j := i
		for j > 0 && isLetter(lower[j-1]) {
			j--
		}
		if networkSchemes[lower[j:i]] && (j == 0 || !isWordByte(lower[j-1])) {
			rest := strings.TrimLeft(strings.ReplaceAll(lower[i+1:min(len(lower), i+1+256)], `\`, "/"), "/")
			if rest != "" && isHostStart(rest[0]) {
				return hostOf(rest, flat[j:]), true
			}
		}
		next := strings.IndexByte(lower[i+1:], ':')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return "", false
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isHostStart(c byte) bool { return isLetter(c) || (c >= '0' && c <= '9') || c == '[' || c >= 0x80 }
func isWordByte(c byte) bool {
	return isLetter(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'
}

// Clip keeps a found string short enough for a sentence, with control characters blanked.
func Clip(s string) string {
	const max = 60
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len([]rune(s)) > max {
		return string([]rune(s)[:max]) + "…"
	}
	return s
}

// srcsetURLs splits a srcset attribute into its addresses (HTML "parse a srcset attribute"): an address
// runs to whitespace (commas inside it stay, as in data: addresses) and a trailing comma ends it.
func srcsetURLs(v string) []string {
	var out []string
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
	for i := 0; i < len(v); {
		for i < len(v) && (isSpace(v[i]) || v[i] == ',') {
			i++
		}
		if i >= len(v) {
			break
		}
		start := i
		for i < len(v) && !isSpace(v[i]) {
			i++
		}
		u := v[start:i]
		if strings.HasSuffix(u, ",") {
			out = append(out, strings.TrimRight(u, ","))
			continue
		}
		out = append(out, u)
		for depth := 0; i < len(v); i++ { // the descriptors, to the next comma outside parentheses
			if v[i] == '(' {
				depth++
			} else if v[i] == ')' && depth > 0 {
				depth--
			} else if v[i] == ',' && depth == 0 {
				i++
				break
			}
		}
	}
	return out
}
