package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	pagecheck "github.com/boxmem/box/internal/page"
	"github.com/boxmem/box/internal/tabs"
	"github.com/boxmem/box/internal/todo"
)

// The pages the owner's assistants built are served here, boxed (docs/PAGES.md, "The walls" and "The
// bridge's routes"): /s/<slug>/ to the owner's signed-in browser only, and the bridge's routes under
// /api/sections/<slug>/, authenticated by the page's own token alone.

// maxSectionBody is the largest body a page may post.
const maxSectionBody = 64 << 10

// sectionTokens are the pages' tokens: one per page and version served by this process, kept hashed.
// A new version gets a new token, so the old one stops working at once.
type sectionTokens struct {
	mu     sync.Mutex
	bySlug map[string]sectionToken
	byHash map[string]sectionToken
	calls  map[string]*bucket // per page: the bridge's rate limit
}

type sectionToken struct {
	slug    string
	version int
	hash    string
}

func hashToken(t string) string {
	s := sha256.Sum256([]byte(t))
	return hex.EncodeToString(s[:])
}

// token is the token of a page's version, made anew when the version changes; the token itself is
// returned only here, to be put in the page's bridge.
func (st *sectionTokens) token(slug string, version int) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", errs.Wrap("web.token", errs.Other, err, "")
	}
	tok := base64.RawURLEncoding.EncodeToString(raw[:])
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.bySlug == nil {
		st.bySlug, st.byHash = map[string]sectionToken{}, map[string]sectionToken{}
	}
	if old, ok := st.bySlug[slug]; ok {
		delete(st.byHash, old.hash)
	}
	t := sectionToken{slug: slug, version: version, hash: hashToken(tok)}
	st.bySlug[slug], st.byHash[t.hash] = t, t
	return tok, nil
}

func (st *sectionTokens) lookup(tok string) (sectionToken, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	t, ok := st.byHash[hashToken(tok)]
	return t, ok
}

// bucket is a token bucket: rate calls a second, burst at once.
type bucket struct {
	tokens float64
	at     time.Time
}

const (
	sectionRate  = 10.0
	sectionBurst = 40.0
)

func (st *sectionTokens) allow(slug string, now time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.calls == nil {
		st.calls = map[string]*bucket{}
	}
	b, ok := st.calls[slug]
	if !ok {
		b = &bucket{tokens: sectionBurst, at: now}
		st.calls[slug] = b
	}
	b.tokens += now.Sub(b.at).Seconds() * sectionRate
	if b.tokens > sectionBurst {
		b.tokens = sectionBurst
	}
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// servePage serves a page's current version with its bridge, to the owner's signed-in browser only.
func (w *Web) servePage(rw http.ResponseWriter, r *http.Request) {
	plain := func(code int, msg string) {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rw.Header().Set("Cache-Control", "no-store")
		rw.WriteHeader(code)
		_, _ = io.WriteString(rw, msg+"\n")
	}
	if w.currentSession(r) == nil {
		plain(http.StatusUnauthorized, "Only the owner's signed-in browser can open this page.")
		return
	}
	// Opened as a tab of its own (a link, "open frame in new tab"), a page could send itself anywhere:
	// only the holder page's frame-src keeps its navigations on the box, so it is shown in the holder.
	if r.Header.Get("Sec-Fetch-Dest") == "document" {
		http.Redirect(rw, r, "/pages/"+url.PathEscape(r.PathValue("slug")), http.StatusSeeOther)
		return
	}
	ctx := r.Context()
	b, err := w.cfg.Builds.Page(ctx, r.PathValue("slug"))
	if err != nil {
		plain(status(err), sentence(err))
		return
	}
	if w.cfg.Builds.SafeMode(ctx) {
		plain(http.StatusLocked, "Safe mode is on: the owner's pages are paused until it is turned off in Settings → Things I built.")
		return
	}
	if !b.Live() {
		plain(http.StatusNotFound, "This page is off; the owner switches it on in Settings → Things I built.")
		return
	}
	src, err := w.cfg.Builds.Source(b, b.Version)
	if err != nil {
		plain(status(err), sentence(err))
		return
	}
	origin := w.origin(r)
	tok, err := w.sections.token(b.ID, b.Version)
	if err != nil {
		plain(http.StatusInternalServerError, sentence(err))
		return
	}
	out, err := pagecheck.Inject(src, pagecheck.Bridge{Box: origin, Slug: b.ID, Version: b.Version, Token: tok})
	if err != nil {
		plain(status(err), sentence(err))
		return
	}
	h, err := pagecheck.Headers(origin)
	if err != nil {
		plain(status(err), sentence(err))
		return
	}
	rw.Header().Del("X-Frame-Options") // the box's own page frames it; frame-ancestors 'self' says who may
	for k, v := range h {
		rw.Header()[k] = v
	}
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(out) // the status is sent; a browser that went away cannot be told more
}

// sectionCORS answers every bridge call for the page's opaque origin ("null"), never with credentials.
func sectionCORS(rw http.ResponseWriter) {
	h := rw.Header()
	h.Set("Access-Control-Allow-Origin", "null")
	h.Set("Vary", "Origin")
	h.Set("Cache-Control", "no-store")
}

func (w *Web) sectionPreflight(rw http.ResponseWriter, r *http.Request) {
	sectionCORS(rw)
	rw.Header().Set("Access-Control-Allow-Methods", "GET, POST")
	rw.Header().Set("Access-Control-Allow-Headers", "x-section-token, content-type")
	rw.Header().Set("Access-Control-Max-Age", "600")
	rw.WriteHeader(http.StatusNoContent)
}

func sectionJSON(rw http.ResponseWriter, code int, v any) {
	sectionCORS(rw)
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(code)
	enc := json.NewEncoder(rw)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v) // the status is sent; a page that went away cannot be told more
}

func sectionError(rw http.ResponseWriter, code int, msg string) {
	sectionJSON(rw, code, map[string]string{"error": msg})
}

// sectionFail answers a box error with its status and sentence.
func (w *Web) sectionFail(rw http.ResponseWriter, r *http.Request, err error) {
	code := status(err)
	if code == http.StatusInternalServerError {
		w.log.Error("web: a page's call", "path", r.URL.Path, "err", err)
	}
	sectionError(rw, code, sentence(err))
}

// sectionCall is one authenticated call of a page.
type sectionCall struct {
	slug    string
	version int
	build   builds.Build
	body    []byte
}

// sectionAPI authenticates a page's call by its token alone (cookies are ignored), applies safe mode
// and the rate limit, and routes it.
func (w *Web) sectionAPI(rw http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	slug, route := r.PathValue("slug"), r.PathValue("rest")
	tok, ok := w.sections.lookup(r.Header.Get("x-section-token"))
	if !ok || tok.slug != slug {
		sectionError(rw, http.StatusUnauthorized, "This page's key is no longer valid: reload the page (it may have been updated or removed).")
		return
	}
	b, err := w.cfg.Builds.Page(ctx, slug)
	if err != nil || !b.Live() || b.Version != tok.version {
		sectionError(rw, http.StatusUnauthorized, "This page's key is no longer valid: reload the page (it may have been updated or removed).")
		return
	}
	if route != "error" && w.cfg.Builds.SafeMode(ctx) {
		sectionError(rw, http.StatusLocked, "Safe mode is on: the owner's pages are paused.")
		return
	}
	if !w.sections.allow(slug, time.Now()) {
		sectionError(rw, http.StatusTooManyRequests, "This page asked too often: wait a moment and try again.")
		return
	}
	c := &sectionCall{slug: slug, version: tok.version, build: b}
	if r.Method == http.MethodPost {
		data, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxSectionBody))
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			sectionError(rw, http.StatusRequestEntityTooLarge, "The page sent more than 64 KB at once.")
			return
		}
		if err != nil {
			sectionError(rw, http.StatusBadRequest, "The page's request could not be read.")
			return
		}
		c.body = data
	}
	h, ok := sectionRoutes[r.Method+" "+route]
	if !ok {
		sectionError(rw, http.StatusNotFound, "A page has no call "+strconv.Quote(pagecheck.Clip(route))+".")
		return
	}
	if err := w.cfg.State.Quiet(ctx); err != nil && route != "error" {
		sectionError(rw, http.StatusLocked, "The box is frozen or locked, so the page can't use it now.")
		return
	}
	v, err := h(w, ctx, r, c)
	if err != nil {
		w.sectionFail(rw, r, err)
		return
	}
	sectionJSON(rw, http.StatusOK, v)
}

type sectionHandler func(w *Web, ctx context.Context, r *http.Request, c *sectionCall) (any, error)

var sectionRoutes map[string]sectionHandler

func init() {
	sectionRoutes = map[string]sectionHandler{
		"GET data":             (*Web).sectionData,
		"POST data":            (*Web).sectionSetData,
		"GET memory/map":       (*Web).sectionMap,
		"GET memory/note":      (*Web).sectionNote,
		"GET memory/search":    (*Web).sectionSearch,
		"POST memory/remember": (*Web).sectionRemember,
		"POST memory/edit":     (*Web).sectionEdit,
		"POST memory/forget":   (*Web).sectionForget,
		"GET todos":            (*Web).sectionTodos,
		"POST todos/add":       (*Web).sectionTodoAdd,
		"POST todos/done":      (*Web).sectionTodoDone,
		"GET cards":            (*Web).sectionCards,
		"GET ui/tabs":          (*Web).sectionTabs,
		"POST ui/open":         (*Web).sectionOpen,
		"GET diary":            (*Web).sectionDiary,
		"POST connector":       (*Web).sectionConnector,
		"POST ask":             (*Web).sectionAsk,
		"POST heartbeat":       (*Web).sectionHeartbeat,
		"POST error":           (*Web).sectionErrorReport,
	}
}

func bad(format string, a ...any) error { return errs.E("web.section", errs.Invalid, format, a...) }

func forbidden(format string, a ...any) error {
	return errs.E("web.section", errs.Forbidden, format, a...)
}

// decodeBody reads a page's POST body: JSON, unknown keys refused.
func decodeBody(c *sectionCall, v any) error {
	dec := json.NewDecoder(bytes.NewReader(c.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bad("The page sent a body the box can't read: %s.", pagecheck.Clip(err.Error()))
	}
	if dec.More() {
		return bad("The page sent more than one JSON value.")
	}
	return nil
}

func (w *Web) sectionData(ctx context.Context, r *http.Request, c *sectionCall) (any, error) {
	store, err := w.cfg.Builds.Data(ctx, c.slug)
	if err != nil {
		return nil, err
	}
	if r.URL.Query().Has("key") {
		k := r.URL.Query().Get("key")
		v, ok := store[k]
		if !ok {
			v = json.RawMessage("null")
		}
		return map[string]any{"key": k, "value": v}, nil
	}
	return map[string]any{"data": store}, nil
}

func (w *Web) sectionSetData(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	var in struct {
		Key   string          `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	if err := decodeBody(c, &in); err != nil {
		return nil, err
	}
	if len(in.Value) == 0 {
		in.Value = json.RawMessage("null")
	}
	if err := w.cfg.Builds.SetData(ctx, c.slug, in.Key, in.Value); err != nil {
		return nil, err
	}
	return map[string]bool{"ok": true}, nil
}

// allowedMaps are the maps a page sees: its own and the ones its card named.
func allowedMaps(b builds.Build) []string {
	return append([]string{"moc-" + b.ID}, b.Read...)
}

type mapView struct {
	Name  string     `json:"name"`
	Own   bool       `json:"own"`
	Notes []noteHook `json:"notes"`
}

type noteHook struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// readMap is one allowed map's notes (memory.MapNotes: a letter index followed); a map not made yet is empty.
func (w *Web) readMap(ctx context.Context, name string) ([]noteHook, error) {
	entries, err := w.cfg.Memory.MapNotes(ctx, name)
	if err != nil {
		return nil, err
	}
	out := []noteHook{}
	for _, e := range entries {
		out = append(out, noteHook{Name: e.Target, Description: e.Hook})
	}
	return out, nil
}

func (w *Web) sectionMap(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	var maps []mapView
	for i, name := range allowedMaps(c.build) {
		notes, err := w.readMap(ctx, name)
		if err != nil {
			return nil, err
		}
		maps = append(maps, mapView{Name: name, Own: i == 0, Notes: notes})
	}
	return map[string]any{"maps": maps}, nil
}

// mayRead says whether a page may read the note or map id: one of its maps, or a note one of them lists
// (with its hook). Anything else is one refusal, whether it exists or not, so a page learns nothing of
// the notes it was not given.
func (w *Web) mayRead(ctx context.Context, c *sectionCall, id string) (string, error) {
	for _, name := range allowedMaps(c.build) {
		if id == name {
			return "", nil
		}
		notes, err := w.readMap(ctx, name)
		if err != nil {
			return "", err
		}
		for _, n := range notes {
			if n.Name == id {
				return n.Description, nil
			}
		}
	}
	return "", forbidden("%s is not in this page's maps.", pagecheck.Clip(id))
}

// sectionNote reads a note only when it is one of the page's maps or listed in one.
func (w *Web) sectionNote(ctx context.Context, r *http.Request, c *sectionCall) (any, error) {
	id := strings.TrimSpace(r.URL.Query().Get("id"))
	if id == "" {
		return nil, bad("Give the note's name.")
	}
	hook, err := w.mayRead(ctx, c, id)
	if err != nil {
		return nil, err
	}
	n, err := w.cfg.Memory.Read(ctx, id)
	if err != nil {
		return nil, err
	}
	text := n.Text
	if cd, err := card.Parse(n.Path, []byte(n.Text)); err == nil {
		text = string(cd.Body) // the note without its frontmatter
	}
	return map[string]string{"name": n.Name, "title": n.Title, "description": hook, "text": text}, nil
}

func (w *Web) sectionSearch(ctx context.Context, r *http.Request, c *sectionCall) (any, error) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		return nil, bad("Give words to search for.")
	}
	type result struct {
		Name    string `json:"name"`
		Map     string `json:"map"`
		Snippet string `json:"snippet"`
	}
	out := []result{}
	seen, per := map[string]bool{}, map[string]int{}
	// add keeps, from one search, the hits mapOf places (ten at most of a kind per map), each once.
	add := func(in memory.SearchInput, mapOf func(memory.Hit) string) error {
		res, err := w.cfg.Memory.Search(ctx, in)
		if err != nil {
			return err
		}
		for _, h := range res.Hits {
			if h.Name == "" && h.Kind != memory.KindInbox { // a note or document outside the memory's notes: named by its path, as maps list it
				h.Name = strings.TrimSuffix(h.Path, ".md")
			}
			m := mapOf(h)
			n := m + "\x00" + h.Kind // a map's notes, and the page's own lines, ten each
			if key := h.Path + "\x00" + h.Snippet; m != "" && !seen[key] && per[n] < 10 {
				seen[key], per[n] = true, per[n]+1
				out = append(out, result{Name: h.Name, Map: m, Snippet: h.Snippet})
			}
		}
		return nil
	}
	// What the page may read goes by what its maps list (mayRead); the index's map filter goes by the map
	// a note names. So each map's search keeps what that map lists, and one search of the whole memory
	// finds what a map lists that names another.
	listedIn := map[string]string{}
	maps := allowedMaps(c.build)
	for _, m := range maps {
		notes, err := w.readMap(ctx, m)
		if err != nil {
			return nil, err
		}
		listedIn[m] = m
		for _, n := range notes {
			if listedIn[n.Name] == "" {
				listedIn[n.Name] = m
			}
		}
	}
	listed := func(h memory.Hit) string { return listedIn[h.Name] }
	for _, m := range maps {
		if err := add(memory.SearchInput{Words: q, Map: m, Limit: 50}, listed); err != nil {
			return nil, err
		}
	}
	if err := add(memory.SearchInput{Words: q, Limit: 100}, listed); err != nil {
		return nil, err
	}
	// What the page itself remembered, still in the inbox.
	own := "moc-" + c.slug
	if err := add(memory.SearchInput{Words: q, Kind: "inbox", Who: builds.PageActor(c.slug).Who, Limit: 10}, func(memory.Hit) string { return own }); err != nil {
		return nil, err
	}
	return map[string]any{"results": out}, nil
}

// textWrite reads a page's {text} body for a write.
func textWrite(c *sectionCall) (string, error) {
	var in struct {
		Text string `json:"text"`
	}
	err := decodeBody(c, &in)
	return in.Text, err
}

// held is the gate's answer to a page's write (docs/GATE.md, "Ask me on every surface"): no card when
// it may run now; at Ask me, the card for exactly this, waiting for the owner, with the page's answer
// saying so; a refusal at Never or past the card limits.
func (w *Web) held(ctx context.Context, c *sectionCall, a gate.Action) (map[string]string, error) {
	out, err := w.gate.Hold(ctx, a, pageAsker(c.slug))
	switch {
	case err != nil:
		return nil, err
	case out.Decision.Verdict == gate.Refuse:
		return nil, errs.E("web.section", errs.Refused, "%s", out.Text)
	case out.Decision.Verdict == gate.Card:
		return map[string]string{"card": out.Card.ID, "text": "Waiting for the owner: \"Change my box\" is set to Ask me, so a card (" + out.Card.Title + ") waits on Today; nothing changes until they approve it."}, nil
	}
	return nil, nil
}

func (w *Web) sectionRemember(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	text, err := textWrite(c)
	if err != nil {
		return nil, err
	}
	// The refusals come before the gate, so a card never holds what remember refuses to keep.
	if err := w.cfg.Memory.CheckRememberAs(builds.PageActor(c.slug), memory.RememberInput{Text: text}); err != nil {
		return nil, err
	}
	if waiting, err := w.held(ctx, c, memory.RememberAction(text)); err != nil || waiting != nil {
		return waiting, err
	}
	res, err := w.cfg.Memory.Remember(ctx, builds.PageActor(c.slug), memory.RememberInput{Text: text})
	if err != nil {
		return nil, err
	}
	return map[string]string{"id": res.ID, "text": res.Text}, nil
}

// sectionEdit replaces the text of a note its own map lists and its own folder holds (never its
// frontmatter, never the owner's notes: docs/PAGES.md), as the page, with undo like any edit; the note is
// then marked as written by others (memory.Edit), so it is fenced when served.
func (w *Web) sectionEdit(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	var in struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	if err := decodeBody(c, &in); err != nil {
		return nil, err
	}
	own, err := w.readMap(ctx, "moc-"+c.slug)
	if err != nil {
		return nil, err
	}
	listed := false
	for _, n := range own {
		listed = listed || n.Name == in.ID
	}
	if !listed {
		return nil, forbidden("A page edits only the notes its own map moc-%s lists.", c.slug)
	}
	e, err := w.cfg.Memory.ReadForEdit(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(e.Path, builds.NotesDir(c.slug)+"/") {
		return nil, forbidden("A page edits only its own notes, under _content/pages/%s/; %s is the owner's, edited under Memory.", c.slug, pagecheck.Clip(in.ID))
	}
	cd, err := card.Parse(e.Path, []byte(e.Text))
	if err != nil || !strings.HasSuffix(e.Text, string(cd.Body)) {
		return nil, forbidden("%s can't be edited from a page; the owner edits it under Memory.", pagecheck.Clip(in.ID))
	}
	head := e.Text[:len(e.Text)-len(cd.Body)]
	edit := memory.EditInput{Name: in.ID, Text: head + in.Text, Base: e.Base}
	a, err := w.cfg.Memory.EditAction(ctx, builds.PageActor(c.slug), edit)
	if err != nil {
		return nil, err
	}
	if waiting, err := w.held(ctx, c, a); err != nil || waiting != nil {
		return waiting, err
	}
	if _, err := w.cfg.Memory.Edit(ctx, builds.PageActor(c.slug), edit); err != nil {
		return nil, err
	}
	return map[string]bool{"ok": true}, nil
}

// sectionForget never removes anything itself: the lines this page wrote that match go on a card the
// owner approves with their passkey; a page can't approve it.
func (w *Web) sectionForget(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	var in struct {
		Words string `json:"words"`
	}
	if err := decodeBody(c, &in); err != nil {
		return nil, err
	}
	matches, err := w.cfg.Memory.ForgetPreview(ctx, in.Words)
	if err != nil {
		return nil, err
	}
	who := builds.PageActor(c.slug)
	var own []memory.Match
	days := map[string]*inbox.Day{}
	for _, m := range matches {
		if !strings.HasPrefix(m.Path, layout.InboxDir+"/") || m.ID == "" {
			continue
		}
		d, ok := days[m.Path]
		if !ok {
			data, err := layout.ReadFile(w.cfg.Box.Root, m.Path)
			if err != nil {
				return nil, errs.Wrap("web.section", errs.Other, err, "")
			}
			if d, err = inbox.ParseDay(data); err != nil {
				continue
			}
			days[m.Path] = d
		}
		for _, e := range d.Entries {
			if e.Line != nil && e.Line.ID == m.ID && e.Line.Who == who.Who {
				own = append(own, m)
			}
		}
	}
	if len(own) == 0 {
		return map[string]any{"removed": 0, "text": "Nothing this page wrote matches those words."}, nil
	}
	out, err := w.gate.Propose(ctx, memory.ForgetAction(in.Words, own), gate.Asker{Connection: who.Who, Via: "page", Conn: who.Conn})
	if err != nil {
		return nil, err
	}
	if out.Card == nil {
		return nil, errs.E("web.section", errs.Refused, "%s", out.Text)
	}
	return map[string]any{"removed": 0, "card": out.Card.ID, "text": out.Text}, nil
}

// ownTodos is the page's own to-do list (builds.TodoList), the one list its bridge sees; none yet is empty.
func (w *Web) ownTodos(ctx context.Context, c *sectionCall) ([]todo.List, error) {
	lists, err := w.cfg.Todos.Lists(ctx)
	if err != nil {
		return nil, err
	}
	return todo.Select(lists, builds.TodoList(c.slug), true), nil
}

func (w *Web) sectionTodos(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	lists, err := w.ownTodos(ctx, c)
	if err != nil {
		return nil, err
	}
	return map[string]any{"lists": lists}, nil
}

func (w *Web) sectionTodoAdd(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	text, err := textWrite(c)
	if err != nil {
		return nil, err
	}
	a, err := todo.AddAction(builds.TodoList(c.slug), text)
	if err != nil {
		return nil, err
	}
	if waiting, err := w.held(ctx, c, a); err != nil || waiting != nil {
		return waiting, err
	}
	it, err := w.cfg.Todos.Add(ctx, builds.PageActor(c.slug), builds.TodoList(c.slug), text)
	if err != nil {
		return nil, err
	}
	return map[string]string{"id": it.ID, "text": it.Text}, nil
}

func (w *Web) sectionTodoDone(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	var in struct {
		ID string `json:"id"`
	}
	if err := decodeBody(c, &in); err != nil {
		return nil, err
	}
	own, err := w.ownTodos(ctx, c)
	if err != nil {
		return nil, err
	}
	it, err := todo.FindIn(own, in.ID)
	if err != nil {
		return nil, errs.E("web.section", errs.NotFound, "There is no to-do %q on this page's own list %s.", pagecheck.Clip(in.ID), builds.TodoList(c.slug))
	}
	if !it.Done {
		if waiting, err := w.held(ctx, c, todo.DoneAction(it)); err != nil || waiting != nil {
			return waiting, err
		}
	}
	if _, err := w.cfg.Todos.Done(ctx, builds.PageActor(c.slug), it.ID); err != nil {
		return nil, err
	}
	return map[string]bool{"ok": true}, nil
}

// sectionCards lists the cards this page caused.
func (w *Web) sectionCards(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	all, err := w.gate.Waiting(ctx)
	if err != nil {
		return nil, err
	}
	type cardOut struct {
		ID     string `json:"id"`
		Kind   string `json:"kind"`
		Title  string `json:"title"`
		Status string `json:"status"`
	}
	out := []cardOut{}
	for _, cd := range all {
		if cd.ProposedBy.Conn == builds.PageActor(c.slug).Conn {
			out = append(out, cardOut{cd.ID, cd.Kind, cd.Title, cd.Status})
		}
	}
	return map[string]any{"cards": out}, nil
}

func (w *Web) sectionTabs(ctx context.Context, _ *http.Request, _ *sectionCall) (any, error) {
	return w.cfg.Builds.Screen(ctx)
}

// sectionOpen answers the UI path a page asks to show: a tab, an installed page or a note.
func (w *Web) sectionOpen(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	var in struct {
		Target string `json:"target"`
	}
	if err := decodeBody(c, &in); err != nil {
		return nil, err
	}
	to, err := w.uiPath(ctx, c, in.Target)
	if err != nil {
		return nil, err
	}
	return map[string]string{"url": to}, nil
}

// uiPath is the path of the owner's UI for a tab id, page:<slug> or note:<name>; a note only when the
// page may read it (mayRead).
func (w *Web) uiPath(ctx context.Context, c *sectionCall, target string) (string, error) {
	if slug, ok := strings.CutPrefix(target, tabs.PagePrefix); ok {
		if b, err := w.cfg.Builds.Page(ctx, slug); err == nil && b.Live() {
			return "/pages/" + slug, nil
		}
		return "", errs.E("web.section", errs.NotFound, "There is no page %s.", pagecheck.Clip(slug))
	}
	if name, ok := strings.CutPrefix(target, "note:"); ok {
		if _, err := w.mayRead(ctx, c, name); err != nil {
			return "", err
		}
		if _, err := w.cfg.Memory.Read(ctx, name); err != nil {
			return "", err
		}
		return "/pages/" + c.slug + "/note?name=" + url.QueryEscape(name), nil // pageNote checks again
	}
	for _, t := range tabs.Builtin {
		if t.ID == target {
			return "/" + t.ID, nil
		}
	}
	return "", bad("%s is not a tab, page:<name> or note:<name>.", pagecheck.Clip(target))
}

func (w *Web) sectionDiary(ctx context.Context, r *http.Request, c *sectionCall) (any, error) {
	n := 10
	if s := r.URL.Query().Get("n"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > 50 {
			return nil, bad("n is a number from 1 to 50.")
		}
		n = v
	}
	who := builds.PageActor(c.slug)
	es, err := w.cfg.Box.Diary(ctx, n, func(e diary.Entry) bool { return e.Conn == who.Conn })
	if err != nil {
		return nil, err
	}
	type entry struct {
		Time   string `json:"time"`
		Action string `json:"action"`
		Reason string `json:"reason"`
	}
	out := []entry{}
	for _, e := range es {
		out = append(out, entry{e.Time, e.Summary, e.Reason})
	}
	return map[string]any{"entries": out}, nil
}

// sectionConnector runs a tool of a connector the page's card named in uses, as the page: a write
// always waits on the owner's card (a page is not the owner). The value is the connector's data.
func (w *Web) sectionConnector(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	var in struct {
		ID   string          `json:"id"`
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}
	if err := decodeBody(c, &in); err != nil {
		return nil, err
	}
	if !slices.Contains(c.build.Uses, in.ID) || w.cfg.Connectors == nil {
		return nil, forbidden("This page doesn't use the connector %q: its card didn't name it.", pagecheck.Clip(in.ID))
	}
	ans, err := w.cfg.Connectors.Call(ctx, connectors.Caller{Actor: builds.PageActor(c.slug), Asker: pageAsker(c.slug)}, in.ID, in.Tool, in.Args)
	if err != nil {
		return nil, err
	}
	if ans.Card != "" {
		return map[string]any{"result": nil, "card": ans.Card, "text": ans.Text}, nil
	}
	return map[string]any{"result": ans.Value}, nil
}

func (w *Web) sectionAsk(context.Context, *http.Request, *sectionCall) (any, error) {
	return nil, forbidden("Asking the box's brain from a page isn't set up on this box.")
}

// firstLoad reads a page's heartbeat or error body, which must name the version its token is for.
func firstLoad[T any](c *sectionCall, in *T, version func(*T) int) error {
	if err := decodeBody(c, in); err != nil {
		return err
	}
	if v := version(in); v != c.version {
		return bad("This page is version %d, not %d.", c.version, v)
	}
	return nil
}

type heartbeatIn struct {
	Version int `json:"version"`
}

type errorIn struct {
	Version int    `json:"version"`
	Message string `json:"message"`
	Where   string `json:"where"`
}

func (w *Web) sectionHeartbeat(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	var in heartbeatIn
	if err := firstLoad(c, &in, func(i *heartbeatIn) int { return i.Version }); err != nil {
		return nil, err
	}
	st, err := w.cfg.Builds.Heartbeat(ctx, c.slug, in.Version)
	return map[string]string{"status": st}, err
}

func (w *Web) sectionErrorReport(ctx context.Context, _ *http.Request, c *sectionCall) (any, error) {
	var in errorIn
	if err := firstLoad(c, &in, func(i *errorIn) int { return i.Version }); err != nil {
		return nil, err
	}
	st, err := w.cfg.Builds.Failed(ctx, c.slug, in.Version, strings.TrimSpace(in.Message+" ("+in.Where+")"))
	return map[string]string{"status": st}, err
}

// pageAsker is a page as the gate sees it: not the owner, named by its slug.
func pageAsker(slug string) gate.Asker {
	a := builds.PageActor(slug)
	return gate.Asker{Connection: a.Who, Via: a.Via, Host: a.Host, Conn: a.Conn}
}
