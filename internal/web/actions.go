package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/secret"
)

// ErasePhrase is what the owner types to erase the box.
const ErasePhrase = "erase my box"

// op is one kind of action a card can hold: how to rebuild it from the box as it is now (so approval can
// check that nothing changed) and how to run it.
type op struct {
	current func(ctx context.Context, w *Web, stored gate.Action) (gate.Action, error)
	run     func(ctx context.Context, w *Web, c gate.ApprovalCard, a gate.Action) (text, secret string, err error)
}

var ops = map[string]op{
	"forget":   {current: currentForget, run: runForget},
	"remember": {current: sameAction, run: runRemember},
	"key":      {current: sameAction, run: runKey},
}

func payloadOf(a gate.Action) map[string]any {
	p, _ := a.Payload.(map[string]any)
	return p
}

func str(p map[string]any, k string) string {
	s, _ := p[k].(string)
	return s
}

// sameAction is for actions fully described by their payload: what was shown is what runs.
func sameAction(_ context.Context, _ *Web, stored gate.Action) (gate.Action, error) {
	return stored, nil
}

func currentForget(ctx context.Context, w *Web, stored gate.Action) (gate.Action, error) {
	words := str(payloadOf(stored), "words")
	lines, err := gate.ForgetLines(ctx, w.cfg.Box.Root, words)
	if err != nil {
		return gate.Action{}, err
	}
	return gate.ForgetAction(words, lines), nil
}

func proposer(c gate.ApprovalCard) box.Actor {
	a := box.Actor{Who: c.ProposedBy.Who, Via: c.ProposedBy.Via, Host: c.ProposedBy.Host, Trust: "outside"}
	if c.FromOwner() {
		a = box.Actor{Who: "owner", Via: nonEmpty(c.ProposedBy.Via, "web"), Trust: "own"}
	}
	return a
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func runForget(ctx context.Context, w *Web, c gate.ApprovalCard, a gate.Action) (string, string, error) {
	m, err := w.mem()
	if err != nil {
		return "", "", err
	}
	res, err := m.Forget(ctx, proposer(c), memory.ForgetInput{Words: str(payloadOf(a), "words"), Confirm: true})
	return res.Text, "", err
}

func runRemember(ctx context.Context, w *Web, c gate.ApprovalCard, a gate.Action) (string, string, error) {
	m, err := w.mem()
	if err != nil {
		return "", "", err
	}
	res, err := m.Remember(ctx, proposer(c), memory.RememberInput{Text: str(payloadOf(a), "text")})
	return res.Text, "", err
}

func runKey(ctx context.Context, w *Web, _ gate.ApprovalCard, a gate.Action) (string, string, error) {
	p := payloadOf(a)
	caps := keys.Caps{}
	if cm, ok := p["caps"].(map[string]any); ok {
		caps.Memory, _ = cm["memory"].(bool)
		caps.Messages, _ = cm["messages"].(bool)
		caps.Build, _ = cm["build"].(bool)
	}
	conn, secret, err := w.cfg.Keys.New(ctx, str(p, "name"), caps)
	if err != nil {
		return "", "", err
	}
	return fmt.Sprintf("The key for %s is made; copy it now, it is shown only once.", conn.Name), secret, nil
}

// approve runs a card after a passkey assertion bound to that card and its action hash.
func (w *Web) approve(rw http.ResponseWriter, r *http.Request, ss *session) {
	ctx := r.Context()
	id := r.PathValue("id")
	b, err := readBody(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if frozen, _ := w.cfg.Keys.Frozen(ctx); frozen {
		w.fail(rw, r, errs.E("web.approve", errs.Frozen, "The box is frozen, so nothing runs; unfreeze it in Settings → Safety first."))
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
	o, ok := ops[str(payloadOf(c.Action), "op")]
	if !ok {
		w.fail(rw, r, errs.E("web.approve", errs.Invalid, "The box does not know how to run this card's action; nothing ran."))
		return
	}
	now, err := o.current(ctx, w, c.Action)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	var text, secret string
	_, err = w.gate.Approve(ctx, id, now, true, func(ctx context.Context) error {
		var err error
		text, secret, err = o.run(ctx, w, c, now)
		return err
	})
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if text == "" {
		text = "Done: " + c.Title
	}
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "text": text, "secret": secret})
}

func (w *Web) decline(rw http.ResponseWriter, r *http.Request, _ *session) {
	c, err := w.gate.Decline(r.Context(), r.PathValue("id"), r.PostFormValue("note"))
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

// undoOne reverses one entry through the memory when it is open (so the index follows), else the box.
func (w *Web) undoOne(ctx context.Context, id string) (string, error) {
	if m := w.cfg.Memory(); m != nil {
		res, err := m.Undo(ctx, ownerActor, id)
		return res.Summary, err
	}
	_, err := w.cfg.Box.Undo(ctx, id, ownerActor)
	return "Undone.", err
}

func (w *Web) undo(rw http.ResponseWriter, r *http.Request, _ *session) {
	to := nonEmpty(safeBack(r.PostFormValue("back")), "/today")
	id := r.PostFormValue("entry")
	if id == "" {
		last, err := w.lastUndoable(r.Context())
		if err != nil || last == nil {
			back(rw, r, to, "There is nothing to undo.")
			return
		}
		id = last.ID
	} else if e, err := diary.Find(w.cfg.Box.Root, id); err == nil && bookkeeping(e.Op) {
		back(rw, r, to, "That line is the box's own paper trail; undo the change it is about instead.")
		return
	}
	summary, err := w.undoOne(r.Context(), id)
	if err != nil {
		w.backErr(rw, r, to, err)
		return
	}
	back(rw, r, to, nonEmpty(summary, "Undone."))
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
	since, err := time.ParseInLocation("2006-01-02T15:04", r.PostFormValue("since"), time.Local)
	if who == "" || err != nil {
		back(rw, r, "/diary", "Say whose changes to undo and since when.")
		return
	}
	all, err := w.cfg.Box.Diary(r.Context(), 2000, nil)
	if err != nil {
		w.backErr(rw, r, "/diary", err)
		return
	}
	undone := map[string]bool{}
	var todo []string
	for _, e := range all { // newest first
		if e.Op == "undo" && !undone[e.ID] {
			undone[e.UndoOf] = true
			continue
		}
		t, err := time.Parse(time.RFC3339, e.Time)
		if err != nil || t.Before(since) {
			continue
		}
		if e.Actor == who && !undone[e.ID] && len(e.Undo) > 0 && e.Op != "init" && !bookkeeping(e.Op) {
			todo = append(todo, e.ID)
		}
	}
	n := 0
	for _, id := range todo {
		if _, err := w.undoOne(r.Context(), id); err != nil {
			back(rw, r, "/diary", fmt.Sprintf("Undid %d of %d changes by %s, then stopped: %s", n, len(todo), who, sentence(err)))
			return
		}
		n++
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
	if err := secret.CheckRemember(text); err != nil {
		return "", err
	}
	m, err := w.mem()
	if err != nil {
		return "", err
	}
	a := gate.Action{Kind: "save", Switch: gate.Change, Summary: text, Payload: map[string]any{"op": "remember", "text": text}}
	out, err := w.gate.Propose(ctx, a, gate.Asker{Owner: true, Via: via})
	if err != nil {
		return "", err
	}
	switch out.Decision.Verdict {
	case gate.Refuse:
		return "", errs.E("web.remember", errs.Refused, "%s", out.Text)
	case gate.Card:
		return "A \"Save this?\" card is waiting on Today; nothing is saved until you say yes.", nil
	}
	res, err := m.Remember(ctx, box.Actor{Who: "owner", Via: via, Trust: "own"}, memory.RememberInput{Text: text})
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

// edit saves the owner's edit of a note, checked like every write (the memory's box validates cards), and
// only if nobody changed the file since the form was opened.
func (w *Web) edit(rw http.ResponseWriter, r *http.Request, _ *session) {
	ctx := r.Context()
	name := r.PostFormValue("name")
	to := "/memory/note?name=" + urlq(name)
	m, err := w.mem()
	if err != nil {
		w.backErr(rw, r, to, err)
		return
	}
	n, err := m.Read(ctx, name)
	if err != nil || !editable(n.Path) {
		w.backErr(rw, r, "/memory", errs.E("web.edit", errs.NotFound, "There is no note %q to edit.", name))
		return
	}
	text := strings.ReplaceAll(r.PostFormValue("text"), "\r\n", "\n")
	base := r.PostFormValue("base")
	_, err = m.Box().Do(ctx, box.Change{Actor: ownerActor, Op: "edit", Switch: gate.Change,
		Summary: fmt.Sprintf("owner edited %s", n.Path),
		Apply: func(tx *box.Tx) error {
			cur, err := tx.Read(n.Path)
			if err != nil {
				return err
			}
			if sum(cur) != base {
				return errs.E("web.edit", errs.Conflict, "The note changed since you opened it (a tidy or an assistant wrote to it); nothing was saved, so open it again.")
			}
			if string(cur) == text {
				return errs.E("web.edit", errs.Invalid, "Nothing changed, so nothing was saved.")
			}
			if err := addedSecret(cur, text); err != nil {
				return err
			}
			return tx.Write(n.Path, []byte(text))
		}})
	if err != nil {
		back(rw, r, "/memory/edit?name="+urlq(name), sentence(err))
		return
	}
	back(rw, r, to, "Saved. Undo on Today brings the old text back.")
}

func (w *Web) todoAdd(rw http.ResponseWriter, r *http.Request, _ *session) {
	if w.cfg.Todos == nil {
		back(rw, r, "/todo", "To-do lists are not available here.")
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
	if w.cfg.Todos == nil {
		back(rw, r, "/todo", "To-do lists are not available here.")
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
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "hits": []any{}})
		return
	}
	m, err := w.mem()
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	res, err := m.Search(r.Context(), memory.SearchInput{Words: q, Limit: 12})
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if res.Hits == nil {
		res.Hits = []memory.Hit{}
	}
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "hits": res.Hits, "indexing": res.Indexing})
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
		json.NewDecoder(r.Body).Decode(&in)
	} else {
		in.Text = r.PostFormValue("text")
	}
	reply, confirm := w.answer(ctx, strings.TrimSpace(in.Text), in.Confirm)
	if !isJSON(r) {
		http.Redirect(rw, r, "/chat?q="+urlq(in.Text)+"&a="+urlq(reply), http.StatusSeeOther)
		return
	}
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "reply": reply, "confirm": confirm})
}

func (w *Web) answer(ctx context.Context, text string, confirm bool) (reply string, needsConfirm bool) {
	if text == "" {
		return "Say something to remember (\"remember Leo swims on Thursdays\"), something to forget, or ask a question.", false
	}
	if frozen, _ := w.cfg.Keys.Frozen(ctx); frozen {
		return "The box is frozen, so it is not reading, doing or talking; unfreeze it in Settings → Safety.", false
	}
	if mt := rememberRe.FindStringSubmatch(text); mt != nil {
		t, err := w.rememberText(ctx, mt[1], "chat")
		if err != nil {
			return sentence(err), false
		}
		return t, false
	}
	m, err := w.mem()
	if err != nil {
		return sentence(err), false
	}
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
	a := gate.Action{Kind: "access", Switch: gate.Access, Summary: fmt.Sprintf("a key for %s that can %s", name, capsSentence(caps)),
		Payload: map[string]any{"op": "key", "name": name, "caps": map[string]any{"memory": caps.Memory, "messages": caps.Messages, "build": caps.Build}}}
	out, err := w.gate.Propose(r.Context(), a, gate.Asker{Owner: true, Via: "web"})
	if err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	switch out.Decision.Verdict {
	case gate.Refuse:
		back(rw, r, "/settings", out.Text)
	case gate.Card:
		back(rw, r, "/today", "Approve the card with your passkey to make the key; it is shown once.")
	default: // access is never Just do it; kept for completeness
		back(rw, r, "/settings", out.Text)
	}
}

// capsSentence says what a key may do, in the owner's words.
func capsSentence(c keys.Caps) string {
	what := []string{"read memory"}
	if c.Memory {
		what = append(what, "save to memory")
	}
	if c.Messages {
		what = append(what, "read your messages and mail")
	}
	if c.Build {
		what = append(what, "build for your box (30 days)")
	}
	if len(what) == 1 {
		return what[0]
	}
	return strings.Join(what[:len(what)-1], ", ") + " and " + what[len(what)-1]
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
	if err := w.cfg.Keys.SetFrozen(r.Context(), on); err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	if on {
		back(rw, r, "/settings", "The box is frozen: no assistant can read, do or talk until you unfreeze it.")
		return
	}
	back(rw, r, "/settings", "The box is unfrozen.")
}

// erase removes memory, lists, pages and files and disconnects every assistant; the passkey stays. It
// needs the typed phrase and a passkey assertion made for it just now.
func (w *Web) erase(rw http.ResponseWriter, r *http.Request, ss *session) {
	ctx := r.Context()
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
	var paths []string
	for _, dir := range []string{"/_content", "/_config/pages", "/_config/connectors", "/_config/looks", "/_publish"} {
		filepath.WalkDir(w.hostPath(dir), func(h string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(w.cfg.Box.Root, h)
				paths = append(paths, "/"+filepath.ToSlash(rel))
			}
			return nil
		})
	}
	_, err = w.cfg.Box.Do(ctx, box.Change{Actor: ownerActor, Op: "erase", Switch: gate.Delete,
		Summary: fmt.Sprintf("owner erased the box (%d files) and disconnected every assistant", len(paths)),
		Reason:  "typed phrase and a passkey confirmation",
		Apply: func(tx *box.Tx) error {
			for _, p := range paths {
				if err := tx.Remove(p); err != nil && !errs.Is(err, errs.NotFound) && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			}
			return tx.Write(layout.Router, []byte("# Memory\n"))
		}})
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	conns, _ := w.cfg.Keys.List(ctx)
	for _, c := range conns {
		if c.Revoked.IsZero() {
			w.cfg.Keys.Revoke(ctx, c.ID)
		}
	}
	if w.cfg.Grants != nil {
		w.cfg.Grants.RevokeAll(ctx)
	}
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "text": "Your box is erased and every assistant is disconnected. Your passkey stays.", "next": "/today"})
}

func urlq(s string) string { return url.QueryEscape(s) }

// addedSecret refuses an edit whose new lines look like a secret: the box never holds one. Lines that were
// there before are the owner's to clean up; the edit is not refused for them.
func addedSecret(before []byte, after string) error {
	had := map[string]bool{}
	for _, l := range strings.Split(string(before), "\n") {
		had[l] = true
	}
	for _, l := range strings.Split(after, "\n") {
		if had[l] {
			continue
		}
		if reason, found := secret.Secret(l); found {
			return errs.E("web.edit", errs.Refused, "Nothing was saved: %s", reason)
		}
	}
	return nil
}
