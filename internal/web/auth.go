package web

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/state"
)

// Session and setup lifetimes: a session ends after 7 days unused or 30 days at most; a setup link lasts
// 15 minutes; a passkey check (an approval, an erase, an export) is one ceremony, answered within 5
// minutes of its start and used once.
const (
	SessionIdle   = 7 * 24 * time.Hour
	SessionMax    = 30 * 24 * time.Hour
	SetupLifetime = 15 * time.Minute
	ceremonyLife  = 5 * time.Minute
)

// authStore keeps the owner's passkeys, sessions and setup codes in the box's state store, in tables of
// its own (web_*); package state owns the file and its schema.
type authStore struct {
	db  *sql.DB
	now func() time.Time

	seal  cipher.AEAD // seals ceremonies into the ids browsers hold; its key lives in memory only
	mu    sync.Mutex
	spent map[string]time.Time // ceremonies finished, until they expire: each works once
}

// ceremony is one WebAuthn exchange in flight. The box keeps no table of them: begin seals it into the
// opaque id the browser posts back, so no flood of begun ceremonies can fill anything the owner needs
// (docs/OAUTH.md). Only a finished one is remembered, until it expires, so it works once.
type ceremony struct {
	id      string
	purpose string // register, login, approve, erase, consent
	data    webauthn.SessionData
	card    string // approve: the card id the challenge is bound to; consent: the request
	hash    string // approve: the action hash it is bound to; consent: the checkboxes
	setup   string // register: the setup code's hash, spent when it finishes
	session string // the session hash that began it ("" before sign-in)
	expires time.Time
}

// sealed is a ceremony as it travels inside its id.
type sealed struct {
	ID      string               `json:"i"`
	Purpose string               `json:"p"`
	Data    webauthn.SessionData `json:"d"`
	Card    string               `json:"c,omitempty"`
	Hash    string               `json:"h,omitempty"`
	Setup   string               `json:"s,omitempty"`
	Session string               `json:"n,omitempty"`
	Expires int64                `json:"e"`
}

// newAuth is the passkeys, sessions and setup codes of the state store st (which owns the file and its
// schema), with a key made for this process that seals the ceremonies in flight.
func newAuth(st *state.Store, now func() time.Time) (*authStore, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, errs.Wrap("web.auth", errs.Other, err, "")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, errs.Wrap("web.auth", errs.Other, err, "")
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, errs.Wrap("web.auth", errs.Other, err, "")
	}
	return &authStore{db: st.DB(), now: now, seal: aead, spent: map[string]time.Time{}}, nil
}

func token() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashOf(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}

// owner is the one WebAuthn user of a box.
type owner struct {
	id    []byte
	name  string
	creds []webauthn.Credential
}

func (o *owner) WebAuthnID() []byte                         { return o.id }
func (o *owner) WebAuthnName() string                       { return o.name }
func (o *owner) WebAuthnDisplayName() string                { return o.name }
func (o *owner) WebAuthnCredentials() []webauthn.Credential { return o.creds }

// owner loads the user handle (made once, random) and the passkeys.
func (s *authStore) owner(ctx context.Context, name string) (*owner, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT v FROM web_owner WHERE k='handle'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		v = token()
		if _, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO web_owner(k, v) VALUES('handle', ?)`, v); err != nil {
			return nil, err
		}
		err = s.db.QueryRowContext(ctx, `SELECT v FROM web_owner WHERE k='handle'`).Scan(&v)
	}
	if err != nil {
		return nil, err
	}
	id, _ := base64.RawURLEncoding.DecodeString(v)
	o := &owner{id: id, name: name}
	keys, err := s.passkeys(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		o.creds = append(o.creds, k.cred)
	}
	return o, nil
}

// Passkey is one of the owner's passkeys as Settings shows it.
type Passkey struct {
	ID       string
	Name     string
	Created  time.Time
	LastUsed time.Time
	cred     webauthn.Credential
}

func (s *authStore) passkeys(ctx context.Context) ([]Passkey, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, cred, created, last_used FROM web_passkeys ORDER BY created`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Passkey
	for rows.Next() {
		var p Passkey
		var raw string
		var c, u int64
		if err := rows.Scan(&p.ID, &p.Name, &raw, &c, &u); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(raw), &p.cred); err != nil {
			continue
		}
		p.Created = time.Unix(c, 0)
		if u > 0 {
			p.LastUsed = time.Unix(u, 0)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// hasPasskey reports whether the owner has a passkey; a count that cannot be read reads as yes, so the
// box never offers to make a first passkey it may already have (the setup link stays closed).
func (s *authStore) hasPasskey(ctx context.Context) bool {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM web_passkeys`).Scan(&n); err != nil {
		return true
	}
	return n > 0
}

func (s *authStore) savePasskey(ctx context.Context, name string, c *webauthn.Credential) error {
	raw, _ := json.Marshal(c)
	id := base64.RawURLEncoding.EncodeToString(c.ID)
	_, err := s.db.ExecContext(ctx, `INSERT INTO web_passkeys(id, name, cred, created) VALUES(?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET cred=excluded.cred`, id, name, string(raw), s.now().Unix())
	return err
}

// used records a successful assertion: the new sign count and the time.
func (s *authStore) used(ctx context.Context, c *webauthn.Credential) error {
	raw, _ := json.Marshal(c)
	id := base64.RawURLEncoding.EncodeToString(c.ID)
	_, err := s.db.ExecContext(ctx, `UPDATE web_passkeys SET cred=?, last_used=? WHERE id=?`, string(raw), s.now().Unix(), id)
	return err
}

func (s *authStore) removePasskey(ctx context.Context, id string) error {
	return s.withPasskeys(ctx, func(tx *sql.Tx, n int) error {
		if n <= 1 {
			return errs.E("web.passkey", errs.Refused, "This is your only passkey; add another before removing it, or you could not sign in.")
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM web_passkeys WHERE id=?`, id)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return errs.E("web.passkey", errs.NotFound, "There is no such passkey.")
		}
		return nil
	})
}

// withPasskeys runs fn in one transaction with the number of passkeys counted in it, and commits when fn
// returns nil: a change that depends on how many there are cannot race another.
func (s *authStore) withPasskeys(ctx context.Context, fn func(tx *sql.Tx, n int) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM web_passkeys`).Scan(&n); err != nil {
		return err
	}
	if err := fn(tx, n); err != nil {
		return err
	}
	return tx.Commit()
}

// newSetupCode makes a one-time setup code, valid for SetupLifetime.
func (s *authStore) newSetupCode(ctx context.Context) (string, error) {
	code := token()
	_, err := s.db.ExecContext(ctx, `INSERT INTO web_setup(hash, expires) VALUES(?, ?)`, hashOf(code), s.now().Add(SetupLifetime).Unix())
	return code, err
}

// checkSetupCode says whether a code may still be used; it does not spend it.
func (s *authStore) checkSetupCode(ctx context.Context, code string) error {
	var exp, used int64
	err := s.db.QueryRowContext(ctx, `SELECT expires, used FROM web_setup WHERE hash=?`, hashOf(code)).Scan(&exp, &used)
	switch {
	case code == "" || errors.Is(err, sql.ErrNoRows):
		return errs.E("web.setup", errs.Unauthorized, "This setup link is not valid; run box serve again for a new one.")
	case err != nil:
		return err
	case used != 0:
		return errs.E("web.setup", errs.Unauthorized, "This setup link was already used; sign in with your passkey, or run box serve again for a new link.")
	case s.now().Unix() > exp:
		return errs.E("web.setup", errs.Unauthorized, "This setup link has expired (links last 15 minutes); run box serve again for a new one.")
	case s.hasPasskey(ctx):
		return errSetupAfterPasskey
	}
	return nil
}

// errSetupAfterPasskey refuses a setup link once the first passkey is made: a link only makes the first
// one, so an older link (in a terminal's scrollback, a log) can never add a passkey (docs/OAUTH.md).
var errSetupAfterPasskey = errs.E("web.setup", errs.Unauthorized, "This box already has its passkey, so setup links no longer work; sign in with it, and add another passkey from Settings.")

// saveFirstPasskey spends the setup code hash and saves the first passkey, in one transaction that
// refuses if a passkey exists by then (two setup links finishing at once make one passkey).
func (s *authStore) saveFirstPasskey(ctx context.Context, hash, name string, c *webauthn.Credential) error {
	return s.withPasskeys(ctx, func(tx *sql.Tx, n int) error {
		if n > 0 {
			return errSetupAfterPasskey
		}
		res, err := tx.ExecContext(ctx, `UPDATE web_setup SET used=? WHERE hash=? AND used=0 AND expires>=?`, s.now().Unix(), hash, s.now().Unix())
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k != 1 {
			return errs.E("web.setup", errs.Unauthorized, "This setup link was already used or has expired; run box serve again for a new one.")
		}
		raw, _ := json.Marshal(c)
		_, err = tx.ExecContext(ctx, `INSERT INTO web_passkeys(id, name, cred, created) VALUES(?, ?, ?, ?)`,
			base64.RawURLEncoding.EncodeToString(c.ID), name, string(raw), s.now().Unix())
		return err
	})
}

// session is a signed-in browser.
type session struct {
	hash    string
	csrf    string
	created time.Time
	seen    time.Time
	uv      time.Time // last passkey assertion with user verification
}

// newSession signs a browser in and returns the cookie value.
func (s *authStore) newSession(ctx context.Context) (string, *session, error) {
	t := token()
	now := s.now()
	ss := &session{hash: hashOf(t), csrf: token(), created: now, seen: now, uv: now}
	_, err := s.db.ExecContext(ctx, `INSERT INTO web_sessions(hash, csrf, created, seen, uv) VALUES(?, ?, ?, ?, ?)`,
		ss.hash, ss.csrf, now.Unix(), now.Unix(), now.Unix())
	return t, ss, err
}

// session finds the session of a cookie value, ending it if it is idle past SessionIdle or older than
// SessionMax, and records this use.
func (s *authStore) session(ctx context.Context, cookie string) (*session, bool) {
	if cookie == "" {
		return nil, false
	}
	ss := &session{hash: hashOf(cookie)}
	var c, seen, uv int64
	err := s.db.QueryRowContext(ctx, `SELECT csrf, created, seen, uv FROM web_sessions WHERE hash=?`, ss.hash).Scan(&ss.csrf, &c, &seen, &uv)
	if err != nil {
		return nil, false
	}
	now := s.now()
	ss.created, ss.seen, ss.uv = time.Unix(c, 0), time.Unix(seen, 0), time.Unix(uv, 0)
	if now.Sub(ss.seen) > SessionIdle || now.Sub(ss.created) > SessionMax {
		// Refused either way; a row the delete missed is refused again, by its dates, next time.
		_, _ = s.db.ExecContext(ctx, `DELETE FROM web_sessions WHERE hash=?`, ss.hash)
		return nil, false
	}
	if now.Sub(ss.seen) > time.Minute {
		if _, err := s.db.ExecContext(ctx, `UPDATE web_sessions SET seen=? WHERE hash=?`, now.Unix(), ss.hash); err != nil {
			return nil, false // a use that cannot be recorded is not let in (closed, not open)
		}
	}
	return ss, true
}

func (s *authStore) freshUV(ctx context.Context, hash string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE web_sessions SET uv=? WHERE hash=?`, s.now().Unix(), hash)
	return err
}

func (s *authStore) endSession(ctx context.Context, hash string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM web_sessions WHERE hash=?`, hash)
	return err
}

func (ss *session) checkCSRF(t string) bool {
	return t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(ss.csrf)) == 1
}

// begin seals a ceremony into the id the browser keeps and posts back to finish it.
func (s *authStore) begin(c *ceremony) (string, error) {
	c.id, c.expires = token(), s.now().Add(ceremonyLife)
	plain, err := json.Marshal(sealed{ID: c.id, Purpose: c.purpose, Data: c.data, Card: c.card, Hash: c.hash, Setup: c.setup,
		Session: c.session, Expires: c.expires.UnixNano()})
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.seal.NonceSize())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(s.seal.Seal(nonce, nonce, plain, []byte(ceremonyAD))), nil
}

// ceremonyAD binds the sealed ids to their use, so nothing else sealed with the key could pass for one.
const ceremonyAD = "box web ceremony v1"

// open unseals a ceremony begun for purpose, still young and not finished yet. An id the box did not seal,
// or sealed before it started, does not open.
func (s *authStore) open(id, purpose string) (*ceremony, error) {
	gone := errs.E("web.passkey", errs.Unauthorized, "That passkey request is not valid any more (each one works once, for 5 minutes); try again.")
	raw, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(raw) < s.seal.NonceSize() {
		return nil, gone
	}
	plain, err := s.seal.Open(nil, raw[:s.seal.NonceSize()], raw[s.seal.NonceSize():], []byte(ceremonyAD))
	if err != nil {
		return nil, gone
	}
	var w sealed
	if err := json.Unmarshal(plain, &w); err != nil {
		return nil, gone
	}
	c := &ceremony{id: w.ID, purpose: w.Purpose, data: w.Data, card: w.Card, hash: w.Hash, setup: w.Setup, session: w.Session,
		expires: time.Unix(0, w.Expires)}
	s.mu.Lock()
	_, done := s.spent[c.id]
	s.mu.Unlock()
	if done || c.purpose != purpose || s.now().After(c.expires) {
		return nil, gone
	}
	return c, nil
}

// spend marks a ceremony finished once its answer checked out; a second finish of the same one fails. The
// set holds only ceremonies the owner's passkey answered, so no stranger can grow it.
func (s *authStore) spend(c *ceremony) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for id, exp := range s.spent {
		if now.After(exp) {
			delete(s.spent, id)
		}
	}
	if _, done := s.spent[c.id]; done {
		return errs.E("web.passkey", errs.Unauthorized, "That passkey request was already used; each one works once. Try again.")
	}
	s.spent[c.id] = c.expires
	return nil
}

// relyingParty is the WebAuthn configuration for the origin a request came to.
func relyingParty(origin, rpID string) (*webauthn.WebAuthn, error) {
	return webauthn.New(&webauthn.Config{
		RPID:          rpID,
		RPDisplayName: "Box",
		RPOrigins:     []string{origin},
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:        protocol.ResidentKeyRequirementRequired,
			RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification:   protocol.VerificationRequired,
		},
		AttestationPreference: protocol.PreferNoAttestation,
	})
}

// boundChallenge is an approval challenge: random bytes followed by a digest of the card id and action
// hash, so the assertion itself names what it approves.
func boundChallenge(cardID, actionHash string) []byte {
	r := make([]byte, 32)
	rand.Read(r)
	d := sha256.Sum256([]byte("box-approve\x00" + cardID + "\x00" + actionHash))
	return append(r, d[:]...)
}
