package oauth_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/egress"
	"github.com/boxmem/box/internal/egresstest"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/oauth"
	"github.com/boxmem/box/internal/passkeytest"
	"github.com/boxmem/box/internal/server"
	"github.com/boxmem/box/internal/web"
)

// fx is a real box served on 127.0.0.1:0 with the web UI, the authorization server and a clock to move.
type fx struct {
	t      *testing.T
	root   string
	base   string  // http://localhost:port: passkeys need a name, not a number
	ip     string  // http://127.0.0.1:port: the same box by number, as many clients are configured
	docs   *docNet // where clients' metadata documents are served
	grants *grants.Store
	keys   *keys.Store
	gate   *gate.Gate
	web    *web.Web
	key    *passkeytest.Key
	c      *http.Client
	clock  *passkeytest.Clock // moved by tests to expire codes and tokens
}

func newFx(t *testing.T, tune ...func(*server.Server)) *fx {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	jar, _ := cookiejar.New(nil) // the owner's browser: signed in once owner() made the passkey
	f := &fx{t: t, clock: passkeytest.NewClock(),
		c: &http.Client{Timeout: 20 * time.Second, Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	a, err := app.Init(ctx, t.TempDir(), nil, "true", app.Options{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.root, f.keys, f.grants, f.gate = a.Root, a.Keys, a.Grants, a.Gate
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	f.base, f.ip = "http://localhost:"+port, "http://127.0.0.1:"+port
	f.docs = newDocNet(t)
	srv, ui, err := a.Server(app.ServeOptions{Listener: ln})
	if err != nil {
		t.Fatal(err)
	}
	f.web = ui
	// box serve's owner lives on box.localhost, which browsers resolve and Go's resolver does not: these
	// clients follow the consent at localhost (PasskeyOriginFor is tested on its own).
	srv.OwnerName = ""
	srv.Fetch = f.docs.Client(egress.Options{MaxBytes: grants.MaxDocument, Timeout: 2 * time.Second})
	for _, fn := range tune {
		fn(srv)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	})
	f.key = passkeytest.New(t, f.base, "localhost")
	return f
}

// docNet serves clients' metadata documents at https://example.com on the test network of egresstest
// (where any other dial is recorded and refused without connecting), from a map the test fills; hits counts
// fetches per path.
type docNet struct {
	*egresstest.Net
	mu    sync.Mutex
	pages map[string]docPage
	hits  map[string]int

	inflight, maxInflight int // fetches being answered now, and the most at once
}

type docPage struct {
	status int
	header http.Header
	body   string
	delay  time.Duration
	hold   chan struct{} // when set, the answer waits until it is closed
}

func newDocNet(t *testing.T) *docNet {
	n := &docNet{pages: map[string]docPage{}, hits: map[string]int{}}
	n.Net = egresstest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		p, ok := n.pages[r.URL.Path]
		n.hits[r.URL.Path]++
		n.inflight++
		n.maxInflight = max(n.maxInflight, n.inflight)
		n.mu.Unlock()
		defer func() {
			n.mu.Lock()
			n.inflight--
			n.mu.Unlock()
		}()
		if p.hold != nil {
			select {
			case <-p.hold:
			case <-r.Context().Done():
				return
			}
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		if p.delay > 0 {
			select {
			case <-time.After(p.delay):
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range p.header {
			w.Header()[k] = v
		}
		if p.status == 0 {
			p.status = 200
		}
		w.WriteHeader(p.status)
		io.WriteString(w, p.body)
	}))
	return n
}

// page serves p at path on https://example.com.
func (n *docNet) page(path string, p docPage) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pages[path] = p
}

func (n *docNet) count(path string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hits[path]
}

// owner makes the owner's passkey (the software one) through the setup link.
func (f *fx) owner() {
	f.t.Helper()
	link, err := f.web.SetupLink(context.Background(), f.base)
	if err != nil {
		f.t.Fatal(err)
	}
	u, _ := url.Parse(link)
	st, begin := f.post("/auth/register/begin", map[string]any{"code": u.Query().Get("code")})
	if st != 200 {
		f.t.Fatalf("register begin: %d %v", st, begin)
	}
	if st, out := f.post("/auth/register/finish", map[string]any{"ceremony": begin["ceremony"], "credential": f.key.Create(raw(begin["options"]))}); st != 200 {
		f.t.Fatalf("register finish: %d %v", st, out)
	}
}

func raw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// post sends JSON from the box's own origin and decodes the answer.
func (f *fx) post(path string, body any) (int, map[string]any) {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.base+path, bytes.NewReader(raw(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", f.base)
	return f.do(req)
}

func (f *fx) do(req *http.Request) (int, map[string]any) {
	f.t.Helper()
	res, err := f.c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string]any{}
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// token posts a form to the token endpoint.
func (f *fx) token(v url.Values) (int, map[string]any) {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.base+oauth.TokenPath, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return f.do(req)
}

// client registers a public client with one redirect URI.
func (f *fx) client(redirect string) string {
	f.t.Helper()
	st, out := f.post(oauth.RegisterPath, map[string]any{"client_name": "Test client", "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none"})
	if st != http.StatusCreated {
		f.t.Fatalf("register: %d %v", st, out)
	}
	return out["client_id"].(string)
}

// pkce is a verifier and its S256 challenge.
func pkce() (string, string) {
	b := make([]byte, 32)
	rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(v))
	return v, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorize calls /authorize and returns where it sends the browser.
func (f *fx) authorize(q url.Values) (int, *url.URL, map[string]any) {
	f.t.Helper()
	res, err := f.c.Get(f.base + oauth.AuthorizePath + "?" + q.Encode())
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string]any{}
	json.NewDecoder(res.Body).Decode(&out)
	loc, _ := url.Parse(res.Header.Get("Location"))
	return res.StatusCode, loc, out
}

// flow is one client's authorization in progress.
type flow struct {
	client, redirect, verifier, challenge string
}

func (f *fx) newFlow(redirect string) *flow {
	v, c := pkce()
	return &flow{client: f.client(redirect), redirect: redirect, verifier: v, challenge: c}
}

func (f *fx) query(fl *flow, scope string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {fl.client}, "redirect_uri": {fl.redirect}, "state": {"st-1"},
		"code_challenge": {fl.challenge}, "code_challenge_method": {"S256"}, "resource": {f.base + "/mcp"}, "scope": {scope}}
}

// request authorizes and returns the consent request id.
func (f *fx) request(fl *flow, scope string) string {
	f.t.Helper()
	st, loc, out := f.authorize(f.query(fl, scope))
	if st != http.StatusFound || loc.Path != oauth.ConsentPath {
		f.t.Fatalf("authorize: %d %v %v", st, loc, out)
	}
	return loc.Query().Get("request")
}

// consent approves a request with the owner's passkey and returns the redirect the browser would follow.
func (f *fx) consent(req string, caps keys.Caps) (int, map[string]any) {
	f.t.Helper()
	st, begin := f.post(oauth.ConsentPath+"/begin", map[string]any{"request": req, "memory": caps.Memory, "messages": caps.Messages, "build": caps.Build})
	if st != 200 {
		return st, begin
	}
	return f.post(oauth.ConsentPath+"/finish", map[string]any{"ceremony": begin["ceremony"], "credential": f.key.Get(raw(begin["options"]))})
}

// code runs authorize and consent and returns the code from the redirect.
func (f *fx) code(fl *flow, scope string, caps keys.Caps) string {
	f.t.Helper()
	st, out := f.consent(f.request(fl, scope), caps)
	if st != 200 {
		f.t.Fatalf("consent: %d %v", st, out)
	}
	next, _ := url.Parse(out["next"].(string))
	if next.Query().Get("state") != "st-1" || next.Query().Get("iss") != f.base {
		f.t.Fatalf("redirect lacks state or iss: %s", next)
	}
	return next.Query().Get("code")
}

func (f *fx) exchange(fl *flow, code string) (int, map[string]any) {
	return f.token(url.Values{"grant_type": {"authorization_code"}, "client_id": {fl.client}, "code": {code},
		"code_verifier": {fl.verifier}, "redirect_uri": {fl.redirect}, "resource": {f.base + "/mcp"}})
}

func (f *fx) refresh(fl *flow, rt, scope string) (int, map[string]any) {
	v := url.Values{"grant_type": {"refresh_token"}, "client_id": {fl.client}, "refresh_token": {rt}}
	if scope != "" {
		v.Set("scope", scope)
	}
	return f.token(v)
}

// tokens runs the whole flow and returns the token answer.
func (f *fx) tokens(fl *flow, scope string, caps keys.Caps) map[string]any {
	f.t.Helper()
	st, out := f.exchange(fl, f.code(fl, scope, caps))
	if st != 200 {
		f.t.Fatalf("token: %d %v", st, out)
	}
	return out
}

// mcpStatus calls /mcp initialize with a bearer token and returns the status and WWW-Authenticate.
func (f *fx) mcpStatus(token string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest("POST", f.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := f.c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("WWW-Authenticate")
}

// newStranger is a passkey for the same origin that the box never registered.
func newStranger(t *testing.T, f *fx) *passkeytest.Key {
	k := passkeytest.New(t, f.base, "localhost")
	k.Create(raw(map[string]any{"publicKey": map[string]any{"challenge": "x", "user": map[string]any{"id": "dXNlcg"}}}))
	return k
}
