package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
)

// finishBody is what the browser posts to finish a ceremony.
type finishBody struct {
	Ceremony   string          `json:"ceremony"`
	Credential json.RawMessage `json:"credential"`
	Name       string          `json:"name,omitempty"`   // register: what to call the passkey
	Phrase     string          `json:"phrase,omitempty"` // erase: the typed phrase
	Code       string          `json:"code,omitempty"`   // register/begin: the setup code
	Purpose    string          `json:"purpose,omitempty"`
	Card       string          `json:"card,omitempty"`
	Passkey    string          `json:"passkey,omitempty"` // confirm begin for passkey-remove: the passkey's id
	Request    string          `json:"request,omitempty"` // consent: the OAuth request
	Memory     bool            `json:"memory,omitempty"`  // consent: the ticked checkboxes
	Messages   bool            `json:"messages,omitempty"`
	Build      bool            `json:"build,omitempty"`
}

func readBody(r *http.Request) (finishBody, error) {
	var b finishBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		return b, errs.E("web", errs.Invalid, "The request could not be read; reload the page and try again.")
	}
	return b, nil
}

func (w *Web) rp(r *http.Request) (*webauthn.WebAuthn, error) {
	rp, err := relyingParty(w.origin(r), rpID(r))
	if err != nil {
		return nil, errs.Wrap("web.passkey", errs.Invalid, err, "Passkeys need the box's address to be a name like localhost, not a bare IP address; open it as http://localhost:PORT")
	}
	return rp, nil
}

// ownerParty returns the relying party for the request's address and the owner with their passkeys.
func (w *Web) ownerParty(r *http.Request) (*webauthn.WebAuthn, *owner, error) {
	rp, err := w.rp(r)
	if err != nil {
		return nil, nil, err
	}
	o, err := w.auth.owner(r.Context(), "Owner")
	if err != nil {
		return nil, nil, err
	}
	return rp, o, nil
}

func (w *Web) currentSession(r *http.Request) *session {
	if v := w.sessionCookie(r); v != "" {
		if ss, ok := w.auth.session(r.Context(), v); ok {
			return ss
		}
	}
	return nil
}

// registerBegin starts making a passkey: with a valid setup code, or from a signed-in session (and its
// CSRF token) to add another, which also needs an assertion of one of the owner's passkeys made for it
// just now ("passkey-add"), so a session cookie alone cannot add a passkey (docs/OAUTH.md).
func (w *Web) registerBegin(rw http.ResponseWriter, r *http.Request) {
	b, err := readBody(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	c := &ceremony{purpose: "register"}
	if ss := w.currentSession(r); ss != nil && b.Code == "" {
		if !ss.checkCSRF(r.Header.Get("X-CSRF-Token")) {
			w.fail(rw, r, errs.E("web", errs.Forbidden, "This page is out of date; reload it and try again."))
			return
		}
		if b.Ceremony == "" {
			w.fail(rw, r, errs.E("web.passkey", errs.Unauthorized, "Adding a passkey needs one of your passkeys first; nothing was added."))
			return
		}
		if _, err := w.confirmed(r, ss, b, "passkey-add"); err != nil {
			w.fail(rw, r, err)
			return
		}
		c.session = ss.hash
	} else {
		if err := w.auth.checkSetupCode(r.Context(), b.Code); err != nil {
			w.fail(rw, r, err)
			return
		}
		c.setup = hashOf(b.Code)
	}
	rp, o, err := w.ownerParty(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	var exclude []protocol.CredentialDescriptor
	for _, cr := range o.creds {
		exclude = append(exclude, cr.Descriptor())
	}
	opts, data, err := rp.BeginRegistration(o, webauthn.WithExclusions(exclude),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired))
	if err != nil {
		w.fail(rw, r, errs.Wrap("web.passkey", errs.Other, err, ""))
		return
	}
	c.data = *data
	w.answerCeremony(rw, r, c, opts)
}

func (w *Web) registerFinish(rw http.ResponseWriter, r *http.Request) {
	b, c, err := w.finishing(r, "register")
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	ss := w.currentSession(r)
	if c.session != "" && (ss == nil || ss.hash != c.session) {
		w.fail(rw, r, errs.E("web.passkey", errs.Unauthorized, "You were signed out meanwhile; sign in and add the passkey again."))
		return
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(b.Credential)
	if err != nil {
		w.fail(rw, r, errs.Wrap("web.passkey", errs.Invalid, err, "The passkey answer could not be read; try again."))
		return
	}
	rp, o, err := w.ownerParty(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	cred, err := rp.CreateCredential(o, c.data, parsed)
	if err != nil {
		w.fail(rw, r, errs.Wrap("web.passkey", errs.Unauthorized, err, "The passkey could not be checked (it must verify you, with a fingerprint, face or PIN); nothing was saved."))
		return
	}
	if err := w.auth.spend(c); err != nil {
		w.fail(rw, r, err)
		return
	}
	name := strings.TrimSpace(b.Name)
	if name == "" {
		name = "Passkey made " + w.now().Format("2 Jan 2006")
	}
	save := w.auth.savePasskey
	if c.setup != "" {
		save = func(ctx context.Context, name string, cred *webauthn.Credential) error {
			return w.auth.saveFirstPasskey(ctx, c.setup, name, cred)
		}
	}
	if err := save(r.Context(), name, cred); err != nil {
		w.fail(rw, r, err)
		return
	}
	if ss == nil {
		t, _, err := w.auth.newSession(r.Context())
		if err != nil {
			w.fail(rw, r, err)
			return
		}
		w.setCookie(rw, r, t, int(SessionMax.Seconds()))
	}
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "next": "/today", "text": "Your passkey is saved."})
}

func (w *Web) loginBegin(rw http.ResponseWriter, r *http.Request) {
	rp, err := w.rp(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if !w.auth.hasPasskey(r.Context()) {
		w.fail(rw, r, errs.E("web.signin", errs.NotFound, "This box has no passkey yet; open the setup link box serve printed."))
		return
	}
	opts, data, err := rp.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		w.fail(rw, r, errs.Wrap("web.passkey", errs.Other, err, ""))
		return
	}
	w.answerCeremony(rw, r, &ceremony{purpose: "login", data: *data}, opts)
}

func (w *Web) loginFinish(rw http.ResponseWriter, r *http.Request) {
	b, c, err := w.finishing(r, "login")
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if _, err := w.verify(r, c, b.Credential, true); err != nil {
		w.fail(rw, r, err)
		return
	}
	t, _, err := w.auth.newSession(r.Context())
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	w.setCookie(rw, r, t, int(SessionMax.Seconds()))
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "next": "/today"})
}

// verify checks an assertion against a ceremony: the owner's passkey, user verification, the challenge.
func (w *Web) verify(r *http.Request, c *ceremony, raw json.RawMessage, discoverable bool) (*webauthn.Credential, error) {
	parsed, err := protocol.ParseCredentialRequestResponseBytes(raw)
	if err != nil {
		return nil, errs.Wrap("web.passkey", errs.Invalid, err, "The passkey answer could not be read; try again.")
	}
	if !parsed.Response.AuthenticatorData.Flags.HasUserVerified() {
		return nil, errs.E("web.passkey", errs.Unauthorized, "Your passkey did not verify you (no fingerprint, face or PIN); nothing was done.")
	}
	rp, o, err := w.ownerParty(r)
	if err != nil {
		return nil, err
	}
	var cred *webauthn.Credential
	if discoverable {
		_, cred, err = rp.ValidatePasskeyLogin(func(_, handle []byte) (webauthn.User, error) {
			if string(handle) != string(o.id) {
				return nil, errs.E("web.passkey", errs.Unauthorized, "That passkey belongs to another box.")
			}
			return o, nil
		}, c.data, parsed)
	} else {
		cred, err = rp.ValidateLogin(o, c.data, parsed)
	}
	if err != nil {
		return nil, errs.Wrap("web.passkey", errs.Unauthorized, err, "Your passkey could not be checked; nothing was done.")
	}
	if cred.Authenticator.CloneWarning {
		return nil, errs.E("web.passkey", errs.Unauthorized, "This passkey answered with an old counter, as a copy would; nothing was done.")
	}
	if err := w.auth.spend(c); err != nil {
		return nil, err
	}
	if err := w.auth.used(r.Context(), cred); err != nil {
		return nil, err
	}
	return cred, nil
}

// confirmBegin starts a passkey check for one purpose: approving a card (the challenge carries the card id
// and its action hash), erasing the box, adding a passkey, or removing one (bound to its id).
func (w *Web) confirmBegin(rw http.ResponseWriter, r *http.Request, ss *session) {
	b, err := readBody(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	c := &ceremony{purpose: b.Purpose, session: ss.hash}
	var challenge []byte
	switch b.Purpose {
	case "approve":
		card, err := w.gate.Get(r.Context(), b.Card)
		if err != nil {
			w.fail(rw, r, err)
			return
		}
		c.card, c.hash = card.ID, card.ActionHash
		challenge = boundChallenge(card.ID, card.ActionHash)
	case "erase", "passkey-add", "safe-mode-off", "brain-set", "export", "unfreeze":
		challenge = boundChallenge(b.Purpose, ss.hash)
	case "switch": // bound to the switch and the choice the owner pressed: "change=just-do-it"
		sw, choice, _ := strings.Cut(b.Card, "=")
		if !gate.Allowed(sw, choice) {
			w.fail(rw, r, errs.E("web", errs.Invalid, "Say which switch to set, and to what."))
			return
		}
		c.card = b.Card
		challenge = boundChallenge(b.Purpose+"\x00"+b.Card, ss.hash)
	case "passkey-remove":
		if b.Passkey == "" {
			w.fail(rw, r, errs.E("web", errs.Invalid, "Say which passkey to remove."))
			return
		}
		c.card = b.Passkey
		challenge = boundChallenge(b.Purpose, b.Passkey)
	default:
		w.fail(rw, r, errs.E("web", errs.Invalid, "Unknown passkey check %q.", b.Purpose))
		return
	}
	rp, o, err := w.ownerParty(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	w.beginAssertion(rw, r, c, rp, o, challenge)
}

// beginAssertion starts a passkey check of the owner, with user verification, signing challenge (bound to
// what c approves), and sends its options to the browser.
func (w *Web) beginAssertion(rw http.ResponseWriter, r *http.Request, c *ceremony, rp *webauthn.WebAuthn, o *owner, challenge []byte) {
	opts, data, err := rp.BeginLogin(o, webauthn.WithChallenge(challenge), webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		w.fail(rw, r, errs.Wrap("web.passkey", errs.Other, err, ""))
		return
	}
	c.data = *data
	w.answerCeremony(rw, r, c, opts)
}

// finishing reads what the browser posts to finish a ceremony and takes that ceremony, begun for purpose.
func (w *Web) finishing(r *http.Request, purpose string) (finishBody, *ceremony, error) {
	b, err := readBody(r)
	if err != nil {
		return b, nil, err
	}
	c, err := w.auth.open(b.Ceremony, purpose)
	return b, c, err
}

// answerCeremony seals a ceremony into its id and sends both to the browser.
func (w *Web) answerCeremony(rw http.ResponseWriter, r *http.Request, c *ceremony, opts any) {
	id, err := w.auth.begin(c)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "ceremony": id, "options": opts})
}

// confirmed takes and checks the assertion a state change carries, for its purpose and session.
func (w *Web) confirmed(r *http.Request, ss *session, b finishBody, purpose string) (*ceremony, error) {
	c, err := w.auth.open(b.Ceremony, purpose)
	if err != nil {
		return nil, err
	}
	if c.session != ss.hash {
		return nil, errs.E("web.passkey", errs.Unauthorized, "That passkey check was started by another sign-in; try again.")
	}
	if _, err := w.verify(r, c, b.Credential, false); err != nil {
		return nil, err
	}
	if err := w.auth.freshUV(r.Context(), ss.hash); err != nil {
		return nil, err
	}
	return c, nil
}

// formConfirmed checks the passkey assertion a form carries for purpose: its ceremony and credential
// fields, filled by the page's script once the owner's passkey answered. what names the change for the
// refusal sentence.
func (w *Web) formConfirmed(r *http.Request, ss *session, purpose, what string) error {
	b := finishBody{Ceremony: r.PostFormValue("ceremony"), Credential: json.RawMessage(r.PostFormValue("credential"))}
	if b.Ceremony == "" || len(b.Credential) == 0 {
		return errs.E("web.passkey", errs.Unauthorized, "%s needs your passkey: use the button on the page, with JavaScript on. Nothing was done.", what)
	}
	_, err := w.confirmed(r, ss, b, purpose)
	return err
}

// ownerProof is how the owner decided a change a form posts: with a passkey assertion the form carries,
// made for purpose (and, when bound, for that change), or without one, which the domain refuses where it
// needs one. An assertion that does not check out is an error, never a quiet "without".
func (w *Web) ownerProof(r *http.Request, ss *session, purpose, bound string) (gate.By, error) {
	by := gate.By{Via: "web"}
	b := finishBody{Ceremony: r.PostFormValue("ceremony"), Credential: json.RawMessage(r.PostFormValue("credential"))}
	if b.Ceremony == "" && len(b.Credential) == 0 {
		return by, nil
	}
	c, err := w.confirmed(r, ss, b, purpose)
	if err != nil {
		return by, err
	}
	if c.card != bound {
		return by, errs.E("web.passkey", errs.Unauthorized, "That passkey check was made for another change; nothing was done.")
	}
	by.Passkey = true
	return by, nil
}

// removePasskey removes one of the owner's passkeys with an assertion made for removing that one, just
// now: a session cookie alone cannot remove the owner's passkeys (docs/OAUTH.md).
func (w *Web) removePasskey(rw http.ResponseWriter, r *http.Request, ss *session) {
	b, err := readBody(r)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	id := r.PathValue("id")
	c, err := w.confirmed(r, ss, b, "passkey-remove")
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	if c.card != id {
		w.fail(rw, r, errs.E("web.passkey", errs.Forbidden, "That passkey check was made to remove another passkey; nothing was removed."))
		return
	}
	if err := w.auth.removePasskey(r.Context(), id); err != nil {
		w.fail(rw, r, err)
		return
	}
	writeJSON(rw, http.StatusOK, map[string]any{"ok": true, "text": "The passkey was removed.", "next": "/settings"})
}

func (w *Web) signout(rw http.ResponseWriter, r *http.Request, ss *session) {
	if err := w.auth.endSession(r.Context(), ss.hash); err != nil {
		w.fail(rw, r, err)
		return
	}
	w.setCookie(rw, r, "", -1)
	http.Redirect(rw, r, "/signin", http.StatusSeeOther)
}

func (w *Web) signoutAll(rw http.ResponseWriter, r *http.Request, _ *session) {
	if err := w.cfg.State.EndSessions(r.Context()); err != nil {
		w.fail(rw, r, err)
		return
	}
	w.setCookie(rw, r, "", -1)
	http.Redirect(rw, r, "/signin", http.StatusSeeOther)
}
