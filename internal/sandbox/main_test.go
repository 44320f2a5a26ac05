package sandbox

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/connector"
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
// names every host the tests map to it.
type site struct {
	srv  *httptest.Server
	pool *x509.CertPool
	net  *TestNet
	// dials records every address a test connection tried that was not the local site: it must stay
	// empty, since the proxy refuses private addresses before dialling.
	mu       sync.Mutex
	dials    []string
	resolved []string
}

var siteHosts = []string{"api.example.com", "cdn.example.com", "other.example.net"}

func newSite(t testing.TB, h http.Handler) *site {
	t.Helper()
	s := &site{srv: httptest.NewUnstartedServer(h)}
	cert, pool := selfSigned(t, siteHosts)
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	s.pool = pool
	addr := s.srv.Listener.Addr().String()
	s.net = &TestNet{
		Hosts:   map[string]string{},
		RootCAs: pool,
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			s.mu.Lock()
			s.resolved = append(s.resolved, host)
			s.mu.Unlock()
			if a, ok := dnsAnswers[host]; ok {
				return a, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
		Dial: func(ctx context.Context, network, to string) (net.Conn, error) {
			if to != addr {
				s.mu.Lock()
				s.dials = append(s.dials, to)
				s.mu.Unlock()
				return nil, fmt.Errorf("test dial hook: refused %s without connecting", to)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, to)
		},
	}
	for _, h := range siteHosts {
		s.net.Hosts[h] = addr
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.dials) > 0 {
		t.Fatalf("connections were attempted to %v", s.dials)
	}
}

func selfSigned(t testing.TB, hosts []string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: hosts[0]}, DNSNames: hosts,
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
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
