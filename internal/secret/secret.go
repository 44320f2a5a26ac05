// Package secret owns the text rules of remember, forget and tidy: secrets, multi-fact dumps, instructions,
// small talk, greetings, questions, assistant chatter, whole-word forget matching and proper names. Pure
// functions on strings: no files, no git, no index. The secret rules are described by kind in docs/SECRETS.md.
package secret

import "strings"

// Reasons are fixed sentences: a reason never quotes the text it refuses, so a secret is never echoed.
const (
	ReasonAPIKey      = "That looks like an API key or access token; the box never stores keys, so keep it in a password manager."
	ReasonPrivateKey  = "That looks like a private key; the box never stores keys, so keep it in a password manager."
	ReasonJWT         = "That looks like a login token (a JWT); the box never stores tokens."
	ReasonCard        = "That looks like a payment card number; the box never stores card numbers."
	ReasonPassword    = "That looks like a password, PIN or access code; the box never stores them, so keep it in a password manager."
	ReasonCredentials = "That looks like a login with its password (or an address that carries one); the box never stores passwords, so keep it in a password manager."
	ReasonRecovery    = "That looks like recovery or backup codes; the box never stores them, so keep them in a password manager or on paper."
	ReasonSeed        = "That looks like a wallet's recovery (seed) phrase; the box never stores it, so keep it offline."
	ReasonNationalID  = "That looks like a national ID, tax, passport or social security number; the box never stores them."
)

// Reasons lists every reason Secret may give.
var Reasons = []string{ReasonAPIKey, ReasonPrivateKey, ReasonJWT, ReasonCard, ReasonPassword, ReasonCredentials, ReasonRecovery, ReasonSeed, ReasonNationalID}

// Secret reports whether text holds something that must never be stored, with a sentence saying what
// kind of thing it looked like.
func Secret(text string) (reason string, found bool) {
	return secretIn(text, 0)
}

// Stored is Secret for what a program keeps (a page's data store): ids, hashes and encoded images are
// its ordinary content, so a long random string alone is not taken for a key; every other rule holds
// (a provider's key by its shape, a JWT, a private key, a password in words or in an address, a card,
// a national id, codes and seed phrases).
func Stored(text string) (reason string, found bool) {
	return secretWith(text, 0, false)
}

// secretIn is Secret on text found inside other text (decoded base64) at the given depth.
func secretIn(text string, depth int) (string, bool) { return secretWith(text, depth, true) }

// secretWith is every rule; random says whether a long random string alone counts as a key.
func secretWith(text string, depth int, random bool) (string, bool) {
	if r, ok := keySecret(text, depth, random); ok {
		return r, true
	}
	if hasCardNumber(text) {
		return ReasonCard, true
	}
	if r, ok := nationalID(text); ok {
		return r, true
	}
	n := normalize(text)
	if strings.Contains(n, "private key") && privateKeyHeader.MatchString(n) {
		return ReasonPrivateKey, true
	}
	ts := tokenize(n)
	if k := phraseSecret(ts); k != 0 {
		return reasonOf(k), true
	}
	if doorCode(ts) {
		return ReasonPassword, true
	}
	if seedPhrase(ts, n) {
		return ReasonSeed, true
	}
	if recoveryCodes(text) {
		return ReasonRecovery, true
	}
	return "", false
}

func reasonOf(k kind) string {
	switch k {
	case kKey:
		return ReasonAPIKey
	case kID:
		return ReasonNationalID
	case kLogin:
		return ReasonCredentials
	case kRecovery:
		return ReasonRecovery
	case kSeed:
		return ReasonSeed
	}
	return ReasonPassword
}

func set(words string) map[string]bool {
	ws := strings.Fields(words)
	m := make(map[string]bool, len(ws)) // sized at once: the package builds some forty of these at start
	for _, w := range ws {
		m[w] = true
	}
	return m
}
