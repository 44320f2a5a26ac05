package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/keys"
)

// The OAuth consent page: who asks, what for, the checkboxes, approved with the owner's passkey. It needs
// no sign-in: the passkey assertion (user verification, challenge bound to the request and the ticked
// checkboxes) is the owner's consent. The rules (what may be offered, codes, tokens) are package grants'.

func (w *Web) issuer(r *http.Request) string {
	if w.cfg.Issuer != nil {
		return w.cfg.Issuer(r)
	}
	return w.origin(r)
}

// oauthAnswer is the redirect that answers a request: with the issuer the client sent it to, which /authorize
// recorded (the consent page may be at another name of the same box: localhost for 127.0.0.1).
func (w *Web) oauthAnswer(r *http.Request, req grants.Request, v url.Values) string {
	if req.Issuer == "" { // a request made before the box recorded issuers
		req.Issuer = w.issuer(r)
	}
	return req.Answer(v)
}

func (w *Web) consentPage(rw http.ResponseWriter, r *http.Request) {
	req, err := w.cfg.Grants.Pending(r.Context(), r.URL.Query().Get("request"))
	if err != nil {
		w.render(rw, r, nil, "consent", &consentData{Error: refusalText(err)})
		return
	}
	never, err := w.gate.Never(r.Context(), gate.Access)
	never = never || err != nil // switches it cannot read: no new connection (closed, not open)
	w.render(rw, r, nil, "consent", &consentData{Req: req, Host: req.Host(), Offered: req.Offered(), Asked: req.Asked(),
		Never: never, HasPasskey: w.auth.hasPasskey(r.Context()), Localhost: w.byName(r)})
}

func refusalText(err error) string { return sentence(err) }

func capsKey(c keys.Caps) string {
	return fmt.Sprintf("memory=%t,messages=%t,build=%t", c.Memory, c.Messages, c.Build)
}

// consentBegin starts a passkey check bound to one request and the checkboxes the owner ticked.
func (w *Web) consentBegin(rw http.ResponseWriter, r *http.Request) {
	b, err := readBody(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if _, err := w.cfg.Grants.Pending(r.Context(), b.Request); err != nil {
		w.fail(rw, r, errs.E("web.consent", errs.NotFound, "%s", refusalText(err)))
		return
	}
	caps := keys.Caps{Memory: b.Memory, Messages: b.Messages, Build: b.Build}
	c := &ceremony{purpose: "consent", card: b.Request, hash: capsKey(caps)}
	rp, o, err := w.ownerParty(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if len(o.creds) == 0 {
		w.fail(rw, r, errs.E("web.consent", errs.NotFound, "This box has no passkey yet; open the setup link box serve printed first."))
		return
	}
	w.beginAssertion(rw, r, c, rp, o, boundChallenge("consent\x00"+b.Request, c.hash))
}

// consentFinish checks the owner's assertion and answers the client with a code.
func (w *Web) consentFinish(rw http.ResponseWriter, r *http.Request) {
	b, c, err := w.finishing(r, "consent")
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if _, err := w.verify(r, c, b.Credential, false); err != nil {
		w.fail(rw, r, err)
		return
	}
	var caps keys.Caps
	if _, err := fmt.Sscanf(c.hash, "memory=%t,messages=%t,build=%t", &caps.Memory, &caps.Messages, &caps.Build); err != nil {
		w.fail(rw, r, errs.Wrap("web.consent", errs.Other, err, ""))
		return
	}
	if err := w.gate.Check(r.Context(), gate.Access, gate.Asker{Owner: true, Via: "web"}, "connect an assistant (OAuth request "+c.card+")"); err != nil {
		w.fail(rw, r, errs.Wrap("web.consent", errs.KindOf(err), err, "No assistant was connected"))
		return
	}
	req, code, err := w.cfg.Grants.Approve(r.Context(), c.card, caps)
	if err != nil {
		w.fail(rw, r, errs.E("web.consent", errs.Conflict, "%s", refusalText(err)))
		return
	}
	if err := w.record(r, "connect", fmt.Sprintf("owner let %s (%s) %s", req.ClientName, req.Host(), caps.Sentence()),
		"approved with the owner's passkey on the consent page"); err != nil {
		// A connection the diary does not know of must not start: end it before its code is used.
		w.fail(rw, r, errors.Join(err, w.cfg.Grants.RevokeCode(r.Context(), code)))
		return
	}
	w.log.Info("oauth consent", "client", req.ClientName, "host", req.Host(), "caps", c.hash)
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "text": req.ClientName + " is connected.",
		"next": w.oauthAnswer(r, req, url.Values{"code": {code}})})
}

// consentDeny answers the client with access_denied; no passkey is needed to say no.
func (w *Web) consentDeny(rw http.ResponseWriter, r *http.Request) {
	b, err := readBody(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	req, err := w.cfg.Grants.Deny(r.Context(), b.Request)
	if err != nil {
		w.fail(rw, r, errs.E("web.consent", errs.Conflict, "%s", refusalText(err)))
		return
	}
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "text": "Refused.",
		"next": w.oauthAnswer(r, req, url.Values{"error": {"access_denied"}, "error_description": {"The owner said no."}})})
}

// disconnect ends an OAuth connection: its next call is refused.
func (w *Web) disconnect(rw http.ResponseWriter, r *http.Request, _ *session) {
	if w.cfg.Grants == nil {
		back(rw, r, "/settings", "")
		return
	}
	g, ended, err := w.cfg.Grants.Revoke(r.Context(), r.PathValue("id"))
	if err != nil {
		back(rw, r, "/settings", refusalText(err))
		return
	}
	if !ended {
		back(rw, r, "/settings", g.Client+" was already disconnected.")
		return
	}
	if err := w.record(r, "disconnect", fmt.Sprintf("owner disconnected %s (%s)", g.Client, g.Host), "Disconnect in Settings → Other assistants"); err != nil {
		w.log.Error("web: diary line for a disconnect", "grant", g.ID, "err", err)
		back(rw, r, "/settings", g.Client+" is disconnected; its next call is refused. The diary line could not be written; box serve's log says why.")
		return
	}
	back(rw, r, "/settings", g.Client+" is disconnected; its next call is refused.")
}

// record writes the diary line of an access decision that changes no file (docs/GATE.md: every decision is
// in the diary), through the box's write transaction. It never names a token.
func (w *Web) record(r *http.Request, op, summary, reason string) error {
	_, err := w.cfg.Box.Do(r.Context(), box.Change{Actor: ownerActor, Op: op, Switch: gate.Access, Summary: summary, Reason: reason,
		Apply: func(*box.Tx) error { return nil }})
	return err
}
