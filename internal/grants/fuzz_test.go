package grants

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/state"
)

// Seeds are in testdata/fuzz/<Name>/; run one with go test -fuzz=^FuzzName$ ./internal/grants.

// An accepted scope is a subset of the four, always holds memory.read, and holds nothing twice; a
// refused one named something the box does not know.
func FuzzParseScope(f *testing.F) {
	f.Fuzz(func(t *testing.T, scope string) {
		got, err := parseScope(scope)
		if err != nil {
			if errs.CodeOf(err) != "invalid_scope" {
				t.Fatalf("parseScope(%q): %v", scope, err)
			}
			if !slices.ContainsFunc(strings.Fields(scope), func(s string) bool { return s != "offline_access" && !slices.Contains(Scopes, s) }) {
				t.Fatalf("parseScope(%q) refused only known scopes: %v", scope, err)
			}
			return
		}
		if len(got) == 0 || got[0] != ScopeRead {
			t.Fatalf("parseScope(%q) = %v: memory.read is always first", scope, got)
		}
		for i, s := range got {
			if !slices.Contains(Scopes, s) || slices.Contains(got[i+1:], s) {
				t.Fatalf("parseScope(%q) = %v: unknown or repeated %q", scope, got, s)
			}
		}
		// The scopes and the checkboxes say the same thing.
		back := capsScope(scopeCaps(got))
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(back))) {
			t.Fatalf("parseScope(%q) = %v, as checkboxes %v", scope, got, back)
		}
	})
}

// An accepted redirect URI is https with a host, or http on a loopback address; never a fragment or
// userinfo. A host offered messages and building is https claude.ai or chatgpt.com, or loopback.
func FuzzRedirect(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw string) {
		u, perr := url.Parse(raw)
		if Known(raw) {
			h := strings.ToLower(u.Hostname())
			if !loopback(h) && (u.Scheme != "https" || (h != "claude.ai" && h != "chatgpt.com")) {
				t.Fatalf("Known(%q) for host %q scheme %q", raw, h, u.Scheme)
			}
		}
		if checkRedirect(raw) != nil {
			return
		}
		if perr != nil || u.Host == "" || u.Fragment != "" || u.User != nil || u.Opaque != "" {
			t.Fatalf("accepted %q: %+v", raw, u)
		}
		switch u.Scheme {
		case "https":
		case "http":
			if !loopback(strings.ToLower(u.Hostname())) {
				t.Fatalf("accepted http on %q: %q", u.Hostname(), raw)
			}
		default:
			t.Fatalf("accepted scheme %q: %q", u.Scheme, raw)
		}
		// The redirect the box would send is still this URI with added parameters.
		back, err := url.Parse(Request{Issuer: "https://box.example", RedirectURI: raw, State: "s"}.Answer(url.Values{"code": {"c"}}))
		if err != nil || back.Scheme != u.Scheme || back.Host != u.Host || back.Path != u.Path || back.Query().Get("code") != "c" {
			t.Fatalf("answer to %q is %v (%v)", raw, back, err)
		}
	})
}

const fuzzResource = "https://box.example/mcp"

// fuzzStore is a store with three clients: one loopback URI, two URIs (an unknown host and claude.ai),
// and one that is not registered.
func fuzzStore(f *testing.F) (*Store, []Client) {
	st, err := state.Open(f.TempDir(), state.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	s := NewStore(st)
	var cs []Client
	for _, uris := range [][]string{{"http://127.0.0.1:9/callback"}, {"https://assistant.example/cb", "https://claude.ai/api/mcp/auth_callback"}} {
		r, err := s.Register(context.Background(), oauthex.ClientRegistrationMetadata{ClientName: "fuzz", RedirectURIs: uris}, "fuzz")
		if err != nil {
			f.Fatal(err)
		}
		cs = append(cs, Client{ID: r.ClientID, RedirectURIs: uris})
	}
	return s, append(cs, Client{ID: "c_nobody"})
}

// The /authorize rules: an accepted request has a registered redirect URI (for loopback, any port), S256
// with a real challenge, this box's resource, parameters within their sizes, and scopes within the four
// (messages and building only for a known host); no refusal goes back to a client the owner never
// approved (none is, here).
func FuzzAuthorize(f *testing.F) {
	s, clients := fuzzStore(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, pick uint8, query string) {
		q, _ := url.ParseQuery(query)
		c := clients[int(pick)%len(clients)]
		a := AuthRequest{ClientID: c.ID, RedirectURI: q.Get("redirect_uri"), ResponseType: q.Get("response_type"), State: q.Get("state"),
			Challenge: q.Get("code_challenge"), Method: q.Get("code_challenge_method"), Resource: q.Get("resource"), Scope: q.Get("scope"),
			Source: string(rune('a' + pick%26))}
		r, err := s.Authorize(ctx, a, fuzzResource)
		if err != nil {
			code := errs.CodeOf(err)
			if code == "" {
				t.Fatalf("not a refusal: %v", err)
			}
			if !slices.Contains([]string{"invalid_client", "invalid_request", "unsupported_response_type", "invalid_target", "invalid_scope"}, code) {
				t.Fatalf("unexpected code %q", code)
			}
			if errors.Is(err, ErrToClient) {
				t.Fatalf("a refusal to be sent to %q, which the owner never approved for %s", a.RedirectURI, c.ID)
			}
			return
		}
		switch {
		case !slices.ContainsFunc(c.RedirectURIs, func(u string) bool { return redirectMatches(u, r.RedirectURI) }):
			t.Fatalf("accepted redirect %q not registered by %s", r.RedirectURI, c.ID)
		case a.Method != "S256" || !challengeOK(r.Challenge) || a.ResponseType != "code":
			t.Fatalf("accepted method %q challenge %q response_type %q", a.Method, r.Challenge, a.ResponseType)
		case r.Resource != fuzzResource:
			t.Fatalf("accepted resource %q", r.Resource)
		case r.State != a.State:
			t.Fatalf("state %q became %q", a.State, r.State)
		case len(r.State) > MaxState || len(r.RedirectURI) > MaxParam:
			t.Fatalf("accepted a state of %d bytes, a redirect URI of %d", len(r.State), len(r.RedirectURI))
		}
		for _, sc := range r.Scopes {
			if !slices.Contains(Scopes, sc) {
				t.Fatalf("accepted scope %q", sc)
			}
			if (sc == ScopeMessages || sc == ScopeBuild) && !Known(r.RedirectURI) {
				t.Fatalf("%s accepted for %q", sc, r.RedirectURI)
			}
		}
		p, err := s.Pending(ctx, r.ID)
		if err != nil || p.RedirectURI != r.RedirectURI || p.State != r.State || !slices.Equal(p.Scopes, r.Scopes) {
			t.Fatalf("pending %+v %v, want %+v", p, err, r)
		}
	})
}

// An accepted metadata document belongs to an allowed client_id URL (https, a host, a path, no dot
// segments, fragment or user), names that URL byte for byte, carries no secret, and lists 1 to 10
// redirect URIs the box accepts; its name is one clean line.
func FuzzParseDocument(f *testing.F) {
	f.Fuzz(func(t *testing.T, clientID string, body []byte) {
		c, err := ParseDocument(clientID, body)
		if err != nil {
			if code := errs.CodeOf(err); code != "invalid_client" && code != "invalid_client_metadata" && code != "invalid_redirect_uri" {
				t.Fatalf("ParseDocument(%q): %v", clientID, err)
			}
			return
		}
		u, perr := url.Parse(clientID)
		if perr != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || strings.Contains(clientID, "#") || u.Path == "" || u.Path == "/" {
			t.Fatalf("accepted client_id %q", clientID)
		}
		for _, seg := range strings.Split(u.EscapedPath(), "/") {
			if s, _ := url.PathUnescape(seg); s == "." || s == ".." {
				t.Fatalf("accepted client_id %q with a dot segment", clientID)
			}
		}
		var d map[string]any
		if json.Unmarshal(body, &d) != nil || d["client_id"] != clientID || d["client_secret"] != nil || c.ID != clientID {
			t.Fatalf("accepted %s for %q as %+v", body, clientID, c)
		}
		if len(c.RedirectURIs) < 1 || len(c.RedirectURIs) > 10 {
			t.Fatalf("%d redirect URIs", len(c.RedirectURIs))
		}
		for _, r := range c.RedirectURIs {
			if checkRedirect(r) != nil {
				t.Fatalf("accepted redirect URI %q", r)
			}
		}
		if c.Name == "" || c.Name != cleanName(c.Name) {
			t.Fatalf("name %q", c.Name)
		}
	})
}
