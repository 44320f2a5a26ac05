// Package egress owns the box's outbound HTTP to the public internet: https only, every connection checked
// at connect time against private, loopback, link-local, metadata and other special-use addresses (so a
// name that rebinds to one gains nothing), redirects never followed, answers read within a size and a time
// limit. It must not reach the box itself or the owner's network; the rules are in docs/OAUTH.md.
package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// Options bound one fetch.
type Options struct {
	MaxBytes int64         // the largest body read; a longer one is an error. 64 KiB when zero.
	Timeout  time.Duration // for the whole fetch: connect, TLS, headers and body. 10 seconds when zero.
}

// Client fetches public https URLs under the rules above. It is safe for concurrent use.
type Client struct {
	opts    Options
	hc      *http.Client
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
}

// New makes a client that reaches the public internet.
func New(opts Options) *Client {
	if opts.MaxBytes == 0 {
		opts.MaxBytes = 64 << 10
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	d := &net.Dialer{Timeout: opts.Timeout, Control: control}
	c := &Client{opts: opts, resolve: lookup, dial: d.DialContext}
	c.hc = c.httpClient(nil)
	return c
}

func (c *Client) httpClient(roots *x509.CertPool) *http.Client {
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would resolve and connect for us, past the address check
		DialContext:            c.dialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots},
		TLSHandshakeTimeout:    c.opts.Timeout,
		ResponseHeaderTimeout:  c.opts.Timeout,
		MaxResponseHeaderBytes: 16 << 10,
		DisableCompression:     true, // the size limit counts the bytes on the wire
		DisableKeepAlives:      true, // every fetch dials, so every fetch resolves and checks afresh
	}
	return &http.Client{Transport: tr, Timeout: c.opts.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// TestNet replaces name resolution and the final connect, for tests only: Resolve answers for names,
// Dial is called with an address that has already passed the check (and may connect somewhere else, such
// as a test server on 127.0.0.1), Roots are the certificates to trust. The check itself is never replaced.
type TestNet struct {
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	Roots   *x509.CertPool
}

// WithTestNet returns a copy of c that resolves and connects through tn. It panics outside a test
// binary, so the box itself can never enable it.
func (c *Client) WithTestNet(tn TestNet) *Client {
	if !testing.Testing() {
		panic("egress: WithTestNet is for tests only")
	}
	c2 := &Client{opts: c.opts, resolve: tn.Resolve, dial: tn.Dial}
	c2.hc = c2.httpClient(tn.Roots)
	return c2
}

// Response is a fetched answer: status, headers and the whole body (at most MaxBytes).
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Get fetches an https URL. A redirect is answered as it is (its status and Location), never followed.
func (c *Client) Get(ctx context.Context, raw string, header http.Header) (*Response, error) {
	const op = "egress.get"
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return nil, errs.E(op, errs.Invalid, "%q is not an https URL; the box fetches only https addresses.", raw)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, errs.Wrap(op, errs.Invalid, err, fmt.Sprintf("%q is not a URL the box can fetch.", raw))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := c.hc.Do(req)
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, errs.Wrap(op, errs.Other, err, fmt.Sprintf("The box could not fetch %s.", u.Redacted()))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, c.opts.MaxBytes+1))
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, fmt.Sprintf("The box could not read the answer of %s.", u.Redacted()))
	}
	if int64(len(body)) > c.opts.MaxBytes {
		return nil, errs.E(op, errs.Limited, "The answer of %s is longer than %d bytes, the most the box reads.", u.Redacted(), c.opts.MaxBytes)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: body}, nil
}

// dialContext resolves host once, checks every address, and connects to the first allowed one by its
// number, so the address checked is the address connected to.
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = c.resolve(ctx, host); err != nil {
		return nil, errs.Wrap("egress.dial", errs.Other, err, fmt.Sprintf("The name %s could not be resolved.", host))
	}
	var refused, last error
	for _, ip := range ips {
		if err := Check(ip); err != nil {
			refused = err
			continue
		}
		conn, err := c.dial(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		last = err
	}
	switch {
	case last != nil:
		return nil, last
	case refused != nil:
		return nil, errs.Wrap("egress.dial", errs.Forbidden, refused, fmt.Sprintf("%s is not on the public internet, so the box does not connect to it.", host))
	}
	return nil, errs.E("egress.dial", errs.Other, "The name %s has no address.", host)
}

func lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// control is the last guard, run by the dialer on the very address it is about to connect to.
func control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	return Check(ap.Addr())
}

// blocked are the special-use ranges of RFC 6890 and its successors that the address kinds of net/netip
// do not already name, with the ranges that embed an IPv4 address the box cannot check.
var blocked = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // this network
		"100.64.0.0/10",   // shared address space (carrier NAT; some cloud metadata)
		"192.0.0.0/24",    // IETF protocol assignments (some cloud metadata)
		"192.0.2.0/24",    // documentation
		"192.88.99.0/24",  // 6to4 relay anycast
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation
		"203.0.113.0/24",  // documentation
		"240.0.0.0/4",     // reserved, and broadcast
		"64:ff9b::/96",    // NAT64: would reach any IPv4 address
		"64:ff9b:1::/48",  // local NAT64
		"100::/64",        // discard
		"2001::/23",       // IETF protocol assignments (Teredo, ORCHID, …)
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4: would reach any IPv4 address
		"3fff::/20",       // documentation
		"5f00::/16",       // segment routing
		"fec0::/10",       // site-local (deprecated)
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Check says whether the box may connect to ip: only a global unicast address that is not private,
// loopback, link-local (169.254.169.254, the cloud metadata address, is link-local) or another special use.
func Check(ip netip.Addr) error {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return errors.New("no address")
	case ip.IsLoopback():
		return fmt.Errorf("%s is a loopback address", ip)
	case ip.IsPrivate():
		return fmt.Errorf("%s is a private address", ip)
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return fmt.Errorf("%s is a link-local address (the cloud metadata service lives there)", ip)
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsInterfaceLocalMulticast(), !ip.IsGlobalUnicast():
		return fmt.Errorf("%s is not a unicast address", ip)
	}
	for _, p := range blocked {
		if p.Contains(ip) {
			return fmt.Errorf("%s is a special-use address (%s)", ip, p)
		}
	}
	return nil
}
