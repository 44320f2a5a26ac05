// Package sitetest is test code only: a local HTTPS site on 127.0.0.1 whose certificate names public
// hosts, and a dial that connects only to it, recording and refusing every other address without
// connecting. The sandbox's own tests and connectortest build their sandbox.TestNet on it (the sandbox's
// tests cannot import connectortest, which imports the sandbox). It imports nothing of the box.
package sitetest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Site is a local HTTPS server standing in for the public sites a connector reaches.
type Site struct {
	Addr  string         // where it listens, host:port on 127.0.0.1
	Roots *x509.CertPool // trusts its certificate
	hosts []string

	mu    sync.Mutex
	dials []string
}

// New serves h over TLS on 127.0.0.1 with a certificate for each of hosts, until the test ends.
func New(t testing.TB, h http.Handler, hosts ...string) *Site {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	cert, pool := selfSigned(t, hosts)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &Site{Addr: srv.Listener.Addr().String(), Roots: pool, hosts: hosts}
}

// Hosts maps each of the site's hosts to its address (sandbox.TestNet.Hosts).
func (s *Site) Hosts() map[string]string {
	m := make(map[string]string, len(s.hosts))
	for _, h := range s.hosts {
		m[h] = s.Addr
	}
	return m
}

// Dial connects to the site when asked for its address; any other address is recorded and refused
// without connecting.
func (s *Site) Dial(ctx context.Context, network, to string) (net.Conn, error) {
	if to != s.Addr {
		s.mu.Lock()
		s.dials = append(s.dials, to)
		s.mu.Unlock()
		return nil, fmt.Errorf("test dial hook: refused %s without connecting", to)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, to)
}

// Dials are the addresses a connection was attempted to that were not the site (nil when none): none,
// in a sound box.
func (s *Site) Dials() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.dials...)
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
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}
