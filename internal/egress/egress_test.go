package egress_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/egress"
	"github.com/boxmem/box/internal/egresstest"
	"github.com/boxmem/box/internal/errs"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		ip string
		ok bool
	}{
		{"93.184.215.14", true}, {"1.1.1.1", true}, {"2606:4700:4700::1111", true}, {"::ffff:93.184.215.14", true},
		{"127.0.0.1", false}, {"127.8.9.10", false}, {"::1", false}, {"::ffff:127.0.0.1", false},
		{"10.0.0.1", false}, {"172.16.5.4", false}, {"192.168.1.1", false}, {"::ffff:10.0.0.1", false}, {"fd00:ec2::254", false},
		{"169.254.169.254", false}, {"fe80::1", false}, {"100.100.100.200", false}, {"192.0.0.192", false},
		{"0.0.0.0", false}, {"0.1.2.3", false}, {"::", false}, {"224.0.0.1", false}, {"ff02::1", false}, {"255.255.255.255", false},
		{"198.18.0.1", false}, {"203.0.113.5", false}, {"240.1.1.1", false}, {"64:ff9b::a00:1", false}, {"2002:a00:1::", false},
		{"2001:db8::1", false}, {"2001::1", false}, {"fec0::1", false},
	} {
		err := egress.Check(netip.MustParseAddr(c.ip))
		if (err == nil) != c.ok {
			t.Errorf("Check(%s) = %v, want allowed %v", c.ip, err, c.ok)
		}
	}
}

// Blocked is the one rule for every fetch out of the box (egress's own, and every connector's): each
// address is refused with its reason, and an IPv6 form that carries an IPv4 address (mapped, compatible,
// translated, NAT64, 6to4) is judged by that IPv4 address.
func TestBlocked(t *testing.T) {
	blocked := map[string]string{
		"127.0.0.1": "loopback", "127.9.9.9": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
		"10.0.0.5": "private", "172.16.0.1": "private", "192.168.1.1": "private", "fc00::1": "private",
		"169.254.169.254": "cloud metadata", "fd00:ec2::254": "cloud metadata", "100.100.100.200": "cloud metadata",
		"169.254.1.1": "link-local", "fe80::1": "link-local", "0.0.0.0": "unspecified", "::": "unspecified",
		"100.64.0.1": "shared", "239.1.1.1": "multicast", "224.0.0.1": "link-local", "255.255.255.255": "reserved", "192.0.2.1": "documentation",
		"2001:db8::1": "documentation", "2001::1": "Teredo", "2001:2::1": "protocol-assignment", "64:ff9b:1::a00:1": "local NAT64",
		"192.88.99.1": "6to4 relay", "fec0::1": "site-local", "3fff::1": "documentation",
		// IPv6 forms that carry an IPv4 address, judged by it.
		"::ffff:10.0.0.1": "private", "::ffff:169.254.169.254": "cloud metadata",
		"::127.0.0.1": "carries 127.0.0.1", "::7f00:1": "carries 127.0.0.1", "::a9fe:a9fe": "carries 169.254.169.254",
		"::10.1.2.3": "carries 10.1.2.3", "::0.0.0.5": "carries 0.0.0.5",
		"::ffff:0:127.0.0.1": "carries 127.0.0.1", "::ffff:0:a00:1": "carries 10.0.0.1",
		"64:ff9b::7f00:1": "carries 127.0.0.1", "64:ff9b::a9fe:a9fe": "carries 169.254.169.254", "64:ff9b::192.168.0.1": "carries 192.168.0.1",
		"2002:a00:1::": "carries 10.0.0.1", "2002:7f00:1::1": "carries 127.0.0.1", "2002:a9fe:a9fe::": "carries 169.254.169.254",
		"2002:6440:1::": "carries 100.64.0.1",
	}
	for s, why := range blocked {
		a := netip.MustParseAddr(s)
		if got := egress.Blocked(a); !strings.Contains(got, why) {
			t.Errorf("Blocked(%s) = %q, want %q", s, got, why)
		}
		if egress.Check(a) == nil {
			t.Errorf("Check(%s) allowed it", s)
		}
	}
	for _, s := range []string{"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "1.1.1.1", "::ffff:93.184.215.14",
		"64:ff9b::5db8:d70e", "::5db8:d70e", "::ffff:0:5db8:d70e", "2002:5db8:d70e::1"} {
		a := netip.MustParseAddr(s)
		if got := egress.Blocked(a); got != "" || egress.Check(a) != nil {
			t.Errorf("Blocked(%s) = %q, want allowed", s, got)
		}
	}
}

func TestGet(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/doc", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 2000))) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://127.0.0.1/admin", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select { // answers only once the client gave up
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	n := egresstest.New(t, mux)
	n.Name("inside.example.com", "192.168.0.10", "::1")
	n.Name("metadata.example.com", "169.254.169.254")
	// The time limit is far above what a local answer takes, even on a loaded machine.
	c := n.Client(egress.Options{MaxBytes: 1000, Timeout: 2 * time.Second})
	ctx := context.Background()

	res, err := c.Get(ctx, "https://example.com/doc", nil)
	if err != nil || res.Status != 200 || string(res.Body) != `{"ok":true}` {
		t.Fatalf("public document: %+v %v", res, err)
	}
	// A redirect is answered, never followed, wherever it points.
	if res, err := c.Get(ctx, "https://example.com/moved", nil); err != nil || res.Status != http.StatusFound {
		t.Fatalf("redirect: %+v %v", res, err)
	}
	if _, err := c.Get(ctx, "https://example.com/big", nil); errs.KindOf(err) != errs.Limited {
		t.Fatalf("an answer over the size limit: %v", err)
	}
	if _, err := c.Get(ctx, "https://example.com/slow", nil); err == nil {
		t.Fatal("an answer past the time limit was accepted")
	}
	// A name answering a private address and a public one is reached only at the public one; once it
	// rebinds to a private address alone, the next fetch is refused before any connect.
	n.Name("example.com", "10.0.0.7", egresstest.Public.String())
	if res, err := c.Get(ctx, "https://example.com/doc", nil); err != nil || res.Status != 200 {
		t.Fatalf("a name with a private and a public address: %+v %v", res, err)
	}
	n.Name("example.com", "10.0.0.7")
	if _, err := c.Get(ctx, "https://example.com/doc", nil); errs.KindOf(err) != errs.Forbidden {
		t.Fatalf("after rebinding to a private address: %v", err)
	}
	// Names that resolve only to private, loopback or metadata addresses, and such addresses written as
	// numbers, are refused before any connect.
	for _, u := range []string{"https://inside.example.com/doc", "https://metadata.example.com/latest/meta-data/",
		"https://169.254.169.254/latest/meta-data/", "https://10.0.0.1/", "https://[::1]:8443/", "https://[fd00:ec2::254]/", "https://127.0.0.1/"} {
		_, err := c.Get(ctx, u, nil)
		if errs.KindOf(err) != errs.Forbidden || !strings.Contains(err.Error(), "not on the public internet") {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://example.com/doc", "ftp://example.com/", "https://user:pw@example.com/doc", "/doc"} {
		if _, err := c.Get(ctx, u, nil); errs.KindOf(err) != errs.Invalid || strings.Contains(err.Error(), ":pw@") {
			t.Errorf("%s: %v", u, err)
		}
	}
	if r := n.Refused(); len(r) != 0 {
		t.Fatalf("refused addresses were dialled: %v", r)
	}
}

// An address is never repeated with its user information: a token is often written as the user name
// (https://ghp_…@github.com), which url.URL.Redacted keeps.
func TestNoUserInfoIsRepeated(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select { // answers only once the client gave up
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	n := egresstest.New(t, mux)
	c := n.Client(egress.Options{Timeout: 500 * time.Millisecond})
	ctx := context.Background()
	const token = "ghp_Secret0Token"
	if _, err := c.Get(ctx, "https://"+token+"@example.com/doc", nil); err == nil || strings.Contains(err.Error(), token) {
		t.Errorf("get: %v", err)
	}
	for _, u := range []string{"ftp://" + token + "@example.com/", "https://" + token + ":pw@example.com/slow", "https://" + token + "@example.com/slow",
		"https://" + token + "@127.0.0.1/", "http://" + token + "@exa mple.com/"} {
		if _, err := c.Status(ctx, http.MethodHead, u, nil); err == nil || strings.Contains(err.Error(), token) {
			t.Errorf("status of %s: %v", u, err)
		}
	}
}

// An address refused by its form never repeats what stands before an '@': a token that url.Parse did not
// take for user information (in a path, an opaque address, a user name with an '@' in it) is cut with it.
func TestRefusedAddressWithAtIsNotRepeated(t *testing.T) {
	c := egresstest.New(t, http.NewServeMux()).Client(egress.Options{})
	ctx := context.Background()
	const token = "ghp_Secret0Token"
	refused := []string{"https:/" + token + "@example.com/", "https:" + token + "@example.com", "mailto:" + token + "@example.com",
		"ftp://example.com/" + token + "@x", "//" + token + "@example.com/", "https://example.com:" + token + "@/"}
	for _, u := range append([]string{"http://example.com/" + token + "@x", "https://" + token + "@en@example.com/"}, refused...) {
		if _, err := c.Get(ctx, u, nil); errs.KindOf(err) != errs.Invalid || strings.Contains(err.Error(), token) {
			t.Errorf("get %s: %v", u, err)
		}
	}
	for _, u := range refused {
		if _, err := c.Status(ctx, http.MethodHead, u, nil); errs.KindOf(err) != errs.Invalid || strings.Contains(err.Error(), token) {
			t.Errorf("status of %s: %v", u, err)
		}
	}
	// A key in the query or the fragment is never repeated either.
	for _, u := range []string{"http://example.com/doc?access_token=" + token, "http://example.com/doc#key=" + token} {
		if _, err := c.Get(ctx, u, nil); err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "http://example.com/doc?…") {
			t.Errorf("get %s: %v", u, err)
		}
	}
	// Without an '@' it is quoted, so the owner sees which address was refused.
	if _, err := c.Get(ctx, "http://example.com/doc", nil); err == nil || !strings.Contains(err.Error(), `"http://example.com/doc"`) {
		t.Errorf("get http: %v", err)
	}
}

// Without the test network, the client refuses a loopback address written as a number before it connects:
// nothing listens there, and the answer names the rule, not a refused connection.
func TestProductionClientRefusesLoopback(t *testing.T) {
	_, err := egress.New(egress.Options{}).Get(context.Background(), "https://127.0.0.1:9/", nil)
	if errs.KindOf(err) != errs.Forbidden {
		t.Fatalf("loopback: %v", err)
	}
}

// An accepted address whose path holds an '@' (as written or as %40) is named by its host alone when the
// fetch fails: what comes before the '@' may be a token.
func TestAcceptedAddressWithAtInItsPathIsNotRepeated(t *testing.T) {
	const token = "ghp_Secret0Token"
	ctx := context.Background()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 64)) })
	mux.HandleFunc("/slow/", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	n := egresstest.New(t, mux)
	long := n.Client(egress.Options{MaxBytes: 16})
	for _, p := range []string{"/hooks/" + token + "@x/doc", "/hooks/" + token + "%40x/doc"} {
		if _, err := long.Get(ctx, "https://example.com"+p, nil); errs.KindOf(err) != errs.Limited || strings.Contains(err.Error(), token) ||
			!strings.Contains(err.Error(), "https://example.com/…") {
			t.Errorf("get %s: %v", p, err)
		}
	}
	slow := n.Client(egress.Options{Timeout: 50 * time.Millisecond})
	if _, err := slow.Status(ctx, http.MethodHead, "https://example.com/slow/"+token+"@x", nil); err == nil || strings.Contains(err.Error(), token) ||
		!strings.Contains(err.Error(), "https://example.com/…") {
		t.Errorf("status of a slow path with an '@': %v", err)
	}
}

// Whatever stands before an '@' is never repeated by Shown, wherever url.Parse puts it (user name, path,
// opaque part, query), nor anything in a query or fragment: addresses built from the parts that move
// url.Parse's reading, a token placed before an '@' or after a '?' or '#'.
func TestShownNeverRepeatsWhatStandsBeforeAnAt(t *testing.T) {
	parts := []string{"https:", "http:", "//", "/", ":", "@", "?", "#", "example.com", "x", "%40", "[::1]", ";", "mailto:", "a/b",
		"%", "\\", "%2F", "@@", "%4", "0", "javascript:", "HTTPS://"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300_000 {
		var b strings.Builder
		n := 1 + r.IntN(7)
		at := r.IntN(n)
		for j := range n {
			if j == at {
				b.WriteString("TOKEN")
			}
			b.WriteString(parts[r.IntN(len(parts))])
		}
		raw := b.String()
		i := strings.Index(raw, "TOKEN")
		rest, q := raw[i+len("TOKEN"):], strings.IndexAny(raw, "?#")
		if !strings.HasPrefix(rest, "@") && !strings.HasPrefix(rest, "%40") && (q < 0 || q > i) {
			continue // a token in a plain path is named, as the owner needs to see which address failed
		}
		if s := egress.Shown(raw); strings.Contains(s, "TOKEN") {
			t.Fatalf("%q is shown as %s", raw, s)
		}
	}
}
