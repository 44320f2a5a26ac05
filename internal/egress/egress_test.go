package egress_test

import (
	"context"
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

func TestGet(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/doc", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 2000))) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://127.0.0.1/admin", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	n := egresstest.New(t, mux)
	n.Name("inside.example.com", "192.168.0.10", "::1")
	n.Name("metadata.example.com", "169.254.169.254")
	c := n.Client(egress.Options{MaxBytes: 1000, Timeout: 300 * time.Millisecond})
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
		if _, err := c.Get(ctx, u, nil); errs.KindOf(err) != errs.Invalid {
			t.Errorf("%s: %v", u, err)
		}
	}
	if r := n.Refused(); len(r) != 0 {
		t.Fatalf("refused addresses were dialled: %v", r)
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
