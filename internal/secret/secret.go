// Package secret owns the text rules of remember, forget and tidy: secrets, multi-fact dumps, instructions,
// small talk, whole-word forget matching and proper names. Pure functions on strings: no files, no git, no index.
package secret

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"regexp"
	"strings"
)

// Reasons are fixed sentences: a reason never quotes the text it refuses, so a secret is never echoed.
const (
	ReasonAPIKey     = "That looks like an API key or access token; the box never stores keys, so keep it in a password manager."
	ReasonPrivateKey = "That looks like a private key; the box never stores keys, so keep it in a password manager."
	ReasonJWT        = "That looks like a login token (a JWT); the box never stores tokens."
	ReasonCard       = "That looks like a payment card number; the box never stores card numbers."
	ReasonPassword   = "That looks like a password, PIN or access code; the box never stores them, so keep it in a password manager."
)

// providerKeys are the shapes of well-known provider keys; hint is a literal every match contains, so
// most text skips the regular expression.
var providerKeys = []struct {
	hint string
	re   *regexp.Regexp
}{
	{"sk-ant-", regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},                   // Anthropic
	{"sk-", regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`)}, // OpenAI
	{"", regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b`)},         // AWS access key id
	{"gh", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}\b`)},                     // GitHub
	{"github_pat_", regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}`)},            // GitHub fine-grained
	{"glpat-", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},                     // GitLab
	{"AIza", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},                          // Google
	{"xox", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},                   // Slack
	{"k_", regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}`)},         // Stripe
	{"mbx_", regexp.MustCompile(`\bmbx_[A-Za-z0-9_-]{16,}`)},                         // the box's own keys
	{"hf_", regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`)},                             // Hugging Face
	{"npm_", regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}`)},                            // npm
	{"SG.", regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`)},      // SendGrid
}

var (
	pemRe   = regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)
	jwtRe   = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)
	cardRe  = regexp.MustCompile(`\d(?:[ -]?\d){12,18}`)
	tokenRe = regexp.MustCompile(`[A-Za-z0-9_+/=-]{32,}`)
	hexRe   = regexp.MustCompile(`[0-9a-fA-F]{32,}`)
)

// Secret reports whether text holds something that must never be stored, with a sentence saying what
// kind of thing it looked like.
func Secret(text string) (reason string, found bool) {
	if pemRe.MatchString(text) {
		return ReasonPrivateKey, true
	}
	for _, k := range providerKeys {
		if strings.Contains(text, k.hint) && k.re.MatchString(text) {
			return ReasonAPIKey, true
		}
	}
	for _, m := range jwtRe.FindAllString(text, -1) {
		if isJWT(m) {
			return ReasonJWT, true
		}
	}
	if hasCardNumber(text) {
		return ReasonCard, true
	}
	if hasPasswordPhrase(text) {
		return ReasonPassword, true
	}
	if hasRandomToken(text) {
		return ReasonAPIKey, true
	}
	return "", false
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

// hasCardNumber finds 13–19 digits (spaces or dashes between them allowed) that pass Luhn and start
// like a real card network (Visa, Mastercard, Amex, Discover, Diners, JCB, UnionPay). Phone numbers
// written with a leading + are skipped.
func hasCardNumber(text string) bool {
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

func cardPrefix(d string) bool {
	switch d[0] {
	case '4', '5', '6':
		return true
	case '3':
		return d[1] == '4' || d[1] == '7' || d[1] == '0' || d[1] == '6' || d[1] == '8' || d[1] == '5'
	case '2':
		p := atoi(d[:4])
		return p >= 2221 && p <= 2720
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

// passwordRe finds "<secret word> [for/to/of the thing] is|:|= VALUE". VALUE is then checked: "the
// password is on the fridge" names a place, not a password.
var passwordRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])(` + secretWords + `)` +
	`(?:\s+(?:for|to|of|on|at|para|de|do|da|du|für)\s+[\p{L}\p{N}'’.&\- ]{1,40}?)?` +
	`(?:\s+(?:is|was|are|es|é|est|ist|era)\s+|\s*[=:—–]\s*)["'“‘]?([^\s"'”’]+)`)

// pinRe finds a PIN or card code written right after its name: "PIN 4821", "CVV 123".
var pinRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}_])(?:pin|pin code|cvv2?|cvc|passcode|door code|alarm code|gate code|security code)\s*#?\s*\d{3,8}(?:$|[^\p{L}\p{N}/:.,-]|[.,](?:$|\s))`)

const secretWords = `passwords?|passwd|pwd|pw|pass|passcodes?|passphrases?|pins?|pin codes?|pin numbers?|` +
	`security codes?|cvv|cvc|cvv2|otp|2fa codes?|one[- ]time codes?|verification codes?|login codes?|` +
	`access codes?|alarm codes?|door codes?|gate codes?|safe codes?|lock codes?|combination|contraseña|` +
	`clave|senha|mot de passe|passwort|kennwort|code pin|código|codigo`

// benignValue are words that follow "password is" in sentences about a password, not containing one.
var benignValue = set(`a an the in on at under inside behind near by with written stored saved kept taped
	changed reset expired wrong right correct same different too very not never still now also being
	somewhere managed protected required needed lost forgotten unknown missing weak strong long short
	easy hard simple complicated broken locked blocked 1password bitwarden lastpass keychain my his her
	their our your its in-the there here what that this which printed on-the sent shared set updated
	case-sensitive`)

var pinLike = regexp.MustCompile(`(?i)^(pins?|pin codes?|pin numbers?|cvv|cvc|cvv2|otp|security codes?|2fa codes?|one[- ]time codes?|verification codes?|login codes?|access codes?|alarm codes?|door codes?|gate codes?|safe codes?|lock codes?|combination|code pin|código|codigo)$`)

// secretHints are fragments one of which every password phrase contains, in lower case.
var secretHints = []string{"pass", "pw", "pin", "cod", "cvv", "cvc", "otp", "combination", "contrase", "clave", "senha", "mot de", "kennwort", "códig"}

func hasPasswordPhrase(text string) bool {
	lower := strings.ToLower(text)
	hinted := false
	for _, h := range secretHints {
		hinted = hinted || strings.Contains(lower, h)
	}
	if !hinted {
		return false
	}
	if pinRe.MatchString(text) {
		return true
	}
	for _, m := range passwordRe.FindAllStringSubmatch(text, -1) {
		word, value := m[1], strings.TrimRight(m[2], ".,;!?)")
		if value == "" || benignValue[strings.ToLower(value)] {
			continue
		}
		if pinLike.MatchString(word) || strings.EqualFold(word, "pass") || strings.EqualFold(word, "pw") {
			// A PIN or code is digits (a few letters allowed, like 4821# or A12B); "pass" alone is common
			// English, so it needs a value that looks made up.
			if !strings.ContainsAny(value, "0123456789") {
				continue
			}
		}
		return true
	}
	return false
}

// hasRandomToken finds long machine-made strings: 32+ characters mixing lower, upper and digits with
// high entropy, or 32+ hex digits. Parts of URLs and e-mail addresses are left alone.
func hasRandomToken(text string) bool {
	for _, w := range strings.Fields(text) {
		if strings.Contains(w, "://") || strings.HasPrefix(strings.ToLower(w), "www.") {
			continue
		}
		for _, t := range tokenRe.FindAllString(w, -1) {
			if looksRandom(t) {
				return true
			}
		}
		for _, t := range hexRe.FindAllString(w, -1) {
			if strings.ContainsAny(t, "0123456789") && strings.ContainsAny(strings.ToLower(t), "abcdef") && entropy(t) >= 3.0 {
				return true
			}
		}
	}
	return false
}

func looksRandom(t string) bool {
	var lower, upper, digit int
	for _, r := range t {
		switch {
		case r >= 'a' && r <= 'z':
			lower++
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= '0' && r <= '9':
			digit++
		}
	}
	return lower >= 2 && upper >= 2 && digit >= 2 && entropy(t) >= 4.0
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	e := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		e -= p * math.Log2(p)
	}
	return e
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
