package oauth_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/oauth"
	"github.com/boxmem/box/internal/server"
)

const loop = "http://127.0.0.1:9/callback"

func TestMetadataPointsToThisBox(t *testing.T) {
	f := newFx(t)
	ctx := context.Background()
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, f.base+"/.well-known/oauth-protected-resource/mcp", f.base+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != f.base {
		t.Fatalf("authorization servers: %v", prm.AuthorizationServers)
	}
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/mcp"} {
		asm, err := oauthex.GetAuthServerMeta(ctx, f.base+path, f.base, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if asm.RegistrationEndpoint != f.base+"/mcp/oauth/register" || strings.Join(asm.CodeChallengeMethodsSupported, ",") != "S256" ||
			!asm.AuthorizationResponseIssParameterSupported || !asm.ClientIDMetadataDocumentSupported {
			t.Fatalf("%s: %+v", path, asm)
		}
	}
	// The challenge names the scope a client should ask for: memory, not messages or building.
	st, hdr := f.mcpStatus("")
	if st != 401 || hdr != `Bearer resource_metadata="`+f.base+`/.well-known/oauth-protected-resource/mcp", scope="memory.read memory.write"` {
		t.Fatalf("no token: %d %q", st, hdr)
	}
}

// Behind a reverse proxy the issuer and the resource are the configured public URL, whatever Host says.
func TestPublicURL(t *testing.T) {
	const public = "https://box.example.com"
	f := newFx(t, func(s *server.Server) { s.PublicURL = public + "/"; s.AllowedHosts = []string{"box.example.com"} })
	get := func(path string) map[string]any {
		req, _ := http.NewRequest("GET", f.base+path, nil)
		req.Host = "box.example.com"
		st, out := f.do(req)
		if st != 200 {
			t.Fatalf("%s: %d %v", path, st, out)
		}
		return out
	}
	if prm := get("/.well-known/oauth-protected-resource/mcp"); prm["resource"] != public+"/mcp" || prm["authorization_servers"].([]any)[0] != public {
		t.Fatalf("resource metadata: %v", prm)
	}
	if asm := get("/.well-known/oauth-authorization-server"); asm["issuer"] != public || asm["token_endpoint"] != public+"/mcp/oauth/token" {
		t.Fatalf("server metadata: %v", asm)
	}
	fl := f.newFlow(loop)
	q := f.query(fl, "memory.read")
	q.Set("resource", public+"/mcp")
	st, loc, out := f.authorize(q)
	if st != http.StatusFound || loc.String() != public+"/mcp/oauth/consent?request="+loc.Query().Get("request") {
		t.Fatalf("authorize: %d %v %v", st, loc, out)
	}
}

func TestRegistration(t *testing.T) {
	f := newFx(t, func(s *server.Server) { s.AllowedHosts = []string{"box.example.com"} })
	for _, bad := range []string{"http://example.com/cb", "ftp://127.0.0.1/cb", "https://example.com/cb#frag", "/relative",
		"https://example.com/" + strings.Repeat("x", grants.MaxParam)} {
		st, out := f.post("/mcp/oauth/register", map[string]any{"redirect_uris": []string{bad}})
		if st != 400 || out["error"] != "invalid_redirect_uri" {
			t.Errorf("%.60s: %d %v", bad, st, out)
		}
	}
	st, out := f.post("/mcp/oauth/register", map[string]any{"redirect_uris": []string{"https://x.example/cb"}, "token_endpoint_auth_method": "client_secret_basic"})
	if st != 400 || out["error"] != "invalid_client_metadata" {
		t.Errorf("confidential client: %d %v", st, out)
	}
}

// New clients are limited per network, not for the whole box: one network's flood of registrations (behind
// the owner's proxy, each with its own address in the /24) cannot stop claude.ai from registering.
func TestRegistrationLimitIsPerNetwork(t *testing.T) {
	f := newFx(t, func(s *server.Server) { s.AllowedHosts = []string{"box.example.com"} })
	register := func(from string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", f.base+oauth.RegisterPath, strings.NewReader(`{"redirect_uris":["https://app.example/cb"]}`))
		req.Host = "box.example.com"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", from)
		return f.do(req)
	}
	for i := range grants.NewClientsPerHour {
		if st, out := register("203.0.113." + strconv.Itoa(i+1)); st != 201 {
			t.Fatalf("registration %d: %d %v", i, st, out)
		}
	}
	if st, out := register("203.0.113.250"); st != 429 || out["error"] != "temporarily_unavailable" {
		t.Fatalf("registration %d from one /24 in an hour: %d %v", grants.NewClientsPerHour+1, st, out)
	}
	if st, out := register("2001:db8:1:ff00::1"); st != 201 { // another network
		t.Fatalf("another network: %d %v", st, out)
	}
	if st, out := register("160.79.104.10"); st != 201 { // claude.ai's
		t.Fatalf("claude.ai's network after the flood: %d %v", st, out)
	}
	f.clock.Advance(time.Hour + time.Second)
	if st, out := register("203.0.113.9"); st != 201 {
		t.Fatalf("an hour later: %d %v", st, out)
	}
}

// Every attack is refused with the OAuth error RFC 6749 (and RFC 8707) names.
func TestAttacks(t *testing.T) {
	f := newFx(t)
	f.owner()
	read := keys.Caps{Memory: true}
	// A client the owner never approved gets its error on a page, never at its redirect URI.
	authErr := func(t *testing.T, q url.Values, want string) {
		t.Helper()
		st, loc, out := f.authorize(q)
		if st != http.StatusBadRequest || loc.String() != "" || out["error"] != want {
			t.Fatalf("want a page with %s: %d %v %v", want, st, loc, out)
		}
	}
	tokErr := func(t *testing.T, st int, out map[string]any, want string) {
		t.Helper()
		if st < 400 || out["error"] != want {
			t.Fatalf("want %s: %d %v", want, st, out)
		}
	}
	mcpRefused := func(t *testing.T, token string) {
		t.Helper()
		if st, hdr := f.mcpStatus(token); st != 401 || !strings.Contains(hdr, `error="invalid_token"`) || !strings.Contains(hdr, "resource_metadata=") {
			t.Fatalf("/mcp: %d %q", st, hdr)
		}
	}
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"PKCE plain", func(t *testing.T) {
			fl := f.newFlow(loop)
			q := f.query(fl, "memory.read")
			q.Set("code_challenge_method", "plain")
			q.Set("code_challenge", fl.verifier)
			authErr(t, q, "invalid_request")
		}},
		{"no PKCE", func(t *testing.T) {
			fl := f.newFlow(loop)
			q := f.query(fl, "memory.read")
			q.Del("code_challenge")
			q.Del("code_challenge_method")
			authErr(t, q, "invalid_request")
		}},
		{"wrong verifier", func(t *testing.T) {
			fl := f.newFlow(loop)
			code := f.code(fl, "memory.read", read)
			fl.verifier, _ = pkce()
			st, out := f.exchange(fl, code)
			tokErr(t, st, out, "invalid_grant")
		}},
		{"reused code ends the connection", func(t *testing.T) {
			fl := f.newFlow(loop)
			code := f.code(fl, "memory.read", read)
			st, first := f.exchange(fl, code)
			if st != 200 {
				t.Fatalf("first: %d %v", st, first)
			}
			st, out := f.exchange(fl, code)
			tokErr(t, st, out, "invalid_grant")
			mcpRefused(t, first["access_token"].(string))
		}},
		{"code after 60 s", func(t *testing.T) {
			fl := f.newFlow(loop)
			code := f.code(fl, "memory.read", read)
			f.clock.Advance(grants.CodeLife + time.Second)
			st, out := f.exchange(fl, code)
			tokErr(t, st, out, "invalid_grant")
		}},
		{"redirect_uri mismatch at authorize is not redirected", func(t *testing.T) {
			fl := f.newFlow(loop)
			q := f.query(fl, "memory.read")
			q.Set("redirect_uri", "https://evil.example/cb")
			st, loc, out := f.authorize(q)
			if st != 400 || loc.String() != "" || out["error"] != "invalid_request" {
				t.Fatalf("%d %v %v", st, loc, out)
			}
		}},
		{"redirect_uri mismatch at token", func(t *testing.T) {
			fl := f.newFlow(loop)
			code := f.code(fl, "memory.read", read)
			fl.redirect = "http://127.0.0.1:9/other"
			st, out := f.exchange(fl, code)
			tokErr(t, st, out, "invalid_grant")
		}},
		{"unknown client", func(t *testing.T) {
			fl := f.newFlow(loop)
			fl.client = "c_nobody"
			st, loc, out := f.authorize(f.query(fl, "memory.read"))
			if st != 401 || loc.String() != "" || out["error"] != "invalid_client" {
				t.Fatalf("authorize: %d %v %v", st, loc, out)
			}
			st, out = f.exchange(fl, "whatever")
			tokErr(t, st, out, "invalid_client")
		}},
		{"wrong resource", func(t *testing.T) {
			fl := f.newFlow(loop)
			q := f.query(fl, "memory.read")
			q.Set("resource", "https://other.example/mcp")
			authErr(t, q, "invalid_target")
		}},
		{"reused refresh token revokes the family", func(t *testing.T) {
			fl := f.newFlow(loop)
			first := f.tokens(fl, "memory.read", read)
			st, second := f.refresh(fl, first["refresh_token"].(string), "")
			if st != 200 {
				t.Fatalf("rotate: %d %v", st, second)
			}
			if st, _ := f.mcpStatus(second["access_token"].(string)); st != 200 {
				t.Fatalf("rotated access token: %d", st)
			}
			st, out := f.refresh(fl, first["refresh_token"].(string), "")
			tokErr(t, st, out, "invalid_grant")
			st, out = f.refresh(fl, second["refresh_token"].(string), "")
			tokErr(t, st, out, "invalid_grant")
			mcpRefused(t, second["access_token"].(string))
		}},
		{"expired access token", func(t *testing.T) {
			fl := f.newFlow(loop)
			tk := f.tokens(fl, "memory.read", read)
			f.clock.Advance(grants.AccessLife + time.Minute)
			mcpRefused(t, tk["access_token"].(string))
		}},
		{"disconnected connection", func(t *testing.T) {
			fl := f.newFlow(loop)
			tk := f.tokens(fl, "memory.read", read)
			if st, _ := f.mcpStatus(tk["access_token"].(string)); st != 200 {
				t.Fatalf("before: %d", st)
			}
			list, _ := f.grants.List(context.Background())
			if _, _, err := f.grants.Revoke(context.Background(), list[0].ID); err != nil {
				t.Fatal(err)
			}
			mcpRefused(t, tk["access_token"].(string))
			st, out := f.refresh(fl, tk["refresh_token"].(string), "")
			tokErr(t, st, out, "invalid_grant")
		}},
		{"scope widening on refresh", func(t *testing.T) {
			fl := f.newFlow(loop)
			tk := f.tokens(fl, "memory.read", read)
			st, out := f.refresh(fl, tk["refresh_token"].(string), "memory.read memory.write box.build")
			tokErr(t, st, out, "invalid_scope")
		}},
		{"consent without a passkey", func(t *testing.T) {
			fl := f.newFlow(loop)
			req := f.request(fl, "memory.read")
			// No assertion at all.
			if st, out := f.post("/mcp/oauth/consent/finish", map[string]any{"ceremony": "made-up", "credential": map[string]any{}}); st < 400 {
				t.Fatalf("no ceremony: %d %v", st, out)
			}
			// An assertion without user verification.
			f.key.UV = false
			st, out := f.consent(req, read)
			f.key.UV = true
			if st != 401 {
				t.Fatalf("no UV: %d %v", st, out)
			}
			// A passkey the box does not know.
			st, begin := f.post("/mcp/oauth/consent/begin", map[string]any{"request": req})
			if st != 200 {
				t.Fatalf("begin: %d %v", st, begin)
			}
			stranger := newStranger(t, f)
			if st, out := f.post("/mcp/oauth/consent/finish", map[string]any{"ceremony": begin["ceremony"], "credential": stranger.Get(raw(begin["options"]))}); st != 401 {
				t.Fatalf("stranger's passkey: %d %v", st, out)
			}
			// The request is still answerable by the owner.
			if st, out := f.consent(req, read); st != 200 {
				t.Fatalf("owner: %d %v", st, out)
			}
		}},
		{"messages and building asked by an unknown host", func(t *testing.T) {
			fl := f.newFlow("https://assistant.example/cb")
			authErr(t, f.query(fl, "memory.read box.build"), "invalid_scope")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func TestConsentClampsAndBuildingEndsAfter30Days(t *testing.T) {
	f := newFx(t)
	f.owner()
	ctx := context.Background()
	// The consent page offers building only to a known host and never pre-ticks it; messages to no one
	// while no account can be plugged in (keys.NoAccounts).
	page := func(fl *flow) string {
		res, err := f.c.Get(f.base + "/mcp/oauth/consent?request=" + url.QueryEscape(f.request(fl, "memory.read memory.write")))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if p := page(f.newFlow("https://assistant.example/cb")); !strings.Contains(p, "assistant.example") || !strings.Contains(p, `id="c-memory" checked`) ||
		strings.Contains(p, "c-messages") || strings.Contains(p, "c-build") {
		t.Fatalf("unknown host's consent page:\n%s", p)
	}
	if p := page(f.newFlow(loop)); strings.Contains(p, "c-messages") || !strings.Contains(p, `id="c-build">`) {
		t.Fatalf("loopback consent page:\n%s", p)
	}
	// An unknown host is never given messages or building, whatever is posted.
	fl := f.newFlow("https://assistant.example/cb")
	tk := f.tokens(fl, "memory.read memory.write", keys.All)
	if tk["scope"] != "memory.read memory.write" {
		t.Fatalf("unknown host scope: %v", tk["scope"])
	}
	// A loopback client that asks for everything is never given messages.
	fl = f.newFlow(loop)
	if tk := f.tokens(fl, "memory.read memory.write messages.read", keys.All); tk["scope"] != "memory.read memory.write box.build" {
		t.Fatalf("loopback asking for messages: scope %v", tk["scope"])
	}
	// A loopback client may be given building; it ends 30 days after approval, however often refreshed.
	fl = f.newFlow(loop)
	tk = f.tokens(fl, "memory.read", keys.Caps{Build: true})
	if tk["scope"] != "memory.read box.build" {
		t.Fatalf("loopback scope: %v", tk["scope"])
	}
	for range 4 {
		f.clock.Advance(8 * 24 * time.Hour)
		st, out := f.refresh(fl, tk["refresh_token"].(string), "")
		if st != 200 {
			t.Fatalf("refresh: %d %v", st, out)
		}
		tk = out
	}
	if tk["scope"] != "memory.read" {
		t.Fatalf("after 32 days the scope is %v", tk["scope"])
	}
	g, err := f.grants.Verify(ctx, tk["access_token"].(string), f.base+"/mcp")
	if err != nil || g.Caps.Build {
		t.Fatalf("verify: %+v %v", g, err)
	}
}

func TestAccessNeverRefusesNewConnections(t *testing.T) {
	f := newFx(t)
	f.owner()
	fl := f.newFlow(loop)
	old := f.tokens(fl, "memory.read", keys.Caps{})
	req := f.request(f.newFlow(loop), "memory.read")
	fresh := f.newFlow(loop) // registered, never approved
	f.docs.page("/oauth/client.json", docPage{body: docJSON(nil)})
	db := f.stateDB()
	rows := func() string {
		var out []string
		for _, table := range []string{"oauth_clients", "oauth_client_sources", "oauth_requests", "oauth_request_issuers"} {
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s=%d", table, n))
		}
		return strings.Join(out, " ")
	}
	if _, err := f.gate.SetSwitch(context.Background(), gate.By{Via: "cli", Local: true}, gate.Access, gate.Never); err != nil {
		t.Fatal(err)
	}
	before := rows()
	// Registration and a client metadata document are refused before anything is stored or fetched.
	if st, out := f.post(oauth.RegisterPath, map[string]any{"client_name": "New", "redirect_uris": []string{loop}}); st != 400 || out["error"] != "access_denied" {
		t.Fatalf("register at Never: %d %v", st, out)
	}
	q, _ := f.docQuery(docID, "http://127.0.0.1:4000/callback")
	if st, loc, out := f.authorize(q); st != 400 || loc.String() != "" || out["error"] != "access_denied" {
		t.Fatalf("a metadata document client at Never: %d %v %v", st, loc, out)
	}
	if n := f.docs.count("/oauth/client.json"); n != 0 {
		t.Fatalf("the metadata document was fetched %d times at Never", n)
	}
	if st, out := f.consent(req, keys.Caps{}); st != 403 {
		t.Fatalf("consent at Never: %d %v", st, out)
	}
	// A client the owner approved before hears access_denied at its redirect URI; a new one is told on a page.
	st, loc, _ := f.authorize(f.query(fl, "memory.read"))
	if st != http.StatusFound || loc.Query().Get("error") != "access_denied" || loc.Query().Get("iss") != f.base {
		t.Fatalf("authorize at Never: %d %v", st, loc)
	}
	st, loc, out := f.authorize(f.query(fresh, "memory.read"))
	if st != http.StatusBadRequest || loc.String() != "" || out["error"] != "access_denied" {
		t.Fatalf("authorize at Never, a new client: %d %v %v", st, loc, out)
	}
	if after := rows(); after != before {
		t.Fatalf("Never stored something: %s, then %s", before, after)
	}
	// Connections already made keep working.
	if st, _ := f.mcpStatus(old["access_token"].(string)); st != 200 {
		t.Fatalf("old connection: %d", st)
	}
}

// A client may not name the box itself as its redirect: the code would land in a page the box serves
// (an installed page reads its own address), not in an app on the owner's computer. Refused at
// registration, in a metadata document, and at /authorize for a port-less loopback redirect (any port
// matches one) pointed at the box's own port.
func TestRedirectToTheBoxItselfIsRefused(t *testing.T) {
	f := newFx(t)
	f.owner()
	_, port, _ := strings.Cut(strings.TrimPrefix(f.base, "http://"), ":")
	// The port as a browser reads it: 07317 is 7317.
	for _, own := range []string{f.base + "/s/garden/", "http://127.0.0.1:" + port + "/s/garden/", "http://[::1]:" + port + "/cb", "http://LOCALHOST:" + port + "/",
		"http://127.0.0.1:0" + port + "/s/x/", "http://localhost:00" + port + "/s/x/", "http://[::1]:0" + port + "/s/x/"} {
		st, out := f.post(oauth.RegisterPath, map[string]any{"client_name": "Claude Code", "redirect_uris": []string{"http://127.0.0.1:9/cb", own}})
		if st != 400 || out["error"] != "invalid_redirect_uri" || !strings.Contains(fmt.Sprint(out["error_description"]), "this box's own address") {
			t.Errorf("%s: %d %v", own, st, out)
		}
	}
	fl := f.newFlow("http://127.0.0.1/callback")
	q := f.query(fl, "memory.read")
	for _, p := range []string{port, "0" + port} {
		q.Set("redirect_uri", "http://127.0.0.1:"+p+"/callback")
		if st, loc, out := f.authorize(q); st != http.StatusBadRequest || loc.String() != "" || out["error"] != "invalid_redirect_uri" {
			t.Fatalf("a port-less loopback redirect sent to the box's port %s: %d %v %v", p, st, loc, out)
		}
	}
	q.Set("redirect_uri", "http://127.0.0.1:53682/callback") // the app's own port: fine
	if st, loc, out := f.authorize(q); st != http.StatusFound || loc.Path != oauth.ConsentPath {
		t.Fatalf("the app's own port: %d %v %v", st, loc, out)
	}
	// At Never, a client the owner approved hears access_denied at its redirect, but never at the box's.
	f.tokens(fl, "memory.read", keys.Caps{})
	if _, err := f.gate.SetSwitch(context.Background(), gate.By{Via: "cli", Local: true}, gate.Access, gate.Never); err != nil {
		t.Fatal(err)
	}
	q = f.query(fl, "memory.read")
	q.Set("redirect_uri", "http://127.0.0.1:"+port+"/callback")
	if st, loc, out := f.authorize(q); st != http.StatusBadRequest || loc.String() != "" || out["error"] != "invalid_redirect_uri" {
		t.Fatalf("at Never, the error sent to the box's own port: %d %v %v", st, loc, out)
	}
	q.Set("redirect_uri", "http://127.0.0.1:53682/callback")
	if st, loc, _ := f.authorize(q); st != http.StatusFound || loc.Query().Get("error") != "access_denied" {
		t.Fatalf("at Never, the app's own port: %d %v", st, loc)
	}
}

// TestRedirectToAnotherNameOfTheBoxIsRefused: the box answers to the names a reverse proxy may send and
// its public address's, whatever name a registration came in under: none is a redirect.
func TestRedirectToAnotherNameOfTheBoxIsRefused(t *testing.T) {
	// localhost among them (an owner's --allowed-host): a native app's loopback redirect on its own port
	// is still an app's.
	f := newFx(t, func(s *server.Server) { s.AllowedHosts = []string{"box.example.com", "box.tail.ts.net", "localhost"} })
	f.owner()
	for _, own := range []string{"https://box.example.com/s/x/", "https://BOX.tail.ts.net:8443/cb", "https://localhost:8443/s/x/"} {
		st, out := f.post(oauth.RegisterPath, map[string]any{"client_name": "T", "redirect_uris": []string{own}})
		if st != 400 || out["error"] != "invalid_redirect_uri" {
			t.Errorf("%s: %d %v", own, st, out)
		}
	}
	for _, app := range []string{"https://app.example.com/cb", "http://localhost:53682/callback", "http://127.0.0.1:53682/callback"} {
		if st, out := f.post(oauth.RegisterPath, map[string]any{"client_name": "T", "redirect_uris": []string{app}}); st != http.StatusCreated {
			t.Errorf("an app's redirect %s: %d %v", app, st, out)
		}
	}
}
