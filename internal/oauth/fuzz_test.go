package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/oauth"
)

// Seeds are in testdata/fuzz/<Name>/; run one with go test -fuzz=^FuzzName$ ./internal/oauth.

const fuzzIssuer = "https://box.example"

// fuzzServer is the authorization server of a real box, with a clock that moves five minutes at each
// look so that the hourly registration limit does not hide the rest.
func fuzzServer(f *testing.F) (http.Handler, *grants.Store) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(5 * time.Minute)
		return now
	}
	a, err := app.Init(context.Background(), f.TempDir(), nil, "true", app.Options{Now: clock})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { a.Close() })
	mux := http.NewServeMux()
	oauth.New(oauth.Config{Grants: a.Grants, Gate: a.Gate, Issuer: func(*http.Request) string { return fuzzIssuer }}).Mount(mux)
	return mux, a.Grants
}

func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// oauthError checks that an answer is an RFC 6749 §5.2 error with one of the codes given.
func oauthError(t *testing.T, rec *httptest.ResponseRecorder, codes ...string) {
	t.Helper()
	var e map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || !slices.Contains(codes, e["error"]) || e["error_description"] == "" {
		t.Fatalf("%d %s: want one of %v", rec.Code, rec.Body, codes)
	}
}

func loopbackHost(h string) bool {
	h = strings.ToLower(h)
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// An accepted registration is a public client whose redirect URIs are all https, or http on loopback,
// and whose name is one printable line of at most 80 characters; anything else is a 4xx OAuth error.
func FuzzRegister(f *testing.F) {
	h, g := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", oauth.RegisterPath, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		rec := serve(h, req)
		if rec.Code != http.StatusCreated {
			if rec.Code != 400 && rec.Code != 429 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			oauthError(t, rec, "invalid_client_metadata", "invalid_redirect_uri", "temporarily_unavailable")
			return
		}
		var out oauthex.ClientRegistrationResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("answer %s: %v", rec.Body, err)
		}
		if out.ClientID == "" || out.ClientSecret != "" || out.TokenEndpointAuthMethod != "none" {
			t.Fatalf("not a public client: %s", rec.Body)
		}
		if n := len(out.RedirectURIs); n < 1 || n > 10 {
			t.Fatalf("%d redirect URIs accepted", n)
		}
		for _, raw := range out.RedirectURIs {
			u, err := url.Parse(raw)
			if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil ||
				!(u.Scheme == "https" || (u.Scheme == "http" && loopbackHost(u.Hostname()))) {
				t.Fatalf("accepted redirect URI %q", raw)
			}
		}
		name := out.ClientName
		if name == "" || len([]rune(name)) > 80 || strings.TrimSpace(name) != name ||
			strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) || (r != ' ' && unicode.IsSpace(r)) }) {
			t.Fatalf("client name %q", name)
		}
		c, err := g.Client(context.Background(), out.ClientID)
		if err != nil || c.Name != name || !slices.Equal(c.RedirectURIs, out.RedirectURIs) {
			t.Fatalf("stored %+v %v, answered %s", c, err, rec.Body)
		}
	})
}

// /authorize sends the browser only to this box's consent page or, with an error, to a redirect URI the
// owner approved for the client (none is, here); everything else is told to the person, never redirected.
func FuzzAuthorizeRedirect(f *testing.F) {
	h, g := fuzzServer(f)
	var ids []string
	var uris [][]string
	for _, u := range [][]string{{"http://127.0.0.1:9/callback"}, {"https://assistant.example/cb", "https://claude.ai/api/mcp/auth_callback"}} {
		r, err := g.Register(context.Background(), oauthex.ClientRegistrationMetadata{RedirectURIs: u}, "fuzz")
		if err != nil {
			f.Fatal(err)
		}
		ids, uris = append(ids, r.ClientID), append(uris, u)
	}
	ids, uris = append(ids, "c_nobody"), append(uris, nil)
	f.Fuzz(func(t *testing.T, pick uint8, query string) {
		i := int(pick) % len(ids)
		q, _ := url.ParseQuery(query)
		q.Set("client_id", ids[i])
		rec := serve(h, httptest.NewRequest("GET", oauth.AuthorizePath+"?"+q.Encode(), nil))
		if rec.Code >= 500 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if rec.Code != http.StatusFound {
			if rec.Header().Get("Location") != "" {
				t.Fatalf("%d with a Location", rec.Code)
			}
			oauthError(t, rec, "invalid_client", "invalid_request", "unsupported_response_type", "invalid_target", "invalid_scope",
				"temporarily_unavailable", "access_denied")
			return
		}
		loc, err := url.Parse(rec.Header().Get("Location"))
		if err != nil {
			t.Fatalf("Location %q: %v", rec.Header().Get("Location"), err)
		}
		if !strings.HasPrefix(loc.String(), fuzzIssuer+oauth.ConsentPath+"?") {
			t.Fatalf("redirected to %s, which the owner never approved for %s (%v)", loc, ids[i], uris[i])
		}
		if _, err := g.Pending(context.Background(), loc.Query().Get("request")); err != nil {
			t.Fatalf("consent page for no request: %v", err)
		}
	})
}

// /token and /revoke never fail inside the box on whatever form they get, never issue tokens for made-up
// codes, and answer every refusal as an OAuth error.
func FuzzTokenForm(f *testing.F) {
	h, g := fuzzServer(f)
	r, err := g.Register(context.Background(), oauthex.ClientRegistrationMetadata{RedirectURIs: []string{"http://127.0.0.1:9/callback"}}, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, known bool, form string) {
		if known {
			form = "client_id=" + r.ClientID + "&" + form
		}
		for _, path := range []string{oauth.TokenPath, oauth.RevokePath} {
			req := httptest.NewRequest("POST", path, strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := serve(h, req)
			switch {
			case rec.Code == http.StatusOK && path == oauth.RevokePath:
				if rec.Body.Len() != 0 {
					t.Fatalf("revoke answered a body: %s", rec.Body)
				}
			case rec.Code == 400 || rec.Code == 401:
				oauthError(t, rec, "invalid_request", "invalid_client", "invalid_grant", "invalid_scope", "invalid_target",
					"unsupported_grant_type", "unauthorized_client")
			default:
				t.Fatalf("%s: status %d: %s", path, rec.Code, rec.Body)
			}
		}
	})
}
