package web

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/look"
	pagecheck "github.com/boxmem/box/internal/page"
	"github.com/boxmem/box/internal/say"
	"github.com/boxmem/box/internal/tabs"
)

// The owner's side of what was built (docs/PAGES.md, "Builds"): the Pages tab and the box's page that
// holds a page's frame, Settings → Things I built with safe mode, the look applied to the UI and the
// tabs a layout arranges.

func (w *Web) mountBuilds(mux *http.ServeMux, page, post func(string, func(http.ResponseWriter, *http.Request, *session))) {
	mux.HandleFunc("GET /s/{slug}/{$}", w.servePage)
	mux.HandleFunc("OPTIONS /api/sections/{slug}/{rest...}", w.sectionPreflight)
	mux.HandleFunc("GET /api/sections/{slug}/{rest...}", w.sectionAPI)
	mux.HandleFunc("POST /api/sections/{slug}/{rest...}", w.sectionAPI)
	page("GET /pages", w.pagesPage)
	page("GET /pages/{slug}", w.holderPage)
	page("GET /pages/{slug}/note", w.pageNote)
	page("GET /settings/builds", w.buildsPage)
	page("GET /look.css", w.lookCSS)
	post("POST /settings/builds/{id}/{verb}", w.buildAction)
	post("POST /settings/safe-mode", w.safeMode)
}

// BuildRoutes documents what mountBuilds serves, beside Routes.
const BuildRoutes = `GET  /pages /pages/{slug}      the Pages tab; the box's page holding a page's sandboxed frame
GET  /pages/{slug}/note?name=   a note that page opened (box.ui.open): to the note when the page may read it, else back
GET  /s/{slug}/              the page itself, with its bridge and the sandbox headers (the owner's signed-in browser only; 401 otherwise)
OPTIONS|GET|POST /api/sections/{slug}/…   the bridge's routes (x-section-token only; docs/PAGES.md)
GET  /settings/builds        Settings → Things I built: every build, versions, on/off, undo, remove; safe mode
GET  /look.css               the look change applied now (empty without one, and in safe mode)
POST /settings/builds/{id}/off|on|undo|remove   the owner's lifecycle actions
POST /settings/builds/{id}/key   a connector's key, pasted once (name, key): sealed in the vault, never shown again
POST /settings/safe-mode     on (a form), or off (JSON with a passkey assertion)`

var tabIcons = map[string]string{"today": "☀", "todo": "✓", "memory": "✎", "chat": "✉", "diary": "☰", "settings": "⚙", "pages": "▦"}

// noLook are the screens where the owner approves, consents or signs in: no look ever applies there.
var noLook = map[string]bool{"today": true, "signin": true, "setup": true, "consent": true, "settings": true, "builds": true}

// frameScreen fills the frame's tabs from the layout in use, and the look unless this screen never
// takes one or ?plain=1 asks for the plain UI.
func (w *Web) frameScreen(r *http.Request, f *frame, signedIn bool) {
	screen := tabs.Default()
	if signedIn {
		if s, err := w.cfg.Builds.Screen(r.Context()); err == nil {
			screen = s
		}
	}
	f.Menu = screen.Menu
	pages := map[string]string{}
	if signedIn {
		if all, err := w.cfg.Builds.List(r.Context()); err == nil {
			for _, b := range all {
				if b.Kind == builds.KindPage {
					pages[b.ID] = b.Emoji
				}
			}
		}
	}
	for _, t := range screen.Tabs {
		v := tabView{ID: t.ID, Label: t.Label, Icon: tabIcons[t.ID], Href: "/" + t.ID}
		if t.Page != "" {
			v.Href, v.Icon = "/pages/"+t.Page, pages[t.Page]
			if v.Icon == "" {
				v.Icon = "◆"
			}
		}
		f.Tabs = append(f.Tabs, v)
	}
	f.Plain = r.URL.Query().Get("plain") == "1"
	if signedIn && !f.Plain && !noLook[f.Page] {
		if css, v := w.cfg.Builds.Look(r.Context()); css != "" {
			f.Look = v
		}
	}
}

// home sends / to the home screen the layout names (Today without one).
func (w *Web) home(rw http.ResponseWriter, r *http.Request) {
	to := "/today"
	if w.currentSession(r) != nil {
		if s, err := w.cfg.Builds.Screen(r.Context()); err == nil {
			if slug, ok := strings.CutPrefix(s.Home, tabs.PagePrefix); ok {
				to = "/pages/" + slug
			} else if s.Home != "" {
				to = "/" + s.Home
			}
		}
	}
	http.Redirect(rw, r, to, http.StatusSeeOther)
}

// lookCSS serves the look in use, checked again as it is served.
func (w *Web) lookCSS(rw http.ResponseWriter, r *http.Request, _ *session) {
	css, _ := w.cfg.Builds.Look(r.Context())
	if look.Check(css) != nil {
		css = ""
	}
	rw.Header().Set("Content-Type", "text/css; charset=utf-8")
	rw.Header().Set("Cache-Control", "no-store")
	_, _ = rw.Write([]byte(css)) // the status is sent; a browser that went away cannot be told more
}

type (
	pagesData struct {
		frame
		Pages []builds.Build
		Safe  bool
	}
	holderData struct {
		frame
		Build   builds.Build
		Safe    bool
		Sandbox string
	}
	buildsData struct {
		frame
		Builds []buildView
		Safe   bool
	}
	buildView struct {
		builds.Build
		Writers  string
		Versions []builds.Version // newest first
		// Keys are a connector's declared keys, each set or not: never the key, only its last four.
		Keys []connectors.KeyStatus
	}
)

func (w *Web) pagesPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	all, err := w.cfg.Builds.List(r.Context())
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	data := &pagesData{Safe: w.cfg.Builds.SafeMode(r.Context())}
	for _, b := range all {
		if b.Kind == builds.KindPage {
			data.Pages = append(data.Pages, b)
		}
	}
	w.render(rw, r, ss, "pages", data)
}

func (w *Web) holderPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	b, err := w.cfg.Builds.Page(r.Context(), r.PathValue("slug"))
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	data := &holderData{Build: b, Safe: w.cfg.Builds.SafeMode(r.Context()), Sandbox: pagecheck.IframeSandbox}
	data.Tab = "pages"
	if s, err := w.cfg.Builds.Screen(r.Context()); err == nil {
		for _, t := range s.Tabs {
			if t.Page == b.ID {
				data.Tab = t.ID
			}
		}
	}
	w.render(rw, r, ss, "holder", data)
}

// pageNote takes the owner to a note a page opened, only when that page may read it (mayRead): the holder
// follows a page's box:open to this route, never to the note itself, so a page that posts the message
// without the bridge opens nothing it was not given.
func (w *Web) pageNote(rw http.ResponseWriter, r *http.Request, _ *session) {
	ctx := r.Context()
	slug, name := r.PathValue("slug"), r.URL.Query().Get("name")
	b, err := w.cfg.Builds.Page(ctx, slug)
	if err == nil {
		_, err = w.mayRead(ctx, &sectionCall{slug: slug, build: b}, name)
	}
	if err != nil {
		w.backErr(rw, r, "/pages/"+url.PathEscape(slug), err)
		return
	}
	http.Redirect(rw, r, "/memory/note?name="+url.QueryEscape(name), http.StatusSeeOther)
}

func (w *Web) buildsPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	all, err := w.cfg.Builds.List(r.Context())
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	data := &buildsData{Safe: w.cfg.Builds.SafeMode(r.Context())}
	data.Tab = "settings"
	for _, b := range all {
		v := buildView{Build: b}
		who := map[string]bool{}
		var names []string
		for i := len(b.Versions) - 1; i >= 0; i-- {
			x := b.Versions[i]
			v.Versions = append(v.Versions, x)
			if !who[x.By.Who] {
				who[x.By.Who] = true
				names = append(names, x.By.Who)
			}
		}
		sort.Strings(names)
		v.Writers = strings.Join(names, ", ")
		if b.Kind == builds.KindConnector && w.cfg.Connectors != nil {
			v.Keys, _ = w.cfg.Connectors.Keys(r.Context(), b.ID) // a bundle that cannot be read shows no keys; its status says why
		}
		data.Builds = append(data.Builds, v)
	}
	w.render(rw, r, ss, "builds", data)
}

// buildAction is the owner's off, on, undo (to a version) or remove of one build.
func (w *Web) buildAction(rw http.ResponseWriter, r *http.Request, _ *session) {
	ctx := r.Context()
	id, verb := r.PathValue("id"), r.PathValue("verb")
	if err := w.cfg.State.Quiet(ctx); err != nil {
		w.backErr(rw, r, "/settings/builds", errs.Wrap("web.builds", quietKind(err), err, "The box is frozen or locked, so nothing changes; unfreeze it in Settings → Safety first."))
		return
	}
	var (
		b   builds.Build
		err error
		msg string
	)
	switch verb {
	case "off", "on":
		b, err = w.cfg.Builds.SetOn(ctx, ownerActor, id, verb == "on")
		msg = fmt.Sprintf("%s is %s.", b.Name, b.Status)
	case "undo":
		n, _ := strconv.Atoi(r.PostFormValue("version"))
		b, err = w.cfg.Builds.Undo(ctx, ownerActor, id, n)
		msg = fmt.Sprintf("%s is back at version %d.", b.Name, b.Version)
	case "key":
		var k connectors.KeyStatus
		if w.cfg.Connectors == nil {
			err = errs.E("web.builds", errs.NotFound, "This box runs no connectors.")
			break
		}
		k, err = w.cfg.Connectors.SetKey(ctx, ownerActor, strings.TrimPrefix(id, builds.KindConnector+":"), r.PostFormValue("name"), r.PostFormValue("key"))
		msg = fmt.Sprintf("The key %s is sealed in the vault (%s); it is never shown again.", k.Name, k.Last4)
	case "remove":
		var rm builds.Removed
		rm, err = w.cfg.Builds.Remove(ctx, ownerActor, id, gate.Asker{Owner: true, Via: "web"})
		msg = rm.Text
	default:
		err = errs.E("web.builds", errs.NotFound, "There is no action %q for a build.", pagecheck.Clip(verb))
	}
	if err != nil {
		w.backErr(rw, r, "/settings/builds", err)
		return
	}
	back(rw, r, "/settings/builds", msg)
}

// safeMode turns safe mode on (a form) or off: off in the web UI needs a passkey assertion made for it.
func (w *Web) safeMode(rw http.ResponseWriter, r *http.Request, ss *session) {
	ctx := r.Context()
	if !isJSON(r) {
		if r.PostFormValue("on") != "1" {
			w.backErr(rw, r, "/settings/builds", errs.E("web.safemode", errs.Forbidden, "Turning safe mode off needs your passkey."))
			return
		}
		if err := w.cfg.Builds.SetSafeMode(ctx, ownerActor, true); err != nil {
			w.backErr(rw, r, "/settings/builds", err)
			return
		}
		back(rw, r, "/settings/builds", "Safe mode is on: every page, look and layout is paused.")
		return
	}
	b, err := readBody(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if _, err := w.confirmed(r, ss, b, "safe-mode-off"); err != nil {
		w.fail(rw, r, err)
		return
	}
	if err := w.cfg.Builds.SetSafeMode(ctx, ownerActor, false); err != nil {
		w.fail(rw, r, err)
		return
	}
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "text": "Safe mode is off: pages, looks and the layout are back."})
}

// cardFact is one line of what a build's card shows.
type cardFact struct {
	Label, Text string
	Bold        bool // a map the sender named that none of its pages read before
	Pre         bool // shown whole, as code
}

// buildFacts are the lines a build's card shows beneath who sent it.
func (w *Web) buildFacts(r *http.Request, c gate.ApprovalCard) []cardFact {
	p, ok := c.Action.Payload.(map[string]any)
	if !ok {
		return nil
	}
	str := func(k string) string { s, _ := p[k].(string); return s }
	switch gate.OpOf(c.Action) {
	case builds.OpPage:
		slug := str("slug")
		var out []cardFact
		if c.Kind == "change-page" {
			out = append(out, cardFact{Label: "What changes", Text: str("changelog")})
		}
		out = append(out, cardFact{Label: "What it's for", Text: str("what")},
			cardFact{Label: "Where it keeps its notes", Text: "its own map moc-" + slug + ", notes under _content/pages/" + slug + "/"})
		reads, _ := p["read"].([]any)
		if len(reads) == 0 {
			out = append(out, cardFact{Label: "What else it may read", Text: "nothing else in your memory"})
		}
		known := map[string]bool{}
		if l, err := w.cfg.Builds.ListFor(r.Context(), c.ProposedBy.Conn); err == nil {
			for _, m := range l.Maps {
				known[m] = true
			}
		}
		for _, m := range reads {
			name, _ := m.(string)
			out = append(out, cardFact{Label: "What else it may read", Text: name, Bold: !known[name]})
		}
		size, _ := p["size"].(float64)
		uses, _ := p["uses"].([]any)
		if len(uses) == 0 {
			out = append(out, cardFact{Label: "Accounts it may use", Text: "none"})
		}
		for _, u := range uses {
			id, _ := u.(string)
			text := id
			if b, err := w.cfg.Builds.Connector(r.Context(), id); err == nil {
				text = strings.TrimSpace(b.Emoji+" "+b.Name) + " (the connector " + id + ")"
			}
			out = append(out, cardFact{Label: "Accounts it may use", Text: text})
		}
		out = append(out, cardFact{Text: "It can't reach the internet."},
			cardFact{Label: "Size and fingerprint", Text: fmt.Sprintf("%.1f KB · SHA-256 %s", size/1024, say.Hash(str("sha256")))})
		return out
	case builds.OpLook:
		return []cardFact{{Label: "What it changes", Text: str("what")}, {Label: "The CSS, all of it", Text: str("source"), Pre: true},
			{Text: "It never applies to cards, passkey screens or Settings; ?plain=1 shows any screen without it."}}
	case builds.OpLayout:
		return []cardFact{{Label: "What it changes", Text: str("what")}, {Label: "The arrangement", Text: str("source"), Pre: true},
			{Text: "Settings always stays."}}
	case connectors.OpCall:
		// Every argument whole, one row per key: what the card's hash binds and approval runs.
		var out []cardFact
		for _, a := range connectors.CallArgs(c.Action) {
			out = append(out, cardFact{Label: a.Key, Text: a.Value, Pre: true})
		}
		if len(out) == 0 {
			out = append(out, cardFact{Text: "It sends no arguments."})
		}
		return out
	case builds.OpConnector:
		// The registry wrote the facts when it made the card, and the card's hash binds them.
		facts, _ := p["facts"].([]any)
		out := make([]cardFact, 0, len(facts))
		for _, f := range facts {
			line, _ := f.(string)
			label, text, ok := strings.Cut(line, ": ")
			if !ok {
				label, text = "", line
			}
			out = append(out, cardFact{Label: label, Text: text})
		}
		return out
	}
	return nil
}
