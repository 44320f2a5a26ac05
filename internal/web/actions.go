package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
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
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.ContainsAny(p, "\\\r\n") {
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
	back(rw, r, "/diary", fmt.Sprintf("Undid %d %s by %s since %s.", n, plural(n, "change", "changes"), who, since.Format("2 Jan 15:04")))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// rememberText runs "remember" through the gate as the owner asked it (web or chat).
func (w *Web) rememberText(ctx context.Context, text, via string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", errs.E("web.remember", errs.Invalid, "Type the fact to remember first.")
	}
	// The refusals come before the gate: a card, its diary line and its commit would otherwise carry
	// the very secret remember refuses to keep.
	if err := memory.CheckRemember(text); err != nil {
		return "", err
	}
	out, err := w.gate.Propose(ctx, memory.RememberAction(text), gate.Asker{Owner: true, Via: via})
	if err != nil {
		return "", err
	}
	switch out.Decision.Verdict {
	case gate.Refuse:
		return "", errs.E("web.remember", errs.Refused, "%s", out.Text)
	case gate.Card:
		return "A \"Save this?\" card is waiting on Today; nothing is saved until you say yes.", nil
	}
	res, err := w.cfg.Memory.Remember(ctx, box.Actor{Who: "owner", Via: via, Trust: "own"}, memory.RememberInput{Text: text})
	return res.Text, err
}

func (w *Web) remember(rw http.ResponseWriter, r *http.Request, _ *session) {
	text, err := w.rememberText(r.Context(), r.PostFormValue("text"), "web")
	if err != nil {
		w.backErr(rw, r, "/memory", err)
		return
	}
	back(rw, r, "/memory", text)
}

// edit saves the owner's edit of a note; the memory checks it (conflict, secrets, the card's rules).
func (w *Web) edit(rw http.ResponseWriter, r *http.Request, _ *session) {
	name := r.PostFormValue("name")
	res, err := w.cfg.Memory.Edit(r.Context(), ownerActor, memory.EditInput{Name: name, Text: r.PostFormValue("text"), Base: r.PostFormValue("base")})
	if err != nil {
		back(rw, r, "/memory/edit?name="+urlq(name), sentence(err))
		return
	}
	back(rw, r, "/memory/note?name="+urlq(name), res.Text)
}

func (w *Web) todoAdd(rw http.ResponseWriter, r *http.Request, _ *session) {
	it, err := w.cfg.Todos.Add(r.Context(), ownerActor, r.PostFormValue("list"), r.PostFormValue("text"))
	if err != nil {
		w.backErr(rw, r, "/todo", err)
		return
	}
	back(rw, r, "/todo", "Added: "+it.Text)
}

func (w *Web) todoDone(rw http.ResponseWriter, r *http.Request, _ *session) {
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

var (
	rememberRe = regexp.MustCompile(`(?is)^\s*(?:please\s+)?remember(?:\s+that)?[\s:,]+(.+)$`)
	forgetRe   = regexp.MustCompile(`(?is)^\s*(?:please\s+)?forget(?:\s+about)?[\s:,]+(.+)$`)
)

const noBrain = "No brain is set up yet, so I answer from your memory by search; you can set one up later in Settings → Brain."

// chat answers without a brain: "remember …", "forget …", and questions by search.
func (w *Web) chat(rw http.ResponseWriter, r *http.Request, _ *session) {
	ctx := r.Context()
	var in struct {
		Text    string `json:"text"`
		Confirm bool   `json:"confirm"`
	}
	if isJSON(r) {
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			w.fail(rw, r, errs.E("web.chat", errs.Invalid, "The message could not be read; reload the page and try again."))
			return
		}
	} else {
		in.Text = r.PostFormValue("text")
	}
	reply, confirm := w.answer(ctx, strings.TrimSpace(in.Text), in.Confirm)
	if !isJSON(r) {
		http.Redirect(rw, r, "/chat?q="+urlq(in.Text)+"&a="+urlq(reply), http.StatusSeeOther)
		return
	}
	writeJSON(rw, http.StatusOK, chatReply{OK: true, Reply: reply, Confirm: confirm})
}

// chatReply is what the chat answers a script.
type chatReply struct {
	OK      bool   `json:"ok"`
	Reply   string `json:"reply"`
	Confirm bool   `json:"confirm"`
}

func (w *Web) answer(ctx context.Context, text string, confirm bool) (reply string, needsConfirm bool) {
	if text == "" {
		return "Say something to remember (\"remember Leo swims on Thursdays\"), something to forget, or ask a question.", false
	}
	if err := w.cfg.State.Quiet(ctx); err != nil {
		return "The box is frozen or locked (or cannot tell), so it is not reading, doing or talking; unfreeze it in Settings → Safety.", false
	}
	if mt := rememberRe.FindStringSubmatch(text); mt != nil {
		t, err := w.rememberText(ctx, mt[1], "chat")
		if err != nil {
			return sentence(err), false
		}
		return t, false
	}
	m := w.cfg.Memory
	if mt := forgetRe.FindStringSubmatch(text); mt != nil {
		res, err := m.Forget(ctx, box.Actor{Who: "owner", Via: "chat", Trust: "own"}, memory.ForgetInput{Words: mt[1], Confirm: confirm})
		if err != nil {
			return sentence(err), false
		}
		if res.NeedsConfirm {
			return fmt.Sprintf("%d lines match; nothing was removed yet. Remove them all? (They go to the trash, and Undo brings them back.)", len(res.Matched)), true
		}
		return res.Text, false
	}
	res, err := m.Search(ctx, memory.SearchInput{Words: text, Limit: 3})
	if err != nil {
		return sentence(err), false
	}
	if len(res.Hits) == 0 {
		return "I found nothing about that in your memory. " + noBrain, false
	}
	var b strings.Builder
	b.WriteString("From your memory:")
	for _, h := range res.Hits {
		fmt.Fprintf(&b, "\n• %s", strings.ReplaceAll(strings.Join(strings.Fields(h.Snippet), " "), "**", ""))
	}
	b.WriteString("\n" + noBrain)
	return b.String(), false
}

func (w *Web) setSwitch(rw http.ResponseWriter, r *http.Request, _ *session) {
	sw, choice := r.PostFormValue("switch"), r.PostFormValue("choice")
	if _, err := w.gate.SetSwitch(r.Context(), ownerActor, sw, choice); err != nil {
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
	c, err := w.cfg.Keys.Revoke(r.Context(), r.PathValue("id"))
	if err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	if err := w.record(r, "revoke", fmt.Sprintf("owner revoked the key for %s (%s)", c.Name, c.ID), "Disconnect in Settings → Other assistants"); err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	back(rw, r, "/settings", c.Name+" is disconnected; its next call is refused.")
}

func (w *Web) freeze(rw http.ResponseWriter, r *http.Request, _ *session) {
	on := r.PostFormValue("on") == "1"
	if err := w.cfg.State.SetFrozen(r.Context(), on); err != nil {
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
	writeJSON(rw, http.StatusOK, eraseReply{OK: true, Text: "Your box is erased, its history too, and every assistant is disconnected. Your passkey stays.", Next: "/today"})
}

// eraseReply is what the browser gets back from an erase.
type eraseReply struct {
	OK   bool   `json:"ok"`
	Text string `json:"text"`
	Next string `json:"next"`
}

func urlq(s string) string { return url.QueryEscape(s) }
