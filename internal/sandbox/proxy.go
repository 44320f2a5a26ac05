package sandbox

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/egress"
)

// Caps on what one call may send and receive (docs/CONNECTORS.md, "The egress proxy").
const (
	MaxFetches       = 100     // fetches per call; the next one ends the call
	MaxRequestBody   = 1 << 20 // bytes
	MaxResponseBody  = 2 << 20 // bytes, after decompression
	maxURL           = 8 << 10
	maxHeaders       = 64
	maxHeaderBytes   = 16 << 10
	maxRedirects     = 5
	maxResponseHeads = 64 << 10
)

var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// Headers the code may not set: the proxy owns the connection, its framing and its encoding.
var forbiddenHeaders = []string{"host", "connection", "content-length", "transfer-encoding", "upgrade", "keep-alive",
	"te", "trailer", "expect", "accept-encoding", "proxy-authorization", "proxy-connection"}

// proxy is the egress proxy of one connector: every request the code makes passes here, is checked
// against the manifest and the address rules, gets its keys, and comes back scrubbed of them.
type proxy struct {
	egress   connector.Egress
	keys     []key
	boxHosts []string
	local    map[netip.Addr]bool // the machine's own addresses: the box itself
	client   *http.Client
	test     *TestNet
	agent    string
}

type key struct{ name, host, value string }

// refusal is a request the proxy would not send: the host it named and why. It is what blockedHosts lists.
type refusal struct {
	host, why string
}

func (r *refusal) Error() string { return r.why }

func newProxy(b *connector.Bundle, keys map[string]string, boxHosts []string, test *TestNet) *proxy {
	p := &proxy{egress: b.Egress(), boxHosts: boxHosts, test: test, local: localAddrs(),
		agent: "box-connector/1 (" + b.Manifest.ID + ")"}
	for _, c := range b.Manifest.Credentials {
		p.keys = append(p.keys, key{name: c.Name, host: c.Host, value: keys[c.Name]})
	}
	tr := &http.Transport{
		Proxy:                  nil, // never an environment proxy: the proxy is this
		DialContext:            p.dial,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: maxResponseHeads,
	}
	if test != nil {
		tr.TLSClientConfig.RootCAs = test.RootCAs
	}
	p.client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return p
}

func localAddrs() map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	addrs, _ := net.InterfaceAddrs() // none known: the address rules still refuse loopback and private ranges
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out[p.Addr().Unmap()] = true
		}
	}
	return out
}

// target checks a URL the request would go to: http or https on the standard port, a host on the
// egress list that is not local, reserved or the box. It returns the URL and its normalised host.
func (p *proxy) target(raw string) (*url.URL, string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The address is the connector's text (a query can carry the owner's words, a redirect's the key it
		// was sent with): it is never quoted.
		return nil, "", &refusal{why: "the address is not an http or https address"}
	}
	host := connector.NormalizeHost(u.Hostname())
	switch {
	case !ascii(host):
		// The transport would map it (IDNA: fullwidth letters, a soft hyphen) to another name than the
		// one these checks and the diary see.
		return nil, "", &refusal{why: "the address has a host name that is not plain ASCII; write it as the xn-- name"}
	case u.User != nil:
		return nil, host, &refusal{host, fmt.Sprintf("the address for %s carries a user name or password; send credentials as declared keys", host)}
	case u.Port() != "" && !(u.Scheme == "https" && u.Port() == "443") && !(u.Scheme == "http" && u.Port() == "80"):
		return nil, host, &refusal{host, fmt.Sprintf("%s:%s is not a standard port; a connector reaches ports 443 and 80 only", host, u.Port())}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if why := egress.Blocked(a); why != "" {
			return nil, host, &refusal{host, fmt.Sprintf("%s is %s; a connector reaches public websites only", host, why)}
		}
	} else if why := connector.BlockedName(host); why != "" {
		return nil, host, &refusal{host, fmt.Sprintf("%s is %s; a connector reaches public websites only", host, why)}
	}
	for _, b := range p.boxHosts {
		if connector.NormalizeHost(b) == host {
			return nil, host, &refusal{host, fmt.Sprintf("%s is the box itself; a connector never reaches its own box", host)}
		}
	}
	if !p.egress.Allows(host) {
		return nil, host, &refusal{host, fmt.Sprintf("%s is not on this connector's egress list", host)}
	}
	return u, host, nil
}

// fetch performs one ctx.fetch: checks, keys, redirects (each hop checked again), caps, scrubbing. Its
// error is a sentence for the connector's code; a *refusal names the host it refused. A call of a tool
// declared effect read (reads) sends only GET and HEAD, with no body: its card promised reading, and no
// card is asked for its calls.
func (p *proxy) fetch(ctx context.Context, fr *fetchRequest, reads bool) (*fetchResponse, error) {
	if err := p.checkShape(fr); err != nil {
		return nil, err
	}
	if reads && ((fr.Method != "GET" && fr.Method != "HEAD") || fr.Body != nil) {
		host := ""
		if u, err := url.Parse(fr.URL); err == nil {
			host = connector.NormalizeHost(u.Hostname())
		}
		what := fr.Method
		if fr.Method == "GET" || fr.Method == "HEAD" {
			what = "a body"
		}
		return nil, &refusal{host, fmt.Sprintf("this tool is declared effect read, so ctx.fetch sends only GET or HEAD with no body, never %s; a tool that sends or changes something is declared effect write (each call then asks the owner)", what)}
	}
	cur, method := fr.URL, fr.Method
	body := fr.Body
	firstHost, left := "", false
	for hop := 0; ; hop++ {
		u, host, err := p.target(cur)
		if err != nil {
			return nil, err
		}
		if hop == 0 {
			firstHost = host
		}
		// Keys go in only where the code wrote their placeholders, on the first hop or a redirect that has
		// never left its host. A redirect to another host keeps no header that carried a key, nor
		// credentials of any kind, and neither does any hop after it, back on the first host or not: the
		// other host chose where it sends the request.
		left = left || host != firstHost
		sameHost := !left
		hdrs := fr.Headers
		if !sameHost {
			hdrs = slices.DeleteFunc(slices.Clone(hdrs), func(h [2]string) bool {
				n := strings.ToLower(h[0])
				return len(connector.PlaceholderNames(h[1])) > 0 || n == "authorization" || n == "cookie"
			})
			if body != nil && len(connector.PlaceholderNames(*body)) > 0 {
				return nil, &refusal{host, fmt.Sprintf("%s redirected to %s, and the body carries a key meant for %s only", firstHost, host, firstHost)}
			}
		}
		reqURL := cur
		if hop > 0 && len(connector.PlaceholderNames(cur)) > 0 {
			reqURL = strings.NewReplacer("{{", "%7B%7B", "}}", "%7D%7D").Replace(cur) // a redirect's address is taken as written, never filled
		}
		req, err := p.build(ctx, u, host, reqURL, method, hdrs, body, hop == 0 || sameHost)
		if err != nil {
			return nil, err
		}
		resp, err := p.client.Do(req)
		if err != nil {
			var r *refusal
			if errors.As(err, &r) {
				return nil, r
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s did not answer in time", host)
			}
			return nil, fmt.Errorf("%s could not be reached: %v", host, netErr(err))
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" && resp.StatusCode != 304 {
			resp.Body.Close()
			if hop == maxRedirects {
				return nil, fmt.Errorf("%s redirected more than %d times", host, maxRedirects)
			}
			next, err := u.Parse(loc)
			if err != nil {
				return nil, fmt.Errorf("%s redirected to an address that does not parse", host)
			}
			if _, nh, err := p.target(next.String()); err != nil {
				var r *refusal
				if errors.As(err, &r) && r.host != "" {
					return nil, &refusal{nh, fmt.Sprintf("%s redirected to %s: %s", host, nh, r.why)}
				}
				return nil, err
			}
			if resp.StatusCode == 301 || resp.StatusCode == 302 || resp.StatusCode == 303 {
				if method != "HEAD" {
					method = "GET"
				}
				body = nil
			}
			cur = next.String()
			continue
		}
		return p.read(resp, host, hop > 0)
	}
}

func (p *proxy) checkShape(fr *fetchRequest) error {
	switch {
	case len(fr.URL) > maxURL:
		return fmt.Errorf("the address is %d bytes; at most %d", len(fr.URL), maxURL)
	case !slices.Contains(methods, fr.Method):
		return fmt.Errorf("%q is not a method ctx.fetch sends; use one of %s", clip(fr.Method), strings.Join(methods, ", "))
	case len(fr.Headers) > maxHeaders:
		return fmt.Errorf("%d headers; at most %d", len(fr.Headers), maxHeaders)
	case fr.Body != nil && len(*fr.Body) > MaxRequestBody:
		return fmt.Errorf("the body is %d bytes; at most %d", len(*fr.Body), MaxRequestBody)
	}
	size := 0
	for _, h := range fr.Headers {
		size += len(h[0]) + len(h[1])
		n := strings.ToLower(h[0])
		if !validHeaderName(n) || strings.ContainsAny(h[1], "\r\n\x00") {
			return fmt.Errorf("%q is not a header ctx.fetch can send", clip(h[0]))
		}
		if slices.Contains(forbiddenHeaders, n) || strings.HasPrefix(n, "proxy-") || strings.HasPrefix(n, "sec-") {
			return fmt.Errorf("the header %s is the sandbox's to set", h[0])
		}
	}
	if size > maxHeaderBytes {
		return fmt.Errorf("the headers are %d bytes; at most %d", size, maxHeaderBytes)
	}
	return nil
}

func validHeaderName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// build makes the request, filling placeholders when fill is set: each must name a declared key whose
// host is this request's host, sent over https, and set by the owner. A key written out in the clear to
// any other host is refused too.
func (p *proxy) build(ctx context.Context, u *url.URL, host, rawURL, method string, hdrs [][2]string, body *string, fill bool) (*http.Request, error) {
	texts := []string{rawURL}
	for _, h := range hdrs {
		texts = append(texts, h[1])
	}
	if body != nil {
		texts = append(texts, *body)
	}
	all := strings.Join(texts, "\x00")
	for _, k := range p.keys {
		if k.host != host && len(k.value) >= 4 && strings.Contains(all, k.value) {
			return nil, &refusal{host, fmt.Sprintf("the request to %s carries the key %s in the clear; that key goes only to %s", host, k.name, k.host)}
		}
	}
	names := connector.PlaceholderNames(all)
	if len(names) > 0 && !fill {
		return nil, &refusal{host, fmt.Sprintf("a key placeholder reached %s on a redirect; keys are filled only on the request the code made", host)}
	}
	if len(names) > 0 && strings.Contains(u.Host, "{{") {
		return nil, &refusal{host, "a key cannot be part of a host name"}
	}
	// Keys go in headers only: an address or a body is what a site stores and hands back changed (base64
	// at an offset, in pieces), where no scrubbing can find the key again (docs/CONNECTORS.md, "Keys").
	inText := connector.PlaceholderNames(rawURL)
	if body != nil {
		inText = append(inText, connector.PlaceholderNames(*body)...)
	}
	if len(inText) > 0 {
		return nil, &refusal{host, fmt.Sprintf("the key %s goes only in a header (such as Authorization), never in the address or the body", inText[0])}
	}
	if len(names) > 0 && slices.ContainsFunc(hdrs, func(h [2]string) bool { return strings.EqualFold(h[0], "range") }) {
		return nil, &refusal{host, "a request that carries a key cannot ask for part of an answer (Range): pieces of an echoed key would slip past the scrubbing"}
	}
	for _, n := range names {
		k := p.key(n)
		switch {
		case k == nil:
			return nil, &refusal{host, fmt.Sprintf("the code wrote %s, but the manifest declares no key %s", connector.Placeholder(n), n)}
		case k.host != host:
			return nil, &refusal{host, fmt.Sprintf("the key %s goes only to %s; this request goes to %s", n, k.host, host)}
		case u.Scheme != "https":
			return nil, &refusal{host, fmt.Sprintf("the key %s is sent only over https", n)}
		case k.value == "":
			return nil, fmt.Errorf("the key %s is not set yet; the owner adds it in Settings → Things I built", n)
		}
	}
	fillText := func(name string) string { return p.key(name).value }
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(*body)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, rd)
	if err != nil {
		return nil, fmt.Errorf("the request to %s could not be made: %v", host, err)
	}
	if connector.NormalizeHost(req.URL.Hostname()) != host {
		return nil, &refusal{host, "the request's address changed where it goes"}
	}
	for _, h := range hdrs {
		req.Header.Add(h[0], connector.ReplacePlaceholders(h[1], fillText))
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", p.agent)
	}
	return req, nil
}

func (p *proxy) key(name string) *key {
	for i := range p.keys {
		if p.keys[i].name == name {
			return &p.keys[i]
		}
	}
	return nil
}

// read takes the response body up to the cap and scrubs every key out of it and its headers.
func (p *proxy) read(resp *http.Response, host string, redirected bool) (*fetchResponse, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody+1))
	if err != nil {
		return nil, fmt.Errorf("%s broke off its answer: %v", host, netErr(err))
	}
	if len(b) > MaxResponseBody {
		return nil, fmt.Errorf("%s answered more than %d MB; a connector reads at most that", host, MaxResponseBody>>20)
	}
	out := &fetchResponse{Status: resp.StatusCode, StatusText: http.StatusText(resp.StatusCode), URL: p.scrub(resp.Request.URL.String()),
		Redirected: redirected, Body: p.scrub(string(b)), Headers: [][2]string{}}
	for k, vs := range resp.Header {
		for _, v := range vs {
			out.Headers = append(out.Headers, [2]string{p.scrub(strings.ToLower(k)), p.scrub(v)}) // a name can echo a key too
		}
	}
	slices.SortFunc(out.Headers, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out, nil
}

// scrub puts each key's placeholder back wherever the key itself shows: raw, URL-escaped, hex, and
// base64 (standard or URL alphabet) at any of the three alignments it can have inside a longer text. It
// cannot be complete: a site that gives back what it was sent in some other form (reversed, in pieces,
// escaped its own way) gets past it, which is why keys go in headers only (docs/CONNECTORS.md, "Keys").
func (p *proxy) scrub(s string) string {
	for _, k := range p.keys {
		for _, form := range k.forms() {
			s = strings.ReplaceAll(s, form, connector.Placeholder(k.name))
		}
	}
	return s
}

// forms are the spellings of the key scrub looks for, longest first; none for a key under 4 bytes.
func (k key) forms() []string {
	if len(k.value) < 4 {
		return nil
	}
	v := []byte(k.value)
	out := []string{k.value, url.QueryEscape(k.value), hex.EncodeToString(v), strings.ToUpper(hex.EncodeToString(v))}
	for off := range 3 {
		// After off bytes of something else, the key's own characters start at the next whole group of
		// three bytes and end at the last whole one.
		n := off + len(v)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			e := enc.EncodeToString(append(make([]byte, off), v...))
			from := 0
			if off > 0 {
				from = 4
			}
			if core := e[from : 4*(n/3)]; len(core) >= 8 {
				out = append(out, core)
			}
		}
		if off == 0 {
			out = append(out, base64.StdEncoding.EncodeToString(v), base64.URLEncoding.EncodeToString(v), base64.RawStdEncoding.EncodeToString(v))
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// dial connects to a checked host: it resolves the name itself and refuses any address the rules block,
// so a name that resolves (or re-resolves) to a private or metadata address is never reached. The address
// dialled is the address checked; the socket's Control hook checks it once more at connect time.
func (p *proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	host = connector.NormalizeHost(host)
	if t := p.test; t != nil {
		if to, ok := t.Hosts[host]; ok {
			return t.dial(ctx, network, to)
		}
	}
	var ips []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{a}
	} else if ips, err = p.resolve(ctx, host); err != nil {
		return nil, fmt.Errorf("%s does not resolve: %v", host, netErr(err))
	}
	why := fmt.Sprintf("%s has no address", host)
	var lastErr error
	for _, ip := range ips {
		if w := p.blocked(ip); w != "" {
			why = fmt.Sprintf("%s resolves to %s; a connector reaches public websites only", host, w)
			continue
		}
		target := netip.AddrPortFrom(ip.Unmap(), parsePort(port)).String()
		var conn net.Conn
		if t := p.test; t != nil && t.Dial != nil {
			conn, lastErr = t.Dial(ctx, network, target)
		} else {
			d := net.Dialer{Timeout: 10 * time.Second, Control: p.control}
			conn, lastErr = d.DialContext(ctx, network, target)
		}
		if lastErr == nil {
			return conn, nil
		}
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return nil, &refusal{host, why}
}

func (p *proxy) blocked(ip netip.Addr) string {
	if why := egress.Blocked(ip); why != "" {
		return why
	}
	if p.local[ip.Unmap()] {
		return fmt.Sprintf("%s, this machine's own address (the box itself)", ip)
	}
	return ""
}

// control runs on the socket just before connect: the last word on the address actually dialled.
func (p *proxy) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused to connect to %s", address)
	}
	if why := p.blocked(ap.Addr()); why != "" {
		return &refusal{ap.Addr().String(), "refused to connect to " + why}
	}
	return nil
}

func (p *proxy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if t := p.test; t != nil {
		if t.Resolve == nil {
			return nil, fmt.Errorf("no test resolver answers for %s", host)
		}
		return t.Resolve(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

func parsePort(s string) uint16 {
	var n uint16
	for _, r := range s {
		n = n*10 + uint16(r-'0')
	}
	return n
}

// netErr trims Go's wrapping from a network error for a sentence.
func netErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	return err.Error()
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
