package builds

import (
	"context"
	"fmt"

	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
)

// Summary is a build as an assistant or the owner's CLI sees it: never a page's notes, data, token or
// the error text it reported.
type Summary struct {
	Kind    string   `json:"kind"`
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Emoji   string   `json:"emoji,omitempty"`
	Status  string   `json:"status"`
	Version int      `json:"version"`
	Address string   `json:"address,omitempty"`
	Own     string   `json:"own,omitempty"` // a page's own map
	Read    []string `json:"read,omitempty"`
	// Problem says a version did not load cleanly, never what the page reported.
	Problem string `json:"problem,omitempty"`
	// A connector's hosts, the names of the keys it needs (never their values), its tools and their
	// effects, and its last test run.
	Hosts  []string            `json:"hosts,omitempty"`
	Keys   []string            `json:"keys,omitempty"`
	Tools  []connector.ToolUse `json:"tools,omitempty"`
	Health *Health             `json:"health,omitempty"`
}

// Fenced is s as a model reads it: its name, emoji and last test's words (a connector's own stderr) are
// the proposing assistant's, so each goes through fence (the memory's <outside_content>).
func (s Summary) Fenced(fence func(string) string) Summary {
	s.Name, s.Emoji = fence(s.Name), fence(s.Emoji)
	if s.Health != nil {
		h := *s.Health
		h.Why = fence(h.Why)
		s.Health = &h
	}
	return s
}

// Summarize is the summary of a build.
func Summarize(b Build) Summary {
	s := Summary{Kind: b.Kind, ID: b.ID, Name: b.Name, Emoji: b.Emoji, Status: b.Status, Version: b.Version, Address: b.Address(), Read: b.Read}
	if b.Kind == KindPage {
		s.Own = "moc-" + b.ID
	}
	for _, v := range b.Versions {
		if v.Failed {
			s.Problem = fmt.Sprintf("version %d did not load cleanly", v.N)
		}
	}
	if b.Status == StatusBroken {
		s.Problem = fmt.Sprintf("version %d did not load cleanly, so the page is off", b.Version)
	}
	if b.Kind == KindConnector {
		s.Problem, s.Health = "", b.Health
		if b.Status == StatusFailed {
			s.Problem = fmt.Sprintf("version %d failed its tests, so the connector is off", b.Version)
		}
		if e := b.Envelope; e != nil {
			s.Hosts, s.Tools = e.Hosts, e.Tools
			for _, k := range e.Keys {
				s.Keys = append(s.Keys, k.Name)
			}
		}
	}
	return s
}

// Waiting is a proposal still waiting for the owner.
type Waiting struct {
	Proposal string `json:"proposal"`
	Title    string `json:"title"`
}

// Fenced is l as a model reads it: each build's summary (Summary.Fenced) and each waiting card's title,
// which names what was proposed, fenced.
func (l Listing) Fenced(fence func(string) string) Listing {
	for i, b := range l.Builds {
		l.Builds[i] = b.Fenced(fence)
	}
	for i, w := range l.Waiting {
		l.Waiting[i].Title = fence(w.Title)
	}
	return l
}

// Listing is what list_builds answers one connection.
type Listing struct {
	Builds  []Summary `json:"builds"`
	Maps    []string  `json:"maps"`    // the maps this connection's pages keep or read
	Waiting []Waiting `json:"waiting"` // its proposals still waiting
}

// ListFor lists the builds, with the maps and waiting proposals of the connection conn.
func (r *Builds) ListFor(ctx context.Context, conn string) (Listing, error) {
	out := Listing{Builds: []Summary{}, Maps: []string{}, Waiting: []Waiting{}}
	all, err := r.List(ctx)
	if err != nil {
		return out, err
	}
	maps := map[string]bool{}
	for _, b := range all {
		out.Builds = append(out.Builds, Summarize(b))
		if b.Kind == KindPage && conn != "" && builtBy(b, conn) {
			for _, m := range append([]string{"moc-" + b.ID}, b.Read...) {
				if !maps[m] {
					maps[m] = true
					out.Maps = append(out.Maps, m)
				}
			}
		}
	}
	cards, err := r.gate.Waiting(ctx)
	if err != nil {
		return out, err
	}
	for _, c := range cards {
		if conn != "" && c.ProposedBy.Conn == conn && isBuildOp(gate.OpOf(c.Action)) {
			out.Waiting = append(out.Waiting, Waiting{Proposal: c.ID, Title: c.Title})
		}
	}
	return out, nil
}

func builtBy(b Build, conn string) bool {
	for _, v := range b.Versions {
		if v.By.Conn == conn {
			return true
		}
	}
	return false
}

func isBuildOp(op string) bool {
	return op == OpPage || op == OpLook || op == OpLayout || op == OpConnector
}

// StatusAnswer is where a proposal or a build stands.
type StatusAnswer struct {
	Proposal string   `json:"proposal,omitempty"`
	Card     string   `json:"card,omitempty"` // waiting, approved, declined, expired
	Build    *Summary `json:"build,omitempty"`
	Section  *Summary `json:"section,omitempty"` // the same as build, for a page
	Text     string   `json:"text"`
}

// StatusFor answers build_status for the connection conn: id is one of its proposals (a card id) or
// a build's id.
func (r *Builds) StatusFor(ctx context.Context, id, conn string) (StatusAnswer, error) {
	var out StatusAnswer
	if gate.ValidID(id) {
		c, err := r.gate.Find(ctx, id)
		if err == nil && isBuildOp(gate.OpOf(c.Action)) && (conn == "" || c.ProposedBy.Conn == conn) {
			out.Proposal, out.Card = c.ID, c.Status
			p, _ := c.Action.Payload.(map[string]any)
			switch gate.OpOf(c.Action) {
			case OpPage:
				id, _ = p["slug"].(string)
			case OpLook:
				id = KindLook + ":" + LookID
			case OpLayout:
				id = KindLayout + ":" + LayoutID
			case OpConnector:
				cid, _ := p["id"].(string)
				id = KindConnector + ":" + cid
			}
		} else if err != nil && !errs.Is(err, errs.NotFound) {
			return out, err
		}
	}
	b, err := r.Get(ctx, id)
	switch {
	case err == nil:
		s := Summarize(b)
		out.Build = &s
		if b.Kind == KindPage {
			out.Section = &s
		}
	case out.Card == "":
		return out, err
	}
	out.Text = statusText(out)
	return out, nil
}

func statusText(s StatusAnswer) string {
	switch s.Card {
	case gate.StatusWaiting:
		return "The card is waiting for the owner on Today; nothing is installed until they say yes."
	case gate.StatusDeclined:
		return "The owner declined the card; nothing was installed."
	case gate.StatusExpired:
		return "The card expired because what it would install changed; nothing was installed. Send it again."
	}
	if s.Build == nil {
		return "Approved."
	}
	switch s.Build.Status {
	case StatusPending:
		if s.Build.Kind == KindConnector {
			return "Approved; its tests are running, and it turns on if they pass."
		}
		return "Installed and pending: it turns on after its first clean load in the owner's browser; ask them to open " + s.Build.Address + " once."
	case StatusOn:
		return "It is on."
	case StatusOff:
		return "The owner switched it off."
	case StatusBroken:
		return "It did not load cleanly, so it is off; fix it and send it again."
	case StatusFailed:
		return "Its tests failed, so it is off; health.why says why. Fix it and send it again with update_build."
	}
	return ""
}
