package secret

import (
	"strings"
	"sync"
)

// The phrase rules (docs/SECRETS.md, "Said in words"): a secret noun ("password", "PIN", "garage code",
// "seed phrase", "passport number", in English, German, French, Spanish, Portuguese, Italian and Dutch),
// then an optional qualifier ("for Gmail", "de la porte"), then a copula or a separator ("is", "ist",
// "est", "es", "é", "è", ":", "="), then a value; or the same read backwards ("hunter2 is my password",
// "use hunter2 as the password"). The value decides: a PIN needs digits, a key needs a machine-made
// look, a password anything that is not an ordinary word about it ("in 1Password", "on the fridge",
// "strong", "12 characters long").

// kind is what a secret noun names; it sets what its value must look like.
type kind int

const (
	kPassword kind = iota + 1 // any value that is not an ordinary word
	kWeakPass                 // "pass", "pw", "clave": the value needs a digit or a symbol
	kPin                      // PINs, door, device and one-time codes: digits
	kKey                      // keys, tokens, secrets: a machine-made value
	kID                       // national ids, passports, tax numbers: five digits or more
	kLogin                    // a login or credentials: a user and a password
	kRecovery                 // recovery and backup codes
	kSeed                     // a wallet's seed phrase: words of the BIP-39 list
)

// nouns maps each secret noun phrase, by its first word, to its kind. Phrases are normalised words. Built
// on first use, like bip39: the table is a large part of the package's start-up cost.
var nouns = sync.OnceValue(func() map[string][]nounPhrase { return nounTable(nounSource) })

var nounSource = map[kind]string{
	kPassword: `password|passwords|passwd|passwort|passworter|kennwort|passcode|passcodes|passphrase|
		passphrases|pass phrase|pass-phrase|mot de passe|mots de passe|contrasena|contrasenas|senha|senhas|
		palavra-passe|palavra passe|palavra-chave|parola d'ordine|parola chiave|wachtwoord|wachtwoorden|
		paswoord|haslo|losenord|salasana|adgangskode|kodeord|passord|sifre|heslo|jelszo|geheimwort|
		app password|master password|login password|code word|codeword|mdp|security answer|secret answer|
		hint answer|memorable word|memorable information|security question answer|respuesta de seguridad|
		resposta de seguranca|reponse secrete|risposta segreta|sicherheitsantwort|geheime antwoord`,
	kWeakPass: `pass|pw|pwd|clave|pword`,
	kPin: `pin|pins|pin code|pin codes|pin number|pin-code|pincode|pin-nummer|pinnummer|geheimzahl|
		geheimnummer|code pin|codigo pin|codice pin|numero pin|numero de pin|cvv|cvv2|cvc|cvc2|csc|
		security code|card code|card security code|otp|one-time code|one time code|one-time password|
		one time password|one-time pin|verification code|login code|sign-in code|signin code|auth code|
		authentication code|2fa code|2fa|mfa code|sms code|combination|lock combination|digicode|puk|
		puk code|tan|mtan|combo|combinacion|combinacao|combinaison|combinazione|combinatie|
		kombination|zahlenkombination|code secret|code confidentiel|codigo secreto|codice segreto|geheimcode|
		screen lock code|unlock code|unlock pin|unlock pattern|sim pin|voicemail pin|parental code`,
	kKey: `api key|api-key|apikey|api token|access key|access key id|secret key|secret access key|
		private key|client secret|client id and secret|auth token|access token|bearer token|bearer|
		refresh token|session token|session cookie|secret token|token|key|secret|license key|licence key|
		product key|serial key|activation key|webhook secret|signing key|encryption key|ssh key|totp seed|
		totp secret|totp key|2fa secret|2fa key|mfa secret|otp secret|authenticator key|authenticator secret|setup key|
		schlussel|cle|chave|chiave|sleutel|llave`,
	kID: `ssn|sin|social security number|social security no|social security|social insurance number|
		sin number|national insurance number|ni number|nino|national id|national id number|id number|
		id card number|identity card number|identity number|passport number|passport no|passport #|
		driver's license number|drivers license number|driver license number|driving licence number|
		driver's licence number|licence number|tax id|tax number|tax id number|tin|taxpayer id|itin|
		steuer-id|steuerid|steuer id|steuernummer|steueridentifikationsnummer|identifikationsnummer|
		personalausweisnummer|ausweisnummer|personalausweis|reisepassnummer|sozialversicherungsnummer|
		nif|nie|dni|cpf|numero de contribuinte|contribuinte|cartao de cidadao|numero de identificacao|
		bsn|burgerservicenummer|sofinummer|codice fiscale|numero de securite sociale|numero de secu|
		numero de securite|nir|nss|numero de seguridad social|numero de la seguridad social|curp|
		aadhaar|aadhar|medicare number|health card number|nhs number|personnummer|pesel|
		numero di passaporto|numero de passaporte|numero de pasaporte|numero de passeport|paspoortnummer|
		carte d'identite|numero de carte d'identite|cni|numero fiscal|numero de identificacion fiscal|
		personalausweis-nummer|ausweis-nummer|ausweisnr|identiteitskaart|rijbewijsnummer|fuhrerscheinnummer|
		numero de permis|social security card number`,
	kLogin: `login|log-in|logon|sign-in|credentials|creds|login details|login info|login data|
		username and password|user and password|user and pass|user/pass|username/password|user/password|
		zugangsdaten|anmeldedaten|identifiants|credenciales|credenciais|credenziali|inloggegevens|
		dados de acesso|datos de acceso`,
	kRecovery: `recovery code|recovery codes|backup code|backup codes|recovery key|backup key|scratch code|
		scratch codes|emergency code|emergency codes|2fa backup codes|2fa recovery codes|
		two-factor backup codes|two-factor recovery codes|mfa backup codes|backup-codes|
		wiederherstellungscode|wiederherstellungscodes|wiederherstellungsschlussel|code de recuperation|
		codes de recuperation|codes de secours|code de secours|codigo de recuperacion|
		codigos de recuperacion|codigos de respaldo|codigo de recuperacao|codigos de recuperacao|
		codigos de backup|codice di recupero|codici di recupero|codici di backup|herstelcode|herstelcodes|
		herstelsleutel|back-upcodes|bitlocker key|bitlocker recovery key`,
	kSeed: `seed phrase|seed words|seed|recovery phrase|secret recovery phrase|mnemonic|mnemonic phrase|
		wallet phrase|wallet words|backup phrase|seed-phrase|seedphrase|frase semilla|frase semente|
		frase de recuperacion|frase de recuperacao|phrase de recuperation|phrase secrete|
		wiederherstellungsphrase|herstelzin|frase di recupero`,
}

type nounPhrase struct {
	words []string
	kind  kind
}

func nounTable(src map[kind]string) map[string][]nounPhrase {
	t := map[string][]nounPhrase{}
	add := func(ws []string, k kind) { t[ws[0]] = append(t[ws[0]], nounPhrase{ws, k}) }
	for k, s := range src {
		for _, p := range strings.Split(s, "|") {
			ws := strings.Fields(p)
			if len(ws) == 0 {
				continue
			}
			add(ws, k)
			if last := ws[len(ws)-1]; len(ws) > 1 && !strings.HasSuffix(last, "s") && !strings.HasSuffix(last, "#") {
				plural := append(append([]string{}, ws[:len(ws)-1]...), last+"s") // "passport numbers"
				add(plural, k)
			}
		}
	}
	return t
}

// codeWords are the words for "code"; with the door and device words before or after them they name a
// PIN-like code ("garage code", "code de la porte", "Türcode").
var codeWords = set(`code codes codigo codigos codice codici kode`)

// deviceWords name what a door or device code opens.
var deviceWords = set(`door doors front back gate gates garage alarm keypad entry entrance building lobby lock
	padlock safe locker lockbox keybox bike unlock access security phone screen tablet laptop router
	apartment flat house home intercom buzzer elevator lift storage mailbox letterbox shed vault
	verification login sign-in signin 2fa mfa sms otp auth authentication personal master admin parental
	voicemail sim disarm arming porte portail alarme acces securite immeuble entree coffre cadenas puerta
	portal alarma acceso seguridad edificio caja candado porta portao acesso seguranca predio cofre
	cadeado cancello allarme accesso sicurezza portone cassaforte lucchetto tur tor haustur zugang tresor
	schloss deur poort toegang kluis verificacion verificacao verifica verificatie garagem ipad iphone
	android kindle computer pc mac macbook watch tv console playstation xbox nintendo switch car`)

// compoundCode is a German or Dutch word ending in "code" whose first part is a door or device word.
var compoundStems = []string{"zugangs", "tur", "tuer", "haustur", "tor", "alarm", "sicherheits", "tresor",
	"schloss", "entsperr", "bestatigungs", "verifizierungs", "toegangs", "deur", "voordeur", "poort",
	"beveiligings", "verificatie", "kluis", "garagen", "garage", "sms", "login", "door", "gate", "keypad",
	"access", "entry", "alarm", "unlock", "lock", "safe", "pin", "geheim"}

// benignCodeWords before or after "code" make it an ordinary code: a post code, a promo code.
var benignCodeWords = set(`zip postal post area country dress promo promotional discount coupon voucher referral
	invite invitation error status source qr bar tax product booking reservation confirmation tracking
	airport iata icao language colour color sort swift bic iban morse review name base conduct snippet
	example sample program programming python go java html css function style ethical honour honor
	civil penal highway building-code fire zoning machine genetic dna airline station class course
	department subject exam seat gift shipping customs hs sku item article order ticket reference
	postleitzahl postcode zipcode rabatt gutschein promocional postal descuento desconto sconto
	korting`)

// compound nouns: a secret noun followed by one of these is about the secret, not the secret itself.
var afterNoun = set(`manager managers reset resets hint hints policy policies rule rules requirement
	requirements change changes field fields box prompt prompts protected protection strength length
	expiry app apps vault generator pad pads holder sharing recovery entry screen reader readers machine
	keeper book list file sheet document meter check checks review reviews name names base snippet ring
	rings chain chains hole holes card cards fob fobs cutter cutters maker makers smith money oil oils
	bank banks packet packets plant plants pearls mix`)

// genericNouns are nouns common enough that an ordinary word before them makes them ordinary.
var genericNouns = set(`key secret token seed pin pins tan code`)

// copulas join a noun to its value.
var copulas = set(`is was are were 's es era son est c'est etait sont ist lautet lauten war waren heisst sind
	e sera sao sono zijn is: was: = : - -> => → equals`)

// fillers may stand between a copula and its value.
var fillers = set(`now still currently actually just simply literally again also always jetzt noch
	maintenant toujours ahora todavia agora ainda ora ancora nu nog momenteel`)

// quals open a qualifier between a noun and its copula: "password for Gmail is …".
var quals = set(`for to of on at from in with para de del du des d' do da dos das fur von vom zum zur der di
	della dello dei degli delle van voor bij op per pour sur au aux al en furs furn ums ins
	beim am im aufs alla allo nel nella sul sulla pelo pela ao naar meiner meines deiner seiner ihrer
	unserer eurer`)

// possessives and articles may stand before a noun.
var determiners = set(`the my our your his her their its a an this that le la les l' mon ma mes notre votre
	son sa el los las mi mis tu tus nuestro nuestra su sus o a os as meu minha meus minhas nosso nossa
	seu sua il lo gli i mio mia miei mie nostro nostra suo sua der die das den dem ein eine mein meine
	meinen unser unsere sein seine ihr ihre de het een mijn ons onze zijn haar`)

// A noun found in ts at i: how many words it takes and its kind; 0 when there is none.
func nounAt(ts []tok, i int) (int, kind) {
	w := ts[i].w
	if w == "1password" || w == "onepassword" {
		return 0, 0
	}
	best, bk := 0, kind(0)
	for _, p := range nouns()[w] {
		if len(p.words) > best && i+len(p.words) <= len(ts) && matchWords(ts[i:i+len(p.words)], p.words) {
			best, bk = len(p.words), p.kind
		}
	}
	if best == 0 {
		best, bk = codeNoun(ts, i)
	}
	if best == 0 && len(w) >= 4 && (strings.ContainsAny(w, "_.-") || strings.Contains(w, "pass") || strings.Contains(w, "wo")) {
		best, bk = identNoun(w)
	}
	if best == 0 {
		return 0, 0
	}
	last := i + best - 1
	// "password manager", "PIN pad": the noun goes on into another thing.
	if !ts[last].stop && afterNoun[word(ts, last+1)] {
		return 0, 0
	}
	prev := word(ts, i-1)
	switch {
	case bk == kWeakPass && w == "pass" && i > 0 && !determiners[prev] && !passQualifiers[prev] && !ts[i-1].stop && !ts[i-1].sep:
		return 0, 0 // a bus pass, a boarding pass
	case genericNouns[w] && best == 1 && benignCodeWords[prev]:
		return 0, 0
	case bk == kSeed && w == "seed" && best == 1 && !ts[last].stop && !copulas[word(ts, last+1)] && !ts[last+1].sep:
		return 0, 0 // seed money, seed oil
	}
	return best, bk
}

// passQualifiers may stand before "pass" when it means a password: "wifi pass", "admin pass".
var passQualifiers = set(`wifi wi-fi login admin root email mail account user db database ssh server router
	master vpn ftp`)

func matchWords(ts []tok, ws []string) bool {
	for k, w := range ws {
		if ts[k].w != w || k < len(ws)-1 && ts[k].stop {
			return false
		}
	}
	return true
}

// codeNoun reads "garage code", "the code", "garage opener code", "code de la porte" and "Türcode" as
// PIN-like codes, "wifi code" and "code wifi" as passwords, and "zip code", "promo code", "code review" as
// ordinary ones.
func codeNoun(ts []tok, i int) (int, kind) {
	w := ts[i].w
	if strings.HasSuffix(w, "code") || strings.HasSuffix(w, "codes") {
		stem := strings.TrimSuffix(strings.TrimSuffix(w, "s"), "code")
		stem = strings.TrimSuffix(stem, "-")
		for _, s := range compoundStems {
			if stem == s {
				return 1, kPin
			}
		}
	}
	if !codeWords[w] {
		return 0, 0
	}
	// After "code": "code wifi", "code porte" (French order), "code of conduct".
	if next := word(ts, i+1); !ts[i].stop && next != "" {
		switch {
		case networkWords[next]:
			return 2, kPassword
		case deviceWords[next] && next != "pin":
			return 2, kPin
		}
	}
	// Before "code", up to two words: a device word makes it a door or device code, an ordinary word an
	// ordinary code; a determiner ends the look. An unknown word right before "code" with no device
	// word near makes it ordinary too: a project code, a class code.
	kd, unknown := kind(0), false
	for q := i - 1; q >= 0 && q >= i-2 && !ts[q].stop && !ts[q].sep; q-- {
		b := ts[q].w
		if determiners[b] || possessive(b) {
			break
		}
		switch {
		case benignCodeWords[b]:
			return 0, 0
		case networkWords[b]:
			kd = kPassword
		case deviceWords[b] && kd == 0:
			kd = kPin
		case q == i-1:
			unknown = true
		}
	}
	if kd == 0 && unknown {
		return 0, 0
	}
	// "code for the discount", "code of conduct": an ordinary word in the qualifier.
	for k := i + 1; k < len(ts) && k <= i+4 && !ts[k-1].stop; k++ {
		if benignCodeWords[ts[k].w] {
			return 0, 0
		}
		if copulas[ts[k].w] || ts[k].sep {
			break
		}
	}
	if kd == 0 {
		kd = kPin
	}
	return 1, kd
}

// networkWords make a "code" or a "key" a network password: the wifi code, le code wifi.
var networkWords = set(`wifi wi-fi wlan router network hotspot reseau red rede rete netwerk netzwerk`)

// identNoun reads a configuration name or a compound as a secret noun: PGPASSWORD, db_password,
// aws_secret_access_key, WLAN-Passwort, wifi-wachtwoord, Bank-PIN.
func identNoun(w string) (int, kind) {
	if len(w) < 4 || w == "1password" {
		return 0, 0
	}
	for _, p := range []string{"password", "passwort", "kennwort", "wachtwoord", "passwd", "passcode", "passphrase"} {
		if strings.HasSuffix(w, p) || strings.Contains(w, p+"_") || strings.Contains(w, "_"+p) {
			return 1, kPassword
		}
	}
	if !strings.ContainsAny(w, "_.-") {
		return 0, 0
	}
	for _, p := range []string{"-pin", "-pincode", "-code", "_pin"} {
		if strings.HasSuffix(w, p) && !benignCodeWords[strings.TrimSuffix(w, p)] {
			return 1, kPin
		}
	}
	for _, p := range []string{"pwd", "_pass", "pass_", "-pw", "_pw"} {
		if strings.HasSuffix(w, p) || strings.Contains(w, p+"_") || strings.HasPrefix(w, p) {
			return 1, kPassword
		}
	}
	for _, p := range []string{"secret", "token", "apikey", "api_key", "api-key", "access_key", "private_key", "credential", "auth_key", "signing_key"} {
		if strings.Contains(w, p) {
			return 1, kKey
		}
	}
	return 0, 0
}
