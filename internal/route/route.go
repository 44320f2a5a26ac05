// Package route owns auto routing: which model a chat turn starts on (the fast one, or the main one for
// long and careful messages), what the think_harder tool does, and how the monthly budget overrides
// both. Deterministic functions only: it must not call a provider or read the box (docs/BRAIN.md).
package route

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/secret"
	"github.com/boxmem/box/internal/usage"
)

// Tier is a model's place in the route.
type Tier string

const (
	Fast Tier = "fast"
	Main Tier = "main"
)

// Models are the owner's choice in Settings → Brain. An empty Fast, or one equal to Main, means a single
// model: every turn starts on it and think_harder is not offered.
type Models struct {
	Main string
	Fast string
}

// HasFast reports whether a fast model distinct from the main one is set (the budget needs to know).
func (m Models) HasFast() bool { return m.Fast != "" && m.Fast != m.Main }

// ThinkHarder is the tool the fast model calls to hand the turn to the main model.
const ThinkHarder = "think_harder"

// ThinkHarderTool is its definition, offered only when a turn starts on the fast model and the budget
// lets the main one think.
var ThinkHarderTool = provider.Tool{
	Name: ThinkHarder,
	Description: "Hand this turn to the owner's main, stronger model. Call it, and nothing else, when the message " +
		"needs careful judgement: plans, decisions, money, health, legal matters, letters, or anything you are unsure of.",
	Schema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string","description":"Why, in a few words."}}}`),
}

// Start is where a turn begins.
type Start struct {
	Tier        Tier
	Model       string
	Reason      string // why, for the diary: "money", "long message", "budget", "everyday"
	ThinkHarder bool   // offer the think_harder tool
	Stopped     bool   // the budget says no turn now: say Sentence and call no model
	Sentence    string // the budget's sentence, when it stepped down or stopped
}

// Pick decides where a turn starts: the budget first (it beats any pick), then the message.
func Pick(message string, m Models, v usage.Verdict) Start {
	switch v.Standing {
	case usage.Stopped:
		return Start{Stopped: true, Reason: "budget", Sentence: v.Sentence}
	case usage.FastOnly:
		model := m.Fast
		if !m.HasFast() {
			model = m.Main // Check stops instead when there is no fast model; this keeps Pick total
		}
		return Start{Tier: Fast, Model: model, Reason: "budget", Sentence: v.Sentence}
	}
	if !m.HasFast() {
		return Start{Tier: Main, Model: m.Main, Reason: "one model"}
	}
	if reason, careful := Careful(message); careful {
		return Start{Tier: Main, Model: m.Main, Reason: reason}
	}
	return Start{Tier: Fast, Model: m.Fast, Reason: "everyday", ThinkHarder: true}
}

// The size from which a message starts on the main model.
const (
	longRunes = 600
	longLines = 8
)

// careful lists the words that mark a message needing care, by what they are about. Words are matched
// whole, lowercased and accent-folded; the order is the order of the reasons reported.
var careful = []struct {
	reason string
	words  map[string]bool
}{
	{"health", wordSet(`health doctor doctors symptom symptoms medication medications medicine medicines diagnosis
		diagnosed pain pregnant pregnancy allergy allergic dose dosage hospital therapy therapist surgery fever
		illness sick depression anxiety vaccine prescription cancer`)},
	{"money", wordSet(`money budget budgets invest investing investment investments tax taxes loan loans mortgage
		salary debt debts savings retirement pension insurance bank banking finances financial stock stocks
		crypto bitcoin refund invoice`)},
	{"legal", wordSet(`legal lawyer lawyers attorney contract contracts lease court lawsuit sue visa immigration
		custody divorce testament liability`)},
	{"plans", wordSet(`plan plans planning itinerary strategy roadmap decide decision decisions deciding pros cons
		compare comparison tradeoff tradeoffs prioritize priorities`)},
	{"a letter", wordSet(`letter letters complaint apology condolence condolences resignation eulogy speech toast
		draft`)},
	{"asked for care", wordSet(`carefully thoroughly thorough detailed`)},
}

// currency is an amount of money written with its sign: "$1,200", "€50", "£3.5k".
var currency = lazyregexp.New(`[$€£¥]\s?\d|\d\s?[$€£¥]`)

// Careful reports whether a message should start on the main model, and why.
func Careful(message string) (string, bool) {
	if utf8.RuneCountInString(message) >= longRunes || strings.Count(strings.TrimSpace(message), "\n")+1 >= longLines {
		return "long message", true
	}
	words := map[string]bool{}
	for _, w := range secret.Words(message) {
		words[w] = true
	}
	for _, c := range careful {
		for w := range words {
			if c.words[w] {
				return c.reason, true
			}
		}
	}
	if currency.MatchString(message) {
		return "money", true
	}
	return "", false
}

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(s) {
		out[w] = true
	}
	return out
}

// Turn is what has happened in a turn when the model calls think_harder.
type Turn struct {
	Tier     Tier
	ToolsRan bool // a tool other than think_harder already ran in this turn
	Budget   usage.Verdict
}

// Action is what think_harder does.
type Action string

const (
	// Restart runs the turn again from the owner's message on the main model; what the fast model said
	// is dropped. Only when nothing ran yet.
	Restart Action = "restart"
	// Continue hands the turn as it stands (tool calls and results included) to the main model: tools
	// that ran are never run again.
	Continue Action = "continue"
	// Decline answers the tool with Answer and the turn goes on where it is.
	Decline Action = "decline"
)

// Handoff is the answer to a think_harder call.
type Handoff struct {
	Action Action
	Model  string
	Answer string // the tool result to give the model when it declines
}

// OnThinkHarder decides what a think_harder call does.
func OnThinkHarder(t Turn, m Models) Handoff {
	switch {
	case t.Tier == Main || !m.HasFast():
		return Handoff{Action: Decline, Answer: "You are already the main model; answer the owner yourself."}
	case t.Budget.Standing != usage.Open:
		return Handoff{Action: Decline, Answer: "The main model is not available: this month's brain budget is used up. Answer as well as you can."}
	case t.ToolsRan:
		return Handoff{Action: Continue, Model: m.Main}
	}
	return Handoff{Action: Restart, Model: m.Main}
}
