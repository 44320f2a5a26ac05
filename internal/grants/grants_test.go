package grants_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/state"
)

func TestKnownHosts(t *testing.T) {
	for uri, want := range map[string]bool{
		"https://claude.ai/api/mcp/auth_callback":               true,
		"https://chatgpt.com/connector_platform_oauth_redirect": true,
		"http://127.0.0.1:33418/callback":                       true,
		"http://[::1]:8080/cb":                                  true,
		"http://localhost:6274/oauth/callback":                  true,
		"http://claude.ai/api/mcp/auth_callback":                false, // not https
		"https://claude.ai.evil.example/cb":                     false,
		"https://evil.example/cb?x=https://claude.ai":           false,
		"https://chatgpt.com.evil.example/cb":                   false,
		// Only the published callbacks, byte for byte.
		"https://claude.com/api/mcp/auth_callback":        true,
		"https://chatgpt.com/connector/oauth/c_8f2aB-x_1": true,
		"https://claude.ai/share/abc":                     false,
		"https://claude.ai/api/mcp/auth_callback?next=/x": false,
		"https://claude.ai/api/mcp/auth_callback/":        false,
		"https://claude.ai:443/api/mcp/auth_callback":     false,
		"https://CLAUDE.AI/api/mcp/auth_callback":         false,
		"https://chatgpt.com/connector/oauth/":            false,
		"https://chatgpt.com/connector/oauth/a/b":         false,
		"https://chatgpt.com/connector/oauth/%2e%2e":      false,
		"https://chatgpt.com/g/g-evil":                    false,
	} {
		if got := grants.Known(uri); got != want {
			t.Errorf("Known(%q) = %v, want %v", uri, got, want)
		}
	}
}

// newStore is the grants of a new state store in a temporary folder, closed when the test ends.
func newStore(t *testing.T) (*grants.Store, *state.Store) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".box"), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return grants.NewStore(st), st
}

func TestRegisterRedirects(t *testing.T) {
	s, _ := newStore(t)
	for uri, ok := range map[string]bool{
		"https://x.example/cb":                                  true,
		"http://127.0.0.1:1/cb":                                 true,
		"http://localhost/cb":                                   true,
		"http://x.example/cb":                                   false,
		"http://10.0.0.1/cb":                                    false,
		"https://u:p@x.example/cb":                              false,
		"custom-scheme:/cb":                                     false,
		"https://claude.ai/api/mcp/auth_callback":               true,
		"https://chatgpt.com/connector_platform_oauth_redirect": true,
		"https://chatgpt.com/connector/oauth/abc123":            true,
		"https://claude.ai/evil":                                false,
		"https://Claude.AI/api/mcp/auth_callback":               false,
		"https://claude.ai/api/mcp/auth_callback?x=1":           false,
		"https://chatgpt.com/connector/oauth/../x":              false,
		"https://chatgpt.com/backend-api/x":                     false,
		"https://claude.com/x":                                  false,
		// A final dot names the same host to DNS and another to every comparison.
		"https://claude.ai./evil":                  false,
		"https://claude.ai./api/mcp/auth_callback": false,
		"https://chatgpt.com./g/g-evil":            false,
		"https://x.example./cb":                    false,
		// Hosts a browser maps to claude.ai (IDNA) or that only look like it: refused unless in xn-- form.
		"https://claude%E3%80%82ai/api/mcp/auth_callback":   false,
		"https://claude%E3%80%82ai/x":                       false,
		"https://\uff43\uff4c\uff41\uff55\uff44\uff45.ai/x": false,
		"https://claude.ai\u00AD/x":                         false,
		"https://\u0441laude.ai/x":                          false,
		"https://xn--laude-7we.ai/x":                        true,
	} {
		_, err := s.Register(context.Background(), oauthex.ClientRegistrationMetadata{RedirectURIs: []string{uri}}, "test")
		if (err == nil) != ok {
			t.Errorf("%s: %v", uri, err)
		}
	}
}

// Past MaxPendingAll requests waiting in all, a new one is refused, whatever its source, rather than
// displace anyone's.
func TestPendingRequestsInAllAreBounded(t *testing.T) {
	s, st := newStore(t)
	ctx := context.Background()
	c, err := s.Register(ctx, oauthex.ClientRegistrationMetadata{RedirectURIs: []string{"https://x.example/cb"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	const resource = "http://localhost:7317/mcp"
	ask := func(source string) error {
		_, err := s.Authorize(ctx, grants.AuthRequest{ClientID: c.ClientID, RedirectURI: "https://x.example/cb", ResponseType: "code",
			Challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", Method: "S256", Resource: resource, Source: source}, resource)
		return err
	}
	if err := ask("a"); err != nil {
		t.Fatal(err)
	}
	// Fill the table as many sources would.
	if _, err := st.DB().Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?)
		INSERT INTO oauth_requests(id,client_id,redirect_uri,state,challenge,resource,scopes,expires,source)
		SELECT 'x'||i||r.id, r.client_id, r.redirect_uri, r.state, r.challenge, r.resource, r.scopes, r.expires, 'src'||i
		FROM n, oauth_requests r WHERE r.source='a'`, grants.MaxPendingAll-1); err != nil {
		t.Fatal(err)
	}
	if err := ask("b"); errs.CodeOf(err) != "temporarily_unavailable" {
		t.Fatalf("request %d in all: %v", grants.MaxPendingAll+1, err)
	}
}
