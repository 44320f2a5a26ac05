package builds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/look"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/page"
	"github.com/boxmem/box/internal/tabs"
)

// Limits of what a proposal says about itself.
const (
	MaxName  = 40
	MaxWhat  = 500
	MaxEmoji = 16
	MaxRead  = 10
	MaxUses  = 10 // the installed connectors a page may call
)

// The ops the gate runs when the owner approves a build's card.
const (
	OpPage   = "page"
	OpLook   = "look"
	OpLayout = "layout"
)

// PageInput is a new page as propose_section sends it.
type PageInput struct {
	Name  string   `json:"name"`
	Emoji string   `json:"emoji,omitempty"`
	Own   string   `json:"own"`
	Read  []string `json:"read,omitempty"`
	Uses  []string `json:"uses,omitempty"`
	What  string   `json:"what"`
	HTML  string   `json:"html"`
}

// UpdateInput is a new version of a page, as update_section sends it.
type UpdateInput struct {
	Section string `json:"section"`
	HTML    string `json:"html"`
	What    string `json:"what"`
}

// LookInput is a look change.
type LookInput struct {
	Name string `json:"name"`
	What string `json:"what"`
	CSS  string `json:"css"`
}

// LayoutInput is an arrangement of the tabs.
type LayoutInput struct {
	What   string          `json:"what"`
	Layout json.RawMessage `json:"layout"`
}

// Proposal is what a proposal became: a card waiting for the owner.
type Proposal struct {
	Card    gate.ApprovalCard
	Build   string // the build's id
	Address string // a page's address
	Text    string
}

// pageAction is a page's card action: everything the card binds, the HTML included, so what is
// installed is exactly what the owner saw the fingerprint of.
type pageAction struct {
	Op        string   `json:"op"`
	Slug      string   `json:"slug"`
	Name      string   `json:"name"`
	Emoji     string   `json:"emoji,omitempty"`
	What      string   `json:"what"`
	Read      []string `json:"read"`
	Uses      []string `json:"uses"`
	HTML      string   `json:"html"`
	SHA256    string   `json:"sha256"`
	Size      int      `json:"size"`
	Base      int      `json:"base"` // the version it updates; 0 for a new page
	Changelog string   `json:"changelog"`
	Stale     string   `json:"stale,omitempty"` // set when rebuilt: why it may no longer run
}

// lookAction is a look change's or a layout's card action.
type lookAction struct {
	Op     string `json:"op"`
	Name   string `json:"name"`
	What   string `json:"what"`
	Source string `json:"source"` // the CSS, or the layout as JSON
	SHA256 string `json:"sha256"`
	Base   int    `json:"base"`
	Stale  string `json:"stale,omitempty"`
}

func notProposed(format string, a ...any) error {
	return errs.E("builds.propose", errs.Invalid, "Not proposed: "+format, a...)
}

// oneLine is s with its white space runs made one space, trimmed.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func checkText(field, s string, most int) (string, error) {
	if !utf8.ValidString(s) {
		return "", notProposed("%s is not UTF-8 text.", field)
	}
	s = oneLine(s)
	switch {
	case s == "":
		return "", notProposed("%s is empty; say it in a few plain words.", field)
	case utf8.RuneCountInString(s) > most:
		return "", notProposed("%s is %d characters; keep it to %d.", field, utf8.RuneCountInString(s), most)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return "", notProposed("%s holds a control or direction character; use plain text.", field)
		}
	}
	return s, nil
}

// mapName reads a map a page may read: "moc-people" or "people".
func mapName(s string) (string, error) {
	m := strings.TrimPrefix(strings.TrimSpace(s), "moc-")
	if page.CheckSlug(m) != nil {
		return "", notProposed("%q is not a map's name; name maps like moc-people.", page.Clip(s))
	}
	return "moc-" + m, nil
}

// mapTaken says why a new page may not own the map moc-<slug>, or "" when it may: a page reads its own
// map and edits what it lists, so it never gets one of the owner's default maps or a map that is already
// there (docs/PAGES.md, "Keep each page to its own").
func (r *Builds) mapTaken(slug string) (string, error) {
	name := "moc-" + slug
	if slices.Contains(note.DefaultMaps, name) {
		return "is one of the owner's own maps", nil
	}
	for _, p := range []string{layout.MapsDir + "/" + name + ".md", layout.MapsDir + "/" + name} {
		_, err := os.Lstat(filepath.Join(r.b.Root, filepath.FromSlash(p)))
		if err == nil {
			return "is already in the memory", nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", errs.Wrap("builds.propose", errs.Other, err, "The memory's maps cannot be read to check the page's name, so nothing was proposed")
		}
	}
	return "", nil
}

// mapTakenNow is mapTaken at approval: a map that cannot be checked counts as taken (closed, never open).
func (r *Builds) mapTakenNow(slug string) bool {
	taken, err := r.mapTaken(slug)
	return taken != "" || err != nil
}

// checkPage runs every check of a page before any card: its words, its maps, its connectors and the
// page itself (docs/PAGES.md).
func (r *Builds) checkPage(ctx context.Context, in PageInput) (pageAction, error) {
	a := pageAction{Op: OpPage, Read: []string{}, Uses: []string{}}
	var err error
	if err := page.CheckSlug(in.Own); err != nil {
		return a, notProposed("own %s", errs.Sentence(err))
	}
	a.Slug = in.Own
	if taken, err := r.mapTaken(a.Slug); err != nil {
		return a, err
	} else if taken != "" {
		return a, notProposed("own %q would make the page's map %s, which %s; a page keeps its notes in a map of its own, so choose another name.", a.Slug, "moc-"+a.Slug, taken)
	}
	if a.Name, err = checkText("name", in.Name, MaxName); err != nil {
		return a, err
	}
	if a.What, err = checkText("what", in.What, MaxWhat); err != nil {
		return a, err
	}
	if in.Emoji != "" {
		if a.Emoji, err = checkText("emoji", in.Emoji, MaxEmoji); err != nil {
			return a, err
		}
	}
	if len(in.Read) > MaxRead {
		return a, notProposed("read names %d maps; a page reads at most %d besides its own.", len(in.Read), MaxRead)
	}
	seen := map[string]bool{"moc-" + a.Slug: true}
	for _, m := range in.Read {
		name, err := mapName(m)
		if err != nil {
			return a, err
		}
		if !seen[name] {
			seen[name] = true
			a.Read = append(a.Read, name)
		}
	}
	if len(in.Uses) > MaxUses {
		return a, notProposed("uses names %d connectors; a page uses at most %d.", len(in.Uses), MaxUses)
	}
	for _, u := range in.Uses {
		id := strings.TrimSpace(u)
		if _, err := r.Connector(ctx, id); errs.Is(err, errs.NotFound) {
			return a, notProposed("the page uses the connector %q, which isn't installed on this box; send the connector first, or the page without it.", page.Clip(u))
		} else if err != nil {
			return a, err
		}
		if !slices.Contains(a.Uses, id) {
			a.Uses = append(a.Uses, id)
		}
	}
	if err := checkHTML(in.HTML); err != nil {
		return a, err
	}
	a.HTML, a.SHA256, a.Size = in.HTML, Sum([]byte(in.HTML)), len(in.HTML)
	return a, nil
}

func checkHTML(html string) error {
	if err := page.Check([]byte(html)); err != nil {
		return notProposed("%s", errs.Sentence(err))
	}
	return nil
}

func (a pageAction) gateAction(kind string) gate.Action {
	return gate.Action{Kind: kind, Switch: gate.Change, Summary: a.Name, Payload: a.payload()}
}

func (a pageAction) payload() map[string]any {
	var m map[string]any
	raw, _ := json.Marshal(a) // a struct of strings, numbers and string lists always marshals
	_ = json.Unmarshal(raw, &m)
	return m
}

// propose hands an action to the gate and turns its answer into a proposal: a card, or a refusal
// ("Not proposed: …", nothing sent).
func (r *Builds) propose(ctx context.Context, a gate.Action, who gate.Asker, id, address string) (Proposal, error) {
	out, err := r.gate.Propose(ctx, a, who)
	if err != nil {
		return Proposal{}, err
	}
	switch out.Decision.Verdict {
	case gate.Refuse:
		return Proposal{}, errs.E("builds.propose", errs.Refused, "Not proposed: %s", out.Decision.Reason)
	case gate.Do:
		// Only the owner's own side gets here; a build is installed the way an approved card installs it.
		c := gate.ApprovalCard{Kind: a.Kind, Title: gate.Title(a), Action: a,
			ProposedBy: gate.Proposer{Who: who.Who(), Via: who.Via, Host: who.Host, Conn: who.Conn, Owner: who.Owner && who.Connection == ""}}
		eff, err := r.run(ctx, c, a)
		if err != nil {
			return Proposal{}, err
		}
		if _, err := r.b.Do(ctx, *eff.Change); err != nil {
			return Proposal{}, err
		}
		return Proposal{Build: id, Address: address, Text: eff.Text()}, nil
	}
	return Proposal{Card: *out.Card, Build: id, Address: address, Text: out.Text}, nil
}

// ProposePage checks a new page and sends it to the gate: anything another assistant sends is a card.
func (r *Builds) ProposePage(ctx context.Context, in PageInput, who gate.Asker) (Proposal, error) {
	a, err := r.checkPage(ctx, in)
	if err != nil {
		return Proposal{}, err
	}
	if _, err := r.Page(ctx, a.Slug); err == nil {
		return Proposal{}, notProposed("there is already a page %q; send a new version with update_section.", a.Slug)
	} else if !errs.Is(err, errs.NotFound) {
		return Proposal{}, err
	}
	a.Changelog = "The first version."
	return r.propose(ctx, a.gateAction("new-page"), who, a.Slug, "/s/"+a.Slug+"/")
}

// UpdatePage checks a new version of an installed page and sends it to the gate.
func (r *Builds) UpdatePage(ctx context.Context, in UpdateInput, who gate.Asker) (Proposal, error) {
	b, err := r.Page(ctx, in.Section)
	if err != nil {
		return Proposal{}, notProposed("%s Send a new page with propose_section.", errs.Sentence(err))
	}
	what, err := checkText("what", in.What, MaxWhat)
	if err != nil {
		return Proposal{}, err
	}
	if err := checkHTML(in.HTML); err != nil {
		return Proposal{}, err
	}
	a := pageAction{Op: OpPage, Slug: b.ID, Name: b.Name, Emoji: b.Emoji, What: b.What, Read: nonNil(b.Read), Uses: nonNil(b.Uses),
		HTML: in.HTML, SHA256: Sum([]byte(in.HTML)), Size: len(in.HTML), Base: b.Version, Changelog: what}
	return r.propose(ctx, a.gateAction("change-page"), who, b.ID, b.Address())
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ProposeLook checks a look change (docs/PAGES.md, "Looks") and sends it to the gate.
func (r *Builds) ProposeLook(ctx context.Context, in LookInput, who gate.Asker) (Proposal, error) {
	name, err := checkText("name", in.Name, MaxName)
	if err != nil {
		return Proposal{}, err
	}
	what, err := checkText("what", in.What, MaxWhat)
	if err != nil {
		return Proposal{}, err
	}
	if err := look.Check(in.CSS); err != nil {
		return Proposal{}, notProposed("%s", errs.Sentence(err))
	}
	base, err := r.versionOf(KindLook, LookID)
	if err != nil {
		return Proposal{}, err
	}
	a := lookAction{Op: OpLook, Name: name, What: what, Source: in.CSS, SHA256: Sum([]byte(in.CSS)), Base: base}
	return r.propose(ctx, gate.Action{Kind: "change-look", Switch: gate.Change, Summary: name, Payload: a.payload()}, who, LookID, "")
}

// ProposeLayout checks an arrangement of the tabs against the pages installed now and sends it to the gate.
func (r *Builds) ProposeLayout(ctx context.Context, in LayoutInput, who gate.Asker) (Proposal, error) {
	what, err := checkText("what", in.What, MaxWhat)
	if err != nil {
		return Proposal{}, err
	}
	src, err := r.checkLayout(ctx, in.Layout)
	if err != nil {
		return Proposal{}, err
	}
	base, err := r.versionOf(KindLayout, LayoutID)
	if err != nil {
		return Proposal{}, err
	}
	a := lookAction{Op: OpLayout, Name: "Layout", What: what, Source: src, SHA256: Sum([]byte(src)), Base: base}
	return r.propose(ctx, gate.Action{Kind: "change-look", Switch: gate.Change, Summary: "Arrange the tabs: " + what, Payload: a.payload()}, who, LayoutID, "")
}

// checkLayout reads a layout strictly and gives it back as canonical JSON.
func (r *Builds) checkLayout(ctx context.Context, raw []byte) (string, error) {
	pages, err := r.InstalledPages(ctx)
	if err != nil {
		return "", err
	}
	l, err := tabs.Parse(raw, pages)
	if err != nil {
		return "", notProposed("%s", errs.Sentence(err))
	}
	c, err := gate.Canonical(l)
	if err != nil {
		return "", err
	}
	return string(c), nil
}

func (a lookAction) payload() map[string]any {
	var m map[string]any
	raw, _ := json.Marshal(a)
	_ = json.Unmarshal(raw, &m)
	return m
}

// versionOf is the version of a build served now, 0 when it is not installed.
func (r *Builds) versionOf(kind, id string) (int, error) {
	b, err := r.read(manifestPath(kind, id))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return b.Version, nil
}

func decode[T any](payload any) (T, error) {
	var v T
	raw, err := json.Marshal(payload)
	if err == nil {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		err = dec.Decode(&v)
	}
	if err != nil {
		return v, errs.Wrap("builds.card", errs.Invalid, err, "The card's action cannot be read; nothing ran")
	}
	return v, nil
}

// Ops are the gate actions of builds, for the composition root to register.
func (r *Builds) Ops() map[string]gate.Op {
	op := gate.Op{Current: r.current, Run: r.run}
	return map[string]gate.Op{OpPage: op, OpLook: op, OpLayout: op, OpConnector: {Current: r.currentConnector,
		Run: func(_ context.Context, c gate.ApprovalCard, a gate.Action) (gate.Effect, error) {
			return r.installConnector(c, a)
		}}}
}

// current rebuilds a build's card action from the box as it is now: the bytes must still hash as
// sent, the page must still be new (or still at the version the update was made from), the checks
// must still pass. Anything else marks it stale, so its hash no longer matches and nothing runs.
func (r *Builds) current(ctx context.Context, stored gate.Action) (gate.Action, error) {
	now := stored
	switch gate.OpOf(stored) {
	case OpPage:
		a, err := decode[pageAction](stored.Payload)
		if err != nil {
			return stored, err
		}
		b, err := r.Page(ctx, a.Slug)
		installed := err == nil
		if err != nil && !errs.Is(err, errs.NotFound) {
			return stored, err
		}
		switch {
		case Sum([]byte(a.HTML)) != a.SHA256 || len(a.HTML) != a.Size:
			a.Stale = "the page's bytes do not match their fingerprint"
		case a.Base == 0 && installed:
			a.Stale = "a page " + a.Slug + " was installed since"
		case a.Base == 0 && r.mapTakenNow(a.Slug):
			a.Stale = "the map moc-" + a.Slug + " is the owner's now"
		case a.Base > 0 && (!installed || b.Version != a.Base):
			a.Stale = "the page changed since this version was made from it"
		case page.Check([]byte(a.HTML)) != nil:
			a.Stale = "the page no longer passes the checks"
		}
		now.Payload = a.payload()
	case OpLook, OpLayout:
		a, err := decode[lookAction](stored.Payload)
		if err != nil {
			return stored, err
		}
		kind, id := KindLook, LookID
		if a.Op == OpLayout {
			kind, id = KindLayout, LayoutID
		}
		base, err := r.versionOf(kind, id)
		if err != nil {
			return stored, err
		}
		switch {
		case Sum([]byte(a.Source)) != a.SHA256:
			a.Stale = "the bytes do not match their fingerprint"
		case base != a.Base:
			a.Stale = "it changed since this card was made"
		case a.Op == OpLook && look.Check(a.Source) != nil:
			a.Stale = "the look no longer passes the checks"
		case a.Op == OpLayout:
			if _, err := r.checkLayout(ctx, []byte(a.Source)); err != nil {
				a.Stale = "the layout no longer fits the pages installed"
			}
		}
		now.Payload = a.payload()
	default:
		return stored, errs.E("builds.card", errs.Invalid, "The card's action is not a build's; nothing ran.")
	}
	return now, nil
}

// run is an approved build's effect: its next version written beside the others and its record,
// under the name of whoever asked for it.
func (r *Builds) run(_ context.Context, c gate.ApprovalCard, act gate.Action) (gate.Effect, error) {
	at := r.now().UTC().Truncate(time.Second)
	by := c.ProposedBy
	var text string
	var ch box.Change
	switch gate.OpOf(act) {
	case OpPage:
		a, err := decode[pageAction](act.Payload)
		if err != nil {
			return gate.Effect{}, err
		}
		if a.Stale != "" {
			return gate.Effect{}, errs.E("builds.install", errs.Conflict, "Nothing was installed: %s.", a.Stale)
		}
		ch = box.Change{Actor: c.Proposer(), Op: "page-install", Switch: gate.Change,
			Apply: func(tx *box.Tx) error {
				b, err := readTx(tx, manifestPath(KindPage, a.Slug))
				if err != nil {
					return err
				}
				if b.ID == "" {
					b = Build{Kind: KindPage, ID: a.Slug, Own: a.Slug, Created: at}
				}
				b.Name, b.Emoji, b.What, b.Read, b.Uses = a.Name, a.Emoji, a.What, a.Read, a.Uses
				n := nextVersion(b)
				b.Previous = 0
				if b.Version > 0 && b.Status == StatusOn {
					b.Previous = b.Version
				}
				b.Version, b.Status, b.Updated = n, StatusPending, at
				b.Versions = append(b.Versions, Version{N: n, SHA256: a.SHA256, Size: a.Size, Changelog: a.Changelog,
					Brief: a.What, By: by, Card: c.ID, At: at})
				if err := tx.Write(VersionPath(KindPage, a.Slug, n), []byte(a.HTML)); err != nil {
					return err
				}
				return writeTx(tx, b)
			}}
		verb := "Installed the page "
		if a.Base > 0 {
			verb = "Installed a new version of the page "
		}
		ch.Summary = verb + a.Name + "; it turns on after its first clean load"
		text = verb + a.Name + " at /s/" + a.Slug + "/; open it once so it can turn on."
	case OpLook, OpLayout:
		a, err := decode[lookAction](act.Payload)
		if err != nil {
			return gate.Effect{}, err
		}
		if a.Stale != "" {
			return gate.Effect{}, errs.E("builds.install", errs.Conflict, "Nothing was applied: %s.", a.Stale)
		}
		kind, id := KindLook, LookID
		if a.Op == OpLayout {
			kind, id = KindLayout, LayoutID
		}
		ch = box.Change{Actor: c.Proposer(), Op: kind + "-install", Switch: gate.Change,
			Apply: func(tx *box.Tx) error {
				b, err := readTx(tx, manifestPath(kind, id))
				if err != nil {
					return err
				}
				if b.ID == "" {
					b = Build{Kind: kind, ID: id, Created: at}
				}
				b.Name, b.What = a.Name, a.What
				n := nextVersion(b)
				b.Previous, b.Version, b.Status, b.Updated = 0, n, StatusOn, at
				b.Versions = append(b.Versions, Version{N: n, SHA256: a.SHA256, Size: len(a.Source), Changelog: a.What,
					Brief: a.What, By: by, Card: c.ID, At: at})
				if err := tx.Write(VersionPath(kind, id, n), []byte(a.Source)); err != nil {
					return err
				}
				return writeTx(tx, b)
			}}
		if kind == KindLook {
			ch.Summary = "Changed how the box looks: " + a.Name
			text = "The look " + a.Name + " is on; ?plain=1 shows any screen without it."
		} else {
			ch.Summary = "Arranged the tabs: " + a.What
			text = "The new arrangement of the tabs is on."
		}
	default:
		return gate.Effect{}, errs.E("builds.card", errs.Invalid, "The card's action is not a build's; nothing ran.")
	}
	return gate.Effect{Change: &ch, Text: func() string { return text }}, nil
}

func nextVersion(b Build) int {
	n := 0
	for _, v := range b.Versions {
		if v.N > n {
			n = v.N
		}
	}
	return n + 1
}

// readTx reads a build's record inside a change; a missing one is the zero Build.
func readTx(tx *box.Tx, p string) (Build, error) {
	if !tx.Exists(p) {
		return Build{}, nil
	}
	data, err := tx.Read(p)
	if err != nil {
		return Build{}, err
	}
	var b Build
	if err := json.Unmarshal(data, &b); err != nil {
		return Build{}, errs.Wrap("builds.read", errs.Invalid, err, fmt.Sprintf("The build record %s cannot be read; fix or remove it", p))
	}
	return b, nil
}

func writeTx(tx *box.Tx, b Build) error {
	data, err := encode(b)
	if err != nil {
		return err
	}
	return tx.Write(manifestPath(b.Kind, b.ID), data)
}
