package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/boxmem/box/internal/lazyregexp"
)

// Machine-made secrets (docs/SECRETS.md, "Keys and tokens"): provider keys by their shape, private keys
// (a PEM header, or a PEM body without its dashes, read as DER), JWTs, long random strings, the same
// things base64-encoded or spelt with spaces, and passwords carried in addresses (postgres://u:p@host)
// or written user:password.

// providerKeys are the shapes of well-known provider keys; hint is a literal every match contains, so
// most text skips the regular expression.
var providerKeys = []struct {
	hint string
	re   *lazyregexp.Regexp
}{
	{"sk-ant-", lazyregexp.New(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},                           // Anthropic
	{"sk-", lazyregexp.New(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`)},         // OpenAI
	{"A", lazyregexp.New(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b`)}, // AWS access key id
	{"gh", lazyregexp.New(`\bgh[pousr]_[A-Za-z0-9]{30,}\b`)},                             // GitHub
	{"github_pat_", lazyregexp.New(`\bgithub_pat_[A-Za-z0-9_]{22,}`)},                    // GitHub fine-grained
	{"glpat-", lazyregexp.New(`\bglpat-[A-Za-z0-9_-]{20,}`)},                             // GitLab
	{"AIza", lazyregexp.New(`\bAIza[0-9A-Za-z_-]{35}`)},                                  // Google
	{"xox", lazyregexp.New(`\bxox[abposre]-[A-Za-z0-9-]{10,}`)},                          // Slack
	{"k_", lazyregexp.New(`\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`)},              // Stripe
	{"whsec_", lazyregexp.New(`\bwhsec_[A-Za-z0-9+/=]{20,}`)},                            // Stripe webhooks
	{"mbx_", lazyregexp.New(`\bmbx_[A-Za-z0-9_-]{16,}`)},                                 // the box's own keys
	{"hf_", lazyregexp.New(`\bhf_[A-Za-z0-9]{30,}`)},                                     // Hugging Face
	{"npm_", lazyregexp.New(`\bnpm_[A-Za-z0-9]{36}`)},                                    // npm
	{"SG.", lazyregexp.New(`\bSG\.[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`)},              // SendGrid
	{"AGE-SECRET-KEY-", lazyregexp.New(`AGE-SECRET-KEY-1[0-9A-Z]{50,}`)},                 // age
	{"dop_v1_", lazyregexp.New(`\bdop_v1_[a-f0-9]{40,}`)},                                // DigitalOcean
	{"pypi-", lazyregexp.New(`\bpypi-[A-Za-z0-9_-]{50,}`)},                               // PyPI
	{"shp", lazyregexp.New(`\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`)},                      // Shopify
	{"ya29.", lazyregexp.New(`\bya29\.[0-9A-Za-z_-]{20,}`)},                              // Google OAuth
	{"EAA", lazyregexp.New(`\bEAA[A-Za-z0-9]{30,}`)},                                     // Meta
	{"SK", lazyregexp.New(`\bSK[0-9a-fA-F]{32}\b`)},                                      // Twilio
	{"-----", lazyregexp.New(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)},
}

var (
	privateKeyHeader = lazyregexp.New(`begin (?:[a-z0-9]+ )*private key|private key-{3,}|putty-user-key-file`)
	jwtRe            = lazyregexp.New(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)
	// connRe finds an address that carries a password: scheme://user:password@host.
	connRe  = lazyregexp.New(`(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/?#@:]*:([^\s/?#@]+)@`)
	urlRe   = lazyregexp.New(`(?i)\b[a-z][a-z0-9+.:-]{1,20}://[^\s"'<>]+`)
	tokenRe = lazyregexp.New(`[A-Za-z0-9_+/=-]{20,}`)
	hexRe   = lazyregexp.New(`[0-9a-fA-F]{32,}`)
)

// keySecret finds machine-made secrets in text; depth counts the base64 layers already opened; random
// says whether a long random or encoded string alone counts.
func keySecret(text string, depth int, random bool) (string, bool) {
	for _, k := range providerKeys {
		if k.hint == "A" && !awsPrefix(text) {
			continue
		}
		if strings.Contains(text, k.hint) && k.re.MatchString(text) {
			if k.hint == "-----" {
				return ReasonPrivateKey, true
			}
			return ReasonAPIKey, true
		}
	}
	if strings.Contains(text, "eyJ") {
		for _, m := range jwtRe.FindAllString(text, -1) {
			if isJWT(m) {
				return ReasonJWT, true
			}
		}
	}
	if strings.Contains(text, "://") {
		for _, m := range connRe.FindAllStringSubmatch(text, -1) {
			if !placeholder(m[1]) {
				return ReasonCredentials, true
			}
		}
		for _, m := range urlRe.FindAllString(text, -1) {
			if secretURL(m) {
				return ReasonAPIKey, true
			}
		}
	}
	fields := strings.Fields(text)
	for _, f := range fields {
		f = strings.Trim(f, "\"'“”‘’()[]{}<>,;!?`*")
		if len(f) < 6 {
			continue
		}
		if userPassword(f) {
			return ReasonCredentials, true
		}
		if r, ok := machineMade(f, depth, random); ok {
			return r, true
		}
	}
	return spacedKey(fields, depth, random)
}

// awsPrefix says whether text holds one of the four-letter openings of an AWS key id.
func awsPrefix(text string) bool {
	for _, p := range []string{"AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"} {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// machineMade finds a key, a token or an encoded secret in one word of text; random says whether a long
// random string (or hex) alone counts as a key.
func machineMade(w string, depth int, random bool) (string, bool) {
	if len(w) < 16 || strings.Contains(w, "://") || strings.HasPrefix(strings.ToLower(w), "www.") || emailLike(w) {
		return "", false
	}
	for _, t := range tokenRe.FindAllString(w, -1) {
		if r, ok := decoded(t, depth, random); ok {
			return r, true
		}
		if random && randomToken(t) {
			return ReasonAPIKey, true
		}
	}
	for _, t := range hexRe.FindAllString(w, -1) {
		if random && strings.ContainsAny(t, "0123456789") && strings.ContainsAny(strings.ToLower(t), "abcdef") && entropy(t) >= 3.0 {
			return ReasonAPIKey, true
		}
	}
	if len(w) >= 16 && len(w) < 20 {
		return decoded(w, depth, random)
	}
	return "", false
}

// decoded opens t as base64: a DER private key or an OpenSSH key inside is a private key; readable
// text inside is checked by every rule again, one layer deep.
func decoded(t string, depth int, random bool) (string, bool) {
	if len(t) < 16 || depth > 1 {
		return "", false
	}
	raw := strings.TrimRight(t, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(raw, "-_") {
		if strings.ContainsAny(raw, "+/") {
			return "", false
		}
		enc = base64.RawURLEncoding
	}
	raw = raw[:len(raw)/4*4]
	b, err := enc.DecodeString(raw)
	if err != nil {
		return "", false
	}
	if derPrivateKey(b) || bytes.HasPrefix(b, []byte("openssh-key-v1")) {
		return ReasonPrivateKey, true
	}
	if readable(b) && len(b) >= 8 {
		return secretWith(string(b), depth+1, random)
	}
	return "", false
}

// derPrivateKey reports bytes that open like a DER private key: a SEQUENCE holding first a version
// INTEGER 0 or 1 (PKCS#1 RSA, PKCS#8, SEC1 EC). Certificates and public keys open with a SEQUENCE
// inside, so they pass.
func derPrivateKey(b []byte) bool {
	if len(b) < 7 || b[0] != 0x30 {
		return false
	}
	i := 2
	switch {
	case b[1] == 0x81:
		i = 3
	case b[1] == 0x82:
		i = 4
	case b[1] >= 0x80:
		return false
	}
	return len(b) >= i+3 && b[i] == 0x02 && b[i+1] == 0x01 && (b[i+2] == 0x00 || b[i+2] == 0x01)
}

func readable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7f {
			return false
		}
	}
	return true
}

func isJWT(s string) bool {
	head, _, _ := strings.Cut(s, ".")
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(head, "="))
	if err != nil {
		return false
	}
	var h map[string]any
	if json.Unmarshal(raw, &h) != nil {
		return false
	}
	_, ok := h["alg"]
	return ok
}

// webhookPaths are addresses that are secrets themselves: whoever has one can post as the owner.
var webhookPaths = []string{"hooks.slack.com/services/", "discord.com/api/webhooks/", "discordapp.com/api/webhooks/", "webhook.office.com/", "outlook.office.com/webhook/", "hooks.zapier.com/hooks/catch/"}

// secretURL is a webhook address, or an address whose query carries a key, token, secret or password.
func secretURL(u string) bool {
	l := strings.ToLower(u)
	for _, p := range webhookPaths {
		if strings.Contains(l, p) {
			return true
		}
	}
	_, query, ok := strings.Cut(u, "?")
	if !ok {
		return false
	}
	for _, kv := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' || r == '#' }) {
		name, value, _ := strings.Cut(kv, "=")
		name = strings.ToLower(name)
		if (strings.Contains(name, "pass") || strings.Contains(name, "pwd")) && len(value) >= 4 && !placeholder(value) {
			return true
		}
		for _, s := range []string{"key", "token", "secret", "sig", "signature", "auth", "access"} {
			if strings.Contains(name, s) && (tokenLike(value) || randomToken(value)) {
				return true
			}
		}
	}
	return false
}

// placeholder is a stand-in for a password in an example address: ****, xxx, <password>, ${DB_PASS}.
func placeholder(p string) bool {
	p = strings.ToLower(p)
	if strings.Trim(p, "*x.•") == "" || strings.HasPrefix(p, "<") || strings.HasPrefix(p, "${") || strings.HasPrefix(p, "{") || strings.HasPrefix(p, "%") || strings.HasPrefix(p, "$") {
		return true
	}
	return false
}

// userPassword is one word "user:Password1": a name, a colon, then a password with a capital, a small
// letter and a digit or a symbol. A time (10:30), a ratio (16:9) or "Note:Bring" do not have that, and
// a data: URL (an image inline) is an address, not a login.
func userPassword(w string) bool {
	k := strings.IndexByte(w, ':')
	if k < 2 || k > 64 || strings.Count(w, ":") != 1 || strings.Contains(w, "//") || strings.EqualFold(w[:k], "data") {
		return false
	}
	user, pass := w[:k], strings.TrimRight(w[k+1:], ".")
	if len(pass) < 6 || !hasLetter(user[:1]) {
		return false
	}
	for _, r := range user {
		if !(r < 0x80 && (r == '.' || r == '_' || r == '-' || r == '@' || r == '+' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')) {
			return false
		}
	}
	lower, upper, digit, sym := classes(pass)
	return lower >= 1 && upper >= 1 && digit+sym >= 1
}

// spacedKey joins runs of short chunks ("AKIA IOSF ODNN 7EXA MPLE", "s k - a n t …") and checks the
// result for the shapes of keys.
func spacedKey(fields []string, depth int, random bool) (string, bool) {
	for i := 0; i < len(fields); {
		j, marked, singles := i, 0, 0
		for j < len(fields) && chunk(fields[j]) {
			if keyish(fields[j]) {
				marked++
			}
			if len(fields[j]) == 1 {
				singles++
			}
			j++
		}
		if j-i >= 4 && (marked*2 >= j-i || singles >= 8) {
			joined := strings.Join(fields[i:j], "")
			if len(joined) >= 16 {
				for _, k := range providerKeys {
					if strings.Contains(joined, k.hint) && k.re.MatchString(joined) {
						return ReasonAPIKey, true
					}
				}
				if r, ok := machineMade(joined, depth, random); ok {
					return r, true
				}
			}
		}
		i = max(j, i+1)
	}
	return "", false
}

// chunk is a short piece of a key spelt with spaces.
func chunk(f string) bool {
	if len(f) > 8 {
		return false
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// keyish is a chunk that does not read as a word: a digit in it, a capital inside it, or all capitals.
func keyish(f string) bool {
	d, l := count(f)
	if d > 0 && l > 0 {
		return true
	}
	for i := 1; i < len(f); i++ {
		if 'A' <= f[i] && f[i] <= 'Z' && 'a' <= f[i-1] && f[i-1] <= 'z' {
			return true
		}
	}
	return len(f) >= 3 && strings.ToUpper(f) == f && l > 0
}

// randomToken says whether t reads as machine-made: long, mixing classes of characters, with high
// entropy and frequent changes of class (a CamelCase name changes class only at each word).
func randomToken(t string) bool {
	n := len(t)
	if n < 20 {
		return false
	}
	lower, upper, digit, sym := classes(t)
	if wordy(t) >= 0.5 {
		return false // Budget_2025_Final_v3, MyVeryLongFileName2024: words joined, not noise
	}
	h, tr := entropy(t), transitions(t)
	switch {
	case n >= 32 && lower >= 2 && upper >= 2 && digit >= 2 && h >= 4.0:
		return true
	case lower >= 2 && upper >= 2 && digit+sym >= 1 && h >= 3.7 && tr >= 0.3:
		return true
	case n >= 24 && digit >= 3 && (upper == 0) != (lower == 0) && h >= 3.8 && tr >= 0.35:
		return true // one case and digits: base32 and base36 keys
	}
	return false
}

// wordy is the share of t in pieces that read like words: three letters or more, small after the
// first; t is cut at every character that is not a letter and before every capital after a small one.
func wordy(t string) float64 {
	in, start := 0, 0
	flush := func(end int) {
		p := t[start:end]
		if len(p) >= 3 && strings.ToLower(p[1:]) == p[1:] && isLetters(p) {
			in += len(p)
		}
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		switch {
		case !letter:
			flush(i)
			start = i + 1
		case 'A' <= c && c <= 'Z' && i > start && 'a' <= t[i-1] && t[i-1] <= 'z':
			flush(i)
			start = i
		}
	}
	flush(len(t))
	return float64(in) / float64(len(t))
}

// classes counts the bytes of s by class: small letters, capitals, digits, anything else.
func classes(s string) (lower, upper, digit, other int) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z':
			lower++
		case 'A' <= c && c <= 'Z':
			upper++
		case '0' <= c && c <= '9':
			digit++
		default:
			other++
		}
	}
	return
}

// transitions is the share of neighbouring characters that change class (lower, upper, digit, other).
func transitions(t string) float64 {
	class := func(c byte) int {
		switch {
		case 'a' <= c && c <= 'z':
			return 0
		case 'A' <= c && c <= 'Z':
			return 1
		case '0' <= c && c <= '9':
			return 2
		}
		return 3
	}
	n := 0
	for i := 1; i < len(t); i++ {
		if class(t[i]) != class(t[i-1]) {
			n++
		}
	}
	return float64(n) / float64(len(t)-1)
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	e, n := 0.0, float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			e -= p * math.Log2(p)
		}
	}
	return e
}
