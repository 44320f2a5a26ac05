package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/secret"
)

// Remember's writes are spooled ops (box.SpoolOp): data that whichever process holds the box lock
// applies in its batch, so many `box remember` processes share commits. Every process registers both.
const (
	spoolRemember = "memory.remember"
	spoolCore     = "memory.core"
)

type rememberArgs struct {
	Day  string     `json:"day"`  // the day file, a box path
	Date string     `json:"date"` // YYYY-MM-DD, for a new file's header
	Line inbox.Line `json:"line"`
}

type coreArgs struct {
	Fact note.Fact `json:"fact"`
	Date string    `json:"date"`
}

func spoolOps() map[string]box.SpoolFunc {
	return map[string]box.SpoolFunc{
		spoolRemember: func(raw json.RawMessage) (func(*box.Tx) error, error) {
			var a rememberArgs
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			return func(tx *box.Tx) error { return appendLine(tx, a) }, nil
		},
		spoolCaution: func(raw json.RawMessage) (func(*box.Tx) error, error) {
			var a cautionArgs
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			return func(tx *box.Tx) error { return addCaution(tx, a) }, nil
		},
		spoolCore: func(raw json.RawMessage) (func(*box.Tx) error, error) {
			var a coreArgs
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			return func(tx *box.Tx) error { return addCore(tx, a.Fact, a.Date) }, nil
		},
	}
}

// Remember saves one plain fact as one inbox line (or, for the owner's --core, a core fact of the
// router). Refusals are one plain sentence and write nothing.
func (m *Memory) Remember(ctx context.Context, a Actor, in RememberInput) (RememberResult, error) {
	c, res, err := m.rememberChange(a, in)
	if err != nil {
		return RememberResult{}, err
	}
	r, err := m.box.Do(ctx, c)
	if err != nil {
		return RememberResult{}, err
	}
	res.Entry = r.EntryID
	return res, nil
}

// rememberChange checks the fact and returns the change that saves it, as a spooled op (so many
// processes share commits), and its result but for the diary entry.
func (m *Memory) rememberChange(a Actor, in RememberInput) (box.Change, RememberResult, error) {
	const op = "memory.remember"
	a = normalize(a)
	text := strings.TrimSpace(in.Text)
	if err := secret.CheckRemember(text); err != nil {
		return box.Change{}, RememberResult{}, err
	}
	if in.Core && in.Caution {
		return box.Change{}, RememberResult{}, errs.E(op, errs.Usage, "A fact is either a core fact or a caution, not both.")
	}
	if in.Until != "" && !in.Caution {
		return box.Change{}, RememberResult{}, errs.E(op, errs.Usage, "A last day (until) is for a caution only.")
	}
	if in.Caution {
		return m.cautionChange(a, text, in)
	}
	if in.Core && a.Trust != inbox.Own {
		return box.Change{}, RememberResult{}, errs.E(op, errs.Refused, "Only the owner's own words can be a core fact; save it as a plain fact instead, and the owner can make it core.")
	}
	now := m.now()
	date := now.Format("2006-01-02")
	id := inbox.NewID()
	if in.Core {
		args, err := json.Marshal(coreArgs{Fact: note.Fact{Text: text, ID: id}, Date: date})
		if err != nil {
			return box.Change{}, RememberResult{}, errs.Wrap(op, errs.Other, err, "")
		}
		return box.Change{Actor: a, Op: "remember", Switch: gate.Change,
				Summary: a.Who + " remembered a core fact: " + short(text), Spool: &box.SpoolOp{Name: spoolCore, Args: args}},
			RememberResult{ID: id, Path: layout.Router, Text: "Saved as a core fact: " + text}, nil
	}
	l := inbox.Line{ID: id, Time: now.Format("15:04:05"), Who: lineWho(a), Via: lineVia(a), Trust: a.Trust, Text: text}
	if err := l.Validate(); err != nil {
		return box.Change{}, RememberResult{}, err
	}
	day := m.dayFile(date)
	args, err := json.Marshal(rememberArgs{Day: day, Date: date, Line: l})
	if err != nil {
		return box.Change{}, RememberResult{}, errs.Wrap(op, errs.Other, err, "")
	}
	return box.Change{Actor: a, Op: "remember", Switch: gate.Change,
			Summary: a.Who + " remembered: " + short(text), Spool: &box.SpoolOp{Name: spoolRemember, Args: args}},
		RememberResult{ID: id, Path: day, Text: "Saved to the inbox: " + text}, nil
}

// RememberAction is the exact action "save this fact", for a "Save this?" card.
func RememberAction(text string) gate.Action { return RememberInput{Text: text}.Action() }

// Action is the exact action of saving in, for a "Save this?" card: a plain fact, a core fact, or a
// caution with its last day. A plain fact's payload is its text alone, as it always was.
func (in RememberInput) Action() gate.Action {
	text, until := strings.TrimSpace(in.Text), strings.TrimSpace(in.Until)
	p := map[string]any{"op": "remember", "text": text}
	summary := text
	if in.Core { // the card reads "Save this?: Lives in Lisbon (a core fact)"
		p["core"], summary = true, text+" (a core fact)"
	}
	if in.Caution {
		p["caution"], summary = true, text+" (a caution until "+until+")"
	}
	if until != "" {
		p["until"] = until
	}
	return gate.Action{Kind: "save", Switch: gate.Change, Summary: summary, Payload: p}
}

// rememberInputOf reads a "Save this?" card's payload back (what Action wrote).
func rememberInputOf(a gate.Action) RememberInput {
	p, _ := a.Payload.(map[string]any)
	var in RememberInput
	in.Text, _ = p["text"].(string)
	in.Core, _ = p["core"].(bool)
	in.Caution, _ = p["caution"].(bool)
	in.Until, _ = p["until"].(string)
	return in
}

// CheckRememberAs refuses what Remember would refuse of in from a, before anything is written anywhere:
// a surface that makes a card first must not carry a secret into the card, nor card what the owner's yes
// would only refuse (a caution with no last day, a core fact and a caution at once).
func (m *Memory) CheckRememberAs(a Actor, in RememberInput) error {
	_, _, err := m.rememberChange(a, in)
	return err
}

// RememberOp is how an approved "Save this?" card runs (the gate calls it): what the card shows is what
// is saved, under the name of whoever proposed it.
func (m *Memory) RememberOp() gate.Op {
	return gate.Op{
		Current: func(_ context.Context, stored gate.Action) (gate.Action, error) { return stored, nil },
		Run: func(_ context.Context, c gate.ApprovalCard, a gate.Action) (gate.Effect, error) {
			ch, res, err := m.rememberChange(c.Proposer(), rememberInputOf(a))
			if err != nil {
				return gate.Effect{}, err
			}
			// Inside an approval the line joins the card's commit, so it is applied here, not spooled.
			if ch.Apply, err = spoolOps()[ch.Spool.Name](ch.Spool.Args); err != nil {
				return gate.Effect{}, err
			}
			ch.Spool = nil
			return gate.Effect{Change: &ch, Text: func() string { return res.Text }}, nil
		},
	}
}

// dayFile is the inbox file today's line goes to: the day's last part, or a new part once that one has
// grown past inbox.MaxFileBytes. Two writers choosing at the boundary may pick neighbouring parts; both
// are the same day.
func (m *Memory) dayFile(date string) string {
	n := 1 // the day's last part: a line never goes back into an earlier part that shrank (order is the day's)
	for {
		if _, err := m.stat(layout.InboxDir + "/" + inbox.FileName(date, n+1)); err != nil {
			break
		}
		n++
	}
	p := layout.InboxDir + "/" + inbox.FileName(date, n)
	if fi, err := m.stat(p); err == nil && fi.Size() >= inbox.MaxFileBytes {
		p = layout.InboxDir + "/" + inbox.FileName(date, n+1)
	}
	return p
}

func appendLine(tx *box.Tx, a rememberArgs) error {
	if !strings.HasPrefix(a.Day, layout.InboxDir+"/") {
		return errs.E("memory.remember", errs.Invalid, "an inbox line goes to the inbox, not %s", a.Day)
	}
	data, err := readOr(tx, a.Day, nil)
	if err != nil {
		return err
	}
	out, err := inbox.AppendLine(data, a.Date, a.Line)
	if err != nil {
		return err
	}
	return tx.Write(a.Day, out)
}

// addCore adds a core fact to the router; what the router's 40-line fit leaves out is kept in a note.
func addCore(tx *box.Tx, f note.Fact, date string) error {
	r, err := readRouter(tx)
	if err != nil {
		return err
	}
	r.SetCoreFacts(append(r.CoreFacts, f))
	return writeRouter(tx, r, date)
}

func readRouter(tx View) (*note.Router, error) {
	data, err := readOr(tx, layout.Router, []byte(note.RouterSkeleton))
	if err != nil {
		return nil, err
	}
	r, err := note.ParseRouter(data)
	if err != nil {
		return nil, errs.E("memory.router", errs.Invalid, "The router MEMORY.md has broken frontmatter; fix it by hand (box validate names the line), then try again.")
	}
	return r, nil
}

// overflowNote keeps the core facts and cautions the router's line budget leaves out.
const overflowNote = "topic-kept-from-the-router"

// writeRouter renders the router and keeps whatever the fit dropped in overflowNote: core facts as they
// are, cautions marked (keptCautionPrefix) so the nightly job still ends them on their day.
func writeRouter(tx *box.Tx, r *note.Router, date string) error {
	out := r.Render()
	if len(r.Dropped)+len(r.DroppedCautions) > 0 {
		p := notePath(overflowNote)
		data, err := readOr(tx, p, note.NewNote("topic", "Kept from the router", nil, nil))
		if err != nil {
			return err
		}
		facts := slices.Clone(r.Dropped)
		for _, c := range r.DroppedCautions {
			facts = append(facts, keptCautionPrefix+c)
		}
		for _, t := range facts {
			if data, err = note.AddFact(data, note.Fact{Text: t}); err != nil {
				return err
			}
		}
		if data, err = note.Touch(data, date, inbox.Own); err != nil {
			return err
		}
		if err := tx.Write(p, data); err != nil {
			return err
		}
	}
	return tx.Write(layout.Router, out)
}

// View is what reading the box needs: a box.Tx inside a change, the disk outside one.
type View interface {
	Read(p string) ([]byte, error)
	Exists(p string) bool
}

var _ View = (*box.Tx)(nil)

// readOr reads p, or returns def when it does not exist.
func readOr(v View, p string, def []byte) ([]byte, error) {
	data, err := v.Read(p)
	if errors.Is(err, fs.ErrNotExist) {
		return def, nil
	}
	return data, err
}

// normalize fills an actor's blanks: an empty trust is own (box's convention), an empty name is the owner's.
func normalize(a Actor) Actor {
	if a.Trust == "" {
		a.Trust = inbox.Own
	}
	if a.Trust != inbox.Own {
		a.Trust = inbox.Outside
	}
	if strings.TrimSpace(a.Who) == "" {
		a.Who = "owner"
		if a.Trust == inbox.Outside {
			a.Who = "someone"
		}
	}
	return a
}

// lineWho is the inbox line's who: the actor, with its host when known ("Claude (claude.ai)").
func lineWho(a Actor) string {
	who := strings.Join(strings.Fields(a.Who), " ")
	if a.Host != "" && !strings.Contains(who, "(") {
		who += " (" + strings.Join(strings.Fields(a.Host), " ") + ")"
	}
	return who
}

// lineVia is the actor's via when the inbox knows it, else the usual one for its trust.
func lineVia(a Actor) string {
	for _, v := range inbox.Vias {
		if a.Via == v {
			return v
		}
	}
	if a.Trust == inbox.Outside {
		return "mcp"
	}
	return "cli"
}

// short cuts text for a diary summary.
func short(s string) string {
	if r := []rune(s); len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return s
}

// settleDay repairs an inbox day file a line-merging undo left without its header, or with two (undoing
// the day's first line, or a tidy after new lines came): one header, then the day's lines in order.
// Whatever else the file holds (text the owner typed into it by hand) is kept as it stands, unless
// keeping it would not make a day file that reads back with the same lines; then the lines alone.
func settleDay(p string, data []byte) []byte {
	if !isDay(p) || (bytes.HasPrefix(data, []byte("---\n")) && bytes.Count(data, []byte("\ntype: inbox-day\n")) == 1) {
		return data
	}
	header := inbox.Header(dayOf(p))
	lines := inbox.LinesOf(data)
	rest := bytes.TrimLeft(bytes.ReplaceAll(data, []byte(header), nil), "\n")
	kept := append([]byte(header), rest...)
	if _, err := inbox.ParseDay(kept); err == nil && sameLines(inbox.LinesOf(kept), lines) {
		return kept
	}
	out := []byte(header)
	for _, l := range lines {
		out = append(append(out, l.String()...), '\n')
	}
	return out
}

// sameLines reports whether two days hold the same lines, in order.
func sameLines(a, b []inbox.Line) bool {
	return slices.EqualFunc(a, b, func(x, y inbox.Line) bool { return x.String() == y.String() })
}
