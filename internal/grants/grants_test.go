package grants_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

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
	} {
		if got := grants.Known(uri); got != want {
			t.Errorf("Known(%q) = %v, want %v", uri, got, want)
		}
	}
}

func TestRegisterRedirects(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".box"), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := grants.NewStore(st)
	for uri, ok := range map[string]bool{
		"https://x.example/cb":     true,
		"http://127.0.0.1:1/cb":    true,
		"http://localhost/cb":      true,
		"http://x.example/cb":      false,
		"http://10.0.0.1/cb":       false,
		"https://u:p@x.example/cb": false,
		"custom-scheme:/cb":        false,
	} {
		_, err := s.Register(context.Background(), oauthex.ClientRegistrationMetadata{RedirectURIs: []string{uri}}, "test")
		if (err == nil) != ok {
			t.Errorf("%s: %v", uri, err)
		}
	}
}
