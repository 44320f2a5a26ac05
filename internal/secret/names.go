package secret

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// notNames are capitalised words that are never a person, place or organisation by themselves:
// pronouns, days, months, languages, titles, and so on.
var notNames = set(`i i'm i've i'll i'd me mine myself you yours yourself he him himself she hers herself we us
	ours ourselves they them theirs themselves it its itself ok okay tv am pm a.m p.m dr mr mrs ms mx prof sir st jr sr
	monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays
	fridays saturdays sundays weekend weekends mon tue tues wed thu thur thurs fri sat sun
	january february march april may june july august september october november december
	jan feb mar apr jun jul aug sep sept oct nov dec
	english spanish portuguese french german italian dutch chinese japanese korean russian arabic hindi
	greek polish swedish norwegian danish finnish turkish hebrew latin catalan brazilian american british
	european african asian canadian mexican irish scottish welsh australian indian
	christmas easter halloween xmas ramadan diwali hanukkah thanksgiving
	internet wifi wi-fi email e-mail pdf url usb faq ai`)

// starters are words that open a sentence (facts are often written without a subject: "Started a new
// job"); at the start of a sentence such a word is not a name.
var starters = set(`the a an this that these those there here it its he she they we you i my his her our
	their your when where what why how who which if after before since until while because although
	also and but or so then today tomorrow yesterday tonight now next last every each some many most all
	no not never always usually often sometimes maybe perhaps please note remember has have had is was
	are were be been will would can could should must may might does did do likes loves hates prefers
	lives works moved got went bought sold needs wants wanted started stopped finished began plays plays
	takes took makes made gets says said thinks thought knows knew keeps kept owns owned uses used drives
	drove teaches taught studies studied visited visits met meets married divorced born died left joined
	quit called calls eats ate drinks drank runs ran swims swam reads read writes wrote goes gone went
	booked planned planning getting going working living allergic favourite favorite new old first
	second big small best worst dinner lunch breakfast birthday anniversary meeting appointment trip
	vacation holiday doctor dentist school work home mom mum dad mother father son daughter wife husband
	brother sister grandma grandpa uncle aunt cousin friend boss partner baby kids children family
	on in at for from with to by of about into over under between during per via`)

// imperatives are verbs a line opens with when it asks for something to be done ("Remind me to call the
// dentist", "Call Leo on Sunday", "Book the flight to Lisbon"): at the start of a sentence such a word is
// not a name, nor the first word of one. Verbs that are also common first names (Mark, Bill, Will, Sue,
// Pat, Rob, Grace, Hope, Chase) are left out: "Mark starts school on Monday" names Mark.
var imperatives = set(`add answer apply arrange ask attend avoid bake bathe book borrow bring brush buy call
	cancel change charge check choose clean clear close collect confirm contact cook copy cut deliver delete
	don't dont download drop dust empty fetch fill find finish fix fold follow forget get give grab hang help
	hire hoover invite iron kindly let let's lets look mail make meet mention message mop move mow open order
	organise organize pack paint pay phone pick plan plant post prepare print put recycle refill register
	remind renew rent repair reply report reschedule reserve return review ring save schedule see sell send
	set share shop show sign sort start stop submit swap switch take tell text thank throw tidy top track try
	turn unpack unplug update upload vacuum wake walk wash watch water wear wipe wrap write`)

// opener reports a word that, at the start of a sentence, is not a name: a common opening word or an
// imperative.
func opener(w string) bool {
	l := strings.ToLower(w)
	return starters[l] || imperatives[l]
}

// articles open a run without being part of the name, wherever the run is.
var articles = set(`the a an my our his her their your`)

// connectors may join the words of one name: "Bank of America", "Maria da Silva".
var connectors = set(`of de da do dos das del della di du van von der den la le el y`)

// ProperNames returns the capitalised word runs of text that look like names ("Leo", "Ana Maria",
// "Bank of America"), in order, without repeats. A single capitalised word at the start of a sentence
// counts only when it is not a common opening word; possessives are cut ("Leo's" → "Leo").
func ProperNames(text string) []string {
	type word struct {
		w     string
		start bool // first word of a sentence
		cap   bool
		stop  bool // ends a run: punctuation after it
	}
	var ws []word
	sentenceStart := true
	for _, raw := range strings.Fields(text) {
		w := strings.TrimLeft(raw, "\"'“‘([{*_")
		trail := strings.TrimRight(w, "\"'”’)]}*_.,;:!?…")
		stop := trail != w
		ends := strings.ContainsAny(w[len(trail):], ".!?:…")
		w = trail
		for _, suf := range []string{"'s", "’s", "'", "’"} {
			if strings.HasSuffix(w, suf) {
				w, stop = strings.TrimSuffix(w, suf), true
				break
			}
		}
		r, _ := utf8.DecodeRuneInString(w)
		capital := w != "" && unicode.IsUpper(r) && !strings.ContainsAny(w, "0123456789@/") && !notNames[strings.ToLower(w)]
		ws = append(ws, word{w: w, start: sentenceStart, cap: capital, stop: stop})
		// A one-letter word before a full stop is an initial ("J. Silva"); a one-digit number ends a sentence.
		sentenceStart = ends && !abbreviations[strings.ToLower(w)] && (utf8.RuneCountInString(w) > 1 || w >= "0" && w <= "9")
	}
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(ws); i++ {
		if !ws[i].cap {
			continue
		}
		j := i + 1
		run := []string{ws[i].w}
		for !ws[j-1].stop && j < len(ws) {
			if ws[j].cap && !ws[j].start {
				run = append(run, ws[j].w)
				j++
				continue
			}
			// a connector joins two capitalised words: "Bank of America"
			if connectors[ws[j].w] && !ws[j].stop && j+1 < len(ws) && ws[j+1].cap {
				run = append(run, ws[j].w, ws[j+1].w)
				j += 2
				continue
			}
			break
		}
		if ws[i].start && len(run) == 1 && (opener(run[0]) || looksLikeVerb(run[0])) {
			continue
		}
		// an opening article or common word is not part of the name: "The New York Times" → "New York
		// Times", "My Aunt Rosa" → "Rosa"
		for len(run) > 0 && (articles[strings.ToLower(run[0])] || ws[i].start && len(run) > 1 && opener(run[0])) {
			run = run[1:]
		}
		if len(run) == 0 {
			i = j - 1
			continue
		}
		name := strings.Join(run, " ")
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
		i = j - 1
	}
	return out
}

// looksLikeVerb catches sentence-opening verbs the starters list misses ("Renovated", "Adopting").
func looksLikeVerb(w string) bool {
	l := strings.ToLower(w)
	return utf8.RuneCountInString(l) > 5 && (strings.HasSuffix(l, "ed") || strings.HasSuffix(l, "ing"))
}
