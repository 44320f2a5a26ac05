package oauth_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	_ "modernc.org/sqlite"

	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/oauth"
	"github.com/boxmem/box/internal/server"
)

// An error at /authorize goes back to a client's redirect URI only once the owner approved that URI for
// that client; before, a registered https://evil.example/cb hears nothing and the person reads a page, so
// the box is no open redirector.
func TestErrorsGoBackOnlyToApprovedRedirects(t *testing.T) {
	f := newFx(t)
	f.owner()
	fl := f.newFlow("https://evil.example/cb")
	bad := f.query(fl, "memory.read")
	bad.Del("code_challenge")
	st, loc, out := f.authorize(bad)
	if st != http.StatusBadRequest || loc.String() != "" || out["error"] != "invalid_request" {
		t.Fatalf("an unapproved client's bad request: %d %v %v", st, loc, out)
	}
	// A browser reads a page that says what happened.
	req, _ := http.NewRequest("GET", f.base+oauth.AuthorizePath+"?"+bad.Encode(), nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	res, err := f.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || res.Header.Get("Location") != "" || !strings.Contains(string(page), "PKCE is required") ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("the error page: %d %q\n%s", res.StatusCode, res.Header.Get("Location"), page)
	}
	// Once the owner approved it, the same mistake goes back to the client with state and iss.
	f.tokens(fl, "memory.read", keys.Caps{})
	st, loc, out = f.authorize(bad)
	if st != http.StatusFound || loc.Host != "evil.example" || loc.Query().Get("error") != "invalid_request" ||
		loc.Query().Get("state") != "st-1" || loc.Query().Get("iss") != f.base {
		t.Fatalf("an approved client's bad request: %d %v %v", st, loc, out)
	}
	// Approving one redirect URI approves no other of the same client.
	c, err := f.grants.Register(context.Background(), oauthex.ClientRegistrationMetadata{RedirectURIs: []string{"https://app.example/a", "https://app.example/b"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	two := &flow{client: c.ClientID, redirect: "https://app.example/a"}
	two.verifier, two.challenge = pkce()
	f.tokens(two, "memory.read", keys.Caps{})
	q := f.query(two, "memory.read")
	q.Set("redirect_uri", "https://app.example/b")
	q.Set("response_type", "token")
	if st, loc, out := f.authorize(q); st != http.StatusBadRequest || loc.String() != "" || out["error"] != "unsupported_response_type" {
		t.Fatalf("a redirect URI the owner did not approve: %d %v %v", st, loc, out)
	}
}

// stateDB opens the box's state.db beside the server, to count what it keeps and how big it is.
func (f *fx) stateDB() *sql.DB {
	f.t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(f.root, ".box", "state.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { db.Close() })
	return db
}

// size is state.db's size once its write-ahead log is folded in.
func (f *fx) size(db *sql.DB) int64 {
	f.t.Helper()
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		f.t.Fatal(err)
	}
	var n int64
	for _, name := range []string{"state.db", "state.db-wal"} {
		if fi, err := os.Stat(filepath.Join(f.root, ".box", name)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Every OAuth parameter has a size; a state over 1 KiB is refused. A client keeps at most 20 requests
// waiting, for 10 minutes. So a flood of /authorize calls without anyone signing in leaves state.db small.
func TestParametersAndPendingRequestsAreBounded(t *testing.T) {
	f := newFx(t)
	db := f.stateDB()
	fl := f.newFlow(loop)
	before := f.size(db)
	huge := f.query(fl, "memory.read")
	huge.Set("state", strings.Repeat("s", 500<<10))
	for range 100 {
		if st, loc, out := f.authorize(huge); st != 400 || loc.String() != "" || !strings.Contains(out["error_description"].(string), "at most 1024") {
			t.Fatalf("a 500 KB state: %d %v %v", st, loc, out)
		}
	}
	full := f.query(fl, "memory.read")
	full.Set("state", strings.Repeat("s", grants.MaxState))
	for range 300 {
		if st, loc, out := f.authorize(full); st != http.StatusFound || loc.Path != oauth.ConsentPath {
			t.Fatalf("a 1 KiB state: %d %v %v", st, loc, out)
		}
	}
	for name, q := range map[string]url.Values{"state": {"state": {strings.Repeat("s", grants.MaxState+1)}},
		"scope": {"scope": {strings.Repeat("memory.read ", 200)}}, "resource": {"resource": {f.base + "/mcp?" + strings.Repeat("r", grants.MaxParam)}}} {
		v := f.query(fl, "memory.read")
		for k, x := range q {
			v[k] = x
		}
		if st, loc, out := f.authorize(v); st != 400 || loc.String() != "" || out["error"] != "invalid_request" {
			t.Errorf("an over-long %s: %d %v %v", name, st, loc, out)
		}
	}
	var waiting int
	if err := db.QueryRow(`SELECT count(*) FROM oauth_requests WHERE client_id=?`, fl.client).Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	if waiting != grants.MaxPending {
		t.Fatalf("%d requests waiting for one client, want %d", waiting, grants.MaxPending)
	}
	grew := f.size(db) - before
	if grew > 1<<20 {
		t.Fatalf("state.db grew by %d bytes under the flood", grew)
	}
	t.Logf("state.db grew by %d bytes under 100 calls with a 500 KB state and 300 with a 1 KiB state", grew)
	// The newest request is still answerable; ten minutes on, the waiting ones are gone.
	newest := f.request(fl, "memory.read")
	if _, err := f.grants.Pending(context.Background(), newest); err != nil {
		t.Fatalf("the newest request: %v", err)
	}
	f.clock.Advance(grants.RequestLife + time.Second)
	f.request(f.newFlow(loop), "memory.read")
	if err := db.QueryRow(`SELECT count(*) FROM oauth_requests WHERE client_id=?`, fl.client).Scan(&waiting); err != nil || waiting != 0 {
		t.Fatalf("after ten minutes %d requests still wait (%v)", waiting, err)
	}
}

// A refused token request spends nothing: a refresh refused for a wider scope, or a code exchange refused
// for a wrong redirect_uri or verifier, can be retried right, and the connection lives on. Reuse of what
// was really spent still ends it.
func TestRefusedTokenRequestsSpendNothing(t *testing.T) {
	f := newFx(t)
	f.owner()
	fl := f.newFlow(loop)
	tk := f.tokens(fl, "memory.read", keys.Caps{})
	rt := tk["refresh_token"].(string)
	if st, out := f.refresh(fl, rt, "memory.read memory.write"); st != 400 || out["error"] != "invalid_scope" {
		t.Fatalf("a widening refresh: %d %v", st, out)
	}
	st, again := f.refresh(fl, rt, "")
	if st != 200 {
		t.Fatalf("the retry after invalid_scope: %d %v", st, again)
	}
	if st, _ := f.mcpStatus(again["access_token"].(string)); st != 200 {
		t.Fatalf("the connection after a refused refresh: %d", st)
	}
	if st, out := f.refresh(fl, rt, ""); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("the spent refresh token again: %d %v", st, out)
	}
	if st, _ := f.mcpStatus(again["access_token"].(string)); st != 401 {
		t.Fatalf("reusing a spent refresh token left the connection alive: %d", st)
	}

	fl = f.newFlow(loop)
	code := f.code(fl, "memory.read", keys.Caps{})
	right := *fl
	fl.redirect = "http://127.0.0.1:9/other"
	if st, out := f.exchange(fl, code); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("a wrong redirect_uri: %d %v", st, out)
	}
	fl.redirect, fl.verifier = right.redirect, strings.Repeat("v", 43)
	if st, out := f.exchange(fl, code); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("a wrong verifier: %d %v", st, out)
	}
	st, tk = f.exchange(&right, code)
	if st != 200 {
		t.Fatalf("the retry with the right redirect_uri and verifier: %d %v", st, tk)
	}
	if st, out := f.exchange(&right, code); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("the spent code again: %d %v", st, out)
	}
	if st, _ := f.mcpStatus(tk["access_token"].(string)); st != 401 {
		t.Fatalf("reusing a spent code left the connection alive: %d", st)
	}
}

// consentFetcher is the owner at the consent page, for the Go SDK client: it follows /authorize to the
// consent page, checks where that page is, approves with the software passkey and hands back what the
// redirect carries.
func (f *fx) consentFetcher(caps keys.Caps, check func(consent *url.URL)) auth.AuthorizationCodeFetcher {
	return func(_ context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		res, err := f.c.Get(args.URL)
		if err != nil {
			return nil, err
		}
		res.Body.Close()
		loc, err := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != http.StatusFound || err != nil || loc.Path != oauth.ConsentPath {
			return nil, errors.New("authorize answered " + res.Status + " " + res.Header.Get("Location"))
		}
		if check != nil {
			check(loc)
		}
		st, out := f.consent(loc.Query().Get("request"), caps)
		if st != 200 {
			return nil, errors.New("consent: " + res.Status)
		}
		next, _ := url.Parse(out["next"].(string))
		q := next.Query()
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

// connectGo connects the Go SDK's OAuth client to endpoint and returns its session and the tools it sees.
func (f *fx) connectGo(endpoint string, cfg *auth.AuthorizationCodeHandlerConfig) []string {
	f.t.Helper()
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &sdk.StreamableClientTransport{Endpoint: endpoint, OAuthHandler: h, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-oauth", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		f.t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// A client that found the box at http://127.0.0.1:PORT gets its redirect with exactly that issuer (RFC
// 9207), although the owner's passkey works only at localhost, where /authorize sends the consent. The Go
// SDK, like the Python SDK ≥ 2, refuses a mismatch.
func TestIssuerIsTheOneTheClientDiscovered(t *testing.T) {
	f := newFx(t)
	f.owner() // the passkey belongs to localhost
	var consentAt *url.URL
	var iss string
	fetch := f.consentFetcher(keys.Caps{Memory: true}, func(u *url.URL) { consentAt = u })
	tools := f.connectGo(f.ip+"/mcp", &auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Go SDK at 127.0.0.1", RedirectURIs: []string{loop}, TokenEndpointAuthMethod: "none"}},
		RedirectURL: loop,
		AuthorizationCodeFetcher: func(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			r, err := fetch(ctx, a)
			if r != nil {
				iss = r.Iss
			}
			return r, err
		},
	})
	if !strings.Contains(strings.Join(tools, " "), "memory_remember") {
		t.Fatalf("tools: %v", tools)
	}
	if consentAt.Scheme+"://"+consentAt.Host != f.base {
		t.Fatalf("the consent page is at %s, not where the passkey works (%s)", consentAt, f.base)
	}
	if iss != f.ip {
		t.Fatalf("iss %q, want the discovered issuer %q", iss, f.ip)
	}
}

// PasskeyOriginFor moves only a loopback number to localhost, or to the owner's name.
func TestPasskeyOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:7317":    "http://localhost:7317",
		"http://[::1]:8080":        "http://localhost:8080",
		"http://127.0.0.1":         "http://localhost",
		"http://localhost:7317":    "http://localhost:7317",
		"https://box.example.com":  "https://box.example.com",
		"http://192.168.1.10:7317": "http://192.168.1.10:7317",
	} {
		if got := oauth.PasskeyOriginFor(in, ""); got != want {
			t.Errorf("PasskeyOriginFor(%s, \"\") = %s, want %s", in, got, want)
		}
	}
	// box serve's owner lives on box.localhost: a number and localhost itself move there, nothing else.
	for in, want := range map[string]string{
		"http://127.0.0.1:7317":       "http://box.localhost:7317",
		"http://[::1]:8080":           "http://box.localhost:8080",
		"http://localhost:7317":       "http://box.localhost:7317",
		"http://box.localhost:7317":   "http://box.localhost:7317",
		"http://other.localhost:7317": "http://other.localhost:7317",
		"https://box.example.com":     "https://box.example.com",
		"http://192.168.1.10:7317":    "http://192.168.1.10:7317",
	} {
		if got := oauth.PasskeyOriginFor(in, "box.localhost"); got != want {
			t.Errorf("PasskeyOriginFor(%s, box.localhost) = %s, want %s", in, got, want)
		}
	}
}

// Requests waiting for consent are kept per client and source: a stranger who sends the owner's client_id
// from elsewhere, however often, displaces only their own requests, never the owner's; one source is
// refused past MaxPendingSource in all, rather than push anyone else's out.
func TestPendingRequestsAreKeptPerSource(t *testing.T) {
	f := newFx(t, func(s *server.Server) { s.AllowedHosts = []string{"box.example.com"} })
	f.owner()
	authorize := func(from string, q url.Values) (int, string, map[string]any) {
		t.Helper()
		q.Set("resource", "http://box.example.com/mcp")
		req, _ := http.NewRequest("GET", f.base+oauth.AuthorizePath+"?"+q.Encode(), nil)
		req.Host = "box.example.com"
		req.Header.Set("X-Forwarded-For", from)
		res, err := f.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out := map[string]any{}
		json.NewDecoder(res.Body).Decode(&out)
		loc, _ := url.Parse(res.Header.Get("Location"))
		return res.StatusCode, loc.Query().Get("request"), out
	}
	fl := f.newFlow(loop)
	st, mine, out := authorize("203.0.113.5", f.query(fl, "memory.read"))
	if st != http.StatusFound || mine == "" {
		t.Fatalf("the owner's request: %d %v", st, out)
	}
	// The same client_id from another network, 300 times: only that network's newest MaxPending wait.
	for i := range 300 {
		if st, _, out := authorize("198.51.100.9", f.query(fl, "memory.read")); st != http.StatusFound {
			t.Fatalf("flood %d: %d %v", i, st, out)
		}
	}
	if _, err := f.grants.Pending(context.Background(), mine); err != nil {
		t.Fatalf("the flood pushed out the owner's request: %v", err)
	}
	db := f.stateDB()
	var theirs int
	if err := db.QueryRow(`SELECT count(*) FROM oauth_requests WHERE client_id=? AND source='198.51.100.0/24'`, fl.client).Scan(&theirs); err != nil || theirs != grants.MaxPending {
		t.Fatalf("%d of the flood's requests wait (%v), want %d", theirs, err, grants.MaxPending)
	}
	// Across many clients, one network has at most MaxPendingSource waiting; the next is refused, and
	// nothing of anyone else's is displaced.
	for i := 1; i < grants.MaxPendingSource/grants.MaxPending; i++ {
		other := f.newFlow(loop)
		for range grants.MaxPending {
			if st, _, out := authorize("198.51.100.9", f.query(other, "memory.read")); st != http.StatusFound {
				t.Fatalf("client %d: %d %v", i, st, out)
			}
		}
	}
	st, _, out = authorize("198.51.100.10", f.query(f.newFlow(loop), "memory.read"))
	if st != 429 || out["error"] != "temporarily_unavailable" {
		t.Fatalf("request past %d from one network: %d %v", grants.MaxPendingSource, st, out)
	}
	if err := db.QueryRow(`SELECT count(*) FROM oauth_requests WHERE source='198.51.100.0/24'`).Scan(&theirs); err != nil || theirs != grants.MaxPendingSource {
		t.Fatalf("%d requests wait from one network (%v), want %d", theirs, err, grants.MaxPendingSource)
	}
	// The owner's network is not held up, and the owner's request still works.
	if st, _, out := authorize("203.0.113.6", f.query(f.newFlow(loop), "memory.read")); st != http.StatusFound {
		t.Fatalf("the owner's network after the flood: %d %v", st, out)
	}
	if st, out := f.consent(mine, keys.Caps{Memory: true}); st != 200 {
		t.Fatalf("consent to the owner's request: %d %v", st, out)
	}
}

// A spent code presented by anyone but its own client (another client_id, another redirect_uri, a
// verifier that is not the code's) is refused without touching the connection: only the code's own
// client, proving it with its PKCE verifier, ends the connection by presenting the code again.
func TestSpentCodeEndsTheConnectionOnlyForItsOwnClient(t *testing.T) {
	f := newFx(t)
	f.owner()
	fl := f.newFlow(loop)
	code := f.code(fl, "memory.read", keys.Caps{})
	st, tk := f.exchange(fl, code)
	if st != 200 {
		t.Fatalf("exchange: %d %v", st, tk)
	}
	other := f.newFlow(loop)
	wrongRedirect, wrongVerifier := *fl, *fl
	wrongRedirect.redirect = "http://127.0.0.1:9/other"
	wrongVerifier.verifier, _ = pkce()
	for name, who := range map[string]*flow{"another client": {client: other.client, redirect: fl.redirect, verifier: fl.verifier},
		"another client with its own verifier": other, "another redirect_uri": &wrongRedirect, "another verifier": &wrongVerifier} {
		if st, out := f.exchange(who, code); st != 400 || out["error"] != "invalid_grant" || strings.Contains(fmt.Sprint(out["error_description"]), "ended") {
			t.Fatalf("%s: %d %v", name, st, out)
		}
		if st, _ := f.mcpStatus(tk["access_token"].(string)); st != 200 {
			t.Fatalf("%s presenting the spent code ended the owner's connection: %d", name, st)
		}
	}
	if st, again := f.refresh(fl, tk["refresh_token"].(string), ""); st != 200 {
		t.Fatalf("refresh after the strangers: %d %v", st, again)
	}
	// The code's own client presenting it again: a replay, and the connection ends.
	if st, out := f.exchange(fl, code); st != 400 || out["error"] != "invalid_grant" || !strings.Contains(fmt.Sprint(out["error_description"]), "ended") {
		t.Fatalf("the code's own client again: %d %v", st, out)
	}
	list, _ := f.grants.List(context.Background())
	if len(list) != 1 || list[0].Revoked.IsZero() {
		t.Fatalf("the replay did not end the connection: %+v", list)
	}
}
