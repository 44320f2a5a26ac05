package sandbox

import (
	"context"
	"crypto/x509"
	"net"
	"net/netip"
)

// TestNet stands in for the network in tests: a local server mapped in as a declared host, a resolver
// that answers what the test says, and a dial hook every connection goes through (so a test can prove
// nothing reached a private address). New refuses a Config that sets it unless the binary is a Go test
// binary (testing.Testing), so no flag, variable or file can turn it on in the box (docs/CONNECTORS.md).
type TestNet struct {
	// Hosts maps a host name to a local listener ("127.0.0.1:43211"): requests to it are dialled there,
	// past the address rules (the listener is on loopback). The egress list still decides the name.
	Hosts map[string]string
	// Resolve answers every other name; the address rules apply to what it answers.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial, when set, makes every connection the proxy opens, in place of the operating system's dialler.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// RootCAs are the certificate authorities a local TLS server is trusted by.
	RootCAs *x509.CertPool
}

func (t *TestNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if t.Dial != nil {
		return t.Dial(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
