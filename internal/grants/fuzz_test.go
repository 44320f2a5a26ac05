package grants

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
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
		back, err := url.Parse(Request{RedirectURI: raw, State: "s"}.Answer("https://box.example", url.Values{"code": {"c"}}))
		if err != nil || back.Scheme != u.Scheme || back.Host != u.Host || back.Path != u.Path || back.Query().Get("code") != "c" {
			t.Fatalf("answer to %q is %v (%v)", raw, back, err)
		}
	})
}

const fuzzResource = "https://box.example/mcp"

// fuzzStore is a store with three clients: one loopback URI, two URIs (an unknown host and claude.ai),
// and one that is not registered.
func fuzzStore(f *testing.F) (*Store, []Client) {
	dir := f.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".box"), 0o700); err != nil {
		f.Fatal(err)
	}
	st, err := state.Open(dir, state.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	s := NewStore(st)
	var cs []Client
	for _, uris := range [][]string{{"http://127.0.0.1:9/callback"}, {"https://assistant.example/cb", "https://claude.ai/api/mcp/auth_callback"}} {
		r, err := s.Register(context.Background(), oauthex.ClientRegistrationMetadata{ClientName: "fuzz", RedirectURIs: uris})
		if err != nil {
			f.Fatal(err)
		}
		cs = append(cs, Client{ID: r.ClientID, RedirectURIs: uris})
	}
	return s, append(cs, Client{ID: "c_nobody"})
}

// The /authorize rules: an accepted request has a registered redirect URI, S256 with a real challenge,
// this box's resource, and scopes within the four (messages and building only for a known host); a
// refusal that goes back to the client goes only to a URI the client registered.
func FuzzAuthorize(f *testing.F) {
	s, clients := fuzzStore(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, pick uint8, query string) {
		q, _ := url.ParseQuery(query)
		c := clients[int(pick)%len(clients)]
		a := AuthRequest{ClientID: c.ID, RedirectURI: q.Get("redirect_uri"), ResponseType: q.Get("response_type"), State: q.Get("state"),
			Challenge: q.Get("code_challenge"), Method: q.Get("code_challenge_method"), Resource: q.Get("resource"), Scope: q.Get("scope")}
		r, err := s.Authorize(ctx, a, fuzzResource)
		if err != nil {
			code := errs.CodeOf(err)
			if code == "" {
				t.Fatalf("not a refusal: %v", err)
			}
			if !slices.Contains([]string{"invalid_client", "invalid_request", "unsupported_response_type", "invalid_target", "invalid_scope"}, code) {
				t.Fatalf("unexpected code %q", code)
			}
			if errors.Is(err, ErrToClient) && !slices.Contains(c.RedirectURIs, a.RedirectURI) && !(a.RedirectURI == "" && len(c.RedirectURIs) == 1) {
				t.Fatalf("a refusal to be sent to %q, which %s did not register", a.RedirectURI, c.ID)
			}
			return
		}
		switch {
		case !slices.Contains(c.RedirectURIs, r.RedirectURI):
			t.Fatalf("accepted redirect %q not registered by %s", r.RedirectURI, c.ID)
		case a.Method != "S256" || !challengeOK(r.Challenge) || a.ResponseType != "code":
			t.Fatalf("accepted method %q challenge %q response_type %q", a.Method, r.Challenge, a.ResponseType)
		case r.Resource != fuzzResource:
			t.Fatalf("accepted resource %q", r.Resource)
		case r.State != a.State:
			t.Fatalf("state %q became %q", a.State, r.State)
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
