// Package grants owns the OAuth side of connections in <box>/.box/state.db: registered clients and clients
// known by their metadata document, requests waiting for the owner's consent, codes, and token families
// (stored only as SHA-256), with their rules: PKCE S256, one-use 60-second codes, rotating refresh tokens
// whose reuse ends the family, lifetimes, scopes that never widen, bounded parameters and pending requests,
// per-source limits on new clients, errors sent back only to redirect URIs the owner approved
// (docs/OAUTH.md). It speaks no HTTP and checks no passkey: oauth and web do.
package grants

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/state"
)

// Lifetimes (README.md, "Connecting assistants").
const (
	CodeLife    = 60 * time.Second
	AccessLife  = 30 * 24 * time.Hour
	RefreshLife = 90 * 24 * time.Hour
	BuildLife   = keys.BuildLifetime // a building grant ends this long after approval, however often refreshed
	RequestLife = 10 * time.Minute   // how long a consent page stays answerable
)

// Limits (docs/OAUTH.md): what one source or one client can make the box keep.
const (
	NewClientsPerHour = 20    // new clients (registrations, first metadata documents) one source may add an hour
	MaxIdleClients    = 1000  // clients never approved and with nothing pending that are kept; the oldest go first
	MaxPending        = 20    // requests one client may have waiting from one source; a newer one displaces that source's oldest
	MaxPendingSource  = 100   // requests one source may have waiting, all clients together; past it, refused
	MaxPendingAll     = 10000 // requests waiting in all; past it, refused
	MaxState          = 1024  // bytes of the state parameter
	MaxParam          = 2048  // bytes of any other parameter, and of a redirect URI
)

// The scopes, one per checkbox; reading memory is always in.
const (
	ScopeRead     = "memory.read"
	ScopeWrite    = "memory.write"
	ScopeMessages = "messages.read"
	ScopeBuild    = "box.build"
)

// Scopes lists every scope the box knows, for the metadata documents.
var Scopes = []string{ScopeRead, ScopeWrite, ScopeMessages, ScopeBuild}

// DefaultScope is what the 401 challenge tells a client to ask for: reading and saving memory. Messages
// and building are offered on the consent page to the assistants that may have them, never pre-asked.
const DefaultScope = ScopeRead + " " + ScopeWrite

// Token prefixes: an access token and a refresh token are told apart from each other and from mbx_ keys.
const (
	AccessPrefix  = "mbo_at_"
	RefreshPrefix = "mbo_rt_"
)

// ErrToClient marks a refusal of /authorize that may go back to the client at its redirect URI: only to
// one the owner already approved for that client (RFC 9700 §4.11.2), never to one merely registered. Any
// other refusal is shown to the person, never redirected.
var ErrToClient = errors.New("grants: the refusal goes back to the client")

// Refuse is an OAuth refusal: an errs.Error whose Code is RFC 6749 §5.2's (or RFC 8707's invalid_target)
// and whose sentence is the error_description.
func Refuse(code, format string, a ...any) *errs.Error {
	return &errs.Error{Op: "grants", Kind: kindOf(code), Code: code, Msg: fmt.Sprintf(format, a...)}
}

func refuse(code, format string, a ...any) *errs.Error { return Refuse(code, format, a...) }

// toClient marks r as one /authorize may send back to the client, when the redirect URI is approved.
func toClient(r *errs.Error, approved bool) *errs.Error {
	if approved {
		r.Err = ErrToClient
	}
	return r
}

// kindOf is the box's kind for an OAuth error code.
func kindOf(code string) errs.Kind {
	switch code {
	case "invalid_client", "invalid_token":
		return errs.Unauthorized
	case "temporarily_unavailable":
		return errs.Limited
	case "access_denied":
		return errs.Refused
	}
	return errs.Invalid
}

// Client is a registered OAuth client.
type Client struct {
	ID           string
	Name         string
	RedirectURIs []string
	Created      time.Time
}

// Request is an authorization request waiting for the owner's consent.
type Request struct {
	ID          string
	Issuer      string // the box's address the client sent it to: the iss of its answer (RFC 9207)
	ClientID    string
	ClientName  string
	RedirectURI string
	State       string
	Challenge   string
	Resource    string
	Scopes      []string // what the client asked for
	Expires     time.Time
	Approved    bool // the owner approved this redirect URI for this client before: an error may go back to it
}

// Host is the redirect URI's host, shown to the owner as who asks.
func (r Request) Host() string { return hostOf(r.RedirectURI) }

// DocumentHost is the host of the client's metadata document when its client_id is one, else "": the
// consent page shows it beside the name the document claims.
func (r Request) DocumentHost() string {
	if !IsDocumentID(r.ClientID) {
		return ""
	}
	return hostOf(r.ClientID)
}

// Offered is what the consent page may offer: building only to a known assistant or loopback; messages to
// no one while no account can be plugged in (keys.NoAccounts).
func (r Request) Offered() keys.Caps {
	return keys.Caps{Memory: true, Build: Known(r.RedirectURI)}
}

// Asked is the checkboxes the client asked for; building is never pre-ticked, so it is not in here.
func (r Request) Asked() keys.Caps {
	return keys.Caps{Memory: slices.Contains(r.Scopes, ScopeWrite), Messages: slices.Contains(r.Scopes, ScopeMessages)}
}

// Grant is one OAuth connection (a token family) as the owner sees it.
type Grant struct {
	ID         string    `json:"id"`
	ClientID   string    `json:"clientId"`
	Client     string    `json:"client"`
	Host       string    `json:"host"`
	Caps       keys.Caps `json:"caps"`
	Created    time.Time `json:"created"`
	BuildUntil time.Time `json:"buildUntil,omitzero"`
	Revoked    time.Time `json:"revoked,omitzero"`
	LastUsed   time.Time `json:"lastUsed,omitzero"`
}

// Tokens is what /token answers.
type Tokens struct {
	Access    string
	Refresh   string
	ExpiresIn int64
	Scope     string
}

// Store is the OAuth state of one box. It is safe for concurrent use.
type Store struct {
	db     *sql.DB
	now    func() time.Time
	access *state.Cache[accessRow] // what Verify read of an access token, by its hash

	mu    sync.Mutex
	fresh map[string]time.Time // metadata-document clients: until when the stored copy is used unfetched
	fetch *fetches             // budgets, slots and recent failures of document fetches
}

// NewStore is the OAuth tables of the state store st (which owns the file and its schema), stamped with
// st's clock.
func NewStore(st *state.Store) *Store {
	return &Store{db: st.DB(), now: st.Now, access: state.NewCache[accessRow](st)}
}

func random() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func shortID(prefix string) string { return prefix + random()[:12] }

// hash is how every secret is kept: SHA-256, hex (the same as keys).
func hash(secret string) string { return keys.Hash(secret) }

// Known reports whether a redirect URI belongs to an assistant that may be offered messages and building:
// Claude's or ChatGPT's published OAuth callback, byte for byte, or an app on the owner's own computer
// (loopback).
func Known(redirect string) bool {
	u, err := url.Parse(redirect)
	if err != nil {
		return false
	}
	return loopback(strings.ToLower(u.Hostname())) || knownCallback(redirect)
}

// The published OAuth callbacks of the assistants the box knows by name (docs/OAUTH.md). A redirect URI on
// their hosts must be one of them exactly: any other path there is refused, so no page of those sites can
// pass for the assistant on the consent page or receive its code.
var (
	pinnedHosts      = []string{"claude.ai", "claude.com", "chatgpt.com"}
	knownCallbacks   = []string{"https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback", "https://chatgpt.com/connector_platform_oauth_redirect"}
	chatGPTConnector = "https://chatgpt.com/connector/oauth/" // then one id per connector
)

// knownCallback reports whether raw is one of the published callbacks, exactly.
func knownCallback(raw string) bool {
	if slices.Contains(knownCallbacks, raw) {
		return true
	}
	id, ok := strings.CutPrefix(raw, chatGPTConnector)
	if !ok || id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func loopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && ip.IsLoopback()
}

// asciiHost reports whether h is printable ASCII only.
func asciiHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if h[i] <= ' ' || h[i] >= 0x7f {
			return false
		}
	}
	return true
}

func hostOf(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return ""
	}
	return u.Host
}

// checkRedirect allows https anywhere, or http on a loopback address; no fragment, no userinfo, at most
// MaxParam bytes.
func checkRedirect(raw string) error {
	if len(raw) > MaxParam {
		return fmt.Errorf("a redirect URI of %d bytes is longer than the %d this box keeps", len(raw), MaxParam)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q is not an absolute URL without a fragment", raw)
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case !asciiHost(host):
		// A browser maps claude。ai, full-width letters or a soft hyphen to claude.ai (IDNA), so a host
		// that is not plain ASCII could pass as another than the pinned ones; the xn-- form compares as written.
		return fmt.Errorf("%q names its host with characters that are not plain ASCII; write the host in its xn-- (punycode) form", raw)
	case strings.HasSuffix(host, "."):
		// claude.ai. is claude.ai to DNS, and to no comparison here (the pinned hosts, the box's own).
		return fmt.Errorf("%q names its host with a final dot; write it without one", raw)
	case slices.Contains(pinnedHosts, host) && !knownCallback(raw):
		return fmt.Errorf("%q is on %s but is not its published OAuth callback; only %s (or ChatGPT's %s…) may be used there", raw, host,
			strings.Join(knownCallbacks, ", "), chatGPTConnector)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(host):
		return nil
	}
	return fmt.Errorf("%q must be https, or http on a loopback address (127.0.0.1, [::1], localhost)", raw)
}

// Own is where the box itself answers: its public address (the issuer of the request), the port the
// request reached it on, and the other host names it answers to (those a reverse proxy may send, its
// public address's), whatever name this request came in under.
type Own struct {
	Issuer string
	Port   string
	Hosts  []string
}

// CheckNotOwn refuses a redirect URI on the box's own origin: the issuer, or a loopback address on the
// box's port. A code sent there would land in a page the box serves (an installed page can read its own
// address and store it), not in an app on the owner's computer (docs/OAUTH.md).
func CheckNotOwn(redirects []string, own Own) error {
	iss, _ := url.Parse(own.Issuer)
	for _, r := range redirects {
		u, err := url.Parse(r)
		if err != nil {
			continue // checkRedirect refuses it
		}
		host := strings.ToLower(u.Hostname())
		same := iss != nil && iss.Host != "" && strings.EqualFold(u.Scheme, iss.Scheme) &&
			host == strings.ToLower(iss.Hostname()) && portOf(u) == portOf(iss)
		// An http loopback redirect is a native app's unless it names the box's own port (below): the app
		// listens on a port of its own. Over https a loopback name the box answers to is a proxy of its own.
		app := loopback(host) && strings.EqualFold(u.Scheme, "http")
		named := !app && slices.ContainsFunc(own.Hosts, func(h string) bool { return h != "" && strings.EqualFold(h, host) })
		if same || named || (own.Port != "" && loopback(host) && portOf(u) == number(own.Port)) {
			return refuse("invalid_redirect_uri", "%q is this box's own address; a redirect URI leads to the app that connects, never to the box itself.", r)
		}
	}
	return nil
}

// portOf is a URL's port as a number reads (a browser takes 07317 for 7317), or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return number(p)
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// Register records a public client (RFC 7591): no secret, token_endpoint_auth_method none. source is
// where the request came from (an address prefix), for the per-source limit on new clients.
func (s *Store) Register(ctx context.Context, m oauthex.ClientRegistrationMetadata, source string) (*oauthex.ClientRegistrationResponse, error) {
	if err := checkMetadata(m.RedirectURIs, m.TokenEndpointAuthMethod, m.GrantTypes, m.ResponseTypes); err != nil {
		return nil, err
	}
	name := cleanName(m.ClientName)
	now := s.now().UTC().Truncate(time.Second)
	id := shortID("c_")
	if err := s.addClient(ctx, Client{ID: id, Name: name, RedirectURIs: m.RedirectURIs}, source, false); err != nil {
		return nil, err
	}
	out := m
	out.ClientName = name
	out.TokenEndpointAuthMethod = "none"
	out.GrantTypes = []string{"authorization_code", "refresh_token"}
	out.ResponseTypes = []string{"code"}
	return &oauthex.ClientRegistrationResponse{ClientRegistrationMetadata: out, ClientID: id, ClientIDIssuedAt: now}, nil
}

// checkMetadata is what a public client of this box must say of itself, registered or in its metadata
// document: 1 to 10 redirect URIs the box accepts, no client authentication, the code flow.
func checkMetadata(redirects []string, authMethod string, grantTypes, responseTypes []string) error {
	if len(redirects) == 0 || len(redirects) > 10 {
		return refuse("invalid_redirect_uri", "Register 1 to 10 redirect URIs.")
	}
	for _, r := range redirects {
		if err := checkRedirect(r); err != nil {
			return refuse("invalid_redirect_uri", "%v.", err)
		}
	}
	if authMethod != "" && authMethod != "none" {
		return refuse("invalid_client_metadata", "This box registers public clients only: token_endpoint_auth_method must be none.")
	}
	for _, g := range grantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return refuse("invalid_client_metadata", "Grant type %q is not supported; use authorization_code and refresh_token.", g)
		}
	}
	for _, rt := range responseTypes {
		if rt != "code" {
			return refuse("invalid_client_metadata", "Response type %q is not supported; use code.", rt)
		}
	}
	return nil
}

// addClient stores a client, or updates one known by its metadata document (update true). A new client
// counts against its source's hourly budget, and the oldest idle clients beyond MaxIdleClients are
// forgotten, so neither one source nor many can grow the table without end or use up another's budget.
func (s *Store) addClient(ctx context.Context, c Client, source string, update bool) error {
	now := s.now().UTC().Truncate(time.Second)
	uris, _ := json.Marshal(c.RedirectURIs)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errs.Wrap("grants.client", errs.Other, err, "")
	}
	defer tx.Rollback()
	if update {
		res, err := tx.ExecContext(ctx, `UPDATE oauth_clients SET name=?, redirect_uris=? WHERE id=?`, c.Name, string(uris), c.ID)
		if err != nil {
			return errs.Wrap("grants.client", errs.Other, err, "")
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return tx.Commit()
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_client_sources WHERE created <= ?`, now.Add(-time.Hour).Unix()); err != nil {
		return errs.Wrap("grants.client", errs.Other, err, "")
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM oauth_client_sources WHERE source=?`, source).Scan(&n); err != nil {
		return errs.Wrap("grants.client", errs.Other, err, "")
	}
	if n >= NewClientsPerHour {
		return refuse("temporarily_unavailable", "This box accepts %d new clients an hour from one network; try again later.", NewClientsPerHour)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_client_sources(source, created) VALUES(?,?)`, source, now.Unix()); err != nil {
		return errs.Wrap("grants.client", errs.Other, err, "")
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_clients(id,name,redirect_uris,created) VALUES(?,?,?,?)`, c.ID, c.Name, string(uris), now.Unix()); err != nil {
		return errs.Wrap("grants.client", errs.Other, err, "")
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_clients WHERE id IN (SELECT id FROM oauth_clients c
		WHERE NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id=c.id) AND NOT EXISTS (SELECT 1 FROM oauth_requests r WHERE r.client_id=c.id)
		ORDER BY created DESC, rowid DESC LIMIT -1 OFFSET ?)`, MaxIdleClients); err != nil {
		return errs.Wrap("grants.client", errs.Other, err, "")
	}
	return tx.Commit()
}

// cleanName is the client name the owner is shown and the diary records: printable, one line, at most 80
// characters. The name is the client's claim, so nothing in it may pass for a line break or a trailer.
func cleanName(raw string) string {
	name := strings.Join(strings.FieldsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }), " ")
	if r := []rune(name); len(r) > 80 {
		name = strings.TrimSpace(string(r[:80]))
	}
	if name == "" {
		return "An unnamed assistant"
	}
	if keys.Reserved(name) {
		return name + " (an assistant)" // never the owner's own name in the diary or on a card
	}
	return name
}

// Client returns a registered client.
func (s *Store) Client(ctx context.Context, id string) (Client, error) {
	var c Client
	var uris string
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT id,name,redirect_uris,created FROM oauth_clients WHERE id=?`, id).Scan(&c.ID, &c.Name, &uris, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return c, refuse("invalid_client", "This client is not registered with this box; register it again.")
	}
	if err != nil {
		return c, errs.Wrap("grants.client", errs.Other, err, "")
	}
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return c, errs.Wrap("grants.client", errs.Other, err, "")
	}
	c.Created = time.Unix(created, 0).UTC()
	return c, nil
}

// AuthRequest is what /authorize received, and Issuer the box's address it was sent to.
type AuthRequest struct {
	ClientID, RedirectURI, ResponseType, State string
	Challenge, Method, Resource, Scope         string
	Issuer                                     string
	Source                                     string // where the request came from (an address prefix): pending requests are kept per client and source
}

// CheckSizes refuses a request with a parameter longer than the box keeps: state over MaxState bytes,
// any other over MaxParam. It is the first check, before anything is looked up or stored.
func (a AuthRequest) CheckSizes() error {
	if len(a.State) > MaxState {
		return refuse("invalid_request", "The state parameter is %d bytes; this box accepts at most %d.", len(a.State), MaxState)
	}
	for name, v := range map[string]string{"client_id": a.ClientID, "redirect_uri": a.RedirectURI, "response_type": a.ResponseType,
		"code_challenge": a.Challenge, "code_challenge_method": a.Method, "resource": a.Resource, "scope": a.Scope} {
		if len(v) > MaxParam {
			return refuse("invalid_request", "The %s parameter is %d bytes; this box accepts at most %d.", name, len(v), MaxParam)
		}
	}
	return nil
}

// Authorize checks an authorization request and keeps it for the consent page. resource is this box's
// /mcp. A Refusal with Redirect false must be shown to the person, never sent to the redirect URI; it is
// true only when the owner already approved that redirect URI for that client. Requests wait per client
// and source: MaxPending each, a newer one displacing that pair's oldest, so nobody elsewhere can push out
// the owner's own request by sending the same client_id; a source past MaxPendingSource, or the box past
// MaxPendingAll, is refused rather than displace anyone's.
func (s *Store) Authorize(ctx context.Context, a AuthRequest, resource string) (Request, error) {
	if err := a.CheckSizes(); err != nil {
		return Request{}, err
	}
	c, err := s.Client(ctx, a.ClientID)
	if err != nil {
		return Request{}, err
	}
	if a.RedirectURI == "" && len(c.RedirectURIs) == 1 {
		a.RedirectURI = c.RedirectURIs[0]
	}
	if !slices.ContainsFunc(c.RedirectURIs, func(reg string) bool { return redirectMatches(reg, a.RedirectURI) }) {
		return Request{}, refuse("invalid_request", "The redirect_uri is not one this client registered.")
	}
	approved, err := s.approvedRedirect(ctx, c.ID, a.RedirectURI)
	if err != nil {
		return Request{}, err
	}
	back := func(code, format string, v ...any) (Request, error) {
		return Request{}, toClient(refuse(code, format, v...), approved)
	}
	switch {
	case a.ResponseType != "code":
		return back("unsupported_response_type", "Only response_type=code is supported.")
	case a.Challenge == "":
		return back("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256.")
	case a.Method != "S256":
		return back("invalid_request", "Only the S256 PKCE method is accepted (plain is not).")
	case !challengeOK(a.Challenge):
		return back("invalid_request", "The code_challenge is not a base64url SHA-256 (43 characters).")
	case a.Resource != resource:
		return back("invalid_target", "The resource must be this box's MCP endpoint, %s.", resource)
	}
	scopes, err := parseScope(a.Scope)
	var r0 *errs.Error
	if errors.As(err, &r0) {
		return Request{}, toClient(r0, approved)
	}
	if !Known(a.RedirectURI) && (slices.Contains(scopes, ScopeMessages) || slices.Contains(scopes, ScopeBuild)) {
		return back("invalid_scope", "messages.read and box.build are offered only to Claude, ChatGPT or an app on the owner's own computer.")
	}
	r := Request{ID: random(), Issuer: a.Issuer, ClientID: c.ID, ClientName: c.Name, RedirectURI: a.RedirectURI, State: a.State,
		Challenge: a.Challenge, Resource: a.Resource, Scopes: scopes, Expires: s.now().Add(RequestLife), Approved: approved}
	if err := s.keep(ctx, r, a.Source); err != nil {
		return Request{}, err
	}
	return r, nil
}

// keep stores a pending request from source, first dropping the expired ones and the oldest of the same
// client and source beyond MaxPending; a source or the box with too many waiting is refused.
func (s *Store) keep(ctx context.Context, r Request, source string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errs.Wrap("grants.authorize", errs.Other, err, "")
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) error {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return errs.Wrap("grants.authorize", errs.Other, err, "")
		}
		return nil
	}
	if err := exec(`DELETE FROM oauth_requests WHERE expires < ?`, s.now().Unix()); err != nil {
		return err
	}
	if err := exec(`DELETE FROM oauth_requests WHERE id IN (SELECT id FROM oauth_requests WHERE source=? AND client_id=?
		ORDER BY expires DESC, rowid DESC LIMIT -1 OFFSET ?)`, source, r.ClientID, MaxPending-1); err != nil {
		return err
	}
	var fromSource, all int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE source=?), count(*) FROM oauth_requests`, source).Scan(&fromSource, &all); err != nil {
		return errs.Wrap("grants.authorize", errs.Other, err, "")
	}
	switch {
	case fromSource >= MaxPendingSource:
		return refuse("temporarily_unavailable", "This network has %d requests to connect waiting for the owner; answer or wait for some (they last 10 minutes).", MaxPendingSource)
	case all >= MaxPendingAll:
		return refuse("temporarily_unavailable", "The box has %d requests to connect waiting for the owner; try again in a few minutes.", MaxPendingAll)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM oauth_request_issuers WHERE id NOT IN (SELECT id FROM oauth_requests)`, nil},
		{`INSERT INTO oauth_requests(id,client_id,redirect_uri,state,challenge,resource,scopes,expires,source) VALUES(?,?,?,?,?,?,?,?,?)`,
			[]any{hash(r.ID), r.ClientID, r.RedirectURI, r.State, r.Challenge, r.Resource, strings.Join(r.Scopes, " "), r.Expires.Unix(), source}},
		{`INSERT INTO oauth_request_issuers(id, issuer) VALUES(?,?)`, []any{hash(r.ID), r.Issuer}},
	} {
		if err := exec(q.sql, q.args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// redirectMatches reports whether a redirect URI in a request is one the client registered: the same
// string, or for an http loopback address (RFC 8252 §7.3) the same but for the port, which a native app
// picks when it starts listening.
func redirectMatches(registered, asked string) bool {
	if registered == asked {
		return true
	}
	r, err1 := url.Parse(registered)
	a, err2 := url.Parse(asked)
	if err1 != nil || err2 != nil || r.Scheme != "http" || a.Scheme != "http" || !loopback(strings.ToLower(r.Hostname())) {
		return false
	}
	return r.Hostname() == a.Hostname() && r.User == nil && a.User == nil && r.EscapedPath() == a.EscapedPath() &&
		r.RawQuery == a.RawQuery && r.Fragment == "" && a.Fragment == "" && !a.ForceQuery && !r.ForceQuery
}

// ApprovedRedirect returns the redirect URI an /authorize refusal may go back to without storing
// anything: the request's redirect_uri (or the client's only one when it names none) when the client is
// known, registered it, and the owner already approved it; else "" (the refusal is shown on a page).
func (s *Store) ApprovedRedirect(ctx context.Context, clientID, redirect string) (string, error) {
	c, err := s.Client(ctx, clientID)
	if errs.CodeOf(err) == "invalid_client" {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if redirect == "" && len(c.RedirectURIs) == 1 {
		redirect = c.RedirectURIs[0]
	}
	if !slices.ContainsFunc(c.RedirectURIs, func(reg string) bool { return redirectMatches(reg, redirect) }) {
		return "", nil
	}
	ok, err := s.approvedRedirect(ctx, c.ID, redirect)
	if err != nil || !ok {
		return "", err
	}
	return redirect, nil
}

// approvedRedirect reports whether the owner already approved redirect for this client.
func (s *Store) approvedRedirect(ctx context.Context, clientID, redirect string) (bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT redirect_uri FROM oauth_approved_redirects WHERE client_id=?`, clientID)
	if err != nil {
		return false, errs.Wrap("grants.authorize", errs.Other, err, "")
	}
	defer rows.Close()
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return false, errs.Wrap("grants.authorize", errs.Other, err, "")
		}
		if redirectMatches(u, redirect) {
			return true, nil
		}
	}
	return false, rows.Err()
}

// challengeOK reports whether a PKCE S256 challenge is what RFC 7636 §4.2 makes: the unpadded base64url
// of 32 bytes.
func challengeOK(c string) bool {
	if len(c) != 43 {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil && len(b) == sha256.Size
}

// parseScope reads a scope parameter; memory.read is always in and unknown scopes are refused.
func parseScope(scope string) ([]string, error) {
	out := []string{ScopeRead}
	for _, sc := range strings.Fields(scope) {
		if sc == "offline_access" {
			continue // refresh tokens are always issued
		}
		if !slices.Contains(Scopes, sc) {
			return nil, refuse("invalid_scope", "Unknown scope %q; this box knows %s.", sc, strings.Join(Scopes, " "))
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// Pending returns a request still waiting for consent.
func (s *Store) Pending(ctx context.Context, id string) (Request, error) {
	r := Request{ID: id}
	var scopes string
	var exp int64
	err := s.db.QueryRowContext(ctx, `SELECT r.client_id, c.name, r.redirect_uri, r.state, r.challenge, r.resource, r.scopes, r.expires,
		coalesce(i.issuer, '') FROM oauth_requests r JOIN oauth_clients c ON c.id=r.client_id LEFT JOIN oauth_request_issuers i ON i.id=r.id WHERE r.id=?`, hash(id)).
		Scan(&r.ClientID, &r.ClientName, &r.RedirectURI, &r.State, &r.Challenge, &r.Resource, &scopes, &exp, &r.Issuer)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && s.now().Unix() > exp) {
		return Request{}, refuse("invalid_request", "This request to connect has expired or was already answered; start connecting again from the assistant.")
	}
	if err != nil {
		return Request{}, errs.Wrap("grants.pending", errs.Other, err, "")
	}
	r.Scopes, r.Expires = strings.Fields(scopes), time.Unix(exp, 0).UTC()
	return r, nil
}

// take removes a pending request so it is answered once.
func (s *Store) take(ctx context.Context, id string) (Request, error) {
	r, err := s.Pending(ctx, id)
	if err != nil {
		return r, err
	}
	res, err := s.db.ExecContext(ctx, `DELETE FROM oauth_requests WHERE id=?`, hash(id))
	if err != nil {
		return r, errs.Wrap("grants.take", errs.Other, err, "")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return r, refuse("invalid_request", "This request to connect was already answered.")
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM oauth_request_issuers WHERE id=?`, hash(id)); err != nil {
		return r, errs.Wrap("grants.take", errs.Other, err, "")
	}
	return r, nil
}

// Deny answers a request with no: the caller redirects with access_denied.
func (s *Store) Deny(ctx context.Context, id string) (Request, error) { return s.take(ctx, id) }

// Approve answers a request with the owner's checkboxes, clamped to what may be offered: it makes the
// grant and its one-use code. The caller has checked the owner's passkey and the access switch.
func (s *Store) Approve(ctx context.Context, id string, caps keys.Caps) (Request, string, error) {
	r, err := s.take(ctx, id)
	if err != nil {
		return r, "", err
	}
	off := r.Offered()
	caps = keys.Caps{Memory: caps.Memory, Messages: caps.Messages && off.Messages, Build: caps.Build && off.Build}
	now := s.now().UTC().Truncate(time.Second)
	g := Grant{ID: shortID("g_"), ClientID: r.ClientID, Client: r.ClientName, Host: r.Host(), Caps: caps, Created: now}
	if caps.Build {
		g.BuildUntil = now.Add(BuildLife)
	}
	code := random()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return r, "", errs.Wrap("grants.approve", errs.Other, err, "")
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO oauth_grants(id,client_id,client,host,memory,messages,build,created,build_until) VALUES(?,?,?,?,?,?,?,?,?)`,
		g.ID, g.ClientID, g.Client, g.Host, caps.Memory, caps.Messages, caps.Build, now.Unix(), unix(g.BuildUntil)); err != nil {
		return r, "", errs.Wrap("grants.approve", errs.Other, err, "")
	}
	if _, err := tx.Exec(`INSERT INTO oauth_codes(hash,grant_id,client_id,redirect_uri,challenge,resource,expires) VALUES(?,?,?,?,?,?,?)`,
		hash(code), g.ID, r.ClientID, r.RedirectURI, r.Challenge, r.Resource, s.now().Add(CodeLife).UnixNano()); err != nil {
		return r, "", errs.Wrap("grants.approve", errs.Other, err, "")
	}
	if _, err := tx.Exec(`INSERT OR IGNORE INTO oauth_approved_redirects(client_id, redirect_uri) VALUES(?,?)`, r.ClientID, r.RedirectURI); err != nil {
		return r, "", errs.Wrap("grants.approve", errs.Other, err, "")
	}
	return r, code, tx.Commit()
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// Exchange trades a code for tokens (RFC 6749 §4.1.3 with PKCE). A code is good once, for 60 seconds.
// Every check runs before the code is spent, so a refused exchange (a wrong redirect_uri, verifier or
// resource) leaves it for a corrected retry. A spent code presented again ends the connection it made
// (RFC 6749 §4.1.2: deny, and revoke what it issued) only when the request is otherwise valid, so it comes
// from the code's own client: its client_id (§4.1.3), redirect_uri and PKCE verifier (RFC 7636); anyone
// else, who merely learnt the code, gets invalid_grant and the owner's connection lives on (docs/OAUTH.md).
func (s *Store) Exchange(ctx context.Context, clientID, code, verifier, redirect, resource string) (Tokens, error) {
	var grantID, cid, uri, challenge, res string
	var exp, used int64
	err := s.db.QueryRowContext(ctx, `SELECT grant_id,client_id,redirect_uri,challenge,resource,expires,used FROM oauth_codes WHERE hash=?`, hash(code)).
		Scan(&grantID, &cid, &uri, &challenge, &res, &exp, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return Tokens{}, refuse("invalid_grant", "This authorization code is not known to this box.")
	}
	if err != nil {
		return Tokens{}, errs.Wrap("grants.exchange", errs.Other, err, "")
	}
	if used != 0 {
		if cid != clientID || redirect != uri || !pkceOK(verifier, challenge) {
			return Tokens{}, refuse("invalid_grant", "This authorization code was already used.")
		}
		return Tokens{}, s.reused(ctx, grantID, "This authorization code was already used; the connection it made is ended.")
	}
	switch {
	case s.now().UnixNano() > exp:
		return Tokens{}, refuse("invalid_grant", "This authorization code expired (codes last 60 seconds); connect again.")
	case cid != clientID:
		return Tokens{}, refuse("invalid_grant", "This authorization code was issued to another client.")
	case redirect != uri:
		return Tokens{}, refuse("invalid_grant", "The redirect_uri does not match the one of the authorization request.")
	case resource != "" && resource != res:
		return Tokens{}, refuse("invalid_target", "The resource does not match the one of the authorization request.")
	case !pkceOK(verifier, challenge):
		return Tokens{}, refuse("invalid_grant", "The PKCE code_verifier does not match the code_challenge.")
	}
	g, err := s.grant(ctx, grantID)
	if err != nil {
		return Tokens{}, err
	}
	if !g.Revoked.IsZero() {
		return Tokens{}, refuse("invalid_grant", "This connection was disconnected by the owner.")
	}
	return s.issue(ctx, g, capsScope(s.effective(g)), res,
		`UPDATE oauth_codes SET used=1 WHERE hash=? AND used=0`, hash(code),
		"This authorization code was already used; the connection it made is ended.")
}

func pkceOK(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// reused ends the connection a spent code or refresh token belongs to, and says so.
func (s *Store) reused(ctx context.Context, grantID, sentence string) error {
	if _, err := s.revoke(ctx, grantID); err != nil {
		return err
	}
	return refuse("invalid_grant", "%s", sentence)
}

// Refresh rotates a refresh token. A refresh token is good once: presenting a used one ends the whole
// family. scope may only narrow; building drops out 30 days after approval. Every check runs before the
// token is spent, so a refused refresh (a widening scope) leaves the connection as it was.
func (s *Store) Refresh(ctx context.Context, clientID, refresh, scope string) (Tokens, error) {
	var grantID, kind, tscope, res string
	var exp, used int64
	err := s.db.QueryRowContext(ctx, `SELECT grant_id,kind,scope,resource,expires,used FROM oauth_tokens WHERE hash=?`, hash(refresh)).
		Scan(&grantID, &kind, &tscope, &res, &exp, &used)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && kind != "refresh") {
		return Tokens{}, refuse("invalid_grant", "This refresh token is not known to this box.")
	}
	if err != nil {
		return Tokens{}, errs.Wrap("grants.refresh", errs.Other, err, "")
	}
	g, err := s.grant(ctx, grantID)
	if err != nil {
		return Tokens{}, err
	}
	const spent = "This refresh token was already used, so the connection is ended; connect again."
	switch {
	case g.ClientID != clientID:
		return Tokens{}, refuse("invalid_grant", "This refresh token was issued to another client.")
	case used != 0:
		return Tokens{}, s.reused(ctx, grantID, spent)
	case !g.Revoked.IsZero():
		return Tokens{}, refuse("invalid_grant", "This connection was disconnected by the owner; connect again.")
	case s.now().Unix() > exp:
		return Tokens{}, refuse("invalid_grant", "This refresh token expired; connect again.")
	}
	have := intersect(strings.Fields(tscope), capsScope(s.effective(g)))
	want := have
	if scope != "" {
		asked, err := parseScope(scope)
		if err != nil {
			return Tokens{}, err
		}
		for _, sc := range asked {
			if !slices.Contains(have, sc) {
				return Tokens{}, refuse("invalid_scope", "A refresh cannot widen the connection: %s was not granted.", sc)
			}
		}
		want = asked
	}
	return s.issue(ctx, g, want, res, `UPDATE oauth_tokens SET used=1 WHERE hash=? AND used=0`, hash(refresh), spent)
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// issue spends what was presented (spend, a one-use UPDATE of the code or refresh token hashed as key)
// and makes a fresh access and refresh token pair for a grant, in one transaction: the tokens exist only
// if the spend happened, and a spend that finds it already spent (a concurrent reuse) ends the grant.
func (s *Store) issue(ctx context.Context, g Grant, scopes []string, resource, spend, key, reuse string) (Tokens, error) {
	t := Tokens{Access: AccessPrefix + random(), Refresh: RefreshPrefix + random(), ExpiresIn: int64(AccessLife.Seconds()), Scope: strings.Join(scopes, " ")}
	now := s.now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Tokens{}, errs.Wrap("grants.issue", errs.Other, err, "")
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, spend, key)
	if err != nil {
		return Tokens{}, errs.Wrap("grants.issue", errs.Other, err, "")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		tx.Rollback()
		return Tokens{}, s.reused(ctx, g.ID, reuse)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE oauth_grants SET issued=1 WHERE id=?`, g.ID); err != nil {
		return Tokens{}, errs.Wrap("grants.issue", errs.Other, err, "")
	}
	for _, row := range []struct {
		tok, kind string
		exp       time.Time
	}{{t.Access, "access", now.Add(AccessLife)}, {t.Refresh, "refresh", now.Add(RefreshLife)}} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_tokens(hash,grant_id,kind,scope,resource,expires) VALUES(?,?,?,?,?,?)`,
			hash(row.tok), g.ID, row.kind, t.Scope, resource, row.exp.Unix()); err != nil {
			return Tokens{}, errs.Wrap("grants.issue", errs.Other, err, "")
		}
	}
	if err := tx.Commit(); err != nil {
		return Tokens{}, errs.Wrap("grants.issue", errs.Other, err, "")
	}
	return t, nil
}

// capsScope is the scope string of checkboxes.
func capsScope(c keys.Caps) []string {
	out := []string{ScopeRead}
	if c.Memory {
		out = append(out, ScopeWrite)
	}
	if c.Messages {
		out = append(out, ScopeMessages)
	}
	if c.Build {
		out = append(out, ScopeBuild)
	}
	return out
}

func scopeCaps(scopes []string) keys.Caps {
	return keys.Caps{Memory: slices.Contains(scopes, ScopeWrite), Messages: slices.Contains(scopes, ScopeMessages), Build: slices.Contains(scopes, ScopeBuild)}
}

// effective is a grant's checkboxes now: building ends BuildLife after approval.
func (s *Store) effective(g Grant) keys.Caps {
	c := g.Caps
	if c.Build && !s.now().Before(g.BuildUntil) {
		c.Build = false
	}
	return c
}

// accessRow is an access token's row and its grant's, as Verify reads them.
type accessRow struct {
	scope, resource string
	expires         int64
	grant           Grant
}

// Verify checks an access token for resource and returns its connection with the checkboxes it carries.
// Every call of a connection presents its token, so the rows are kept while state.db is unchanged
// (state.Cache): a revoke, here or by another process, is seen by the very next call; expiry and the
// building window are checked against the clock on every call.
func (s *Store) Verify(ctx context.Context, access, resource string) (Grant, error) {
	row, err := s.access.Get(ctx, hash(access), func() (accessRow, error) {
		var r accessRow
		var grantID, kind string
		err := s.db.QueryRowContext(ctx, `SELECT grant_id,kind,scope,resource,expires FROM oauth_tokens WHERE hash=?`, hash(access)).
			Scan(&grantID, &kind, &r.scope, &r.resource, &r.expires)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && kind != "access") {
			return r, refuse("invalid_token", "This access token is not known to this box; connect again.")
		}
		if err != nil {
			return r, errs.Wrap("grants.verify", errs.Other, err, "")
		}
		r.grant, err = s.grant(ctx, grantID)
		return r, err
	})
	if err != nil {
		return Grant{}, err
	}
	g := row.grant
	switch {
	case !g.Revoked.IsZero():
		return g, refuse("invalid_token", "The owner disconnected this assistant on %s; connect again to ask for access.", g.Revoked.Format("2 January 2006"))
	case s.now().Unix() > row.expires:
		return g, refuse("invalid_token", "This access token expired; refresh it or connect again.")
	case row.resource != resource:
		return g, refuse("invalid_token", "This access token was issued for another resource, %s.", row.resource)
	}
	eff := s.effective(g)
	tc := scopeCaps(strings.Fields(row.scope))
	g.Caps = keys.Caps{Memory: eff.Memory && tc.Memory, Messages: eff.Messages && tc.Messages, Build: eff.Build && tc.Build}
	if s.now().Sub(g.LastUsed) > time.Minute { // the write moves state.db's version, so the row is read again
		if _, err := s.db.ExecContext(ctx, `UPDATE oauth_grants SET last_used=? WHERE id=?`, s.now().Unix(), g.ID); err != nil {
			return g, errs.Wrap("grants.verify", errs.Other, err, "")
		}
	}
	return g, nil
}

const grantColumns = `id,client_id,client,host,memory,messages,build,created,build_until,revoked,last_used`

func scanGrant(row interface{ Scan(...any) error }) (Grant, error) {
	var g Grant
	var created, until, revoked, used int64
	err := row.Scan(&g.ID, &g.ClientID, &g.Client, &g.Host, &g.Caps.Memory, &g.Caps.Messages, &g.Caps.Build, &created, &until, &revoked, &used)
	g.Created = time.Unix(created, 0).UTC()
	for _, p := range []struct {
		t *time.Time
		v int64
	}{{&g.BuildUntil, until}, {&g.Revoked, revoked}, {&g.LastUsed, used}} {
		if p.v != 0 {
			*p.t = time.Unix(p.v, 0).UTC()
		}
	}
	return g, err
}

func (s *Store) grant(ctx context.Context, id string) (Grant, error) {
	g, err := scanGrant(s.db.QueryRowContext(ctx, `SELECT `+grantColumns+` FROM oauth_grants WHERE id=?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return g, refuse("invalid_grant", "This connection is not known to this box.")
	}
	if err != nil {
		return g, errs.Wrap("grants.grant", errs.Other, err, "")
	}
	return g, nil
}

// List returns the OAuth connections that received tokens, newest first; Caps are as they are now.
func (s *Store) List(ctx context.Context) ([]Grant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+grantColumns+` FROM oauth_grants WHERE issued=1 ORDER BY created DESC, id`)
	if err != nil {
		return nil, errs.Wrap("grants.list", errs.Other, err, "")
	}
	defer rows.Close()
	out := []Grant{}
	for rows.Next() {
		g, err := scanGrant(rows)
		if err != nil {
			return nil, errs.Wrap("grants.list", errs.Other, err, "")
		}
		g.Caps = s.effective(g)
		out = append(out, g)
	}
	return out, rows.Err()
}

// Revoke disconnects a grant: its tokens stop working on the next call. It returns the connection as it
// now is, and whether this call ended it (false when it was already disconnected).
func (s *Store) Revoke(ctx context.Context, id string) (Grant, bool, error) {
	if _, err := s.grant(ctx, id); err != nil {
		return Grant{}, false, err
	}
	ended, err := s.revoke(ctx, id)
	if err != nil {
		return Grant{}, false, err
	}
	g, err := s.grant(ctx, id)
	return g, ended, err
}

func (s *Store) revoke(ctx context.Context, id string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE oauth_grants SET revoked=? WHERE id=? AND revoked=0`, s.now().Unix(), id)
	if err != nil {
		return false, errs.Wrap("grants.revoke", errs.Other, err, "")
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// RevokeCode disconnects the grant an authorization code made, used or not.
func (s *Store) RevokeCode(ctx context.Context, code string) error {
	var grantID string
	err := s.db.QueryRowContext(ctx, `SELECT grant_id FROM oauth_codes WHERE hash=?`, hash(code)).Scan(&grantID)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse("invalid_grant", "This authorization code is not known to this box.")
	}
	if err != nil {
		return errs.Wrap("grants.revokecode", errs.Other, err, "")
	}
	_, err = s.revoke(ctx, grantID)
	return err
}

// DeleteAll ends every OAuth connection and forgets every client, request, code and token, names
// included (erase): a client's next call is refused, and nothing of it is kept.
func (s *Store) DeleteAll(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errs.Wrap("grants.deleteall", errs.Other, err, "")
	}
	for _, t := range []string{"oauth_tokens", "oauth_codes", "oauth_grants", "oauth_request_issuers", "oauth_requests",
		"oauth_approved_redirects", "oauth_client_sources", "oauth_clients"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t); err != nil {
			return errs.Wrap("grants.deleteall", errs.Other, errors.Join(err, tx.Rollback()), "The OAuth connections could not be removed")
		}
	}
	if err := tx.Commit(); err != nil {
		return errs.Wrap("grants.deleteall", errs.Other, err, "The OAuth connections could not be removed")
	}
	return nil
}

// RevokeToken answers RFC 7009 for a public client: a refresh token ends its whole family (the
// connection), an access token stops working alone. A token this box does not know is no error (RFC 7009
// §2.2); a token issued to another client is refused. It returns the connection a refresh token ended.
func (s *Store) RevokeToken(ctx context.Context, clientID, token string) (Grant, bool, error) {
	var grantID, kind string
	err := s.db.QueryRowContext(ctx, `SELECT grant_id,kind FROM oauth_tokens WHERE hash=?`, hash(token)).Scan(&grantID, &kind)
	if errors.Is(err, sql.ErrNoRows) {
		return Grant{}, false, nil
	}
	if err != nil {
		return Grant{}, false, errs.Wrap("grants.revoketoken", errs.Other, err, "")
	}
	g, err := s.grant(ctx, grantID)
	if err != nil {
		return Grant{}, false, err
	}
	if g.ClientID != clientID {
		return Grant{}, false, refuse("unauthorized_client", "This token was issued to another client.")
	}
	if kind == "access" {
		if _, err := s.db.ExecContext(ctx, `UPDATE oauth_tokens SET expires=0 WHERE hash=?`, hash(token)); err != nil {
			return Grant{}, false, errs.Wrap("grants.revoketoken", errs.Other, err, "")
		}
		return g, false, nil
	}
	ended, err := s.revoke(ctx, grantID)
	if err != nil {
		return Grant{}, false, err
	}
	g, err = s.grant(ctx, grantID)
	return g, ended, err
}

// Answer is the redirect that answers a request (RFC 6749 §4.1.2): v plus the state and, per RFC 9207,
// the issuer the request was sent to, byte for byte what the client discovered.
func (r Request) Answer(v url.Values) string {
	if r.State != "" {
		v.Set("state", r.State)
	}
	v.Set("iss", r.Issuer)
	u, _ := url.Parse(r.RedirectURI)
	q := u.Query()
	for k, vs := range v {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// ConsentPath is where package web serves the consent page that /authorize sends the owner to.
const ConsentPath = "/mcp/oauth/consent"

// number is a port written in digits as its number ("07317": "7317"); anything else as it is.
func number(port string) string {
	if n, err := strconv.ParseUint(port, 10, 32); err == nil {
		return strconv.FormatUint(n, 10)
	}
	return port
}
