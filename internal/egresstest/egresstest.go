// Package egresstest is test code only: a network for package egress in which names resolve from a table,
// one public address stands for a TLS test server on 127.0.0.1, and every other dial is recorded and
// refused without connecting, so no test sends a packet to a private, link-local or metadata address.
package egresstest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"

	"github.com/boxmem/box/internal/egress"
)

// Public is the address that stands for the test server; example.com resolves to it (httptest's
// certificate names example.com).
var Public = netip.MustParseAddr("93.184.215.14")

// Net is one test's network.
type Net struct {
	srv     *httptest.Server
	mu      sync.Mutex
	names   map[string][]netip.Addr
	refused []string
}

// New serves h over TLS on 127.0.0.1 as https://example.com, until the test ends.
func New(t testing.TB, h http.Handler) *Net {
	n := &Net{srv: httptest.NewTLSServer(h), names: map[string][]netip.Addr{"example.com": {Public}}}
	t.Cleanup(n.srv.Close)
	return n
}

// Name makes host resolve to addrs (replacing what it resolved to).
func (n *Net) Name(host string, addrs ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.names[host] = nil
	for _, a := range addrs {
		n.names[host] = append(n.names[host], netip.MustParseAddr(a))
	}
}

// Refused is every address dialled other than Public: each was refused without connecting. A box that
// checks addresses before it connects leaves this empty.
func (n *Net) Refused() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.refused...)
}

// Client is an egress client on this network.
func (n *Net) Client(opts egress.Options) *egress.Client {
	opts.TestNet = &egress.TestNet{
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			n.mu.Lock()
			defer n.mu.Unlock()
			if a, ok := n.names[host]; ok {
				return a, nil
			}
			return nil, errors.New("no such host in the test network")
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if ap, err := netip.ParseAddrPort(addr); err == nil && ap.Addr() == Public {
				var d net.Dialer
				return d.DialContext(ctx, network, n.srv.Listener.Addr().String())
			}
			n.mu.Lock()
			n.refused = append(n.refused, addr)
			n.mu.Unlock()
			return nil, errors.New("the test network refuses " + addr + " without connecting")
		},
		Roots: n.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
	}
	return egress.New(opts)
}
