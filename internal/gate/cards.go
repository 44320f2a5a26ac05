package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
)

// Limits per connection (docs/GATE.md, "Limits").
const (
	MaxWaiting = 5
	MaxPerDay  = 20
)

// ArchiveApprovals is where decided cards go; they are kept, never deleted.
const ArchiveApprovals = layout.ArchiveDir + "/approvals"

// Card statuses.
const (
	StatusWaiting  = "waiting"
	StatusApproved = "approved"
	StatusDeclined = "declined"
	StatusExpired  = "expired"
)

var idPattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,80}$`)

// ValidID reports whether id can name a card; anything else never reaches a path.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Proposer is who proposed a card.
type Proposer struct {
	Who  string `yaml:"who" json:"who"`
	Via  string `yaml:"via,omitempty" json:"via,omitempty"`
	Host string `yaml:"host,omitempty" json:"host,omitempty"`
	// Conn is the connection (key or OAuth grant id) it came through: the limits count per connection.
	Conn string `yaml:"conn,omitempty" json:"conn,omitempty"`
	// Owner is set only when the owner's own side made the card (their web UI, chat or CLI); never from
	// a name, since an assistant may call itself anything.
	Owner bool `yaml:"owner,omitempty" json:"owner,omitempty"`
}

// ApprovalCard is one card as read from its file.
type ApprovalCard struct {
	ID         string    `yaml:"id" json:"id"`
	Kind       string    `yaml:"kind" json:"kind"`
	Title      string    `yaml:"title" json:"title"`
	ProposedBy Proposer  `yaml:"proposedBy" json:"proposedBy"`
	ActionHash string    `yaml:"actionHash" json:"actionHash"`
	Switch     string    `yaml:"switch" json:"switch"`
	Status     string    `yaml:"status" json:"status"`
	Created    time.Time `yaml:"created" json:"created"`
	Decided    time.Time `yaml:"decided,omitempty" json:"decided,omitzero"`
	Path       string    `yaml:"-" json:"path"`
	Summary    string    `yaml:"-" json:"summary"` // what the owner sees, from the body
	Reason     string    `yaml:"-" json:"reason"`  // why it is a card
	// Action is the exact action the card holds, as recorded in its body.
	Action Action `yaml:"-" json:"action"`
}

// FromOwner reports whether the owner's own side (their chat, their web UI) made the card.
func (c ApprovalCard) FromOwner() bool { return c.ProposedBy.Owner }

// Proposer is who the card's action is recorded under when it runs: the owner for the owner's own
// cards, else the assistant that sent it (trust outside), with its connection.
func (c ApprovalCard) Proposer() box.Actor {
	if c.FromOwner() {
		return box.Actor{Who: "owner", Via: nonEmpty(c.ProposedBy.Via, "web"), Trust: "own"}
	}
	return box.Actor{Who: c.ProposedBy.Who, Via: c.ProposedBy.Via, Host: c.ProposedBy.Host, Conn: c.ProposedBy.Conn, Trust: "outside"}
}

// Gate decides and keeps the approval cards of one box. The composition root makes one per process, so
// the limits hold across every surface (MCP, OAuth clients, the web UI, the CLI).
type Gate struct {
	b   *box.Box
	now func() time.Time
	mu  sync.Mutex // one proposal or decision at a time, so the limits hold and a card is decided once
	ops map[string]Op
}

// New returns the gate of an open box, on the box's clock.
func New(b *box.Box) *Gate {
	return &Gate{b: b, now: b.Now, ops: map[string]Op{}}
}

// Op is how the box runs one kind of action (its payload's "op") once the owner says yes. The domain
// packages that own the action provide it (memory: forget and remember; keys, through the composition
// root: a new key); the gate only checks and records.
type Op struct {
	// Current rebuilds the action from the box as it is now, starting from the one stored on the card,
	// so that approval runs only if nothing the card's hash binds has changed.
	Current func(ctx context.Context, stored Action) (Action, error)
	// Run prepares the approved action's effect.
	Run func(ctx context.Context, c ApprovalCard, a Action) (Effect, error)
}

// Effect is what an approved action does.
type Effect struct {
	// Change is the action's writes to the tree, committed together with the card's archive: both or
	// neither, so an approved card can never be approved and run again.
	Change *box.Change
	// After is an effect outside the tree (a key in the state store), run once after that commit; it
	// returns a secret to show the owner once, if any. If it fails, the card stays decided.
	After func(ctx context.Context) (secret string, err error)
	// Text says what was done, once it was.
	Text func() string
}

// Register makes op runnable on approval; it is called while the process is composed, before any card
// is decided.
func (g *Gate) Register(name string, op Op) { g.ops[name] = op }

// OpOf is the name of an action's op, from its payload.
func OpOf(a Action) string {
	if p, ok := a.Payload.(map[string]any); ok {
		if s, ok := p["op"].(string); ok {
			return s
		}
	}
	return ""
}

func (g *Gate) host(p string) string { return filepath.Join(g.b.Root, filepath.FromSlash(p)) }

// Switches reads _config/switches.card; a missing file reads as the defaults, an unreadable one is an error
// (the gate never guesses towards Just do it).
func (g *Gate) Switches(ctx context.Context) (Switches, error) {
	data, err := layout.ReadFile(g.b.Root, layout.Switches)
	if errors.Is(err, fs.ErrNotExist) {
		return Defaults(), nil
	}
	if err != nil {
		return nil, errs.Wrap("gate.switches", errs.Other, err, "The switches card cannot be read, so nothing runs without the owner")
	}
	return parseSwitches(data)
}

// parseSwitches reads the switches card's text.
func parseSwitches(data []byte) (Switches, error) {
	c, err := card.Parse(layout.Switches, data)
	if err != nil {
		return nil, errs.Wrap("gate.switches", errs.Invalid, err, "The switches card cannot be read, so nothing runs without the owner; fix _config/switches.card")
	}
	s := Switches{}
	for _, n := range SwitchNames {
		s[n] = c.String(n)
	}
	return s, nil
}

// Never reports whether the owner set sw to Never. A switches card it cannot read is an error, on which
// every caller refuses (closed, never open). It writes nothing: it is for what only shows the switch (the
// consent page) or answers a caller the box does not know yet (OAuth's /authorize).
func (g *Gate) Never(ctx context.Context, sw string) (bool, error) {
	s, err := g.Switches(ctx)
	if err != nil {
		return false, err
	}
	return s.Of(sw) == Never, nil
}

// Check is the one decision for a request that makes no card (docs/GATE.md, "Never on every surface"):
// the owner's own write at the command line, an assistant's memory write over MCP, the owner connecting
// an assistant on the consent page. At Never it writes the refusal's diary line (bounded like every
// refusal, MaxRefusalsPerDay) and returns Refused with one sentence; a switches card it cannot read is
// returned as it is (closed). what says in a few words what was asked ("a key for Claude Code").
func (g *Gate) Check(ctx context.Context, sw string, who Asker, what string) error {
	never, err := g.Never(ctx, sw)
	if err != nil || !never {
		return err
	}
	reason := neverReason(sw)
	if err := g.refuse(ctx, who, sw, what, reason); err != nil {
		return err
	}
	return errs.E("gate.check", errs.Refused, "%s", reason)
}

// SetSwitch sets one of the owner's switches. A choice that lets the box do more without asking than
// the switch allows now (Never to Ask me or Just do it, Ask me to Just do it) needs the owner's proof, as an
// approval does (by: a passkey assertion made for this change, or the local owner): a signed-in session
// alone could otherwise turn the gate off (docs/GATE.md, "The five switches"). Tightening needs none, so
// the owner can always say less in a hurry.
func (g *Gate) SetSwitch(ctx context.Context, by By, sw, choice string) (box.Result, error) {
	if !Allowed(sw, choice) {
		return box.Result{}, errs.E("gate.set", errs.Invalid, "%q cannot be set to %q.", Label(sw), ChoiceLabel(choice))
	}
	a := by.Actor()
	return g.b.Do(ctx, box.Change{Actor: a, Op: "switch", Switch: sw,
		Summary: fmt.Sprintf("%s set %q to %s", nonEmpty(a.Who, "owner"), Label(sw), ChoiceLabel(choice)),
		Apply: func(tx *box.Tx) error {
			data, err := tx.Read(layout.Switches)
			if errors.Is(err, fs.ErrNotExist) {
				data = []byte(box.SwitchesDefault)
			} else if err != nil {
				return err
			}
			now, err := parseSwitches(data)
			if err != nil {
				return err
			}
			if Looser(now.Of(sw), choice) && !by.Passkey && !by.Local {
				return errs.E("gate.set", errs.Forbidden, "Setting %q to %s lets the box do more without asking you, so it needs your passkey; nothing changed.",
					Label(sw), ChoiceLabel(choice))
			}
			out, err := card.SetField(data, []string{sw}, choice)
			if err != nil {
				return err
			}
			return tx.Write(layout.Switches, out)
		}})
}

// Outcome is what Propose did.
type Outcome struct {
	Decision Decision
	Card     *ApprovalCard // the card made, for a Card verdict
	Text     string        // one sentence for whoever asked
}

// Propose decides an action and acts on the decision: a Card verdict writes the approval card (within the
// limits), a Refuse verdict writes a diary line. A Do verdict writes nothing: the caller runs the action
// in its own change with Switch set to Decision.Switch, so its diary line says the switch allowed it.
func (g *Gate) Propose(ctx context.Context, a Action, who Asker) (Outcome, error) {
	sw, err := g.Switches(ctx)
	if err != nil {
		return Outcome{}, err
	}
	return g.act(ctx, a, who, Decide(sw, a, who))
}

// Hold is the decision for a write that makes no card of its own at Just do it: an assistant's memory and
// to-do writes over MCP, a page's writes through its bridge (docs/GATE.md, "Ask me on every surface").
// Never refuses (a diary line, as Check); Ask me writes a card for the exact action (within the limits)
// that runs as whoever asked once the owner approves it; Just do it is Do, and the caller runs it.
func (g *Gate) Hold(ctx context.Context, a Action, who Asker) (Outcome, error) {
	sw, err := g.Switches(ctx)
	if err != nil {
		return Outcome{}, err
	}
	d := Decision{Verdict: Do, Switch: a.Switch, Reason: fmt.Sprintf("%q is set to Just do it.", Label(a.Switch))}
	switch sw.Of(a.Switch) {
	case Never:
		d = Decision{Refuse, a.Switch, neverReason(a.Switch)}
	case AskMe:
		d = Decision{Card, a.Switch, askMeReason(a.Switch)}
	}
	return g.act(ctx, a, who, d)
}

// act carries out a decision: a Card verdict writes the card (within the limits; past them it is a
// refusal), a Refuse verdict writes its diary line, Do writes nothing.
func (g *Gate) act(ctx context.Context, a Action, who Asker, d Decision) (Outcome, error) {
	out := Outcome{Decision: d, Text: d.Reason}
	switch d.Verdict {
	case Do:
		return out, nil
	case Refuse:
		return out, g.refuse(ctx, who, a.Switch, Title(a), d.Reason)
	}
	c, err := g.writeCard(ctx, a, who, d.Reason)
	var over *overLimitError
	if errors.As(err, &over) {
		out.Decision = Decision{Verdict: Refuse, Switch: a.Switch, Reason: over.reason}
		out.Text = over.reason
		return out, g.refuse(ctx, who, a.Switch, Title(a), over.reason)
	}
	if err != nil {
		return Outcome{}, err
	}
	out.Card = &c
	out.Text = fmt.Sprintf("A card is waiting for the owner on Today: %s. Nothing runs until they say yes.", c.Title)
	return out, nil
}

// MaxRefusalsPerDay is how many refusals a day the diary records per connection: past it a refusal is
// still answered, but no line (and no commit) is written for it, so a flood of refused requests costs
// the box no more than this (docs/GATE.md, "The one decision").
const MaxRefusalsPerDay = 50

// refuse writes the diary line of a refusal (a decision that changes no file), unless the connection's
// refusals today have reached MaxRefusalsPerDay. The count is made inside the write transaction, so it
// holds across processes.
func (g *Gate) refuse(ctx context.Context, who Asker, sw, what, reason string) error {
	key := who.limitKey()
	_, err := g.b.Do(ctx, box.Change{Actor: actorOf(who), Op: "refuse", Switch: sw, Permanent: true,
		Summary: fmt.Sprintf("Refused for %s: %s", who.Who(), what), Reason: reason,
		Apply: func(tx *box.Tx) error {
			n, err := g.today(tx, "refuse", key)
			if err != nil {
				return err
			}
			if n >= MaxRefusalsPerDay {
				return errNotRecorded
			}
			return nil
		}})
	if errors.Is(err, errNotRecorded) {
		return nil
	}
	return err
}

// errNotRecorded stops a refusal's change past MaxRefusalsPerDay: nothing is written.
var errNotRecorded = errors.New("gate: refusal not recorded")

// overLimitError is a card refused by the limits, with the sentence that says why.
type overLimitError struct{ reason string }

func (e *overLimitError) Error() string { return e.reason }

func actorOf(who Asker) box.Actor {
	a := box.Actor{Who: who.Who(), Via: who.Via, Host: who.Host, Conn: who.Conn, Trust: "own"}
	if !who.Owner {
		a.Trust = "outside"
	}
	return a
}

// overLimit applies the per-connection limits inside the card's write transaction, so they hold across
// every surface and every process of the box: MaxWaiting cards waiting, MaxPerDay made today (the owner's
// local day, on the gate's clock). They count by connection id, never by name: two keys both called
// "Claude" have a limit each, and renaming a key does not reset it. A card or diary it cannot read
// refuses.
func (g *Gate) overLimit(tx *box.Tx, who Asker) (*overLimitError, error) {
	key, name := who.limitKey(), who.Who()
	files, err := tx.List(layout.Approvals)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, p := range files {
		id, ok := strings.CutSuffix(path.Base(p), ".approval.card")
		if !ok || !ValidID(id) {
			continue
		}
		data, err := tx.Read(p)
		if err != nil {
			return nil, errs.Wrap("gate.limits", errs.Other, err, "The waiting cards cannot be read to count them, so no card was made")
		}
		c, _ := parseCard(p, data) // a card whose action cannot be read still counts
		if c.Status == StatusWaiting && c.ProposedBy.limitKey() == key {
			n++
		}
	}
	if n >= MaxWaiting {
		return &overLimitError{fmt.Sprintf("%s already has %d cards waiting for the owner; nothing new is made until they answer some.", name, n)}, nil
	}
	today, err := g.today(tx, "card", key)
	if err != nil {
		return nil, err
	}
	if today >= MaxPerDay {
		return &overLimitError{fmt.Sprintf("%s has sent %d cards today, the most a day allows; try again tomorrow.", name, today)}, nil
	}
	return nil, nil
}

// today counts the diary lines of op that the connection key wrote during today's local day, as the
// transaction sees the diary (with the lines of earlier changes in its batch). The diary's files are UTC
// days, so the local day is read from the one, two or three files it overlaps.
func (g *Gate) today(tx *box.Tx, op, key string) (int, error) {
	now := g.now()
	start := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	end := start.AddDate(0, 0, 1)
	n := 0
	for day := start.UTC().Truncate(24 * time.Hour); day.Before(end); day = day.Add(24 * time.Hour) {
		data, err := tx.Read(diary.Day(day))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, errs.Wrap("gate.limits", errs.Other, err, "The diary cannot be read to count today's cards and refusals, so nothing was written")
		}
		es, _ := diary.Parse(data)
		for _, e := range es {
			if e.Op != op || (op == "refuse" && len(e.Paths) > 0) { // a card put away as declined is not a refusal line
				continue
			}
			if t, err := time.Parse(time.RFC3339Nano, e.Time); err == nil && !t.Before(start) && t.Before(end) && entryKey(e) == key {
				n++
			}
		}
	}
	return n, nil
}

// limitKey is what the limits count a card under: its connection, else the owner, else the name.
func (a Asker) limitKey() string {
	switch {
	case a.Conn != "":
		return a.Conn
	case a.Owner && a.Connection == "":
		return "owner"
	}
	return "name:" + a.Who()
}

func (p Proposer) limitKey() string {
	switch {
	case p.Conn != "":
		return p.Conn
	case p.Owner:
		return "owner"
	}
	return "name:" + p.Who
}

func entryKey(e diary.Entry) string {
	switch {
	case e.Conn != "":
		return e.Conn
	case e.Actor == "owner" && e.Trust == "own":
		return "owner"
	}
	return "name:" + e.Actor
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// writeCard makes the card file and its diary line in one change.
func (g *Gate) writeCard(ctx context.Context, a Action, who Asker, reason string) (ApprovalCard, error) {
	if KindTitle(a.Kind) == "" {
		return ApprovalCard{}, errs.E("gate.card", errs.Invalid, "%q is not a kind of card.", a.Kind)
	}
	hash, err := Hash(a)
	if err != nil {
		return ApprovalCard{}, err
	}
	now := g.now().UTC() // to the nanosecond: ids name the second only, and the list is oldest first
	c := ApprovalCard{ID: diary.NewID(now), Kind: a.Kind, Title: Title(a), ActionHash: hash, Switch: a.Switch,
		Status: StatusWaiting, Created: now, Summary: a.Summary, Reason: reason, Action: a,
		ProposedBy: Proposer{Who: who.Who(), Via: who.Via, Host: who.Host, Conn: who.Conn, Owner: who.Owner && who.Connection == ""}}
	c.Path = layout.Approvals + "/" + c.ID + ".approval.card"
	data, err := buildCard(c)
	if err != nil {
		return ApprovalCard{}, err
	}
	_, err = g.b.Do(ctx, box.Change{Actor: actorOf(who), Op: "card", Switch: a.Switch, Reason: reason, Permanent: true,
		Summary: "A card waits for the owner: " + c.Title + sentBy(c),
		Apply: func(tx *box.Tx) error {
			over, err := g.overLimit(tx, who)
			if err != nil {
				return err
			}
			if over != nil {
				return over
			}
			return tx.Write(c.Path, data)
		}})
	if err != nil {
		return ApprovalCard{}, err
	}
	return c, nil
}

const actionFence = "```json box-action"

// buildCard writes the card file: the schema's fields, then a body the owner reads, ending with the exact
// action as canonical JSON (what the hash covers, so anyone can check it).
func buildCard(c ApprovalCard) ([]byte, error) {
	// Not HTML-escaped: a page's < would take six bytes of the card's megabyte (the hash covers the
	// action's canonical JSON, not this text).
	var ab bytes.Buffer
	enc := json.NewEncoder(&ab)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c.Action); err != nil {
		return nil, errs.Wrap("gate.card", errs.Invalid, err, "The action cannot be written on a card")
	}
	action := bytes.TrimSuffix(ab.Bytes(), []byte("\n"))
	by := []card.Field{{Key: "who", Value: c.ProposedBy.Who}}
	if c.ProposedBy.Via != "" {
		by = append(by, card.Field{Key: "via", Value: c.ProposedBy.Via})
	}
	if c.ProposedBy.Host != "" {
		by = append(by, card.Field{Key: "host", Value: c.ProposedBy.Host})
	}
	if c.ProposedBy.Conn != "" {
		by = append(by, card.Field{Key: "conn", Value: c.ProposedBy.Conn})
	}
	if c.ProposedBy.Owner {
		by = append(by, card.Field{Key: "owner", Value: true})
	}
	fields := []card.Field{
		{Key: "id", Value: c.ID}, {Key: "kind", Value: c.Kind}, {Key: "title", Value: c.Title},
		{Key: "proposedBy", Value: by}, {Key: "actionHash", Value: c.ActionHash}, {Key: "switch", Value: c.Switch},
		{Key: "status", Value: c.Status}, {Key: "created", Value: c.Created},
	}
	var body strings.Builder
	fmt.Fprintf(&body, "%s\n\n", oneLine(c.Summary))
	if !c.FromOwner() {
		// A sender names itself: on one line, its name can never start a paragraph or an action of its own.
		fmt.Fprintf(&body, "Sent by %s%s.\n\n", oneLine(c.ProposedBy.Who), paren(oneLine(c.ProposedBy.Host)))
	}
	fmt.Fprintf(&body, "Why a card: %s\n\n", oneLine(c.Reason))
	fmt.Fprintf(&body, "## The exact action\n\n%s\n%s\n```\n", actionFence, action)
	return card.Build(fields, body.String()), nil
}

// sentBy names the sender of a card another assistant sent, for the diary.
func sentBy(c ApprovalCard) string {
	if c.FromOwner() {
		return ""
	}
	return " (sent by " + oneLine(c.ProposedBy.Who) + ")"
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// parseCard reads a card file back, with its recorded action.
func parseCard(p string, data []byte) (ApprovalCard, error) {
	cd, err := card.Parse(p, data)
	if err != nil {
		return ApprovalCard{}, err
	}
	var c ApprovalCard
	if err := cd.Decode(&c); err != nil {
		return ApprovalCard{}, errs.Wrap("gate.card", errs.Invalid, err, "cannot read the card "+p)
	}
	c.Path = p
	// The box writes the reason and then the action last; what comes before them (the summary, the
	// sender's name) may be others' words, so both are read from the end.
	body := string(cd.Body)
	if i := strings.LastIndex(body, actionFence+"\n"); i >= 0 {
		rest := body[i+len(actionFence)+1:]
		if j := strings.Index(rest, "\n```"); j >= 0 {
			if err := json.Unmarshal([]byte(rest[:j]), &c.Action); err != nil {
				// The fields alone still count the card against its sender's limits.
				return c, errs.Wrap("gate.card", errs.Invalid, err, "the card's action cannot be read")
			}
		}
		body = body[:i]
	}
	parts := strings.SplitN(strings.TrimSpace(body), "\n\n", 2)
	c.Summary = parts[0]
	if k := strings.LastIndex(body, "\nWhy a card: "); k >= 0 { // a line of its own: every other is one line
		c.Reason = strings.TrimSpace(strings.SplitN(body[k+len("\nWhy a card: "):], "\n", 2)[0])
	}
	return c, nil
}

// Waiting lists the waiting cards, oldest first.
func (g *Gate) Waiting(ctx context.Context) ([]ApprovalCard, error) {
	ents, err := os.ReadDir(g.host(layout.Approvals))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errs.Wrap("gate.waiting", errs.Other, err, "The waiting cards cannot be read")
	}
	var out []ApprovalCard
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".approval.card")
		if !ok || !ValidID(id) {
			continue
		}
		c, err := g.Get(ctx, id)
		if err != nil || c.Status != StatusWaiting {
			continue
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Get reads a waiting card by id. A malformed id is NotFound: it never reaches a path.
func (g *Gate) Get(ctx context.Context, id string) (ApprovalCard, error) {
	if !ValidID(id) {
		return ApprovalCard{}, errs.E("gate.get", errs.NotFound, "There is no card %q.", id)
	}
	p := layout.Approvals + "/" + id + ".approval.card"
	data, err := layout.ReadFile(g.b.Root, p)
	if errors.Is(err, fs.ErrNotExist) {
		return ApprovalCard{}, errs.E("gate.get", errs.NotFound, "There is no waiting card %s; it may have been decided already.", id)
	}
	if err != nil {
		return ApprovalCard{}, errs.Wrap("gate.get", errs.Other, err, "The card cannot be read")
	}
	c, err := parseCard(p, data)
	if err == nil && c.ID != id {
		err = errs.E("gate.get", errs.Invalid, "The card file %s names another id; it was not used.", p)
	}
	return c, err
}

// By is who decided a card and how.
type By struct {
	Via string // web, cli
	// Passkey: a passkey assertion with user verification, bound to this card and its action hash, was
	// made for this decision (every remote surface needs one).
	Passkey bool
	// Local: a process running as the owner's OS user with the box's files (the CLI) decided; it is the
	// owner, who could edit the files anyway, and needs no passkey.
	Local bool
}

// Actor is the owner, as the diary names them for a decision made this way.
func (by By) Actor() box.Actor {
	return box.Actor{Who: "owner", Via: nonEmpty(by.Via, "web"), Trust: "own"}
}

// Approved is what an approval did.
type Approved struct {
	Card   ApprovalCard `json:"card"`
	Text   string       `json:"text"`
	Secret string       `json:"secret,omitempty"` // shown once (a new key), never stored
}

// Approve runs a waiting card's action exactly once, if it still may run: the owner said yes (by), the
// action rebuilt from the box as it is now hashes to the card's hash, and its switch is not now Never.
// Otherwise nothing runs and the error says why in one sentence; a card whose action changed or whose
// switch is now Never is archived (expired or declined). The action's writes and the card's archive are
// one commit, so a card is never approved twice. The web UI (after the passkey) and `box cards approve`
// both come here.
func (g *Gate) Approve(ctx context.Context, id string, by By) (Approved, error) {
	const op = "gate.approve"
	g.mu.Lock()
	defer g.mu.Unlock()
	c, err := g.Get(ctx, id)
	if err != nil {
		return Approved{Card: c}, err
	}
	out := Approved{Card: c}
	if !by.Passkey && !by.Local {
		return out, errs.E(op, errs.Unauthorized, "Approving a card needs your passkey; nothing ran.")
	}
	sw, err := g.Switches(ctx)
	if err != nil {
		return out, err
	}
	if sw.Of(c.Switch) == Never {
		reason := fmt.Sprintf("%q is now set to Never, so nothing ran and the card was put away.", Label(c.Switch))
		if _, err := g.b.Do(ctx, g.archive(c, StatusDeclined, "refuse", reason, by)); err != nil {
			return out, err
		}
		return out, errs.E(op, errs.Refused, "%s", reason)
	}
	run, ok := g.ops[OpOf(c.Action)]
	if !ok {
		return out, errs.E(op, errs.Invalid, "The box does not know how to run this card's action; nothing ran.")
	}
	now, err := run.Current(ctx, c.Action)
	if err != nil {
		return out, err
	}
	hash, err := Hash(now)
	if err != nil {
		return out, err
	}
	if hash != c.ActionHash || now.Kind != c.Kind || now.Switch != c.Switch {
		reason := "What this card would do has changed since it was made, so nothing ran; ask for it again to get a new card."
		if _, err := g.b.Do(ctx, g.archive(c, StatusExpired, "expire", reason, by)); err != nil {
			return out, err
		}
		return out, errs.E(op, errs.Conflict, "%s", reason)
	}
	eff, err := run.Run(ctx, c, now)
	if err != nil {
		return out, err
	}
	yes := "The owner said yes with their passkey."
	if !by.Passkey {
		yes = "The owner said yes at the command line."
	}
	changes := []box.Change{g.archive(c, StatusApproved, "approve", yes, by)}
	if eff.Change != nil {
		changes = append([]box.Change{*eff.Change}, changes...)
	}
	if _, err := g.b.DoAll(ctx, changes...); err != nil {
		return out, err
	}
	if eff.After != nil {
		if out.Secret, err = eff.After(ctx); err != nil {
			return out, errs.Wrap(op, errs.KindOf(err), err, "The card was approved, but its action failed, so it will not run again; ask for it again")
		}
	}
	out.Text = "Done: " + c.Title
	if eff.Text != nil {
		out.Text = eff.Text()
	}
	return out, nil
}

// Decline puts a waiting card away unrun; note is the owner's "Change it" message, if any.
func (g *Gate) Decline(ctx context.Context, id, note string, by By) (ApprovalCard, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, err := g.Get(ctx, id)
	if err != nil {
		return c, err
	}
	reason := "The owner said no."
	if n := oneLine(note); n != "" {
		reason = "The owner asked for a change: " + n
	}
	_, err = g.b.Do(ctx, g.archive(c, StatusDeclined, "decline", reason, by))
	return c, err
}

// archive is the change that moves a decided card to the archive with its status and decision time;
// its diary line says the decision. It is the gate's paper trail: permanent, never undone.
func (g *Gate) archive(c ApprovalCard, status, op, reason string, by By) box.Change {
	verb := map[string]string{StatusApproved: "Approved", StatusDeclined: "Declined", StatusExpired: "Expired"}[status]
	dst := ArchiveApprovals + "/" + c.ID + ".approval.card"
	return box.Change{Actor: by.Actor(), Op: op, Switch: c.Switch, Permanent: true,
		Summary: verb + ": " + c.Title + sentBy(c), Reason: reason,
		Apply: func(tx *box.Tx) error {
			data, err := tx.Read(c.Path)
			if err != nil {
				// Another decision got there first: the card is not waiting, as Get says of it (exit 5).
				return errs.E("gate.archive", errs.NotFound, "There is no waiting card %s; it was decided already.", c.ID)
			}
			if data, err = card.SetField(data, []string{"status"}, status); err != nil {
				return err
			}
			if data, err = card.SetField(data, []string{"decided"}, g.now().UTC().Truncate(time.Second)); err != nil {
				return err
			}
			if err := tx.Write(dst, data); err != nil {
				return err
			}
			return tx.Remove(c.Path)
		}}
}
