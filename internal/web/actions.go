package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/say"
)

// ErasePhrase is what the owner types to erase the box.
const ErasePhrase = "erase my box"

// approve runs a card after a passkey assertion bound to that card and its action hash; the gate checks
// the hash and the switches again and runs the action with the card's archive, in one commit.
func (w *Web) approve(rw http.ResponseWriter, r *http.Request, ss *session) {
	ctx := r.Context()
	id := r.PathValue("id")
	b, err := readBody(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if err := w.cfg.State.Quiet(ctx); err != nil {
		w.fail(rw, r, errs.Wrap("web.approve", quietKind(err), err, "The box is frozen or locked, so nothing runs; unfreeze it in Settings → Safety first."))
		return
	}
	c, err := w.gate.Get(ctx, id)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	cer, err := w.confirmed(r, ss, b, "approve")
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if cer.card != c.ID || cer.hash != c.ActionHash {
		w.fail(rw, r, errs.E("web.approve", errs.Forbidden, "Your passkey approved a different card than this one; nothing ran."))
		return
	}
	done, err := w.gate.Approve(ctx, id, gate.By{Via: "web", Passkey: true})
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	writeJSON(rw, http.StatusOK, approveReply{OK: true, Text: done.Text, Secret: done.Secret})
}

// approveReply is what the browser gets back from an approval.
type approveReply struct {
	OK     bool   `json:"ok"`
	Text   string `json:"text"`
	Secret string `json:"secret"`
}

// quietKind is the kind to report a Quiet error under: its own (Frozen, Locked), or Locked when the
// flags could not be read (closed, not open).
func quietKind(err error) errs.Kind {
	if k := errs.KindOf(err); k == errs.Frozen || k == errs.Locked {
		return k
	}
	return errs.Locked
}

func (w *Web) decline(rw http.ResponseWriter, r *http.Request, _ *session) {
	c, err := w.gate.Decline(r.Context(), r.PathValue("id"), r.PostFormValue("note"), gate.By{Via: "web"})
	if err != nil {
		w.backErr(rw, r, "/today", err)
		return
	}
	msg := "Declined: " + c.Title + ". Nothing ran."
	if strings.TrimSpace(r.PostFormValue("note")) != "" {
		msg = "Sent back with your note: " + c.Title + ". Nothing ran."
	}
	back(rw, r, "/today", msg)
}

func (w *Web) undo(rw http.ResponseWriter, r *http.Request, _ *session) {
	ctx := r.Context()
	to := nonEmpty(safeBack(r.PostFormValue("back")), "/today")
	res, err := w.cfg.Memory.Undo(ctx, ownerActor, r.PostFormValue("entry"))
	if err != nil {
		w.backErr(rw, r, to, err)
		return
	}
	back(rw, r, to, res.Summary)
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func safeBack(p string) string {
	// A browser drops tabs and newlines from a URL ("/\t/evil.example" is "//evil.example"): any control
	// character refuses the path.
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.ContainsAny(p, "\\") &&
		!strings.ContainsFunc(p, unicode.IsControl) {
		return p
	}
	return ""
}

// undoSince reverses everything one connection wrote since a time, newest first, one entry at a time.
func (w *Web) undoSince(rw http.ResponseWriter, r *http.Request, _ *session) {
	who := strings.TrimSpace(r.PostFormValue("who"))
	since, err := time.ParseInLocation("2006-01-02T15:04", r.PostFormValue("since"), w.now().Location())
	if who == "" || err != nil {
		back(rw, r, "/diary", "Say whose changes to undo and since when.")
		return
	}
	by := func(e diary.Entry) bool { return e.Actor == who || (e.Conn != "" && e.Conn == who) }
	n, todo, err := w.cfg.Box.UndoSince(r.Context(), since, by, ownerActor)
	if err != nil {
		back(rw, r, "/diary", fmt.Sprintf("Undid %d of %d changes by %s, then stopped: %s", n, todo, who, sentence(err)))
		return
	}
	back(rw, r, "/diary", fmt.Sprintf("Undid %d %s by %s since %s.", n, say.Plural(n, "change", "changes"), who, since.Format("2 Jan 15:04")))
}

// remember saves the owner's fact, core fact or caution: the brain's one path through the gate, so Ask me
// makes a "Save this?" card for each alike (docs/GATE.md).
func (w *Web) remember(rw http.ResponseWriter, r *http.Request, _ *session) {
	in := memory.RememberInput{Text: r.PostFormValue("text")}
	switch r.PostFormValue("as") {
	case "core":
		in.Core = true
	case "caution": // the date field is sent whatever is chosen: it counts only for a caution
		in.Caution, in.Until = true, r.PostFormValue("until")
	}
	text, err := w.cfg.Brain.OwnerRemember(r.Context(), in, "web")
	if err != nil {
		w.backErr(rw, r, "/memory", err)
		return
	}
	back(rw, r, "/memory", text)
}

// edit saves the owner's edit of a note; the memory checks it (conflict, secrets, the card's rules).
func (w *Web) edit(rw http.ResponseWriter, r *http.Request, _ *session) {
	name := r.PostFormValue("name")
	if err := w.mayChange(r, "edit "+name); err != nil {
		back(rw, r, "/memory/edit?name="+urlq(name), sentence(err))
		return
	}
	res, err := w.cfg.Memory.Edit(r.Context(), ownerActor, memory.EditInput{Name: name, Text: r.PostFormValue("text"), Base: r.PostFormValue("base")})
	if err != nil {
		back(rw, r, "/memory/edit?name="+urlq(name), sentence(err))
		return
	}
	back(rw, r, "/memory/note?name="+urlq(name), res.Text)
}

// mayChange is the gate's one check for the owner's own change in the web UI ("Change my box"): at Never
// it is refused with a diary line, as at the CLI and over MCP.
func (w *Web) mayChange(r *http.Request, what string) error {
	return w.gate.Check(r.Context(), gate.Change, gate.Asker{Owner: true, Via: "web"}, what)
}

func (w *Web) todoAdd(rw http.ResponseWriter, r *http.Request, _ *session) {
	if err := w.mayChange(r, "add a to-do"); err != nil {
		w.backErr(rw, r, "/todo", err)
		return
	}
	it, err := w.cfg.Todos.Add(r.Context(), ownerActor, r.PostFormValue("list"), r.PostFormValue("text"))
	if err != nil {
		w.backErr(rw, r, "/todo", err)
		return
	}
	back(rw, r, "/todo", "Added: "+it.Text)
}

func (w *Web) todoDone(rw http.ResponseWriter, r *http.Request, _ *session) {
	if err := w.mayChange(r, "tick off a to-do"); err != nil {
		w.backErr(rw, r, "/todo", err)
		return
	}
	it, err := w.cfg.Todos.Done(r.Context(), ownerActor, r.PostFormValue("id"))
	if err != nil {
		w.backErr(rw, r, "/todo", err)
		return
	}
	back(rw, r, "/todo", "Done: "+it.Text)
}

func (w *Web) searchAPI(rw http.ResponseWriter, r *http.Request, _ *session) {
	reply := searchReply{OK: true, Hits: []memory.Hit{}}
	if q := strings.TrimSpace(r.URL.Query().Get("q")); q != "" {
		res, err := w.cfg.Memory.Search(r.Context(), memory.SearchInput{Words: q, Limit: 12})
		if err != nil {
			w.fail(rw, r, err)
			return
		}
		reply.Hits, reply.Indexing = append(reply.Hits, res.Hits...), res.Indexing
	}
	writeJSON(rw, http.StatusOK, reply)
}

// searchReply is /api/search's answer.
type searchReply struct {
	OK       bool         `json:"ok"`
	Hits     []memory.Hit `json:"hits"`
	Indexing bool         `json:"indexing,omitempty"`
}

// setSwitch sets a switch. One that lets the box do more without asking carries a passkey assertion made
// for that switch and choice; the gate refuses it without one (docs/GATE.md, "The five switches").
func (w *Web) setSwitch(rw http.ResponseWriter, r *http.Request, ss *session) {
	sw, choice := r.PostFormValue("switch"), r.PostFormValue("choice")
	by, err := w.ownerProof(r, ss, "switch", sw+"="+choice)
	if err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	if _, err := w.gate.SetSwitch(r.Context(), by, sw, choice); err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	back(rw, r, "/settings", fmt.Sprintf("%q is now %s.", gate.Label(sw), gate.ChoiceLabel(choice)))
}

// newKey asks the gate to give an assistant access: a card the owner approves with their passkey, after
// which the key is shown once; Never refuses.
func (w *Web) newKey(rw http.ResponseWriter, r *http.Request, _ *session) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" || len(name) > 80 {
		back(rw, r, "/settings", "Give the key a name (like Claude Code), at most 80 characters.")
		return
	}
	caps := keys.Caps{Memory: r.PostFormValue("memory") != "", Messages: r.PostFormValue("messages") != "", Build: r.PostFormValue("build") != ""}
	out, err := w.gate.Propose(r.Context(), keys.Action(name, caps), gate.Asker{Owner: true, Via: "web"})
	if err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	if out.Decision.Verdict == gate.Card {
		back(rw, r, "/today", "Approve the card with your passkey to make the key; it is shown once.")
		return
	}
	back(rw, r, "/settings", out.Text) // a refusal: access is never Just do it
}

func (w *Web) revokeKey(rw http.ResponseWriter, r *http.Request, _ *session) {
	c, err := w.cfg.Keys.Disconnect(r.Context(), w.cfg.Box, r.PathValue("id"), ownerActor, "Disconnect in Settings → Other assistants")
	if err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	back(rw, r, "/settings", c.Name+" is disconnected; its next call is refused.")
}

// freeze freezes the box, or unfreezes it with a passkey assertion made for that (the composition root
// refuses an unfreeze without one).
func (w *Web) freeze(rw http.ResponseWriter, r *http.Request, ss *session) {
	on := r.PostFormValue("on") == "1"
	by := gate.By{Via: "web"}
	if !on {
		var err error
		if by, err = w.ownerProof(r, ss, "unfreeze", ""); err != nil {
			w.backErr(rw, r, "/settings", err)
			return
		}
	}
	if _, err := w.cfg.Freeze(r.Context(), by, on); err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	if on {
		back(rw, r, "/settings", "The box is frozen: no assistant can read, do or talk until you unfreeze it.")
		return
	}
	back(rw, r, "/settings", "The box is unfrozen.")
}

// erase removes memory, lists, pages and files, their history, and every connection; the passkey stays.
// It needs the typed phrase and a passkey assertion made for it just now; the work is the composition
// root's (memory, keys, grants, state), and any step that fails is reported.
func (w *Web) erase(rw http.ResponseWriter, r *http.Request, ss *session) {
	b, err := readBody(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if !strings.EqualFold(strings.Join(strings.Fields(b.Phrase), " "), ErasePhrase) {
		w.fail(rw, r, errs.E("web.erase", errs.Invalid, "Type %q exactly to erase the box; nothing was erased.", ErasePhrase))
		return
	}
	if _, err := w.confirmed(r, ss, b, "erase"); err != nil {
		w.fail(rw, r, err)
		return
	}
	if _, err := w.cfg.Erase(r.Context(), ownerActor); err != nil {
		w.fail(rw, r, err)
		return
	}
	// Every session ended with the erase (this one too): the owner signs in again with the passkey.
	writeJSON(rw, http.StatusOK, eraseReply{OK: true, Text: "Your box is erased, its history too, and every assistant and browser is signed out. Your passkey stays: sign in with it again.", Next: "/signin"})
}

// eraseReply is what the browser gets back from an erase.
type eraseReply struct {
	OK   bool   `json:"ok"`
	Text string `json:"text"`
	Next string `json:"next"`
}

func urlq(s string) string { return url.QueryEscape(s) }
