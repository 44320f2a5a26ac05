package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/todo"
)

var tabs = []struct{ ID, Label, Icon string }{
	{"today", "Today", "☀"}, {"todo", "To-do", "✓"}, {"memory", "Memory", "✎"},
	{"chat", "Chat", "✉"}, {"diary", "Diary", "☰"}, {"settings", "Settings", "⚙"},
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.Local().Format("2 Jan 15:04")
	},
	"clock":       func(t time.Time) string { return t.Local().Format("15:04") },
	"switchLabel": gate.Label,
	"covers":      gate.Covers,
	"choiceLabel": gate.ChoiceLabel,
	"choices":     gate.Choices,
	"kindTitle":   gate.KindTitle,
	"join":        strings.Join,
	"marked":      marked,
}

// marked renders a search snippet: the index marks matches as **word**; they become <mark>, the rest is escaped.
func marked(s string) template.HTML {
	parts := strings.Split(s, "**")
	var b strings.Builder
	for i, p := range parts {
		e := template.HTMLEscapeString(p)
		if i%2 == 1 && i < len(parts)-1 {
			e = "<mark>" + e + "</mark>"
		}
		b.WriteString(e)
	}
	return template.HTML(b.String())
}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range []string{"today", "todo", "memory", "note", "edit", "diary", "chat", "settings", "signin", "setup", "consent"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/base.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// render writes a page inside the common frame.
func (w *Web) render(rw http.ResponseWriter, r *http.Request, ss *session, name string, data map[string]any) {
	if data == nil {
		data = map[string]any{}
	}
	data["Page"] = name
	data["Tabs"] = tabs
	data["Flash"] = r.URL.Query().Get("note")
	if ss != nil {
		data["CSRF"] = ss.csrf
		data["SignedIn"] = true
		frozen, _ := w.cfg.Keys.Frozen(r.Context())
		data["Frozen"] = frozen
		cards, _ := w.gate.Waiting(r.Context())
		data["Waiting"] = len(cards)
	}
	if _, ok := data["Tab"]; !ok {
		data["Tab"] = name
	}
	var buf bytes.Buffer
	if err := w.pages[name].ExecuteTemplate(&buf, "base", data); err != nil {
		w.fail(rw, r, err)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.Header().Set("Cache-Control", "no-store")
	rw.Write(buf.Bytes())
}

func (w *Web) signinPage(rw http.ResponseWriter, r *http.Request) {
	if w.currentSession(r) != nil {
		http.Redirect(rw, r, "/today", http.StatusSeeOther)
		return
	}
	w.render(rw, r, nil, "signin", map[string]any{"HasPasskey": w.auth.hasPasskey(r.Context()), "Localhost": w.byName(r)})
}

// byName is the same page at http://localhost:PORT when the browser came by a bare IP address, where
// passkeys do not work; "" otherwise.
func (w *Web) byName(r *http.Request) string {
	if ip := net.ParseIP(rpID(r)); ip == nil || !ip.IsLoopback() {
		return ""
	}
	_, port, _ := net.SplitHostPort(r.Host)
	u := "http://localhost"
	if port != "" {
		u += ":" + port
	}
	return u + r.URL.RequestURI()
}

func (w *Web) setupPage(rw http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	err := w.auth.checkSetupCode(r.Context(), code)
	data := map[string]any{"Code": code, "Localhost": w.byName(r)}
	if err != nil {
		data["Problem"] = sentence(err)
	}
	w.render(rw, r, nil, "setup", data)
}

// cardView is a card as Today shows it.
type cardView struct {
	gate.ApprovalCard
	KindTitle string
	Sender    string
	Lines     []string
}

func viewCard(c gate.ApprovalCard) cardView {
	v := cardView{ApprovalCard: c, KindTitle: gate.KindTitle(c.Kind)}
	if !c.FromOwner() {
		v.Sender = c.ProposedBy.Who
		if c.ProposedBy.Host != "" {
			v.Sender += " (" + c.ProposedBy.Host + ")"
		}
	}
	if p, ok := c.Action.Payload.(map[string]any); ok {
		if ls, ok := p["lines"].([]any); ok {
			for i, l := range ls {
				if i == 8 {
					v.Lines = append(v.Lines, "…")
					break
				}
				if m, ok := l.(map[string]any); ok {
					t, _ := m["text"].(string)
					v.Lines = append(v.Lines, t)
				}
			}
		}
	}
	return v
}

func (w *Web) todayPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	ctx := r.Context()
	cards, err := w.gate.Waiting(ctx)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	var views []cardView
	for _, c := range cards {
		views = append(views, viewCard(c))
	}
	day := diary.Day(w.now())
	done, _ := w.cfg.Box.Diary(ctx, 50, func(e diary.Entry) bool { return diary.DayOf(e) == day })
	inboxCount := -1
	if m := w.cfg.Memory(); m != nil {
		if o, err := m.Overview(ctx); err == nil {
			inboxCount = o.Inbox
		}
	}
	last, _ := w.lastUndoable(ctx)
	w.render(rw, r, ss, "today", map[string]any{"Cards": views, "Done": entryViews(done, nil), "Inbox": inboxCount,
		"Last": last, "Date": w.now().Local().Format("Monday 2 January")})
}

// entryView is one diary line as the owner reads it.
type entryView struct {
	diary.Entry
	Said     string // the summary without the actor it starts with, shown after the actor's name
	At       time.Time
	Undoable bool
	Undone   bool
}

func entryViews(es []diary.Entry, undone map[string]bool) []entryView {
	out := make([]entryView, 0, len(es))
	for _, e := range es {
		t, _ := time.Parse(time.RFC3339, e.Time)
		out = append(out, entryView{Entry: e, Said: strings.TrimPrefix(e.Summary, e.Actor+" "), At: t, Undoable: len(e.Undo) > 0 && e.Op != "init" && !bookkeeping(e.Op), Undone: undone[e.ID]})
	}
	return out
}

// bookkeeping ops are the gate's own paper trail: undoing them would not undo anything the owner means.
func bookkeeping(op string) bool {
	switch op {
	case "card", "approve", "decline", "expire", "refuse":
		return true
	}
	return false
}

func (w *Web) todoPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	var lists []todo.List
	if w.cfg.Todos != nil {
		lists, _ = w.cfg.Todos.Lists(r.Context())
	}
	w.render(rw, r, ss, "todo", map[string]any{"Lists": lists, "HasTodos": w.cfg.Todos != nil})
}

// inboxDay is one day of unfiled lines.
type inboxDay struct {
	Date  string
	Lines []inbox.Line
}

func (w *Web) memoryPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	data := map[string]any{"Q": r.URL.Query().Get("q")}
	m := w.cfg.Memory()
	if m == nil {
		data["Opening"] = true
		w.render(rw, r, ss, "memory", data)
		return
	}
	ctx := r.Context()
	if o, err := m.Overview(ctx); err == nil {
		data["Router"] = o.Router
		data["Notes"] = o.Notes
		data["InboxCount"] = o.Inbox
	}
	data["Maps"] = w.mapNames()
	data["Inbox"] = w.inboxDays(3)
	if q := strings.TrimSpace(r.URL.Query().Get("q")); q != "" {
		if res, err := m.Search(ctx, memory.SearchInput{Words: q, Limit: 20}); err == nil {
			data["Hits"] = res.Hits
		}
	}
	w.render(rw, r, ss, "memory", data)
}

func (w *Web) mapNames() []string {
	var out []string
	dir := filepath.Join(w.cfg.Box.Root, "_content", "memory", "maps")
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, strings.TrimSuffix(filepath.ToSlash(rel), ".md"))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// inboxDays reads the newest n inbox day files, newest first.
func (w *Web) inboxDays(n int) []inboxDay {
	dir := filepath.Join(w.cfg.Box.Root, "_content", "inbox")
	ents, _ := os.ReadDir(dir)
	var out []inboxDay
	for i := len(ents) - 1; i >= 0 && len(out) < n; i-- {
		name := ents[i].Name()
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		data, err := layout.ReadFile(w.cfg.Box.Root, layout.InboxDir+"/"+name)
		if err != nil {
			continue
		}
		d, err := inbox.ParseDay(data)
		if err != nil || len(d.Lines()) == 0 {
			continue
		}
		label := strings.TrimSuffix(name, ".md")
		if date, part, ok := inbox.ParseFileName(name); ok && part > 1 {
			label = fmt.Sprintf("%s (part %d)", date, part) // a busy day goes on in parts
		}
		out = append(out, inboxDay{Date: label, Lines: d.Lines()})
	}
	return out
}

func (w *Web) notePage(rw http.ResponseWriter, r *http.Request, ss *session) {
	m, err := w.mem()
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	n, err := m.Read(r.Context(), r.URL.Query().Get("name"))
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	w.render(rw, r, ss, "note", map[string]any{"Tab": "memory", "Note": n, "Editable": editable(n.Path)})
}

func editable(p string) bool {
	return strings.HasPrefix(p, "/_content/") && strings.HasSuffix(p, ".md")
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (w *Web) editPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	m, err := w.mem()
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	n, err := m.Read(r.Context(), r.URL.Query().Get("name"))
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	data, err := layout.ReadFile(w.cfg.Box.Root, n.Path)
	if err != nil || !editable(n.Path) {
		w.fail(rw, r, err)
		return
	}
	w.render(rw, r, ss, "edit", map[string]any{"Tab": "memory", "Name": r.URL.Query().Get("name"), "Path": n.Path,
		"Text": string(data), "Base": sum(data)})
}

func (w *Web) diaryPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	who := r.URL.Query().Get("who")
	what := r.URL.Query().Get("what")
	all, err := w.cfg.Box.Diary(r.Context(), 400, nil)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	undone := map[string]bool{}
	whos := map[string]bool{}
	ops := map[string]bool{}
	var kept []diary.Entry
	for _, e := range all {
		if e.Op == "undo" && !undone[e.ID] {
			undone[e.UndoOf] = true
		}
		whos[e.Actor] = true
		ops[e.Op] = true
		if (who == "" || e.Actor == who) && (what == "" || e.Op == what) && len(kept) < 150 {
			kept = append(kept, e)
		}
	}
	w.render(rw, r, ss, "diary", map[string]any{"Entries": entryViews(kept, undone), "Who": who, "What": what,
		"Whos": sortedKeys(whos), "Ops": sortedKeys(ops), "Since": w.now().Add(-24 * time.Hour).Local().Format("2006-01-02T15:04")})
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (w *Web) chatPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	w.render(rw, r, ss, "chat", map[string]any{"Q": r.URL.Query().Get("q"), "A": r.URL.Query().Get("a")})
}

// switchView is one switch with its current choice.
type switchView struct {
	Name    string
	Current string
}

func (w *Web) settingsPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	ctx := r.Context()
	sw, err := w.gate.Switches(ctx)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	var views []switchView
	for _, n := range gate.SwitchNames {
		views = append(views, switchView{Name: n, Current: sw.Of(n)})
	}
	conns, _ := w.cfg.Keys.List(ctx)
	var live, ended []keys.Connection
	for _, c := range conns {
		if c.Revoked.IsZero() && (c.Expires.IsZero() || c.Expires.After(w.now())) {
			live = append(live, c)
		} else {
			ended = append(ended, c)
		}
	}
	var oauthLive []grants.Grant
	if w.cfg.Grants != nil {
		all, _ := w.cfg.Grants.List(ctx)
		for _, g := range all {
			if g.Revoked.IsZero() {
				oauthLive = append(oauthLive, g)
			}
		}
	}
	pks, _ := w.auth.passkeys(ctx)
	w.render(rw, r, ss, "settings", map[string]any{"Switches": views, "Connections": live, "Ended": ended, "OAuth": oauthLive,
		"Passkeys": pks, "Address": w.origin(r) + "/mcp", "Phrase": ErasePhrase})
}

// lastUndoable is the newest diary entry Undo would reverse: not the gate's paper trail, not already undone.
func (w *Web) lastUndoable(ctx context.Context) (*diary.Entry, error) {
	cancelled := map[string]bool{}
	es, err := w.cfg.Box.Diary(ctx, 1, func(e diary.Entry) bool {
		if e.Op == "undo" {
			if !cancelled[e.ID] {
				cancelled[e.UndoOf] = true
			}
			return false
		}
		return !cancelled[e.ID] && e.Op != "init" && len(e.Undo) > 0 && !bookkeeping(e.Op)
	})
	if err != nil || len(es) == 0 {
		return nil, err
	}
	return &es[0], nil
}

// boxPath turns a box path into its host path under the root.
func (w *Web) hostPath(p string) string {
	return filepath.Join(w.cfg.Box.Root, filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

var _ = layout.Router
