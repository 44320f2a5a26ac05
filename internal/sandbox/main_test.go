package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"testing"

	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/sitetest"
)

// The test binary is its own sandbox child, as the box binary is in production.
func TestMain(m *testing.M) {
	if IsChild() {
		os.Exit(ChildMain())
	}
	if os.Getenv(selftestEnv) == "1" {
		os.Exit(lockdownSelftest())
	}
	os.Exit(m.Run())
}

// site is a local HTTPS server standing in for the public sites a connector reaches; its certificate
// names every host the tests map to it. Its Dials must stay empty, since the proxy refuses private
// addresses before dialling.
type site struct {
	*sitetest.Site
	net *TestNet
	// resolved records every name the test resolver was asked for.
	mu       sync.Mutex
	resolved []string
}

var siteHosts = []string{"api.example.com", "cdn.example.com", "other.example.net"}

func newSite(t testing.TB, h http.Handler) *site {
	t.Helper()
	s := &site{Site: sitetest.New(t, h, siteHosts...)}
	s.net = &TestNet{
		Hosts:   s.Hosts(),
		RootCAs: s.Roots,
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			s.mu.Lock()
			s.resolved = append(s.resolved, host)
			s.mu.Unlock()
			if a, ok := dnsAnswers[host]; ok {
				return a, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
		Dial: s.Dial,
	}
	return s
}

// dnsAnswers are the names the test resolver knows: each points somewhere a connector must never reach.
var dnsAnswers = map[string][]netip.Addr{
	"rebind.example.com":  {netip.MustParseAddr("127.0.0.1")},
	"private.example.com": {netip.MustParseAddr("10.0.0.7")},
	"mixed.example.com":   {netip.MustParseAddr("10.1.1.1"), netip.MustParseAddr("::1")},
	"meta.example.com":    {netip.MustParseAddr("169.254.169.254")},
}

func (s *site) checkNoDials(t testing.TB) {
	t.Helper()
	if d := s.Dials(); len(d) > 0 {
		t.Fatalf("connections were attempted to %v", d)
	}
}

// bundle validates a manifest (as JSON text) and one index.mjs.
func bundle(t testing.TB, manifest, index string) *connector.Bundle {
	t.Helper()
	files, _ := json.Marshal(map[string]string{"index.mjs": index})
	b, rep := connector.Validate([]byte(manifest), files, connector.Options{})
	if !rep.OK {
		t.Fatalf("the test connector does not validate: %+v", rep.Problems)
	}
	return b
}

// manifest is a one-tool manifest "t" (effect read, free-form args) reaching egress.
func manifest(egress string, extra string) string {
	return `{"name": "Test", "what": "a test connector", "egress": ` + egress + `,
		"tools": [{"name": "t", "description": "t", "effect": "read", "inputSchema": {"type": "object"}}],
		"test": [{"tool": "t", "expect": "ok"}]` + extra + `}`
}

// writeManifest is a one-tool manifest "t" (effect write: it may send), reaching egress.
func writeManifest(egress string) string {
	return `{"name": "Test", "what": "a test connector", "egress": ` + egress + `,
		"tools": [{"name": "t", "description": "t", "effect": "write", "inputSchema": {"type": "object"}}]}`
}

func runner(t testing.TB, cfg Config) *Runner {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}
