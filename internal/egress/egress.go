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
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// Options bound one fetch.
type Options struct {
	MaxBytes int64         // the largest body read; a longer one is an error. 64 KiB when zero.
	Timeout  time.Duration // for the whole fetch: connect, TLS, headers and body. 10 seconds when zero.
	// TestNet, in a test binary only, replaces name resolution and the final connect (New panics if it is
	// set anywhere else, so the box itself can never set it).
	TestNet *TestNet
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
	var roots *x509.CertPool
	if tn := opts.TestNet; tn != nil {
		if !testing.Testing() {
			panic("egress: Options.TestNet is for tests only")
		}
		c.resolve, c.dial, roots = tn.Resolve, tn.Dial, tn.Roots
	}
	c.hc = c.httpClient(roots)
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
// It is not in a _test.go file because other packages' tests use it (through egresstest).
type TestNet struct {
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	Roots   *x509.CertPool
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
		return nil, errs.E(op, errs.Invalid, "%s is not an https URL without a user name; the box fetches only https addresses.", quoted(raw))
	}
	res, err := c.do(ctx, op, http.MethodGet, u, header, "The box could not fetch %s.")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, c.opts.MaxBytes+1))
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, fmt.Sprintf("The box could not read the answer of %s.", shown(u)))
	}
	if int64(len(body)) > c.opts.MaxBytes {
		return nil, errs.E(op, errs.Limited, "The answer of %s is longer than %d bytes, the most the box reads.", shown(u), c.opts.MaxBytes)
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

// The box's one rule for which addresses it may reach on the internet: the fetches of this package and
// every connector's fetch (package connector's manifest check, package sandbox's proxy) ask Blocked.

// metadataAddrs are the cloud metadata services, named as such (their ranges are refused anyway).
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, Oracle, DigitalOcean…
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
}

type special struct {
	prefix netip.Prefix
	why    string
}

// specials are the special-use ranges of RFC 6890 and its successors that the address kinds of net/netip
// do not already name. The ranges that carry an IPv4 address are not here: embedded reads them.
var specials = func() []special {
	var out []special
	for _, s := range [][2]string{
		{"0.0.0.0/8", "a 'this network' address"},
		{"100.64.0.0/10", "a shared (carrier-grade NAT) address"}, // some cloud metadata too
		{"192.0.0.0/24", "a protocol-assignment address"},         // some cloud metadata too
		{"192.0.2.0/24", "a documentation address"},
		{"192.88.99.0/24", "a 6to4 relay address"},
		{"198.18.0.0/15", "a benchmarking address"},
		{"198.51.100.0/24", "a documentation address"},
		{"203.0.113.0/24", "a documentation address"},
		{"240.0.0.0/4", "a reserved address"}, // and broadcast
		{"64:ff9b:1::/48", "a local NAT64 address"},
		{"100::/64", "a discard address"},
		{"2001::/32", "a Teredo tunnel address"},
		{"2001::/23", "a protocol-assignment address"},
		{"2001:db8::/32", "a documentation address"},
		{"3fff::/20", "a documentation address"},
		{"5f00::/16", "a segment-routing address"},
		{"fec0::/10", "a site-local address"},
	} {
		out = append(out, special{netip.MustParsePrefix(s[0]), s[1]})
	}
	return out
}()

// The IPv6 ranges that carry an IPv4 address, which is what a connection to them reaches: IPv4-compatible
// (::/96, deprecated), IPv4-translated (::ffff:0:0:0/96, RFC 2765), NAT64 (64:ff9b::/96) in the last four
// bytes, and 6to4 (2002::/16) right after the prefix. IPv4-mapped (::ffff:0:0/96) is unmapped first.
var (
	compatible = netip.MustParsePrefix("::/96")
	translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4     = netip.MustParsePrefix("2002::/16")
)

// embedded returns the IPv4 address an IPv6 address carries, if it is of a form that carries one.
func embedded(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case compatible.Contains(a), translated.Contains(a), nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixTo4.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// Blocked returns why the box must never connect to a ("" when it may): loopback, private, link-local
// (169.254.169.254, the cloud metadata address, is link-local), unspecified, multicast, the special-use
// ranges, and any IPv6 form (mapped, compatible, translated, NAT64, 6to4) whose IPv4 address is one of
// those; such a form is judged by the IPv4 address it carries (docs/OAUTH.md).
func Blocked(a netip.Addr) string {
	a = a.Unmap()
	if slices.Contains(metadataAddrs, a) {
		return fmt.Sprintf("%s, a cloud metadata address", a)
	}
	switch {
	case !a.IsValid():
		return "not an address"
	case a.IsLoopback():
		return fmt.Sprintf("%s, a loopback address (the machine itself)", a)
	case a.IsUnspecified():
		return fmt.Sprintf("%s, an unspecified address", a)
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return fmt.Sprintf("%s, a link-local address", a)
	case a.IsPrivate():
		return fmt.Sprintf("%s, a private network address", a)
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return fmt.Sprintf("%s, a multicast address", a)
	}
	if v4, ok := embedded(a); ok {
		if why := Blocked(v4); why != "" {
			return fmt.Sprintf("%s, which carries %s", a, why)
		}
		return ""
	}
	for _, s := range specials {
		if s.prefix.Contains(a) {
			return fmt.Sprintf("%s, %s", a, s.why)
		}
	}
	if !a.IsGlobalUnicast() {
		return fmt.Sprintf("%s, not a public address", a)
	}
	return ""
}

// Check is Blocked as an error: nil when the box may connect to ip.
func Check(ip netip.Addr) error {
	if why := Blocked(ip); why != "" {
		return errors.New(why)
	}
	return nil
}

// Status asks an http or https URL for its status only (method HEAD or GET; the body is never read): box
// validate's link check. The address rule and the unfollowed redirect hold as for Get; plain http is
// taken here because nothing of the answer is used but its status.
func (c *Client) Status(ctx context.Context, method, raw string, header http.Header) (int, error) {
	const op = "egress.status"
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return 0, errs.E(op, errs.Invalid, "%s is not an http or https URL.", quoted(raw))
	}
	// A user name in the address is a credential net/http would send (Authorization: Basic), in the clear
	// over http: a status needs none, so none is sent.
	u.User = nil
	res, err := c.do(ctx, op, method, u, header, "The box could not reach %s.")
	if err != nil {
		return 0, err
	}
	_ = res.Body.Close()
	return res.StatusCode, nil
}

// do sends one request to u with header. A refusal of the address rule comes back as the dialer said it;
// any other failure as fail, naming the address without its credentials, around the cause.
func (c *Client) do(ctx context.Context, op, method string, u *url.URL, header http.Header, fail string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil { // its cause names the whole address: not kept
		return nil, errs.E(op, errs.Invalid, "%s is not a URL the box can ask.", shown(u))
	}
	maps.Copy(req.Header, header)
	res, err := c.hc.Do(req)
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return nil, e
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = shown(u) // net/http names the address with its user name, which may be a token
		}
		return nil, errs.Wrap(op, errs.Other, err, fmt.Sprintf(fail, shown(u)))
	}
	return res, nil
}

// shown is u as the box repeats it: without its user name or password at all (url.URL.Redacted keeps
// the user name, and a token is often written there: https://ghp_…@github.com), and without its query
// or fragment, where keys travel too (?access_token=…): "?…" says one was there; nor a path with an '@'
// in it ("/…" says one was there).
func shown(u *url.URL) string {
	v := *u
	v.User = nil
	cut := v.RawQuery != "" || v.ForceQuery || v.Fragment != ""
	v.RawQuery, v.ForceQuery, v.Fragment, v.RawFragment = "", false, "", ""
	var s string
	// What comes before an '@' may be a token url.Parse did not take for the user name (https:/ghp_…@x,
	// mailto:ghp_…@x): a path or opaque part holding one, decoded or not, is not repeated.
	if strings.Contains(v.Path, "@") || strings.Contains(strings.ToLower(v.Opaque), "%40") || strings.Contains(v.Opaque, "@") {
		v.Opaque, v.Path, v.RawPath = "", "", ""
		s = v.String() + "/…"
	} else {
		s = v.String()
	}
	if cut {
		return s + "?…"
	}
	return s
}

// Shown is the address raw as the box repeats it in a sentence of its own (a report naming a link), as
// shown gives it, or "" when it does not parse (what it carries cannot be told apart).
func Shown(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return shown(u)
}

// quoted is raw, an address refused by its form, quoted as Shown gives it, or "The address" when it does
// not parse.
func quoted(raw string) string {
	if s := Shown(raw); s != "" {
		return fmt.Sprintf("%q", s)
	}
	return "The address"
}
