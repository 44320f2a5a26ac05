package web

import (
	"bytes"
	"context"
	"html/template"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/routine"
	"github.com/boxmem/box/internal/todo"
	"github.com/boxmem/box/internal/usage"
)

// timeFuncs show a time on the clock of zone, the zone the process counts its days in (Today is the
// day of its clock): the diary, job records and stores keep UTC, and an owner reads their own time.
func timeFuncs(zone func() *time.Location) template.FuncMap {
	return template.FuncMap{
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "never"
			}
			return t.In(zone()).Format("2 Jan 15:04")
		},
		"clock": func(t time.Time) string { return t.In(zone()).Format("15:04") },
	}
}

var funcs = template.FuncMap{
	"switchLabel": gate.Label,
	"covers":      gate.Covers,
	"choiceLabel": gate.ChoiceLabel,
	"choices":     gate.Choices,
	"looser":      gate.Looser,
	"kindTitle":   gate.KindTitle,
	"join":        strings.Join,
	"marked":      marked,
	"dollars":     usage.Dollars,
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

// frame is what every page's frame shows; each page's data embeds it, and render fills it.
type frame struct {
	Page     string // the template, for the body's class
	Tab      string // the tab shown as current
	Tabs     []tabView
	Flash    string // the sentence a form came back with
	CSRF     string
	SignedIn bool
	Frozen   bool
	Waiting  int    // cards waiting, for Today's badge
	Menu     string // tabs or hamburger, from the layout in use
	Look     int    // the version of the look applied to this screen; 0 for none
	Plain    bool   // ?plain=1: the UI without the look
}

type tabView struct{ ID, Label, Icon, Href string }

// page is the typed data of one template.
type page interface{ base() *frame }

func (f *frame) base() *frame { return f }

// The pages' data, one type per template (templates_test.go executes every template with each).
type (
	signinData struct {
		frame
		HasPasskey bool
		Localhost  string // the same page at http://localhost when the browser came by a bare IP
	}
	setupData struct {
		frame
		Code, Localhost, Problem string
	}
	todayData struct {
		frame
		Date      string
		Cards     []cardView
		Done      []entryView
		Inbox     int
		InboxLine string       // "Inbox: 3 lines waiting", as on every surface
		TidyAt    time.Time    // when the job runner files the waiting lines; zero: no run waits
		Jobs      []jobView    // what the box's jobs did today, newest first
		Last      *diary.Entry // what Undo would reverse; nil when nothing
		// Reports are today's routine reports, latest first (docs/ROUTINES.md).
		Reports []routine.Report
	}
	todoData struct {
		frame
		Lists []todo.List
	}
	memoryData struct {
		frame
		Q          string
		Hits       []memory.Hit
		Router     string
		Notes      []memory.NoteHook
		InboxCount int
		Maps       []string
		Inbox      []memory.InboxDay
	}
	noteData struct {
		frame
		Note     memory.Note
		Editable bool
	}
	editData struct {
		frame
		memory.Editable
	}
	diaryData struct {
		frame
		Entries   []entryView
		Who, What string
		Whos, Ops []string
		Since     string // a day ago, for the "undo since" form
	}
	chatData struct {
		frame
		Q, A, Chat string
		Where      string // where messages go, with a brain; "" without one
		History    []brain.Message
	}
	settingsData struct {
		frame
		Switches    []switchView
		Connections []keys.Connection
		Ended       []keys.Connection
		OAuth       []grants.Grant
		Passkeys    []Passkey
		Address     string
		Phrase      string
		Backups     []string // the backup remotes an erase replaces with its fresh start
		NoBackups   bool     // the backups could not be listed: the warning says so instead of naming them
		Brain       brainData
		Routines    routinesData
	}
	importsData struct {
		frame
		Kinds   []kindView
		Limit   string // the upload limit, as the page says it
		Max     int64
		Upload  *uploadView // the dry run waiting for the owner
		Entry   string      // the diary entry of the import just done, for its Undo
		Exports []string
	}
	consentData struct {
		frame
		Error      string
		Req        grants.Request
		Host       string
		Offered    keys.Caps
		Asked      keys.Caps
		Never      bool
		HasPasskey bool
		Localhost  string
	}
)

// pageNames are the templates, each drawn inside base.html.
var pageNames = []string{"today", "todo", "memory", "note", "edit", "diary", "chat", "settings", "imports", "signin", "setup", "consent", "pages", "holder", "builds"}

func parsePages(zone func() *time.Location) (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).Funcs(timeFuncs(zone)).ParseFS(assets, "templates/base.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// render writes a page inside the common frame: the tabs, the flash sentence, and for a signed-in
// browser the CSRF token, the frozen banner and the waiting cards' count.
func (w *Web) render(rw http.ResponseWriter, r *http.Request, ss *session, name string, data page) {
	f := data.base()
	f.Page, f.Flash = name, r.URL.Query().Get("note")
	if f.Tab == "" {
		f.Tab = name
	}
	w.frameScreen(r, f, ss != nil)
	if ss != nil {
		f.CSRF, f.SignedIn = ss.csrf, true
		frozen, err := w.cfg.State.Frozen(r.Context())
		if err != nil {
			w.fail(rw, r, err)
			return
		}
		cards, err := w.gate.Waiting(r.Context())
		if err != nil {
			w.fail(rw, r, err)
			return
		}
		f.Frozen, f.Waiting = frozen, len(cards)
	}
	var buf bytes.Buffer
	if err := w.pages[name].ExecuteTemplate(&buf, "base", data); err != nil {
		w.fail(rw, r, err)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.Header().Set("Cache-Control", "no-store")
	if _, err := rw.Write(buf.Bytes()); err != nil {
		w.log.Debug("web: the browser went away", "path", r.URL.Path, "err", err)
	}
}

func (w *Web) signinPage(rw http.ResponseWriter, r *http.Request) {
	if w.currentSession(r) != nil {
		http.Redirect(rw, r, "/today", http.StatusSeeOther)
		return
	}
	w.render(rw, r, nil, "signin", &signinData{HasPasskey: w.auth.hasPasskey(r.Context()), Localhost: w.byName(r)})
}

// byName is the same page at the owner's name (http://box.localhost:PORT, or localhost) when the browser
// came by a bare loopback address, where passkeys do not work, or by localhost when the owner's passkey
// lives on another name; "" otherwise.
func (w *Web) byName(r *http.Request) string {
	name, host := w.cfg.OwnerName, rpID(r)
	if name == "" {
		name = "localhost"
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && !(host == "localhost" && name != "localhost") {
		return ""
	}
	_, port, _ := net.SplitHostPort(r.Host)
	u := "http://" + name
	if port != "" {
		u += ":" + port
	}
	return u + r.URL.RequestURI()
}

func (w *Web) setupPage(rw http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	data := &setupData{Code: code, Localhost: w.byName(r)}
	if err := w.auth.checkSetupCode(r.Context(), code); err != nil {
		data.Problem = sentence(err)
	}
	w.render(rw, r, nil, "setup", data)
}

// cardView is a card as Today shows it.
type cardView struct {
	gate.ApprovalCard
	KindTitle string
	Sender    string
	Lines     []string
	Facts     []cardFact // a build's card: what it is for, where it keeps notes, what it reads, its size
}

func viewCard(c gate.ApprovalCard) cardView {
	v := cardView{ApprovalCard: c, KindTitle: gate.KindTitle(c.Kind)}
	if !c.FromOwner() {
		v.Sender = c.ProposedBy.Who
		if c.ProposedBy.Host != "" {
			v.Sender += " (" + c.ProposedBy.Host + ")"
		}
	}
	_, lines := memory.ForgetPayload(c.Action)
	for i, l := range lines {
		if i == 8 {
			v.Lines = append(v.Lines, "…")
			break
		}
		v.Lines = append(v.Lines, l.Text)
	}
	// An edit's card shows the new text, so the owner sees what they approve.
	if p, ok := c.Action.Payload.(map[string]any); ok && gate.OpOf(c.Action) == "edit" {
		text, _ := p["text"].(string)
		_, body, _ := card.Split([]byte(text))
		for _, l := range strings.Split(strings.TrimSpace(string(body)), "\n") {
			if len(v.Lines) == 12 {
				v.Lines = append(v.Lines, "…")
				break
			}
			if l = strings.TrimSpace(l); l != "" {
				v.Lines = append(v.Lines, l)
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
	data := &todayData{Date: w.now().Format("Monday 2 January")}
	for _, c := range cards {
		v := viewCard(c)
		v.Facts = w.buildFacts(r, c)
		data.Cards = append(data.Cards, v)
	}
	now := w.now()
	start := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	done, err := w.cfg.Box.Diary(ctx, 50, func(e diary.Entry) bool {
		t, err := time.Parse(time.RFC3339Nano, e.Time)
		return err == nil && !t.Before(start)
	})
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	shown := make([]diary.Entry, 0, len(done))
	for _, e := range done {
		if e.Op != "job" { // a job's record: the run itself is listed with its Undo below
			shown = append(shown, e)
		}
	}
	data.Done = entryViews(shown, nil)
	sum, err := w.cfg.Memory.Summary(ctx)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	data.Inbox, data.InboxLine = sum.Inbox, note.WaitingLine(sum.Inbox)
	if w.cfg.Jobs != nil && data.Inbox > 0 {
		// A time past (a run held by a freeze, or yielding to writes) says nothing the owner can use.
		if at, _, ok := w.cfg.Jobs.Pending("tidy"); ok && at.After(now) {
			data.TidyAt = at
		}
	}
	if data.Jobs, err = w.todayJobs(ctx, start, done); err != nil {
		w.fail(rw, r, err)
		return
	}
	if w.cfg.Routines != nil {
		if data.Reports, err = w.cfg.Routines.Reports(ctx, now); err != nil {
			w.fail(rw, r, err)
			return
		}
	}
	if last, err := w.cfg.Box.Next(); err == nil {
		data.Last = &last
	} else if !errs.Is(err, errs.NotFound) {
		w.fail(rw, r, err)
		return
	}
	w.render(rw, r, ss, "today", data)
}

// jobView is one run of a job as Today shows it: what it did, and Undo while its change stands.
type jobView struct {
	jobs.Record
	Undo bool
}

// todayJobs are today's job runs that changed something or failed, newest first (at most 10).
func (w *Web) todayJobs(ctx context.Context, start time.Time, today []diary.Entry) ([]jobView, error) {
	recs, err := jobs.Records(w.cfg.Box.Root, 10, func(r jobs.Record) bool {
		return !r.Start.Before(start) && (r.Entry != "" || r.Error != "")
	})
	if err != nil {
		return nil, err
	}
	undone := box.Undone{}
	for _, e := range today {
		undone.Saw(e)
	}
	out := make([]jobView, 0, len(recs))
	for _, r := range recs {
		out = append(out, jobView{Record: r, Undo: r.Entry != "" && !undone[r.Entry]})
	}
	return out, nil
}

// entryView is one diary line as the owner reads it.
type entryView struct {
	diary.Entry
	Said     string // the summary without the actor it starts with, shown after the actor's name
	At       time.Time
	Undoable bool
	Undone   bool
}

func entryViews(es []diary.Entry, undone box.Undone) []entryView {
	out := make([]entryView, 0, len(es))
	for _, e := range es {
		t, _ := time.Parse(time.RFC3339, e.Time) // a line with no time shows none
		out = append(out, entryView{Entry: e, Said: strings.TrimPrefix(e.Summary, e.Actor+" "), At: t, Undoable: box.Undoable(e), Undone: undone[e.ID]})
	}
	return out
}

func (w *Web) todoPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	lists, err := w.cfg.Todos.Lists(r.Context())
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	w.render(rw, r, ss, "todo", &todoData{Lists: lists})
}

func (w *Web) memoryPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	ctx := r.Context()
	m := w.cfg.Memory
	data := &memoryData{Q: r.URL.Query().Get("q")}
	o, err := m.Overview(ctx)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	data.Router, data.Notes, data.InboxCount = o.Router, o.Notes, o.Inbox
	if data.Maps, err = m.Maps(ctx); err != nil {
		w.fail(rw, r, err)
		return
	}
	if data.Inbox, err = m.InboxDays(ctx, 3); err != nil {
		w.fail(rw, r, err)
		return
	}
	if q := strings.TrimSpace(data.Q); q != "" {
		res, err := m.Search(ctx, memory.SearchInput{Words: q, Limit: 20})
		if err != nil {
			w.fail(rw, r, err)
			return
		}
		data.Hits = res.Hits
	}
	w.render(rw, r, ss, "memory", data)
}

func (w *Web) notePage(rw http.ResponseWriter, r *http.Request, ss *session) {
	n, err := w.cfg.Memory.Read(r.Context(), r.URL.Query().Get("name"))
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	_, editErr := w.cfg.Memory.ReadForEdit(r.Context(), n.Name)
	w.render(rw, r, ss, "note", &noteData{frame: frame{Tab: "memory"}, Note: n, Editable: editErr == nil})
}

func (w *Web) editPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	e, err := w.cfg.Memory.ReadForEdit(r.Context(), r.URL.Query().Get("name"))
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	w.render(rw, r, ss, "edit", &editData{frame: frame{Tab: "memory"}, Editable: e})
}

func (w *Web) diaryPage(rw http.ResponseWriter, r *http.Request, ss *session) {
	who := r.URL.Query().Get("who")
	what := r.URL.Query().Get("what")
	all, err := w.cfg.Box.Diary(r.Context(), 400, nil)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	undone := box.Undone{}
	whos := map[string]bool{}
	ops := map[string]bool{}
	var kept []diary.Entry
	for _, e := range all {
		undone.Saw(e)
		whos[e.Actor] = true
		ops[e.Op] = true
		if (who == "" || e.Actor == who) && (what == "" || e.Op == what) && len(kept) < 150 {
			kept = append(kept, e)
		}
	}
	w.render(rw, r, ss, "diary", &diaryData{Entries: entryViews(kept, undone), Who: who, What: what,
		Whos: sortedKeys(whos), Ops: sortedKeys(ops), Since: w.now().Add(-24 * time.Hour).Format("2006-01-02T15:04")})
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
	q := r.URL.Query()
	data := &chatData{Q: q.Get("q"), A: q.Get("a")}
	st, err := w.cfg.Brain.Status(r.Context())
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	data.Where = st.Where
	if id := q.Get("chat"); brain.ValidChatID(id) {
		data.Chat = id
		if data.History, err = w.cfg.Brain.History(id); err != nil {
			w.fail(rw, r, err)
			return
		}
		data.Q, data.A = "", "" // the history has them
	}
	w.render(rw, r, ss, "chat", data)
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
	data := &settingsData{Address: w.origin(r) + "/mcp", Phrase: ErasePhrase, Brain: w.brainStatus(r), Routines: w.routinesView(r)}
	for _, n := range gate.SwitchNames {
		data.Switches = append(data.Switches, switchView{Name: n, Current: sw.Of(n)})
	}
	if w.cfg.Backups != nil {
		// The page holds freeze, erase and key revoking, which must stay within reach when git cannot say
		// its remotes (a detached HEAD): the erase's warning says so instead.
		if data.Backups, err = w.cfg.Backups(ctx); err != nil {
			w.log.Warn("web: the backups could not be listed", "err", err)
			data.Backups, data.NoBackups = nil, true
		}
	}
	conns, err := w.cfg.Keys.List(ctx)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	for _, c := range conns {
		if c.Revoked.IsZero() && (c.Expires.IsZero() || c.Expires.After(w.now())) {
			data.Connections = append(data.Connections, c)
		} else {
			data.Ended = append(data.Ended, c)
		}
	}
	if w.cfg.Grants != nil {
		all, err := w.cfg.Grants.List(ctx)
		if err != nil {
			w.fail(rw, r, err)
			return
		}
		for _, g := range all {
			if g.Revoked.IsZero() {
				data.OAuth = append(data.OAuth, g)
			}
		}
	}
	if data.Passkeys, err = w.auth.passkeys(ctx); err != nil {
		w.fail(rw, r, err)
		return
	}
	w.render(rw, r, ss, "settings", data)
}
