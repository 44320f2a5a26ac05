package secret

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
)

// MaxFactLen is the longest text remember accepts, in characters. A plain fact is a sentence or two.
const MaxFactLen = 500

// multiLen is the length past which two sentences count as a dump rather than one fact with context.
const multiLen = 280

// CheckRemember says, as one errs.Invalid with a plain sentence, why text cannot be remembered: empty,
// over-long, several facts at once, or a secret. Instructions and small talk are tidy's to drop.
func CheckRemember(text string) error {
	const op = "memory.remember"
	t := strings.TrimSpace(text)
	if t == "" {
		return errs.E(op, errs.Invalid, "There is nothing to remember: the text is empty.")
	}
	if n := utf8.RuneCountInString(t); n > MaxFactLen {
		return errs.E(op, errs.Invalid, "That is too long for one fact (%d characters, at most %d); save one plain fact at a time.", n, MaxFactLen)
	}
	if reason, found := Secret(t); found {
		return errs.E(op, errs.Invalid, "%s", reason)
	}
	if reason, multi := MultiFact(t); multi {
		return errs.E(op, errs.Invalid, "%s", reason)
	}
	return nil
}

// listLabels returns the labels of numbered items in t, in order: "1." "2)" "(a)" after a space or at the
// start, followed by a space and more text.
func listLabels(t string) []byte {
	var out []byte
	for i := 0; i+3 < len(t); i++ {
		c := t[i]
		if !('1' <= c && c <= '9' || 'a' <= c && c <= 'e') || t[i+1] != '.' && t[i+1] != ')' || t[i+2] != ' ' && t[i+2] != '\t' {
			continue
		}
		before := i
		if before > 0 && t[before-1] == '(' {
			before--
		}
		if (before == 0 || t[before-1] == ' ' || t[before-1] == '\t') && t[i+3] != ' ' {
			out = append(out, c)
		}
	}
	return out
}

var (
	bulletRe   = lazyregexp.New(`(?:^|\s)[•▪◦·*]\s+\S`)
	dashItemRe = lazyregexp.New(`(?:^|\s)-\s+\S`)
)

// MultiFact reports text that holds several facts at once: more than one line, a list (bulleted or
// numbered), three or more sentences, two or more semicolons, or two sentences over 280 characters.
func MultiFact(text string) (reason string, multi bool) {
	t := strings.TrimSpace(text)
	if strings.ContainsAny(t, "\n\r\u2028\u2029") {
		return "That is several lines; save one fact at a time.", true
	}
	if isList(t) {
		return "That is a list; save each item as its own fact.", true
	}
	n := Sentences(t)
	if n >= 3 {
		return fmt.Sprintf("That is %d sentences; save one fact at a time.", n), true
	}
	if strings.Count(t, ";") >= 2 {
		return "That strings several facts together with semicolons; save one fact at a time.", true
	}
	if n == 2 && utf8.RuneCountInString(t) > multiLen {
		return "That reads like several facts; save one short fact at a time.", true
	}
	return "", false
}

func isList(t string) bool {
	if nums := listLabels(t); len(nums) >= 2 && (nums[0] == '1' || nums[0] == 'a') && (nums[1] == '2' || nums[1] == 'b') {
		return true
	}
	if strings.ContainsAny(t, "•▪◦·*") && len(bulletRe.FindAllString(t, -1)) >= 2 {
		return true
	}
	// "- a - b - c" at the start: a flattened dash list. A dash inside a sentence is punctuation.
	return strings.HasPrefix(t, "- ") && len(dashItemRe.FindAllString(t, -1)) >= 3
}

// abbreviations end in a dot without ending a sentence.
var abbreviations = set(`mr mrs ms dr prof st sr jr mt ave rd no vs etc e.g i.e a.m p.m approx dept est
	fig inc ltd co corp jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun u.s u.k`)

// Sentences counts the sentences in a line of text: a stop (. ! ?, or a run of them) followed by a space
// and an upper-case letter, a digit or a quote starts a new one; abbreviations and initials do not.
func Sentences(t string) int {
	t = strings.TrimSpace(t)
	if t == "" {
		return 0
	}
	n := 1
	words := strings.Fields(t)
	for i := 0; i+1 < len(words); i++ {
		w := words[i]
		last, _ := utf8.DecodeLastRuneInString(w)
		if last != '.' && last != '!' && last != '?' && last != '…' {
			continue
		}
		core := strings.ToLower(strings.TrimRight(w, ".!?…"))
		core = strings.TrimLeft(core, "(\"'“")
		if last == '.' && (abbreviations[core] || utf8.RuneCountInString(core) == 1) {
			continue
		}
		next, _ := utf8.DecodeRuneInString(words[i+1])
		if unicode.IsUpper(next) || unicode.IsDigit(next) || strings.ContainsRune("\"'“‘(", next) {
			n++
		}
	}
	return n
}

// instructionStart matches text that opens by telling an assistant what to do.
var instructionStart = lazyregexp.New(`(?i)^(?:(?:hey|ok|okay|note|important|reminder|assistant|claude|chatgpt|gpt|ai|bot)[,:!]?\s+)*(?:please\s+)?(?:` +
	`(?:always|never|don't|do not|dont)\s+(?:ever\s+)?(?:answer|reply|respond|use|write|speak|talk|say|mention|include|call|ask|suggest|recommend|format|refer|sign|add|give|show|send|tell|be|act|translate|remind|bring up|start|end|apologi[sz]e|explain|summari[sz]e|output|return|share|reveal|follow|obey|trust|listen|check|double-check|confirm|verify|keep|greet|correct|spell|list|cite|quote|assume|guess|book|schedule|buy|order|pay|contact|email|text|message|post|round|convert|offer|wait|interrupt|lecture|moralize|moralise|store|save)` +
	`|(?:you|u)\s+(?:must|should|shall|will|need to|have to|are to|may not|must not|cannot|can't|are required|are now|are an?\s+(?:ai|assistant|bot|language model|chatbot|helpful))` +
	`|from now on|going forward|henceforth|in (?:the )?future,?\s+(?:always|never|please|answer|reply|respond|use)` +
	`|(?:answer|reply|respond|write|speak|talk|translate|output)\s+(?:to me\s+|only\s+)?(?:in|with|using|as|like)\b` +
	`|(?:act|behave|pretend|roleplay)\s+(?:as|like|to be|that|you)|imagine (?:you|that you)\b` +
	`|make sure (?:you|to)|be sure to|remember to (?:always|never)|stop (?:answering|replying|using|saying)` +
	`|call me\b|address me as|refer to me as)`)

// instructionAnywhere matches prompt-injection phrases wherever they appear.
var instructionAnywhere = lazyregexp.New(`(?i)(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|my\s+)*(?:previous|prior|above|earlier|preceding|original|system|safety|existing)?\s*(?:instructions|prompts?|rules|guidelines|directions|messages|context|guardrails)` +
	`|system prompt|developer mode|jailbreak|new instructions:|\bDAN mode|</?system>|\[/?INST\]|<\|im_start\|>|^(?:system|assistant)\s*:` +
	`|as an ai (?:language )?model|you are now\b|from now on,? (?:you|always|never|answer|reply|respond|only|do)`)

// Instruction reports text aimed at an assistant rather than a fact about the owner's life: "Always
// answer in Spanish", "Ignore previous instructions". A stated preference ("Prefers replies in Spanish.")
// is a fact and passes.
func Instruction(text string) bool {
	t := strings.TrimSpace(text)
	return instructionStart.MatchString(t) || instructionAnywhere.MatchString(t)
}
