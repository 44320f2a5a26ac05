package web

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/errs"
)

// chatIn is a message sent to the chat (JSON, or the form without scripts).
type chatIn struct {
	Text    string `json:"text"`
	Chat    string `json:"chat"`
	Confirm bool   `json:"confirm"`
}

func (w *Web) readChat(r *http.Request) (chatIn, error) {
	var in chatIn
	if !isJSON(r) {
		return chatIn{Text: r.PostFormValue("text"), Chat: r.PostFormValue("chat")}, nil
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return in, errs.E("web.chat", errs.Invalid, "The message could not be read; reload the page and try again.")
	}
	return in, nil
}

// chat answers one message whole: the form without scripts (back to the page with the answer), or JSON.
func (w *Web) chat(rw http.ResponseWriter, r *http.Request, _ *session) {
	in, err := w.readChat(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	res, err := w.cfg.Brain.Chat(r.Context(), brain.ChatInput{Chat: in.Chat, Text: in.Text, Confirm: in.Confirm, Via: "web"}, nil)
	if err != nil && res.Reply == "" {
		w.fail(rw, r, err)
		return
	}
	if !isJSON(r) {
		http.Redirect(rw, r, "/chat?q="+urlq(in.Text)+"&a="+urlq(res.Reply)+"&chat="+urlq(res.Chat), http.StatusSeeOther)
		return
	}
	writeJSON(rw, http.StatusOK, chatReply{OK: true, ChatResult: res})
}

// chatReply is what the chat answers a script: the turn's result (docs/BRAIN.md), with ok.
type chatReply struct {
	OK bool `json:"ok"`
	brain.ChatResult
}

// chatStream answers one message as server-sent events while the brain writes: {"type":"text"} pieces,
// "tool" when a tool is called, "restart" when the turn starts over on the main model, "note" from the
// box (the budget), and last {"type":"done","result":…}, the turn's result.
func (w *Web) chatStream(rw http.ResponseWriter, r *http.Request, _ *session) {
	in, err := w.readChat(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	rc := http.NewResponseController(rw)
	rw.Header().Set("Content-Type", "text/event-stream")
	rw.Header().Set("Cache-Control", "no-store")
	rw.Header().Set("X-Accel-Buffering", "no") // a proxy in front must not hold the stream back
	rw.WriteHeader(http.StatusOK)
	gone := false
	send := func(v any) {
		if gone {
			return
		}
		data, err := json.Marshal(v)
		if err == nil {
			_, err = fmt.Fprintf(rw, "data: %s\n\n", data)
		}
		if err == nil {
			err = rc.Flush()
		}
		gone = err != nil // the browser went away: the turn still ends and is recorded
	}
	res, err := w.cfg.Brain.Chat(r.Context(), brain.ChatInput{Chat: in.Chat, Text: in.Text, Confirm: in.Confirm, Via: "web"},
		func(e brain.Event) { send(e) })
	if err != nil && res.Reply == "" {
		res.Reply = sentence(err)
		if status(err) == http.StatusInternalServerError {
			w.log.Error("web", "path", r.URL.Path, "err", err)
		}
	}
	send(struct {
		Type   string           `json:"type"`
		Result brain.ChatResult `json:"result"`
	}{"done", res})
}

// brainData is Settings → Brain.
type brainData struct {
	Status    brain.Status
	Providers []string
	Problem   string
}

func (w *Web) brainStatus(r *http.Request) brainData {
	st, err := w.cfg.Brain.Status(r.Context())
	d := brainData{Status: st, Providers: brain.Providers}
	if err != nil {
		d.Problem = sentence(err)
	}
	return d
}

// setBrain checks the key with the provider before anything is saved; the key field is never shown again.
// It needs a passkey assertion made for it: the brain's address decides where the key and the owner's
// words go, so a session cookie alone cannot change it (docs/SECURITY.md).
func (w *Web) setBrain(rw http.ResponseWriter, r *http.Request, ss *session) {
	if err := w.formConfirmed(r, ss, "brain-set", "Changing the brain"); err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	in := brain.SetInput{Provider: r.PostFormValue("provider"), BaseURL: r.PostFormValue("base_url"), Model: r.PostFormValue("model"),
		FastModel: r.PostFormValue("fast_model"), Key: r.PostFormValue("key")}
	st, err := w.cfg.Brain.Set(r.Context(), ownerActor, in)
	if err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	note := fmt.Sprintf("The brain is set: %s, %s.", st.Name, st.Settings.Model)
	if st.Key != "" {
		note += " It uses " + st.Key + "."
	}
	back(rw, r, "/settings", note)
}

func (w *Web) brainBudget(rw http.ResponseWriter, r *http.Request, _ *session) {
	usd, err := brain.ParseBudget(r.PostFormValue("budget"))
	if err != nil {
		back(rw, r, "/settings", errs.Sentence(err))
		return
	}
	st, err := w.cfg.Brain.SetBudget(r.Context(), ownerActor, usd)
	if err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	note := "The brain has no monthly budget now."
	if st.Settings.Budget > 0 {
		note = fmt.Sprintf("The brain's monthly budget is $%.2f.", st.Settings.Budget)
	}
	back(rw, r, "/settings", note)
}

func (w *Web) brainOff(rw http.ResponseWriter, r *http.Request, _ *session) {
	if err := w.cfg.Brain.Off(r.Context(), ownerActor); err != nil {
		w.backErr(rw, r, "/settings", err)
		return
	}
	back(rw, r, "/settings", "The brain is off and its key removed; the chat answers from your memory by search.")
}
