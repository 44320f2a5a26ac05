// Package gate owns what the box may do on its own: the owner's five switches, the one decision (do it, make an
// approval card, refuse) and the approval cards with their limits. It never runs an action itself: callers do.
package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/boxmem/box/internal/errs"
)

// The five switches (docs/GATE.md).
const (
	Change = "change"
	Send   = "send"
	Share  = "share"
	Access = "access"
	Delete = "delete"
)

// The choices a switch can hold.
const (
	JustDoIt = "just-do-it"
	AskMe    = "ask-me"
	Never    = "never"
)

// SwitchNames are the switches in the order the owner sees them.
var SwitchNames = []string{Change, Send, Share, Access, Delete}

// switchInfo is how the owner sees a switch and which choices it allows.
var switchInfo = map[string]struct {
	Label   string
	Covers  string
	Choices []string
	Default string
}{
	Change: {"Change my box", "pages, looks, layout, routines, settings, remember, to-dos", []string{JustDoIt, AskMe, Never}, JustDoIt},
	Send:   {"Send as me", "messages, email drafts, posting as you", []string{JustDoIt, AskMe, Never}, AskMe},
	Share:  {"Share outside my box", "a connector reaching new websites, anything sending your data somewhere new", []string{JustDoIt, AskMe, Never}, AskMe},
	Access: {"Give other assistants access", "new keys and connections for other assistants", []string{AskMe, Never}, AskMe},
	Delete: {"Delete for good", "deleting for good: a page's notes, a connector and its keys", []string{AskMe, Never}, AskMe},
}

// Label is the owner's name for a switch ("Give other assistants access").
func Label(sw string) string { return switchInfo[sw].Label }

// Covers says in a few words what a switch covers.
func Covers(sw string) string { return switchInfo[sw].Covers }

// Choices are the choices a switch allows, in the order they are shown.
func Choices(sw string) []string { return switchInfo[sw].Choices }

// ChoiceLabel is how a choice reads: "Just do it", "Ask me", "Never".
func ChoiceLabel(c string) string {
	switch c {
	case JustDoIt:
		return "Just do it"
	case AskMe:
		return "Ask me"
	case Never:
		return "Never"
	}
	return c
}

// Looser reports whether choice to lets the box do more without asking than choice from: Never, then Ask
// me, then Just do it.
func Looser(from, to string) bool {
	rank := map[string]int{Never: 0, AskMe: 1, JustDoIt: 2}
	return rank[to] > rank[from]
}

// Allowed reports whether choice is one the switch allows.
func Allowed(sw, choice string) bool {
	for _, c := range switchInfo[sw].Choices {
		if c == choice {
			return true
		}
	}
	return false
}

// Switches maps each switch to its choice.
type Switches map[string]string

// Defaults are the switches of a new box.
func Defaults() Switches {
	s := Switches{}
	for _, n := range SwitchNames {
		s[n] = switchInfo[n].Default
	}
	return s
}

// Of is the choice for a switch; a missing or unknown value reads as Ask me, never as Just do it.
func (s Switches) Of(sw string) string {
	c := s[sw]
	if !Allowed(sw, c) {
		return AskMe
	}
	return c
}

// The nine kinds of approval card.
var kindTitles = map[string]string{
	"new-page":        "New page",
	"change-page":     "Change my page",
	"change-look":     "Change how my box looks",
	"add-connector":   "Add a connector",
	"connector-reach": "Let a connector reach more",
	"send":            "Send as you",
	"save":            "Save this?",
	"access":          "Give an assistant access",
	"delete":          "Delete for good",
}

// KindTitle is how the owner sees a card kind ("Save this?"); "" for an unknown kind.
func KindTitle(kind string) string { return kindTitles[kind] }

// Action is one exact thing someone wants the box to do. Payload is the action as data: what runs is what
// was hashed.
type Action struct {
	Kind    string `json:"kind"`    // one of the nine card kinds
	Switch  string `json:"switch"`  // the switch that covers it
	Summary string `json:"summary"` // one sentence the owner sees
	Payload any    `json:"payload"` // the exact action; anything JSON can carry
}

// Asker is who asks and what the turn has seen.
type Asker struct {
	Owner               bool   // the owner in their own words: the web UI, the box's own chat, the CLI
	Connection          string // the assistant that asks ("Claude"), when it is not the owner
	Conn                string // its connection id (a key or OAuth grant): the limits count per connection
	Via                 string // mcp, chat, web, cli
	Host                string // the assistant's host, when known
	OutsideRead         bool   // this turn read outside content (mail, web, another assistant's lines)
	OwnLastMessageAsked bool   // the owner's own last message asked for exactly this
}

// Who names the asker as the diary and the card show it.
func (a Asker) Who() string {
	if a.Owner && a.Connection == "" {
		return "owner"
	}
	if a.Connection == "" {
		return "an assistant"
	}
	return a.Connection
}

// Verdict is what the gate says.
type Verdict int

// The three verdicts.
const (
	Do     Verdict = iota // run it now, with a diary line naming the switch
	Card                  // make an approval card and wait for the owner
	Refuse                // do nothing; Reason says why in one sentence
)

// Decision is the gate's answer with its reason.
type Decision struct {
	Verdict Verdict `json:"-"`
	Switch  string  `json:"switch"`
	Reason  string  `json:"reason"`
}

// Decide is the one rule of docs/GATE.md: Never refuses; anything another assistant proposes is a card;
// after a turn that read outside content, send/share/access/delete are cards and a change is a card unless
// the owner's own last message asked for it; Ask me is a card; Just do it runs.
func Decide(sw Switches, a Action, who Asker) Decision {
	s := a.Switch
	if _, ok := switchInfo[s]; !ok {
		return Decision{Refuse, s, fmt.Sprintf("The box has no switch %q, so nothing was done.", s)}
	}
	d := Decision{Switch: s}
	choice := sw.Of(s)
	switch {
	case choice == Never:
		d.Verdict = Refuse
		d.Reason = neverReason(s)
	case !who.Owner:
		d.Verdict = Card
		d.Reason = fmt.Sprintf("%s sent this, so it waits on a card for the owner's yes.", who.Who())
	case who.OutsideRead && s != Change:
		d.Verdict = Card
		d.Reason = "This turn read outside content, so it waits on a card for the owner's yes."
	case who.OutsideRead && !who.OwnLastMessageAsked:
		d.Verdict = Card
		d.Reason = "This turn read outside content and the owner's last message did not ask for it, so it waits on a card."
	case choice == AskMe:
		d.Verdict = Card
		d.Reason = askMeReason(s)
	default:
		d.Verdict = Do
		d.Reason = fmt.Sprintf("%q is set to Just do it.", Label(s))
	}
	return d
}

// neverReason is the one sentence of a refusal at Never, whether a card was asked for or not.
func neverReason(sw string) string {
	return fmt.Sprintf("%q is set to Never, so this was not done; the owner can change it in Settings → What I may do (or `box switches %s ask-me`).", Label(sw), sw)
}

func askMeReason(sw string) string {
	return fmt.Sprintf("%q is set to Ask me, so it waits on a card.", Label(sw))
}

// Hash is the SHA-256 (hex) of the canonical JSON of an action's kind, switch and payload: what a card
// binds and what approval checks again.
func Hash(a Action) (string, error) {
	c, err := Canonical(map[string]any{"kind": a.Kind, "switch": a.Switch, "payload": a.Payload})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// Canonical is v as JSON with object keys sorted, no insignificant space and no HTML escaping, so that
// the same action always has the same bytes.
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, errs.Wrap("gate.canonical", errs.Invalid, err, "The action cannot be written as JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, errs.Wrap("gate.canonical", errs.Invalid, err, "The action cannot be read back as JSON")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil { // maps marshal with sorted keys
		return nil, errs.Wrap("gate.canonical", errs.Invalid, err, "The action cannot be written as JSON")
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Title is a card's title: its kind, then the summary ("Save this?: Leo swims on Thursdays").
func Title(a Action) string {
	t := KindTitle(a.Kind)
	s := strings.TrimSpace(a.Summary)
	if s == "" {
		return t
	}
	return t + ": " + s
}
