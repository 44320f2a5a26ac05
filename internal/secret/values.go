package secret

import "strings"

// phraseSecret returns the kind of the first secret said in words in ts, or 0.
func phraseSecret(ts []tok) kind {
	for i := range ts {
		n, k := nounAt(ts, i)
		if n == 0 {
			continue
		}
		if forward(ts, i, i+n, k) || backward(ts, i, i+n, k) {
			return k
		}
	}
	for i := 0; i+2 < len(ts); i++ {
		// "mira@example.com / Popcorn!88": an address, a separator, a password.
		if emailLike(ts[i].w) && !ts[i].stop && ts[i+1].sep && ts[i+1].w != "-" && hasDigitOrSymbol(ts[i+2].w) && pairSecret(ts[i+2].w) {
			return kLogin
		}
		// "Router admin: admin / Rt9x!2Kq": a label, a name, a slash, a made-up password.
		if ts[i].w == ":" && i+3 < len(ts) && !ts[i+1].sep && !ts[i+1].stop && ts[i+2].w == "/" && hasLetter(ts[i+3].w) && hasDigitOrSymbol(ts[i+3].w) && len(ts[i+3].w) >= 6 && pairSecret(ts[i+3].w) {
			return kLogin
		}
	}
	return 0
}

// changedTo are the verbs of "was changed to VALUE", in the seven languages.
var changedTo = set(`changed set updated reset geandert gesetzt cambiada cambiado cambiata cambiato mudada mudado
	mudou alterada alterado modifie modifiee change gewijzigd veranderd`)

var toWords = set(`to auf zu en a para in naar op`)

// forward reads "NOUN [qualifier] COPULA VALUE" from j, the word after the noun; without a copula
// ("PIN 4821", "Gmail password Sunshine2024") a password needs a value with a digit or a symbol.
func forward(ts []tok, i, j int, k kind) bool {
	aside := false
	if j < len(ts) && ts[j-1].comma {
		if a := afterAside(ts, j); a != j {
			j, aside = a, true // "the wifi password, in case you need it, is …"
		}
	}
	if j >= len(ts) || ts[j-1].stop && !aside {
		return false
	}
	for j < len(ts) && numberMarks[ts[j].w] && !ts[j].stop {
		j++ // "carte d'identité n° …", "passport no. …"
	}
	if j >= len(ts) {
		return false
	}
	if toWords[ts[j].w] && j+1 < len(ts) && !ts[j].stop && changedBefore(ts, i) && valueOK(ts, j+1, weak(k)) {
		return true // "changed the wifi password to CasaAzul77"
	}
	if quals[ts[j].w] || relatives[ts[j].w] {
		q := j + 1
		for ; q < len(ts) && q <= j+5; q++ {
			if ts[q-1].stop {
				return false
			}
			if copulas[ts[q].w] || ts[q].sep || changedTo[ts[q].w] && toWords[word(ts, q+1)] {
				break
			}
		}
		if q >= len(ts) || q > j+5 {
			return false
		}
		j = q
	} else if !ts[j].sep && !copulas[ts[j].w] && !ts[j].stop && j+1 < len(ts) && ts[j+1].sep && ts[j+1].w != "/" {
		j++ // one bare qualifier before a separator: "password gmail: …"
	}
	linked := false
	for j < len(ts) && !(linked && ts[j-1].stop) {
		w := ts[j].w
		switch {
		case copulas[w] || ts[j].sep:
			linked = true
			j++
			continue
		case linked && (fillers[w] || w == "been" || numberMarks[w]):
			j++
			continue
		case changedTo[w] && j+1 < len(ts) && toWords[ts[j+1].w] && !ts[j].stop:
			linked = true
			j += 2
			continue
		}
		break
	}
	if j >= len(ts) || ts[j-1].stop && !ts[j-1].sep {
		return false
	}
	if !linked {
		if k == kSeed {
			return bipRun(ts, j, true) >= 8
		}
		k = weak(k)
	}
	return valueOK(ts, j, k)
}

// afterAside skips a short aside between commas when a copula follows it; otherwise j stays.
func afterAside(ts []tok, j int) int {
	for q := j; q < len(ts) && q < j+7; q++ {
		if ts[q].stop {
			if ts[q].comma && q+1 < len(ts) && copulas[ts[q+1].w] {
				return q + 1
			}
			break
		}
	}
	return j
}

// relatives open a clause between a noun and its copula: "the code we set is …", "the PIN that Ana chose is …".
var relatives = set(`that which i we you he she they que qui che die dat`)

// numberMarks stand between an id's name and its number.
var numberMarks = set(`no n° nº nr num number numero #`)

// weak is the kind whose value must show a digit or a symbol when no copula vouches for it.
func weak(k kind) kind {
	if k == kPassword {
		return kWeakPass
	}
	return k
}

// changedBefore says a verb of changing stands just before the noun at i: "changed the PIN to …".
func changedBefore(ts []tok, i int) bool {
	for q := i - 1; q >= 0 && q >= i-3; q-- {
		if ts[q].stop {
			return false
		}
		if changedTo[ts[q].w] || ts[q].w == "change" || ts[q].w == "changing" || ts[q].w == "set" {
			return true
		}
	}
	return false
}

// endWords may follow a noun that ends its clause in the backward form: "hunter2 is my password too".
var endWords = set(`too now btw also again though anyway lol haha`)

// backward reads "VALUE COPULA DETERMINER [qualifier] NOUN" and "VALUE as the NOUN", the noun at i..end.
func backward(ts []tok, i, end int, k kind) bool {
	if end < len(ts) && !ts[end-1].stop && !quals[ts[end].w] && !endWords[ts[end].w] {
		return false
	}
	p := i - 1
	for q := 0; q < 2 && p >= 0 && !ts[p].stop && !ts[p].sep && !determiners[ts[p].w] && !possessive(ts[p].w) && !copulas[ts[p].w] && ts[p].w != "as"; q++ {
		p-- // "the wifi password", "my bank PIN"
	}
	if p < 1 || !determiners[ts[p].w] && !possessive(ts[p].w) || ts[p].stop {
		return false
	}
	p--
	for p > 0 && fillers[ts[p].w] && !ts[p].stop {
		p--
	}
	switch {
	case ts[p].w == "as" || ts[p].w == "als" || ts[p].w == "comme" || ts[p].w == "como" || ts[p].w == "come":
		v := p - 1
		return v >= 0 && !ts[v].stop && hasDigitOrSymbol(ts[v].w) && valueOK(ts, v, k)
	case copulas[ts[p].w] || ts[p].sep:
		v := p - 1
		if v < 0 || ts[v].stop {
			return false
		}
		if (k == kPassword || k == kWeakPass) && !hasDigitOrSymbol(ts[v].w) && v > 0 && !ts[v-1].stop {
			return false // "the thing I forget most is my password": a plain word mid-sentence is no value
		}
		if k == kWeakPass {
			k = kPassword
		}
		return valueOK(ts, v, k)
	}
	return false
}

// valueOK says whether the word at j, read as the value of a noun of kind k, looks like the secret.
func valueOK(ts []tok, j int, k kind) bool {
	v := strings.Trim(ts[j].w, "\"'`")
	if v == "" || ts[j].sep {
		return false
	}
	if k == kPassword && passphrase(ts, j) {
		return true
	}
	if ordinary[v] || possessive(v) || pathLike(v) || unitAfter(ts, j) {
		return false
	}
	switch k {
	case kPassword:
		if hasDigitOrSymbol(v) {
			return !emailLike(v) && !strings.Contains(v, "://")
		}
		return !adjectiveLike(v)
	case kWeakPass:
		return hasDigitOrSymbol(v) && !emailLike(v) && !strings.Contains(v, "://") && !timeLike(v)
	case kPin:
		return pinValue(digitRun(ts, j))
	case kKey:
		return tokenLike(v) || tokenLike(groups(ts, j)) // "jbsw y3dp ehpk 3pxp"
	case kID:
		return idValue(digitRun(ts, j))
	case kLogin:
		return loginPair(ts, j)
	case kRecovery:
		return recoveryCode(chunkRun(ts, j))
	case kSeed:
		return bipRun(ts, j, true) >= 3
	}
	return false
}

// passphrase is three or more words in a row, none of them a function word or a word about a
// password: "correct horse battery staple".
func passphrase(ts []tok, j int) bool {
	n := 0
	for q := j; q < len(ts) && n < 8; q++ {
		w := ts[q].w
		if ts[q].sep || functionWords[w] || !isLetters(w) || adjectiveLike(w) || possessive(w) {
			return false
		}
		n++
		if ts[q].stop {
			break
		}
	}
	return n >= 3
}

// digitRun joins a value with the digit groups after it ("12 34 56", "943 476 5919"); three number words
// or more in a row are read as digits ("four eight two one", "vier acht zwei eins").
func digitRun(ts []tok, j int) string {
	if parts := strings.Split(ts[j].w, "-"); len(parts) >= 3 {
		var b strings.Builder
		for _, p := range parts {
			if d, ok := numberWords[p]; ok {
				b.WriteByte(d)
			}
		}
		if b.Len() == len(parts) {
			return b.String() // "one-two-three-four"
		}
	}
	if _, ok := numberWords[ts[j].w]; ok {
		var b strings.Builder
		for q := j; q < len(ts) && q < j+12; q++ {
			d, ok := numberWords[ts[q].w]
			if !ok {
				break
			}
			b.WriteByte(d)
			if ts[q].stop && !ts[q].comma {
				break
			}
		}
		if b.Len() >= 3 {
			return b.String()
		}
	}
	run := ts[j].w
	for q := j + 1; q < len(ts) && q <= j+5 && !ts[q-1].stop && isDigits(ts[q].w) && len(ts[q].w) <= 8 && len(run) < 20; q++ {
		run += ts[q].w
	}
	return run
}

// chunkRun joins a value with the short groups after it: a recovery key written in groups of four.
func chunkRun(ts []tok, j int) string {
	run := ts[j].w
	for q := j + 1; q < len(ts) && q <= j+15 && !(ts[q-1].stop && !ts[q-1].comma) && len(ts[q].w) <= 8 && !functionWords[ts[q].w]; q++ {
		run += ts[q].w
	}
	return run
}

// groups joins a value written in three or more groups of one length (a key read out in fours), or "".
func groups(ts []tok, j int) string {
	n := len(ts[j].w)
	if n < 3 || n > 8 {
		return ""
	}
	run, k := "", 0
	for q := j; q < len(ts) && q < j+16 && len(ts[q].w) == n && !functionWords[ts[q].w]; q++ {
		run += ts[q].w
		k++
		if ts[q].stop {
			break
		}
	}
	if k < 3 {
		return ""
	}
	return run
}

// pinValue is a PIN, a door or a one-time code: "4821", "4821#", "*1234#", "A12B", "12-34-56", "G-123456".
func pinValue(v string) bool {
	keyed := strings.TrimLeft(strings.TrimRight(v, "#*"), "#*") != v // typed on a keypad: *21#
	v = strings.Trim(v, "#*")
	if keyed && isDigits(v) && len(v) >= 2 {
		return true
	}
	if strings.ContainsAny(v, "/:.,€$£%") {
		return false // a date, a time, a price, a decimal
	}
	if strings.Contains(v, "-") {
		parts := strings.Split(v, "-")
		short := len(parts) >= 3
		for _, p := range parts {
			short = short && isDigits(p) && len(p) <= 2
		}
		if short {
			return true // a combination: 12-34-56
		}
		return len(parts) == 2 && isLetters(parts[0]) && len(parts[0]) <= 3 && isDigits(parts[1]) && len(parts[1]) >= 4
	}
	d, l := count(v)
	if d+l != len(v) || len(v) > 12 {
		return false
	}
	return d >= 3 && l <= 3 || d >= 2 && l >= 1 && len(v) >= 4 && len(v) <= 8
}

// idValue is an id number: five digits or more, maybe with a few letters.
func idValue(v string) bool {
	v = strings.ReplaceAll(strings.ReplaceAll(v, "-", ""), ".", "")
	if strings.ContainsAny(v, "/:€$£%,") {
		return false
	}
	d, l := count(v)
	return d >= 5 && d+l == len(v) && len(v) <= 20
}

// tokenLike is a machine-made value: letters and digits mixed, eight characters or more.
func tokenLike(v string) bool {
	if len(v) < 8 || emailLike(v) || strings.Contains(v, "://") {
		return false
	}
	d, l := count(v)
	return d >= 1 && l >= 1 && d+l >= len(v)*3/4 || len(v) >= 24 && entropy(v) >= 3.8
}

// loginPair is "user / password", "user:password" or "user and password" at j.
func loginPair(ts []tok, j int) bool {
	v := ts[j].w
	if k := strings.IndexAny(v, "/:|"); k > 0 && !strings.Contains(v, "://") {
		return pairSecret(v[k+1:])
	}
	if ts[j].stop || j+2 >= len(ts) {
		return false
	}
	switch w := ts[j+1].w; {
	case ts[j+1].sep, w == "and", w == "und", w == "et", w == "y", w == "e", w == "en", w == "pw", w == "pass", w == "password":
		return pairSecret(ts[j+2].w)
	}
	return false
}

// pairSecret is the second half of a login: not an ordinary word, an address or a place.
func pairSecret(v string) bool {
	return len(v) >= 4 && !ordinary[v] && !functionWords[v] && !emailLike(v) && !strings.Contains(v, ".") && !adjectiveLike(v)
}

// recoveryCode is a recovery or backup code: four characters or more with a digit, or twelve letters
// or more in groups (a base32 key).
func recoveryCode(v string) bool {
	d, l := count(strings.ReplaceAll(v, "-", ""))
	return (d >= 1 && d+l >= 4 || d+l >= 12) && !strings.ContainsAny(v, "/:.€$£%")
}

// unitAfter says the number at j is a quantity: "12 characters", "30 euros", "4 digits".
func unitAfter(ts []tok, j int) bool {
	return !ts[j].stop && j+1 < len(ts) && units[ts[j+1].w] && (isDigits(ts[j].w) || len(ts[j].w) <= 3)
}

func count(v string) (digits, letters int) {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			digits++
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letters++
		}
	}
	return
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isLetters(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r > 0x7f && r != '\'' || r == '\'' || r == '-') {
			return false
		}
	}
	return true
}

func hasDigitOrSymbol(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if '0' <= c && c <= '9' || strings.IndexByte("!@#$%^&*+=?~<>[]{}()|\\_", c) >= 0 {
			return true
		}
	}
	return false
}

func possessive(v string) bool {
	s, ok := strings.CutSuffix(v, "'s")
	if !ok {
		s, ok = strings.CutSuffix(v, "s'")
	}
	return ok && isLetters(s)
}

func pathLike(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.Contains(v, "\\")
}

func emailLike(v string) bool {
	at := strings.IndexByte(v, '@')
	return at > 0 && strings.Contains(v[at:], ".")
}

func timeLike(v string) bool {
	d, _ := count(v)
	return strings.Contains(v, ":") && d >= 3
}

// adjectiveLike is a plain word shaped like a description: "compromised", "expiring", "dangerous".
func adjectiveLike(v string) bool {
	if !isLetters(v) || len(v) < 5 {
		return false
	}
	for _, suf := range []string{"ed", "ing", "ous", "ful", "less", "able", "ible", "ive", "ly", "ado", "ada", "ido", "ida", "iert", "ee", "ata", "ato", "ita", "ito"} {
		if strings.HasSuffix(v, suf) {
			return true
		}
	}
	return false
}

// numberWords are the digits spelt out in the seven languages.
var numberWords = func() map[string]byte {
	m := map[string]byte{}
	for d, ws := range []string{
		"zero oh null nul cero", "one eins un une uno um een", "two zwei deux dos dois due twee",
		"three drei trois tres tre drie", "four vier quatre cuatro quatro quattro", "five funf cinq cinco cinque vijf",
		"six sechs seis sei zes", "seven sieben sept siete sete sette zeven", "eight acht huit ocho oito otto",
		"nine neun neuf nueve nove negen",
	} {
		for _, w := range strings.Fields(ws) {
			m[w] = byte('0' + d)
		}
	}
	return m
}()

// units follow a number that is a quantity, not a code.
var units = set(`digits digit characters character chars char letters letter numbers symbols words long
	short euros euro eur dollars dollar usd pounds gbp reais real pesos francs minutes minute mins min
	hours hour hrs days day weeks week months month years year yrs km kms miles mile kg kgs g cm mm m
	percent % pages page lines people persons times x items steps tries attempts seconds secs sec
	zeichen ziffern stellen stellig stellige buchstaben caracteres caractere digitos digito chiffres
	chiffre lettres caratteri cifre lettere tekens cijfers letters posities ans anos anni jahre jaar
	euros cents centimos centavos centesimi`)

// functionWords are the small words of the seven languages: a value starting with one is a sentence
// about the secret ("is in the drawer", "est dans le tiroir"), not the secret.
var functionWords = set(`a an the in on at under inside behind near by with without for from of to into onto
	over above below between beside next same different than as like what that this which who whom
	whose where when why how there here it its it's is was be been being not no never still now also
	too very really quite so pretty super just only always usually sometimes and or but because if
	then my his her their our your mine yours ours theirs me him them us you i we they he she one some
	any all none nothing something anything everything every each both either neither enough last
	next first written stored saved kept taped hidden somewhere elsewhere there's that's what's
	der die das den dem des ein eine einen im in am auf unter hinter neben bei mit ohne fur von zu zum
	zur und oder aber nicht kein keine noch schon immer mein meine sein seine ihr ihre dort hier
	le la les l' un une des du de dans sur sous derriere pres avec sans pour par et ou mais pas ne
	jamais toujours encore mon ma mes son sa ses ici la-bas
	el los las un una unos unas en sobre bajo debajo detras cerca con sin para por y o pero no nunca
	siempre todavia mi mis su sus aqui alli
	o os as um uma uns umas em no na nos nas sob embaixo atras perto com sem pra e ou mas nao nunca
	sempre ainda meu minha seu sua aqui ali
	il lo gli i un uno una nel nella nei sul sulla sotto dietro vicino con senza per e o ma non mai
	sempre ancora mio mia suo sua qui li
	het een de in op onder achter naast bij met zonder voor van en of maar niet geen nooit altijd nog
	mijn zijn haar hier daar te zu trop demasiado muito troppo molto muy sehr tres erg heel zo tan tao
	cosi bem bien ben echt ziemlich assez bastante abbastanza vrij nogal`)

// ordinary are the words that follow "password is" in sentences about a password, not containing one:
// the function words, words about passwords and the password managers.
var ordinary = union(functionWords, set(`changed reset expired expiring wrong right correct incorrect
	different weak strong long short easy hard simple complicated complex secure insecure safe unsafe
	broken locked blocked lost forgotten unknown missing required needed new old temporary default
	blank empty none null same unique random private secret personal shared public good bad great
	terrible awful weird strange obvious guessable memorable fine ok okay valid invalid case-sensitive
	1password bitwarden lastpass keychain keepass keepassxc dashlane nordpass proton enpass roboform
	icloud google apple microsoft authenticator authy sms email e-mail phone username user unchanged
	mandatory optional yes yours hers his theirs ours mine todo tbd unset set updated sent printed
	falsch richtig korrekt lang kurz sicher unsicher neu alt abgelaufen gleich anders geheim
	incorrecta incorrecto correcta correcto segura seguro larga largo corta corto nueva nuevo vieja
	viejo igual distinta distinto secreta secreto errada errado certa certo forte fraca fraco nova novo
	velha velho mesma mesmo diferente faux fausse bon bonne longue court courte nouveau nouvelle
	ancien ancienne meme secrete sbagliata sbagliato giusta giusto corretta corretto lunga lungo
	corta corto nuova nuovo vecchia vecchio stessa stesso diversa diverso fout goed juist lang kort
	nieuw nieuwe oud oude sterk sterke zwak zwakke zelfde anders geheim veilig
	written scritta scritto scritte annotata annotato escrita escrito escritas anotada anotado ecrit
	ecrite note notee geschrieben notiert aufgeschrieben geschreven opgeschreven guardada guardado
	salvata salvato gespeichert opgeslagen enregistre enregistree`))

func union(sets ...map[string]bool) map[string]bool {
	m := map[string]bool{}
	for _, s := range sets {
		for k := range s {
			m[k] = true
		}
	}
	return m
}
