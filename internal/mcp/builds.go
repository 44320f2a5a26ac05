package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
)

// The page, look and layout tools of "Can build for my box" (docs/PAGES.md): each checks what it is sent
// before any card ("Not proposed: <why>", nothing sent) and hands the rest to the gate, which makes a
// card that says who sent it; nothing applies until the owner approves it with their passkey.

type (
	buildIDIn struct {
		ID string `json:"id" jsonschema:"the proposal from propose_section, update_section, propose_ui_change or propose_layout, or a build's id from list_builds (garden, look, layout)"`
	}
	proposeOut struct {
		OK       bool   `json:"ok"`
		Proposal string `json:"proposal"`
		Section  string `json:"section,omitempty"`
		Address  string `json:"address,omitempty"`
		Status   string `json:"status"`
		Text     string `json:"text"`
	}
)

const waitingStatus = "waiting for the owner's passkey"

// asker is the connection as the gate sees it: another assistant, never the owner, whatever its name.
func (ss *session) asker(req *sdk.CallToolRequest) gate.Asker {
	a := ss.actor(req)
	return gate.Asker{Connection: a.Who, Via: a.Via, Host: a.Host, Conn: a.Conn}
}

func (ss *session) builds() (*builds.Builds, error) {
	if ss.svc.Builds == nil {
		return nil, refusal("Not proposed: this box can't take builds right now; tell the owner.")
	}
	return ss.svc.Builds, nil
}

func proposed(p builds.Proposal) proposeOut {
	return proposeOut{OK: true, Proposal: p.Card.ID, Section: sectionOf(p), Address: p.Address, Status: waitingStatus, Text: p.Text}
}

func sectionOf(p builds.Proposal) string {
	if p.Address == "" {
		return ""
	}
	return p.Build
}

func pageTools() []tool {
	return []tool{
		define(build, sdk.Tool{Name: "list_builds", Annotations: readOnly,
			Description: "The pages, look and layout already on the box (builds: kind, id, name, status, version, address), the maps your own pages keep or read (maps), and your proposals still waiting (waiting). Never notes, data or keys."},
			func(ctx context.Context, ss *session, req *sdk.CallToolRequest, _ noInput) (builds.Listing, error) {
				r, err := ss.builds()
				if err != nil {
					return builds.Listing{}, err
				}
				l, err := r.ListFor(ctx, ss.actor(req).Conn)
				return l.Fenced(fence), err
			}),
		define(build, sdk.Tool{Name: "build_status", Annotations: readOnly,
			Description: "Where a proposal stands: card (waiting, approved, declined, expired) and the build (a page: pending until its first clean load in the owner's browser, then on; broken if a first version didn't load). Never say something is installed until this says on."},
			func(ctx context.Context, ss *session, req *sdk.CallToolRequest, in buildIDIn) (builds.StatusAnswer, error) {
				r, err := ss.builds()
				if err != nil {
					return builds.StatusAnswer{}, err
				}
				st, err := r.StatusFor(ctx, in.ID, ss.actor(req).Conn)
				for _, b := range []**builds.Summary{&st.Build, &st.Section} {
					if *b != nil {
						f := (*b).Fenced(fence)
						*b = &f
					}
				}
				return st, err
			}),
		define(build, sdk.Tool{Name: "propose_section", Annotations: additive,
			Description: "Propose a page of the owner's own: one self-contained HTML file (at most 512 KB: inline CSS and JS, no outside addresses, no WebSocket, WebRTC, workers, frames), with its own notes in the map moc-<own>. The box injects a global `box` (memory, data, todos, ui) before your script. Always a card the owner approves with their passkey; refusals say \"Not proposed: <why>\"."},
			func(ctx context.Context, ss *session, req *sdk.CallToolRequest, in sectionIn) (proposeOut, error) {
				r, err := ss.builds()
				if err != nil {
					return proposeOut{}, err
				}
				p, err := r.ProposePage(ctx, builds.PageInput{Name: in.Name, Emoji: in.Emoji, Own: in.Own, Read: in.Read, Uses: in.Uses, What: in.What, HTML: in.HTML}, ss.asker(req))
				return proposed(p), notProposed(err)
			}),
		define(build, sdk.Tool{Name: "update_section", Annotations: additive,
			Description: "Send a new version of a page (the whole HTML again, and what changes in one line): another card (Change my page); approved, it switches over after its first clean load, and a version that fails to load puts the previous one back."},
			func(ctx context.Context, ss *session, req *sdk.CallToolRequest, in updateSectionIn) (proposeOut, error) {
				r, err := ss.builds()
				if err != nil {
					return proposeOut{}, err
				}
				p, err := r.UpdatePage(ctx, builds.UpdateInput{Section: in.Section, HTML: in.HTML, What: in.What}, ss.asker(req))
				return proposed(p), notProposed(err)
			}),
		define(build, sdk.Tool{Name: "propose_ui_change", Annotations: additive,
			Description: "Propose a look change: CSS of at most 3,500 characters from an allow-list (colours, fonts, text at least 12px, spacing, corners, borders, small shadows; nothing that targets cards, buttons or dialogs; no url(), @import, display or position). A card (Change how my box looks) that shows all of it."},
			func(ctx context.Context, ss *session, req *sdk.CallToolRequest, in uiChangeIn) (proposeOut, error) {
				r, err := ss.builds()
				if err != nil {
					return proposeOut{}, err
				}
				p, err := r.ProposeLook(ctx, builds.LookInput{Name: in.Name, What: in.What, CSS: in.CSS}, ss.asker(req))
				return proposed(p), notProposed(err)
			}),
		define(build, sdk.Tool{Name: "propose_layout", Annotations: additive,
			Description: "Propose how the tabs are arranged, the whole arrangement at once: {\"items\": [\"page:habits\", \"today\", \"todo\", \"chat\", \"settings\"], \"home\": \"page:habits\", \"menu\": \"tabs\" or \"hamburger\", \"names\": {\"todo\": \"Chores\"}}. Tabs left out are hidden (Settings always stays); only an installed page can be placed. A card."},
			func(ctx context.Context, ss *session, req *sdk.CallToolRequest, in layoutIn) (proposeOut, error) {
				r, err := ss.builds()
				if err != nil {
					return proposeOut{}, err
				}
				raw, err := json.Marshal(in.Layout)
				if err != nil || in.Layout == nil {
					return proposeOut{}, refusal("Not proposed: layout is an object like {\"items\": [\"today\", \"settings\"]}.")
				}
				p, err := r.ProposeLayout(ctx, builds.LayoutInput{What: in.What, Layout: raw}, ss.asker(req))
				return proposed(p), notProposed(err)
			}),
	}
}

// notProposed keeps a refusal's own sentence and makes sure it starts "Not proposed: ".
func notProposed(err error) error {
	if err == nil {
		return nil
	}
	s := errs.Sentence(err)
	k := errs.KindOf(err)
	if s == "" || (k != errs.Invalid && k != errs.Refused && k != errs.Limited && k != errs.NotFound && k != errs.Conflict) {
		return err
	}
	if len(s) < 14 || s[:14] != "Not proposed: " {
		s = "Not proposed: " + s
	}
	return errs.E("mcp.build", k, "%s", s)
}
