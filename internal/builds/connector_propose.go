package builds

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/say"
)

// OpConnector is the gate op that installs a connector's version once the owner approves its card.
const OpConnector = "connector"

// ConnectorInput is a connector as validate_build, propose_connector and update_build send it: the
// manifest and the files, each as JSON.
type ConnectorInput struct {
	Manifest json.RawMessage
	Files    json.RawMessage
}

// connectorAction is a connector's card action: the exact bytes installed, and what the card binds (the
// envelope's hash and the files' SHA-256), so what runs is what the owner saw.
type connectorAction struct {
	Op           string             `json:"op"`
	ID           string             `json:"id"`
	Name         string             `json:"name"`
	Emoji        string             `json:"emoji"`
	What         string             `json:"what"`
	Bundle       string             `json:"bundle"` // the version's file as it will be installed
	SHA256       string             `json:"sha256"` // of bundle
	Size         int                `json:"size"`
	Envelope     connector.Envelope `json:"envelope"`
	EnvelopeHash string             `json:"envelopeHash"`
	FilesSHA256  string             `json:"filesSHA256"`
	Adds         []string           `json:"adds"`  // what it reaches that the version in use does not
	Facts        []string           `json:"facts"` // what the owner reads on the card
	Base         int                `json:"base"`  // the version it updates; 0 for a new connector
	Changelog    string             `json:"changelog"`
	Stale        string             `json:"stale,omitempty"`
}

func (a connectorAction) payload() map[string]any {
	var m map[string]any
	raw, _ := json.Marshal(a) // strings, numbers and lists of them always marshal
	_ = json.Unmarshal(raw, &m)
	return m
}

// CheckConnector is validate_build: every problem of a bundle at once, never an error for a bad one.
func CheckConnector(in ConnectorInput, opts connector.Options) (*connector.Bundle, connector.Report) {
	return connector.Validate(in.Manifest, in.Files, opts)
}

// ProposeConnector checks a new connector and sends it to the gate: "Add a connector: X". One that
// reaches any host is under "Share outside my box" (so Never refuses it before any card), one that
// reaches none under "Change my box" (docs/CONNECTORS.md, "Cards").
func (r *Builds) ProposeConnector(ctx context.Context, in ConnectorInput, opts connector.Options, who gate.Asker) (Proposal, error) {
	a, err := r.checkConnector(in, opts)
	if err != nil {
		return Proposal{}, err
	}
	if _, err := r.Connector(ctx, a.ID); err == nil {
		return Proposal{}, notProposed("there is already a connector %q; send a new version with update_build.", a.ID)
	} else if !errs.Is(err, errs.NotFound) {
		return Proposal{}, err
	}
	a.Adds, a.Changelog = a.Envelope.Adds(connector.Envelope{}), "The first version."
	a.Facts = connectorFacts(a, who.Who())
	return r.propose(ctx, connectorGateAction(a, connector.Envelope{}), who, a.ID, "")
}

// UpdateConnector checks a new version of the installed connector id and sends it to the gate: "Let a
// connector reach more: X" when it reaches further than the version in use.
func (r *Builds) UpdateConnector(ctx context.Context, id string, in ConnectorInput, opts connector.Options, who gate.Asker) (Proposal, error) {
	b, err := r.Connector(ctx, id)
	if err != nil {
		return Proposal{}, notProposed("%s Send a new connector with propose_connector.", errs.Sentence(err))
	}
	a, err := r.checkConnector(in, opts)
	if err != nil {
		return Proposal{}, err
	}
	if a.ID != b.ID {
		return Proposal{}, notProposed("the manifest's id is %q but the connector to update is %q; keep the id (or the name it comes from).", a.ID, b.ID)
	}
	var old connector.Envelope
	if b.Envelope != nil {
		old = *b.Envelope
	}
	a.Base, a.Adds = b.Version, a.Envelope.Adds(old)
	a.Changelog = "A new version of " + b.Name + "."
	a.Facts = connectorFacts(a, who.Who())
	return r.propose(ctx, connectorGateAction(a, old), who, a.ID, "")
}

// checkConnector validates a bundle and makes its card action; a bundle with problems is refused with
// every problem in the sentence.
func (r *Builds) checkConnector(in ConnectorInput, opts connector.Options) (connectorAction, error) {
	bundle, rep := connector.Validate(in.Manifest, in.Files, opts)
	if !rep.OK {
		return connectorAction{}, notProposed("%s; validate_build lists each.", problemList(rep.Problems, 1500))
	}
	return actionOf(bundle, in.Manifest)
}

// problemList is a bundle's problems in one sentence, "where: why; …", cut to n characters.
func problemList(ps []connector.Problem, n int) string {
	why := make([]string, len(ps))
	for i, p := range ps {
		why[i] = p.Where + ": " + p.Why
	}
	return clip(strings.Join(why, "; "), n)
}

func actionOf(bundle *connector.Bundle, manifest json.RawMessage) (connectorAction, error) {
	data, err := EncodeBundle(manifest, bundle.Files)
	if err != nil {
		return connectorAction{}, err
	}
	m := bundle.Manifest
	return connectorAction{Op: OpConnector, ID: m.ID, Name: oneLine(m.Name), Emoji: m.Emoji, What: oneLine(m.What),
		Bundle: string(data), SHA256: Sum(data), Size: len(data), Envelope: bundle.Envelope,
		EnvelopeHash: bundle.EnvelopeHash, FilesSHA256: bundle.FilesSHA256, Adds: []string{}, Facts: []string{}}, nil
}

// connectorGateAction is the card of a: a new connector, or a new version that reaches more (or not)
// than old, the envelope of the version in use.
func connectorGateAction(a connectorAction, old connector.Envelope) gate.Action {
	kind, summary := "add-connector", a.Name
	switch {
	case a.Base > 0 && len(a.Adds) > 0:
		kind = "connector-reach"
	case a.Base > 0:
		summary = a.Name + " (a new version that reaches no further)"
	}
	// Reaching a host it did not reach before sends the owner's data somewhere new: "Share outside my
	// box". Any website always is.
	sw := gate.Change
	newHost := slices.ContainsFunc(a.Envelope.Hosts, func(h string) bool { return !slices.Contains(old.Hosts, h) && !old.AnyWebsite() })
	if newHost || a.Envelope.AnyWebsite() {
		sw = gate.Share
	}
	return gate.Action{Kind: kind, Switch: sw, Summary: summary, Payload: a.payload()}
}

// connectorFacts are the lines the owner reads on a connector's card (docs/CONNECTORS.md, "Cards").
func connectorFacts(a connectorAction, by string) []string {
	e := a.Envelope
	out := []string{"What it's for: " + a.What}
	if a.Base > 0 {
		if len(a.Adds) == 0 {
			out = append(out, "What it adds: nothing it could not do already")
		} else {
			out = append(out, "What it adds: "+strings.Join(a.Adds, "; "))
		}
	}
	switch {
	case e.AnyWebsite():
		out = append(out, "Where it reaches: any public website (never your box, your home network or cloud metadata)")
	case len(e.Hosts) == 0:
		out = append(out, "Where it reaches: nowhere; it can't reach the internet")
	default:
		out = append(out, "Where it reaches: "+strings.Join(e.Hosts, ", ")+", and nowhere else")
	}
	if len(e.Keys) == 0 {
		out = append(out, "Keys it needs: none")
	}
	for _, k := range e.Keys {
		out = append(out, fmt.Sprintf("Key it needs: %s, sent only to %s (add the key in Settings → Things I built)", k.Name, k.Host))
	}
	for _, t := range e.Tools {
		verb := "reads"
		if t.Effect == connector.Write {
			verb = "writes (acts as you: it follows your \"Send as me\" switch)"
		}
		out = append(out, fmt.Sprintf("Tool %s: %s", t.Name, verb))
	}
	out = append(out, fmt.Sprintf("The code was written by %s; it runs boxed (no files, no network of its own, at most %d s and %d MB a call)", by, e.Limits.TimeoutS, e.Limits.Memory),
		fmt.Sprintf("Fingerprint: envelope %s · files SHA-256 %s", say.Hash(a.EnvelopeHash), say.Hash(a.FilesSHA256)))
	return out
}

// currentConnector rebuilds a connector's card action from the box as it is now: the bundle must still
// validate to the envelope hash and files' SHA-256 the card binds, and the connector must still be new
// (or still at the version the update was made from).
func (r *Builds) currentConnector(ctx context.Context, stored gate.Action) (gate.Action, error) {
	a, err := decode[connectorAction](stored.Payload)
	if err != nil {
		return stored, err
	}
	now := stored
	b, err := r.Connector(ctx, a.ID)
	installed := err == nil
	if err != nil && !errs.Is(err, errs.NotFound) {
		return stored, err
	}
	a.Stale = r.connectorStale(a, installed, b)
	now.Payload = a.payload()
	return now, nil
}

func (r *Builds) connectorStale(a connectorAction, installed bool, b Build) string {
	if Sum([]byte(a.Bundle)) != a.SHA256 || len(a.Bundle) != a.Size {
		return "the connector's bytes do not match their fingerprint"
	}
	manifest, files, err := DecodeBundle([]byte(a.Bundle))
	if err != nil {
		return "the connector's file cannot be read"
	}
	bundle, rep := connector.Validate(manifest, files, connector.Options{BoxCanBuild: true})
	switch {
	case !rep.OK:
		return "the connector no longer passes the checks"
	case bundle.EnvelopeHash != a.EnvelopeHash || bundle.Envelope.Hash() != a.Envelope.Hash():
		return "what the connector reaches is not what the card shows"
	case bundle.FilesSHA256 != a.FilesSHA256:
		return "the connector's files are not the ones the card binds"
	case bundle.Manifest.ID != a.ID:
		return "the connector's id is not the card's"
	case a.Base == 0 && installed:
		return "a connector " + a.ID + " was installed since"
	case a.Base > 0 && (!installed || b.Version != a.Base):
		return "the connector changed since this version was made from it"
	}
	return ""
}

// installConnector is an approved connector's effect: its next version written beside the others,
// pending; then, after that commit, its tests run on fresh state and decide whether it turns on.
func (r *Builds) installConnector(c gate.ApprovalCard, act gate.Action) (gate.Effect, error) {
	a, err := decode[connectorAction](act.Payload)
	if err != nil {
		return gate.Effect{}, err
	}
	if a.Stale != "" {
		return gate.Effect{}, errs.E("builds.install", errs.Conflict, "Nothing was installed: %s.", a.Stale)
	}
	at := r.now().UTC().Truncate(time.Second)
	var n int
	ch := box.Change{Actor: c.Proposer(), Op: "connector-install", Switch: act.Switch,
		Apply: func(tx *box.Tx) error {
			b, err := readTx(tx, manifestPath(KindConnector, a.ID))
			if err != nil {
				return err
			}
			if b.ID == "" {
				b = Build{Kind: KindConnector, ID: a.ID, Created: at}
			}
			b.Name, b.Emoji, b.What = a.Name, a.Emoji, a.What
			n = nextVersion(b)
			b.Previous = 0
			if b.Version > 0 && b.Status == StatusOn {
				b.Previous = b.Version
			}
			b.Version, b.Status, b.Updated = n, StatusPending, at
			env := a.Envelope
			b.Envelope = &env
			b.Versions = append(b.Versions, Version{N: n, SHA256: a.SHA256, Size: a.Size, Changelog: a.Changelog,
				Brief: a.What, By: c.ProposedBy, Card: c.ID, At: at})
			if err := tx.Write(VersionPath(KindConnector, a.ID, n), []byte(a.Bundle)); err != nil {
				return err
			}
			return writeTx(tx, b)
		}}
	verb := "Installed the connector "
	if a.Base > 0 {
		verb = "Installed a new version of the connector "
	}
	ch.Summary = verb + a.Name + "; its tests run before it turns on"
	var outcome string
	return gate.Effect{Change: &ch,
		After: func(ctx context.Context) (string, error) {
			// The tests run to the end even if the one who approved stops waiting (a browser closed):
			// a cancelled run would read as a failure.
			b, err := r.afterTests(context.WithoutCancel(ctx), testActor, a.ID, n)
			outcome = testOutcome(b)
			if err == nil && b.Version == n && b.Status == StatusPending && r.SafeMode(ctx) {
				outcome = testsWait(b)
			}
			return "", err
		},
		Text: func() string {
			if outcome == "" {
				return verb + a.Name + "."
			}
			return verb + a.Name + ": " + outcome
		}}, nil
}

// testOutcome says in a sentence how a connector's test run ended.
func testOutcome(b Build) string {
	switch {
	case b.Health == nil:
		return ""
	case b.Status == StatusOn && b.Health.OK:
		return "its tests passed, so it is on."
	case b.Health.OK:
		return "its tests passed; it is " + b.Status + "."
	case b.Status == StatusOn:
		return fmt.Sprintf("its tests failed (%s), so version %d is back.", b.Health.Why, b.Version)
	}
	return "its tests failed, so it is off: " + b.Health.Why
}
