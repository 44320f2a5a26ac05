// Package oauth is the box's OAuth 2.1 authorization server over HTTP: RFC 8414 metadata, RFC 7591
// registration, client metadata documents (fetched through package egress), /authorize (which hands the
// owner to the consent page of package web), /token and RFC 7009 /revoke. The rules and the stored state
// are package grants'; this package only speaks the protocol (docs/OAUTH.md).
package oauth

import (
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/boxmem/box/internal/egress"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/httpjson"
)

// The endpoints, under /mcp/oauth (docs/OAUTH.md). ConsentPath is served by package web.
const (
	RegisterPath  = "/mcp/oauth/register"
	AuthorizePath = "/mcp/oauth/authorize"
	TokenPath     = "/mcp/oauth/token"
	RevokePath    = "/mcp/oauth/revoke"
	ConsentPath   = grants.ConsentPath
)

// Config is what the authorization server needs from the composed server.
type Config struct {
	Grants *grants.Store
	Gate   *gate.Gate // the access switch: at Never no new connection is made
	// Issuer is the box's public address for a request (no trailing slash); the resource is Issuer + "/mcp".
	Issuer func(r *http.Request) string
	// Peer is the caller's address (behind a reverse proxy, the one the proxy appended), for the
	// per-source limit on new clients; nil: the connection's own.
	Peer func(r *http.Request) string
	// Fetch reaches client metadata documents; nil: the public internet under egress's rules.
	Fetch  *egress.Client
	Logger *slog.Logger
	// OwnerName is the name the owner's passkey lives on for a box reached on this machine
	// (box.localhost); "": localhost (docs/OAUTH.md).
	OwnerName string
	// OwnHosts are the other host names the box answers to (those a reverse proxy may send, its public
	// address's): no redirect URI leads to them.
	OwnHosts []string
}

// Server is the authorization server of one box.
type Server struct{ cfg Config }

// New makes the authorization server.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Fetch == nil {
		cfg.Fetch = egress.New(egress.Options{MaxBytes: grants.MaxDocument, Timeout: documentTimeout})
	}
	if cfg.Peer == nil {
		cfg.Peer = func(r *http.Request) string {
			h, _, _ := net.SplitHostPort(r.RemoteAddr)
			return h
		}
	}
	return &Server{cfg: cfg}
}

// source is where a request came from, for the per-source limit on new clients: the IPv4 /24 or IPv6 /56
// of the caller's address, so one network counts once however many addresses it holds.
func (s *Server) source(r *http.Request) string {
	ip, err := netip.ParseAddr(s.cfg.Peer(r))
	if err != nil {
		return s.cfg.Peer(r)
	}
	ip = ip.Unmap()
	bits := 56
	if ip.Is4() {
		bits = 24
	}
	p, _ := ip.Prefix(bits)
	return p.String()
}

// Mount adds the endpoints and the RFC 8414 documents (plain and path-suffixed) to mux.
func (s *Server) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server/{path...}", s.metadata)
	mux.HandleFunc("POST "+RegisterPath, s.register)
	mux.HandleFunc("GET "+AuthorizePath, s.authorize)
	mux.HandleFunc("POST "+TokenPath, s.token)
	mux.HandleFunc("POST "+RevokePath, s.revoke)
}

// Metadata is the RFC 8414 document for an issuer.
func Metadata(issuer string) *oauthex.AuthServerMeta {
	return &oauthex.AuthServerMeta{
		Issuer:                                     issuer,
		AuthorizationEndpoint:                      issuer + AuthorizePath,
		TokenEndpoint:                              issuer + TokenPath,
		RegistrationEndpoint:                       issuer + RegisterPath,
		RevocationEndpoint:                         issuer + RevokePath,
		RevocationEndpointAuthMethodsSupported:     []string{"none"},
		ScopesSupported:                            grants.Scopes,
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:          []string{"none"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		ServiceDocumentation:                       "https://github.com/boxmem/box#connecting-assistants",
		AuthorizationResponseIssParameterSupported: true,
		ClientIDMetadataDocumentSupported:          true,
	}
}

// metadata serves the document without the empty jwks_uri the SDK type always writes: the box signs no
// tokens, and RFC 8414 makes the member optional.
func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	b, err := json.Marshal(Metadata(s.cfg.Issuer(r)))
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		s.fail(w, r, errs.Wrap("oauth.metadata", errs.Other, err, ""))
		return
	}
	delete(m, "jwks_uri")
	writeJSON(w, http.StatusOK, m)
}

// register records a new client (RFC 7591), unless access is at Never: then nothing is stored.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if err := s.refuseAtNever(r); err != nil {
		s.fail(w, r, err)
		return
	}
	var m oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&m); err != nil {
		writeJSON(w, http.StatusBadRequest, errBody("invalid_client_metadata", "The registration is not a JSON object of client metadata."))
		return
	}
	if err := grants.CheckNotOwn(m.RedirectURIs, s.own(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	resp, err := s.cfg.Grants.Register(r.Context(), m, s.source(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, resp)
}

// own is where this box answers for r: its issuer, and the port the request reached it on.
func (s *Server) own(r *http.Request) grants.Own {
	o := grants.Own{Issuer: s.cfg.Issuer(r), Hosts: s.cfg.OwnHosts}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(a.String()); err == nil {
			o.Port = port
		}
	}
	return o
}

// refuseAtNever is the refusal of a new connection while "Give other assistants access" is at Never (or
// the switches cannot be read), else nil. It only reads the switch: the caller is unknown, so it writes
// no diary line (docs/GATE.md).
func (s *Server) refuseAtNever(r *http.Request) error {
	never, err := s.cfg.Gate.Never(r.Context(), gate.Access)
	switch {
	case err != nil:
		s.cfg.Logger.Error("oauth: the switches could not be read", "err", err)
		return grants.Refuse("access_denied", "The box could not read its switches, so no new assistant can connect now.")
	case never:
		return grants.Refuse("access_denied", "The owner set \"Give other assistants access\" to Never, so no new assistant can connect.")
	}
	return nil
}

// authorize checks the request (grants) and sends the owner's browser to the consent page. An error goes
// back to the client only at a redirect URI the owner already approved for it; any other is shown on a
// page, so the box never sends a browser somewhere the owner did not choose (RFC 9700 §4.11.2).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	issuer := s.cfg.Issuer(r)
	a := grants.AuthRequest{ClientID: q.Get("client_id"), RedirectURI: q.Get("redirect_uri"), ResponseType: q.Get("response_type"),
		State: q.Get("state"), Challenge: q.Get("code_challenge"), Method: q.Get("code_challenge_method"),
		Resource: q.Get("resource"), Scope: q.Get("scope"), Issuer: issuer, Source: s.source(r)}
	if err := a.CheckSizes(); err != nil {
		s.errorPage(w, r, err)
		return
	}
	if never := s.refuseAtNever(r); never != nil {
		// Nothing is fetched or stored: a client the owner approved before hears access_denied at that
		// redirect URI, any other is told on a page.
		to, err := s.cfg.Grants.ApprovedRedirect(r.Context(), a.ClientID, a.RedirectURI)
		if err == nil && to != "" {
			err = grants.CheckNotOwn([]string{to}, s.own(r)) // never back to the box itself, as below
		}
		switch {
		case err != nil:
			s.errorPage(w, r, err)
		case to == "":
			s.errorPage(w, r, never)
		default:
			back := grants.Request{Issuer: issuer, RedirectURI: to, State: a.State}
			http.Redirect(w, r, back.Answer(url.Values{"error": {"access_denied"}, "error_description": {errs.Sentence(never)}}), http.StatusFound)
		}
		return
	}
	if err := s.document(r, a.ClientID); err != nil {
		s.errorPage(w, r, err)
		return
	}
	if err := grants.CheckNotOwn([]string{a.RedirectURI}, s.own(r)); err != nil { // a client registered before this check
		s.errorPage(w, r, err)
		return
	}
	req, err := s.cfg.Grants.Authorize(r.Context(), a, issuer+"/mcp")
	switch {
	case errors.Is(err, grants.ErrToClient):
		// The owner approved this client and redirect URI before: the error goes back to it (RFC 6749 §4.1.2.1).
		back := grants.Request{Issuer: issuer, RedirectURI: a.RedirectURI, State: a.State}
		if back.RedirectURI == "" {
			c, cerr := s.cfg.Grants.Client(r.Context(), a.ClientID)
			if cerr != nil {
				s.errorPage(w, r, cerr)
				return
			}
			back.RedirectURI = c.RedirectURIs[0]
		}
		http.Redirect(w, r, back.Answer(url.Values{"error": {errs.CodeOf(err)}, "error_description": {errs.Sentence(err)}}), http.StatusFound)
		return
	case err != nil:
		s.errorPage(w, r, err)
		return
	}
	http.Redirect(w, r, PasskeyOriginFor(issuer, s.cfg.OwnerName)+ConsentPath+"?request="+url.QueryEscape(req.ID), http.StatusFound)
}

// PasskeyOriginFor is where the owner's passkey works for a box reached at issuer, for an owner whose
// passkey lives on name (box.localhost; "" is localhost): the same address, except that a loopback IP
// (127.0.0.1, [::1]), and localhost itself when name is another, become name with the same port, since a
// passkey's relying party is a name, never a number. The request remembers the issuer it was sent to, so
// the redirect that answers it still carries that issuer byte for byte (docs/OAUTH.md).
func PasskeyOriginFor(issuer, name string) string {
	if name == "" {
		name = "localhost"
	}
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme != "http" {
		return issuer
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); (err != nil || !ip.IsLoopback()) && !(host == "localhost" && name != "localhost") {
		return issuer
	}
	port := u.Port()
	u.Host = name
	if port != "" {
		u.Host = net.JoinHostPort(name, port)
	}
	return strings.TrimSuffix(u.String(), "/")
}

// token answers the authorization_code and refresh_token grants (RFC 6749 §4.1.3, §6).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	clientID, err := s.postedClient(w, r, "token")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var t grants.Tokens
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		t, err = s.cfg.Grants.Exchange(r.Context(), clientID, r.PostForm.Get("code"), r.PostForm.Get("code_verifier"),
			r.PostForm.Get("redirect_uri"), r.PostForm.Get("resource"))
	case "refresh_token":
		if res := r.PostForm.Get("resource"); res != "" && res != s.cfg.Issuer(r)+"/mcp" {
			err = grants.Refuse("invalid_target", "The resource must be this box's MCP endpoint.")
			break
		}
		t, err = s.cfg.Grants.Refresh(r.Context(), clientID, r.PostForm.Get("refresh_token"), r.PostForm.Get("scope"))
	default:
		err = grants.Refuse("unsupported_grant_type", "Use authorization_code or refresh_token.")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": t.Access, "token_type": "Bearer", "expires_in": t.ExpiresIn,
		"refresh_token": t.Refresh, "scope": t.Scope})
}

// revoke answers RFC 7009 for public clients (token and client_id): a refresh token ends its connection,
// an access token stops working alone; a token the box does not know is answered 200 all the same.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	clientID, err := s.postedClient(w, r, "revocation")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	token := r.PostForm.Get("token")
	if token == "" {
		writeJSON(w, http.StatusBadRequest, errBody("invalid_request", "Send the token to revoke in the token parameter."))
		return
	}
	g, ended, err := s.cfg.Grants.RevokeToken(r.Context(), clientID, token)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ended {
		s.cfg.Logger.Info("oauth: a client ended its connection", "client", g.Client, "host", g.Host, "grant", g.ID)
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// postedClient reads a client's form post (at most 64 KiB) and returns the client_id it names, in the form
// or as HTTP Basic auth, once the box knows that client. what names the request in the error.
func (s *Server) postedClient(w http.ResponseWriter, r *http.Request, what string) (string, error) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		return "", grants.Refuse("invalid_request", "The %s request is not a form.", what)
	}
	clientID := r.PostForm.Get("client_id")
	if id, _, ok := r.BasicAuth(); ok && clientID == "" {
		clientID, _ = url.QueryUnescape(id)
	}
	if _, err := s.cfg.Grants.Client(r.Context(), clientID); err != nil {
		return "", err
	}
	return clientID, nil
}

// errorPage tells the person at the browser why /authorize refused: a small page for a browser, the
// RFC 6749 §5.2 JSON for anything else, never a redirect.
func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, err error) {
	code := errs.CodeOf(err)
	if code == "" || !strings.Contains(r.Header.Get("Accept"), "text/html") {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.WriteHeader(status(code))
	if err := errorHTML.Execute(w, errorView{Code: code, Description: errs.Sentence(err)}); err != nil {
		s.cfg.Logger.Error("oauth: the error page", "err", err)
	}
}

// errorView is what the error page shows.
type errorView struct{ Code, Description string }

var errorHTML = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Could not connect · Box</title><style>body{font:17px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem}</style></head>
<body><h1>This assistant could not connect</h1><p id="error-text">{{.Description}}</p>
<p>Nothing was connected. Go back to the assistant and start connecting again; if it keeps happening, tell whoever made it (<code>{{.Code}}</code>).</p></body></html>
`))

func errBody(code, desc string) map[string]string {
	return map[string]string{"error": code, "error_description": desc}
}

// fail answers an error as RFC 6749 §5.2 JSON.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := errs.CodeOf(err)
	if code == "" {
		s.cfg.Logger.Error("oauth", "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusInternalServerError, errBody("server_error", "Something went wrong inside the box; try again."))
		return
	}
	writeJSON(w, status(code), errBody(code, errs.Sentence(err)))
}

// status is the HTTP status of a refusal: invalid_client is 401, a rate limit 429, the rest 400.
func status(code string) int {
	switch code {
	case "invalid_client":
		return http.StatusUnauthorized
	case "temporarily_unavailable":
		return http.StatusTooManyRequests
	}
	return http.StatusBadRequest
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v, false) }
