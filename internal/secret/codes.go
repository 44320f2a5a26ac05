package secret

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/boxmem/box/internal/lazyregexp"
)

// Codes that unlock things without a noun in front of them (docs/SECRETS.md, "Codes and phrases"): a
// wallet's seed phrase (twelve words or more of the BIP-39 list in a row), lists of recovery codes
// (xxxxx-xxxxx, or a recovery key in equal groups), and door codes given as what to do at the door
// ("the gate opens with 4821", "punch in 1234# at the keypad").

//go:embed bip39-english.txt
var bip39Text string

// bip39 is the BIP-39 English word list, the words of almost every wallet's seed phrase; built on first
// use, as the map of 2048 words is most of the package's start-up cost.
var bip39 = sync.OnceValue(func() map[string]bool { return set(bip39Text) })

// seedHints are words that, anywhere in the text, make a shorter run of list words a seed phrase.
var seedHints = []string{"seed", "mnemonic", "recovery phrase", "wallet", "bip39", "bip-39", "metamask", "ledger", "trezor", "electrum", "bitcoin", "crypto", "phrase", "12 words", "24 words", "twelve words"}

// seedPhrase finds twelve list words in a row (spaces or numbering between them), or six when the
// text talks of a seed or a wallet (then commas may separate them too).
func seedPhrase(ts []tok, n string) bool {
	if len(ts) < 6 || longestRun(ts, true) < 6 {
		return false
	}
	hinted := false
	for _, h := range seedHints {
		hinted = hinted || strings.Contains(n, h)
	}
	run := longestRun(ts, hinted)
	return run >= 12 || hinted && run >= 6
}

// longestRun is the longest bipRun in ts, found in one pass: runs do not overlap.
func longestRun(ts []tok, lenient bool) int {
	best := 0
	for i := 0; i < len(ts); {
		if !bip39()[ts[i].w] {
			i++
			continue
		}
		n, end := 0, i
		for ; end < len(ts); end++ {
			w := ts[end].w
			if isDigits(w) && len(w) <= 2 {
				continue
			}
			if !bip39()[w] {
				break
			}
			n++
			if ts[end].stop && !lenient {
				end++
				break
			}
		}
		best = max(best, n)
		i = max(end, i+1)
	}
	return best
}

// bipRun counts the list words in a row from j; numbering ("1.", "2)") is skipped. Without lenient a
// word followed by punctuation ends the run.
func bipRun(ts []tok, j int, lenient bool) int {
	n := 0
	for q := j; q < len(ts) && n < 24; q++ { // a seed phrase has 24 words at most
		w := ts[q].w
		if isDigits(w) && len(w) <= 2 {
			continue
		}
		if !bip39()[w] {
			break
		}
		n++
		if ts[q].stop && !lenient {
			break
		}
	}
	return n
}

var (
	// recoveryRe is one GitHub-style recovery code: two groups of four to six letters and digits.
	recoveryRe = lazyregexp.New(`(?i)\b[a-z0-9]{4,6}-[a-z0-9]{4,6}\b`)
	// groupedKeyRe is a key written in equal groups: a BitLocker, Apple or product key.
	groupedKeyRe = lazyregexp.New(`\b([A-Za-z0-9]{4,6})(?:-[A-Za-z0-9]{4,6}){4,}\b`)
)

// recoveryCodes finds three or more recovery codes, or one key in five or more equal groups that mix
// letters and digits (or are all digits, as a BitLocker key's eight groups of six).
func recoveryCodes(text string) bool {
	if strings.Count(text, "-") < 3 {
		return false
	}
	n := 0
	for _, m := range recoveryRe.FindAllString(text, -1) {
		if d, l := count(m); d >= 1 && l >= 1 {
			n++
		}
	}
	if n >= 3 {
		return true
	}
	for _, m := range groupedKeyRe.FindAllString(text, -1) {
		groups := strings.Split(m, "-")
		size := len(groups[0])
		equal := true
		for _, g := range groups {
			equal = equal && len(g) == size
		}
		d, l := count(m)
		if equal && (d >= 2 && l >= 2 || l == 0 && len(groups) >= 8) {
			return true
		}
	}
	return false
}

var (
	openVerbs = set(`opens open unlocks unlock disarms disarm arms arm deactivate deactivates abre abren abrir offnet
		offnen ouvre ouvrir apre aprire opent openen ontgrendelen ontgrendelt entsperren entsperrt deverrouiller
		deverrouille desbloquear desbloquea sbloccare sblocca desactivar desactiva disattivare disattiva desativar
		desativa uitschakelen`)
	withWords   = set(`with using con com mit avec met via`)
	enterVerbs  = set(`enter type punch key dial press tap input tippe tippen eingeben tape taper tapez teclea marca introduce digita digite toets intoetsen`)
	keypads     = set(`keypad lockbox keybox keysafe padlock`)
	codeHolders = set(`garage gate keypad alarm safe padlock lockbox keybox keysafe door intercom buzzer locker opener`)
	codeFiller  = set(`in the code pin combination el la le o a il de het der die das le code`)
)

// doorCode reads a code given as what to do: "the gate opens with 4821", "punch in 1234# at the keypad".
func doorCode(ts []tok) bool {
	device := false
	for _, t := range ts {
		device = device || deviceWords[t.w] || codeWords[t.w]
	}
	for i, t := range ts {
		var j int
		switch {
		case codeHolders[t.w] && i+2 < len(ts) && ts[i+1].w == ":":
			j = i + 2 // "Garage: 4821"
		case keypads[t.w] && i+1 < len(ts) && !t.stop:
			j = i + 1 // "keypad 1379#", "lockbox 0415"
		case openVerbs[elided(t.w)]:
			j = -1
			for q := i + 1; q < len(ts) && q <= i+4 && !ts[q-1].stop; q++ {
				if withWords[ts[q].w] {
					j = q + 1
					break
				}
			}
		case enterVerbs[t.w] && device:
			j = i + 1
		default:
			continue
		}
		for j > 0 && j < len(ts) && codeFiller[ts[j].w] && !ts[j-1].stop {
			j++
		}
		if j <= 0 || j >= len(ts) || ts[j-1].stop {
			continue
		}
		if v := digitRun(ts, j); pinValue(v) && digitsIn(v) >= 4 && !unitAfter(ts, j) {
			return true
		}
	}
	return false
}

func digitsIn(v string) int {
	d, _ := count(v)
	return d
}

// elided drops a French or Italian elided article or pronoun: "s'ouvre" → "ouvre", "l'alarme" → "alarme".
func elided(w string) string {
	if k := strings.IndexByte(w, '\''); k > 0 && k <= 2 && len(w) > k+2 {
		return w[k+1:]
	}
	return w
}
