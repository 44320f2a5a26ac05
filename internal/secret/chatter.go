package secret

import (
	"strings"
	"unicode"

	"github.com/boxmem/box/internal/lazyregexp"
)

// The rules that keep chatter out of the notes (docs/SECRETS.md, "What tidy drops"): greetings, questions,
// an assistant talking about itself, and small talk. Each reads the whole line; a line that also tells
// something ("Hi! Leo starts school on Monday.") is a fact.

// words returns text's words in lower case with accents folded; apostrophes stay inside words.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(Fold(text)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}

// greetings open a greeting or a goodbye, in the seven languages.
var greetings = set(`hi hello hey heya hiya howdy yo hallo hola ola bonjour salut coucou ciao buongiorno
	buonasera buonanotte bom boa buenos buenas guten moin servus hoi goedemorgen goedemiddag goedenavond
	goedenacht dag greetings bye goodbye byebye cya farewell tschuss adios adeus tchau arrivederci
	goodnight gm gn morning evening night`)

// greetingWords may follow a greeting without making it a fact: whom it greets, how are you, see you.
var greetingWords = set(`hi hello hey there again everyone everybody all folks friend friends buddy pal mate
	team guys good morning afternoon evening night day dia tarde noite dias tardes noches morgen tag abend
	how's hows now zusammen
	nacht soir sera notte it it's its me i i'm am is back here how are you you're doing going what's whats
	up hope well today tonight tomorrow soon later see talk speak catch take care chat have a an nice
	great lovely wonderful the week weekend to with for and so ok okay thanks thank yes very much
	claude chatgpt gpt gemini copilot assistant bot box siri alexa ai dear sweet sleep dreams
	tous toutes todos todas alle allen tutti tutte iedereen allemaal
	bis bald spater demain tout a plus tard hasta luego manana logo mais amanha domani presto tot straks
	morgen ca va como estas como esta tudo bem come stai hoe gaat het wie geht's gehts`)

// partsOfDay follow "good" in a greeting: "good morning", "good night".
var partsOfDay = set(`morning afternoon evening night day bye`)

// partings open a goodbye without a greeting word: "See you!", "Take care", "Talk soon".
var partings = set(`see talk take catch speak have later laters`)

// Greeting reports a hello or a goodbye with nothing else in it: "Hi Claude!", "Good morning :)",
// "Bye, talk tomorrow", "Bom dia!". At most twelve words, the first a greeting, every other one a word
// greetings are made of.
func Greeting(text string) bool {
	ws := words(text)
	if len(ws) == 0 || len(ws) > 12 {
		return false
	}
	first := ws[0]
	if !greetings[first] && !(first == "good" && len(ws) > 1 && partsOfDay[ws[1]]) && !partings[first] {
		return false
	}
	for _, w := range ws[1:] {
		if !greetingWords[w] && !greetings[w] && !laughRe.MatchString(w) {
			return false
		}
	}
	return true
}

// askOpen opens a question written without its question mark: "what time is it", "do you know …".
var askOpen = lazyregexp.New(`^(?:(?:what|when|where|who|why|how|which|whose|whom)\s+(?:is|are|was|were|do|does|did|can|could|should|would|will|shall|may|might|has|have|had|about|time|much|many|long|often|far|old|else)\b` +
	`|(?:do|does|did|can|could|would|will|should|shall|is|are|was|were|have|has|may|might|am)\s+(?:you|i|we|they|he|she|it|there|anyone|anybody|someone|u)\b` +
	`|(?:any|got any)\s+(?:ideas|idea|tips|thoughts|suggestions)\b)`)

// Question reports text that asks instead of telling: it ends with a question mark (not one that ends a
// quoted title, "Leo's book is "Where's Wally?""), opens with "¿", or opens like a question without
// its mark ("what time is it", "can you check the weather").
func Question(text string) bool {
	t := strings.TrimSpace(text)
	t = strings.TrimRightFunc(t, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.Is(unicode.So, r) || unicode.Is(unicode.Sk, r) || r == ')' || r == '!' || r == '.'
	})
	if t == "" {
		return false
	}
	if strings.HasPrefix(t, "¿") {
		return true
	}
	if strings.HasSuffix(t, "?") {
		return true
	}
	for _, end := range []string{"?\"", "?”", "?'", "?’"} {
		if strings.HasSuffix(t, end) {
			// A question in quotes at the end is a title or a quote, unless the whole line is the quote.
			return strings.IndexAny(t[:len(t)-len(end)], "\"“'‘") < 0
		}
	}
	return askOpen.MatchString(strings.ToLower(Fold(t)))
}

// openers are the words an assistant opens a reply with; chatter may follow them, or a fact.
var openers = lazyregexp.New(`^(?:(?:sure(?: thing)?|certainly|of course|absolutely|okay|ok|alright|all right|great|perfect|` +
	`excellent|wonderful|awesome|got it|noted|understood|no problem|will do|done|thanks|thank you|yes|yeah|right|` +
	`hmm|ah|oh|well|gotcha|roger(?: that)?|cool|nice|lovely|amazing|fantastic|good|great question|good question)` +
	`(?:\s*[,.!:;-]+\s*|\s+))+`)

// chatterRe is an assistant speaking of itself, of the conversation, or offering more.
var chatterRe = lazyregexp.New(`^(?:` +
	`i(?:'ve| have) (?:saved|noted|added|stored|remembered|recorded|updated|filed|logged|captured|made a note of|written down|jotted down|put) (?:that|this|it|these|those|them|your|the (?:fact|note|info|information|details?))` +
	`|i(?:'ll| will) (?:remember|keep|note|save|store|make a note|bear|keep that|remind|add that|add this|update|look into|check|get back|help)` +
	`|i(?:'m| am) (?:an ai|a language model|an assistant|claude|chatgpt|gemini|copilot|here to|happy to|glad to|sorry to|sorry,|sorry but|sorry for|not able|unable|afraid|just an|always here|not sure i|not sure what)` +
	`|i (?:can(?:'t|not)?|do not|don't|cannot) (?:help|assist|access|browse|see|remember|store|do that|provide|give|make|recall)` +
	`|i don't have (?:access|the ability|feelings|personal|a way)|i do not have (?:access|the ability|feelings|personal)` +
	`|as an ai|as a language model|as an assistant|let me (?:know|check|see|look|think|help|summari[sz]e|remember|save|note|explain|try)` +
	`|here(?:'s| is| are) (?:what|a|an|the|your|some|my)|hope (?:this|that) helps|i hope (?:this|that) helps|feel free|is there anything|anything else` +
	`|(?:that's|that is|what) (?:a )?(?:great|good|interesting|excellent|fair|wonderful|lovely) (?:question|point|idea|plan)` +
	`|you're welcome|you are welcome|my pleasure|happy to help|glad to help|glad i could|how can i help|what can i do|how may i|tell me more` +
	`|sounds (?:good|great|like a plan|fun|lovely|wonderful)|that (?:sounds|makes sense)|i (?:see|understand)\b` +
	`|(?:thanks |thank you )?for (?:sharing|letting me know|telling me|the (?:update|info|information|context))|sorry to hear|i'd (?:be happy|love to|suggest)|i would (?:be happy|suggest)` +
	`|(?:in )?summary:|to summari[sz]e|based on (?:our|your|the) (?:conversation|chat|discussion)|(?:our|this) (?:conversation|chat) (?:was|has been)` +
	`)`)

// Chatter reports an assistant talking about itself or the conversation instead of about the owner's
// life: "Sure, I can help with that!", "I've saved that to your memory.", "Let me know if you need
// anything else.", "As an AI, I don't have feelings." A reply's opener followed by a fact ("Sure! Leo
// starts school on Monday.") is a fact; an opener alone ("Got it!") is small talk.
func Chatter(text string) bool {
	t := strings.ToLower(strings.TrimSpace(Fold(text)))
	return chatterRe.MatchString(openers.ReplaceAllString(t, ""))
}

var smallTalk = set(`hi hello hey heya hiya yo sup hallo hola ola thanks thank thankyou thx ty tysm ta
	cheers ok okay k kk okie cool nice great awesome perfect sweet lol lmao rofl haha hahaha hehe lmfao
	yes yeah yep yup no nope nah sure bye goodbye cya gm gn np welcome yw wow oops hmm hm ah oh uh um
	good morning night evening afternoon day you very much so got it sounds alright fine agreed done
	noted understood right indeed exactly true same please test testing ping pong obrigado obrigada gracias
	merci danke x xx xoxo see later ttyl brb love a the`)

// passing are the words of a passing remark: the talk itself, how the moment feels, the weather now.
// A line of these and small words only holds nothing to keep ("We had a nice chat today, lol").
var passing = set(`chat chatting chatted talk talking talked conversation convo catching catch up fun funny
	lovely nice great good cool awesome amazing wonderful fantastic brilliant bad awful terrible boring
	weird crazy silly cute sweet lol haha omg wow yay ugh meh hmm well anyway anyways btw also too again
	back here there now today tonight right really so very quite pretty kinda sorta bit little such
	what just actually literally totally honestly basically time moment day days week morning evening
	night afternoon bored tired sleepy exhausted busy lazy hungry happy sad excited stressed chill
	relaxed weather rain raining rainy sunny sun hot cold warm windy cloudy snow snowing monday mondays
	friday fridays weekend vibes mood feeling feel feels felt nothing much lots lot stuff things thing
	long rough tough chilling chillin relaxing resting napping
	going been ok okay yeah yes no nope sure thanks thank glad enjoyed enjoy enjoying loved love
	laughed laugh laughing hilarious`)

var laughRe = lazyregexp.New(`^(?:ha|he|hi|ah|lo|l|ja|je|kk|rs)+l?$`)

// SmallTalk reports chatter with nothing to keep: thanks, acknowledgements, laughter, emoji, or a
// passing remark about the talk, the mood or the weather now ("We had a nice chat today, lol", "so
// tired today haha"). Up to six small-talk words always are; up to fourteen words are when every one
// is a small word or a word of passing talk. A name or any other word makes it a fact.
func SmallTalk(text string) bool {
	ws := words(text)
	if len(ws) == 0 {
		return true // only punctuation or emoji
	}
	if len(ws) > 14 || hasCapitalName(text) {
		return false
	}
	all, plain := true, true
	for _, w := range ws {
		w = strings.ReplaceAll(w, "'", "")
		small := smallTalk[w] || laughRe.MatchString(w) || w == "youre" || w == "thats" || w == "its"
		all = all && small
		plain = plain && (small || passing[w] || Stopwords[w] || w == "im" || w == "ive" || w == "were" || w == "weve")
	}
	return all && len(ws) <= 6 || plain
}

// hasCapitalName reports a capitalised word that is not the first of its sentence nor "I": a name.
func hasCapitalName(text string) bool {
	for _, n := range ProperNames(text) {
		if l := strings.ToLower(n); !greetingWords[l] && !smallTalk[l] && !passing[l] && !laughRe.MatchString(l) {
			return true
		}
	}
	return false
}
