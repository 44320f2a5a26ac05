// Package web owns the owner's web UI at / of box serve: passkey sign-in and sessions, the tabs (Today, To-do,
// Memory, Diary, Chat, Settings), approvals and undo. It decides nothing itself: gate, memory and keys do.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/httpjson"
	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/routine"
	"github.com/boxmem/box/internal/state"
	"github.com/boxmem/box/internal/todo"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Routes documents what Handler serves; mount it at "/" (the more specific /mcp and /healthz stay the
// server's). Pages are GET; every POST needs a session and its CSRF token, except the sign-in and setup
// ceremonies, which need a same-origin request.
const Routes = `GET  /                        → the home screen (/today, or the layout's home)
GET  /today /todo /memory /memory/note?name= /memory/edit?name= /diary /chat /settings   the tabs (signed in)
GET  /signin /setup?code=    sign in with a passkey; first passkey from a one-time setup link
GET  /static/…               CSS, JS, icon (embedded)
GET  /api/search?q=          search as you type (JSON)
POST /auth/register/begin /auth/register/finish   make a passkey (setup code, or signed in with a passkey-add assertion)
POST /auth/login/begin /auth/login/finish         sign in (discoverable passkey, user verification)
POST /auth/confirm/begin     a passkey challenge bound to a card and its action hash, to erase, to add or remove a passkey, to unfreeze, or to let a switch do more
POST /cards/{id}/approve     approve with that assertion (JSON)
POST /cards/{id}/decline     No, or Change it with a note
POST /undo /undo/since       undo the last change or one entry; undo what one connection wrote since a time
POST /memory/remember /memory/edit /todo/add /todo/done /chat
POST /chat/stream            one chat turn as server-sent events (text, tool, restart, note, done)
POST /settings/brain /settings/brain/budget /settings/brain/off   set (key checked first), budget, off
POST /settings/routines /settings/routines/starter   add a routine; add a starter (off)
POST /settings/routines/{name}/remove /switch /run   remove; on or off; run now (the report on Today)
POST /settings/switch /settings/keys /settings/keys/{id}/revoke /settings/freeze /settings/erase   (a switch set to do more, and unfreezing, carry a passkey assertion made for them)
POST /settings/passkeys/{id}/remove   with a passkey-remove assertion bound to that passkey (JSON)
POST /settings/connections/{id}/disconnect /signout /signout/all
GET  /settings/import         Bring your memories: upload, dry run, import with its Undo; exports
POST /settings/import/upload  the file (multipart: csrf, kind, file; streamed to a temp folder, size-limited)
POST /settings/import/run /settings/import/cancel   import the waiting upload as one change; drop it
POST /settings/export         download the memory: kind=markdown (zip), server-memory (JSONL), json
GET  /mcp/oauth/consent?request=   the OAuth consent page (no sign-in: the passkey approves)
POST /mcp/oauth/consent/begin /finish /deny   a passkey challenge bound to the request and its checkboxes; approve; refuse`

// Config is what the web UI is built on: the process's services, from the composition root.
type Config struct {
	Box    *box.Box       // the one box handle: the diary and undo
	State  *state.Store   // the frozen flag, and the tables of passkeys and sessions
	Keys   *keys.Store    // connections
	Todos  *todo.Store    // to-do lists
	Gate   *gate.Gate     // the one gate of the process, shared with MCP and the OAuth server
	Memory *memory.Memory // the memory
	Brain  *brain.Brain   // the brain: the chat, Settings → Brain
	// Routines are Settings → Routines and the reports on Today; nil leaves both out.
	Routines *routine.Service
	// Jobs is the process's job runner: Today says when the waiting lines will be filed; nil says nothing.
	Jobs *jobs.Runner
	// Erase erases the box (memory, files, history, connections); the web UI checks the phrase and the
	// passkey first.
	Erase func(ctx context.Context, who box.Actor) (memory.EraseResult, error)
	// Backups names the box's backup remotes, which an erase pushes its fresh start to; nil: none.
	Backups func(ctx context.Context) ([]string, error)
	// Freeze freezes or unfreezes the box with its diary line (the composition root's, as box freeze's);
	// unfreezing needs the owner's passkey (by).
	Freeze func(ctx context.Context, by gate.By, on bool) (box.Result, error)
	Now    func() time.Time // the process's clock
	Logger *slog.Logger     // nil: discard
	// Grants is the OAuth state: with it the box serves the consent page and lists OAuth connections.
	Grants *grants.Store
	// Issuer is the box's public address (the OAuth issuer) for a request; nil: the request's own origin.
	Issuer func(r *http.Request) string
	// Secure marks cookies Secure even on plain HTTP (behind a TLS-terminating proxy).
	Secure bool
	// OwnerName is the name the owner's passkey and session cookie live on for a box reached on this
	// machine (box.localhost, a name of its own, so a server on another port of localhost never gets the
	// cookie); "": localhost. A sign-in or setup page reached by a loopback number, or by localhost
	// when the name is another, links to it (docs/OAUTH.md).
	OwnerName string
	// UploadDir is where an uploaded import waits between its dry run and its import, outside the box
	// ("": the system's temp folder); New sweeps it of what a process that died left there. MaxUpload
	// bounds one upload (0: DefaultMaxUpload).
	UploadDir string
	MaxUpload int64
	// Export writes the memory as kind (markdown as a zip, server-memory, json) to w, for the export
	// buttons; name is the download's file name (the composition root binds exports.Stream to the box).
	Export func(ctx context.Context, kind, name string, w io.Writer) error
	// Builds is the registry of pages, looks and the layout: the Pages tab, /s/<slug>/ and its bridge,
	// Settings → Things I built.
	Builds *builds.Builds
	// Connectors run the installed connectors: a page's box.connector, and the keys the owner pastes in
	// Settings → Things I built; nil: no page may call one.
	Connectors *connectors.Service
}

// Web is the owner's web UI of one box.
type Web struct {
	cfg    Config
	auth   *authStore
	gate   *gate.Gate
	pages  map[string]*template.Template
	cookie string
	now    func() time.Time
	log    *slog.Logger
	// uploads are the files uploaded to import, waiting for the owner after their dry run.
	uploads uploads
	// sections are the pages' tokens and rate limits.
	sections sectionTokens
}

// New builds the web UI over the composed services and parses its templates.
func New(cfg Config) (*Web, error) {
	if cfg.Box == nil || cfg.State == nil || cfg.Keys == nil || cfg.Gate == nil || cfg.Memory == nil || cfg.Todos == nil || cfg.Erase == nil || cfg.Freeze == nil || cfg.Brain == nil || cfg.Builds == nil {
		return nil, errs.E("web.new", errs.Invalid, "the web UI needs the box, its state, keys, gate, memory, to-dos, brain, builds, erase and freeze")
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a, err := newAuth(cfg.State, now)
	if err != nil {
		return nil, err
	}
	w := &Web{cfg: cfg, auth: a, gate: cfg.Gate, now: now, log: log, cookie: "box_" + short(cfg.Box.Marker.ID)}
	// An erase also removes the uploads waiting for an import: whole exports of the owner's memories,
	// outside the box (docs/GATE.md, "Erase").
	w.cfg.Erase = func(ctx context.Context, who box.Actor) (memory.EraseResult, error) {
		w.uploads.close()
		return cfg.Erase(ctx, who)
	}
	sweepUploads(w.uploadBase()) // what a process that died left waiting for its import
	if w.pages, err = parsePages(func() *time.Location { return w.now().Location() }); err != nil {
		return nil, errs.Wrap("web.new", errs.Other, err, "The web UI's pages could not be read")
	}
	return w, nil
}

func short(id string) string {
	var b strings.Builder
	for _, r := range id {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || (r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
		if b.Len() == 12 {
			break
		}
	}
	return b.String()
}

// SetupLink returns a one-time link (valid 15 minutes) that makes the first passkey, or "" when the box
// already has one. base is the address the owner opens, like http://localhost:7317.
func (w *Web) SetupLink(ctx context.Context, base string) (string, error) {
	if w.auth.hasPasskey(ctx) {
		return "", nil
	}
	code, err := w.auth.newSetupCode(ctx)
	if err != nil {
		return "", errs.Wrap("web.setup", errs.Other, err, "The setup link could not be made")
	}
	return strings.TrimSuffix(base, "/") + "/setup?code=" + url.QueryEscape(code), nil
}

// Handler is the whole web UI.
func (w *Web) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(static))))
	mux.HandleFunc("GET /{$}", w.home)
	mux.HandleFunc("GET /signin", w.signinPage)
	mux.HandleFunc("GET /setup", w.setupPage)
	mux.HandleFunc("POST /auth/register/begin", w.sameOrigin(w.registerBegin))
	mux.HandleFunc("POST /auth/register/finish", w.sameOrigin(w.registerFinish))
	mux.HandleFunc("POST /auth/login/begin", w.sameOrigin(w.loginBegin))
	mux.HandleFunc("POST /auth/login/finish", w.sameOrigin(w.loginFinish))

	page := func(pattern string, h func(http.ResponseWriter, *http.Request, *session)) {
		mux.HandleFunc(pattern, w.signedIn(h))
	}
	post := func(pattern string, h func(http.ResponseWriter, *http.Request, *session)) {
		mux.HandleFunc(pattern, w.sameOrigin(w.signedIn(w.csrf(h))))
	}
	page("GET /today", w.todayPage)
	page("GET /todo", w.todoPage)
	page("GET /memory", w.memoryPage)
	page("GET /memory/note", w.notePage)
	page("GET /memory/edit", w.editPage)
	page("GET /diary", w.diaryPage)
	page("GET /chat", w.chatPage)
	page("GET /settings", w.settingsPage)
	page("GET /settings/import", w.importsPage)
	page("GET /api/search", w.searchAPI)

	post("POST /auth/confirm/begin", w.confirmBegin)
	post("POST /cards/{id}/approve", w.approve)
	post("POST /cards/{id}/decline", w.decline)
	post("POST /undo", w.undo)
	post("POST /undo/since", w.undoSince)
	post("POST /memory/remember", w.remember)
	post("POST /memory/edit", w.edit)
	post("POST /todo/add", w.todoAdd)
	post("POST /todo/done", w.todoDone)
	post("POST /chat", w.chat)
	post("POST /chat/stream", w.chatStream)
	post("POST /settings/brain", w.setBrain)
	post("POST /settings/brain/budget", w.brainBudget)
	post("POST /settings/brain/off", w.brainOff)
	post("POST /settings/routines", w.routineAdd)
	post("POST /settings/routines/starter", w.routineStarter)
	post("POST /settings/routines/{name}/remove", w.routineRemove)
	post("POST /settings/routines/{name}/switch", w.routineSwitch)
	post("POST /settings/routines/{name}/run", w.routineRun)
	post("POST /settings/switch", w.setSwitch)
	post("POST /settings/keys", w.newKey)
	post("POST /settings/keys/{id}/revoke", w.revokeKey)
	post("POST /settings/freeze", w.freeze)
	post("POST /settings/erase", w.erase)
	post("POST /settings/passkeys/{id}/remove", w.removePasskey)
	post("POST /settings/connections/{id}/disconnect", w.disconnect)
	// The upload checks its CSRF token itself, from the first part of the form, before reading the file.
	mux.HandleFunc("POST "+importUploadPath, w.sameOrigin(w.signedIn(w.importUpload)))
	post("POST /settings/import/run", w.importDo)
	post("POST /settings/import/cancel", w.importCancel)
	post("POST /settings/export", w.export)
	if w.cfg.Grants != nil {
		mux.HandleFunc("GET "+grants.ConsentPath, w.consentPage)
		mux.HandleFunc("POST "+grants.ConsentPath+"/begin", w.sameOrigin(w.consentBegin))
		mux.HandleFunc("POST "+grants.ConsentPath+"/finish", w.sameOrigin(w.consentFinish))
		mux.HandleFunc("POST "+grants.ConsentPath+"/deny", w.sameOrigin(w.consentDeny))
	}
	w.mountBuilds(mux, page, post)
	post("POST /signout", w.signout)
	post("POST /signout/all", w.signoutAll)
	return w.headers(w.limitBodies(mux))
}

// headers sets the security headers on every answer: no request leaves the box, no framing.
func (w *Web) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		h := rw.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin") // no-referrer would make the browser send "Origin: null" on our own forms
		h.Set("X-Frame-Options", "DENY")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
		next.ServeHTTP(rw, r)
	})
}

func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Cache-Control", "no-cache")
		next.ServeHTTP(rw, r)
	})
}

// secure says whether the browser talks to the box over https.
func (w *Web) secure(r *http.Request) bool { return r.TLS != nil || w.cfg.Secure }

// origin is the origin the request came to; the server's Host check has already vetted r.Host.
func (w *Web) origin(r *http.Request) string {
	scheme := "http"
	if w.secure(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func rpID(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		h = r.Host
	}
	return strings.Trim(h, "[]")
}

// sameOrigin refuses a state change sent from another site (an Origin or Referer that is not the box).
func (w *Web) sameOrigin(next http.HandlerFunc) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		o := r.Header.Get("Origin")
		if o == "" {
			if ref, err := url.Parse(r.Header.Get("Referer")); err == nil && ref.Host != "" {
				o = ref.Scheme + "://" + ref.Host
			}
		}
		if o != "" && o != w.origin(r) {
			w.fail(rw, r, errs.E("web", errs.Forbidden, "This request came from another site, so the box ignored it."))
			return
		}
		next(rw, r)
	}
}

type ctxKey struct{}

// signedIn lets a signed-in browser through; others go to sign-in (pages) or get 401 (everything else).
func (w *Web) signedIn(next func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		var ss *session
		if v := w.sessionCookie(r); v != "" {
			ss, _ = w.auth.session(r.Context(), v)
		}
		if ss == nil {
			if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
				http.Redirect(rw, r, "/signin", http.StatusSeeOther)
				return
			}
			w.fail(rw, r, errs.E("web", errs.Unauthorized, "You are signed out; sign in with your passkey and try again."))
			return
		}
		next(rw, r.WithContext(context.WithValue(r.Context(), ctxKey{}, ss)), ss)
	}
}

// csrf checks the session's token on a state change: a form field or the X-CSRF-Token header.
func (w *Web) csrf(next func(http.ResponseWriter, *http.Request, *session)) func(http.ResponseWriter, *http.Request, *session) {
	return func(rw http.ResponseWriter, r *http.Request, ss *session) {
		t := r.Header.Get("X-CSRF-Token")
		if t == "" && !isJSON(r) {
			t = r.PostFormValue("csrf")
		}
		if !ss.checkCSRF(t) {
			w.fail(rw, r, errs.E("web", errs.Forbidden, "This form is out of date (its safety token is missing or wrong); reload the page and try again."))
			return
		}
		next(rw, r, ss)
	}
}

func isJSON(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
}

// status maps the box's error kinds to HTTP once, for the web UI.
func status(err error) int {
	switch errs.KindOf(err) {
	case errs.Invalid, errs.Usage:
		return http.StatusBadRequest
	case errs.NotFound:
		return http.StatusNotFound
	case errs.Unauthorized:
		return http.StatusUnauthorized
	case errs.Forbidden, errs.Refused:
		return http.StatusForbidden
	case errs.Conflict, errs.Exists:
		return http.StatusConflict
	case errs.Frozen, errs.Locked:
		return http.StatusLocked
	case errs.Limited:
		return http.StatusTooManyRequests
	case errs.Busy:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// sentence is what the owner reads for an error: the box's own sentence, or a plain apology.
func sentence(err error) string {
	var e *errs.Error
	if errors.As(err, &e) && e.Msg != "" {
		return e.Msg
	}
	if f := provider.FailureOf(err); f != nil {
		return f.Error() // a provider's failure is its own plain sentence, without the key (docs/BRAIN.md)
	}
	return "Something went wrong inside the box; nothing was changed. Try again, and if it keeps happening, look at box serve's log."
}

// fail answers an error: JSON for scripts, a page otherwise.
func (w *Web) fail(rw http.ResponseWriter, r *http.Request, err error) {
	code := status(err)
	if code == http.StatusInternalServerError {
		w.log.Error("web", "path", r.URL.Path, "err", err)
	}
	if isJSON(r) || strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/auth/") ||
		strings.HasSuffix(r.URL.Path, "/approve") || strings.HasPrefix(r.URL.Path, grants.ConsentPath+"/") || r.Header.Get("Accept") == "application/json" {
		writeJSON(rw, code, map[string]any{"ok": false, "text": sentence(err)})
		return
	}
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.WriteHeader(code)
	_, _ = fmt.Fprintln(rw, sentence(err)) // the status is sent; a browser that went away cannot be told more
}

func writeJSON(rw http.ResponseWriter, code int, v any) { httpjson.Write(rw, code, v, true) }

// back redirects a form to the page it came from with a sentence to show.
func back(rw http.ResponseWriter, r *http.Request, to, note string) {
	u := to
	if note != "" {
		u += "?note=" + url.QueryEscape(note)
	}
	http.Redirect(rw, r, u, http.StatusSeeOther)
}

// backErr is back with an error's sentence; unexpected errors are logged.
func (w *Web) backErr(rw http.ResponseWriter, r *http.Request, to string, err error) {
	if status(err) == http.StatusInternalServerError {
		w.log.Error("web", "path", r.URL.Path, "err", err)
	}
	back(rw, r, to, sentence(err))
}

// cookieName is the session cookie's name for r. Over https it has the __Host- prefix, which browsers
// accept only with Secure, Path=/ and no Domain: no other host, port or scheme can set or widen it. On
// plain http a cookie cannot be Secure for every browser and client, so it is host-only (no Domain) but
// still sent to every port of its host: the reason the owner's address is its own name, box.localhost,
// rather than localhost (docs/SECURITY.md, "OAuth and passkeys").
func (w *Web) cookieName(r *http.Request) string {
	if w.secure(r) {
		return "__Host-" + w.cookie
	}
	return w.cookie
}

// sessionCookie is the session token r carries, or "".
func (w *Web) sessionCookie(r *http.Request) string {
	if c, err := r.Cookie(w.cookieName(r)); err == nil {
		return c.Value
	}
	return ""
}

func (w *Web) setCookie(rw http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(rw, &http.Cookie{Name: w.cookieName(r), Value: value, Path: "/", HttpOnly: true, Secure: w.secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: maxAge})
}

var ownerActor = box.Actor{Who: "owner", Via: "web", Trust: "own"}
