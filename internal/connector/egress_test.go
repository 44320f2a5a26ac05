package connector

import (
	"net/netip"
	"strings"
	"testing"
)

func TestBlockedAddr(t *testing.T) {
	blocked := map[string]string{
		"127.0.0.1": "loopback", "127.9.9.9": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
		"10.0.0.5": "private", "172.16.0.1": "private", "192.168.1.1": "private", "fc00::1": "private",
		"169.254.169.254": "cloud metadata", "fd00:ec2::254": "cloud metadata", "100.100.100.200": "cloud metadata",
		"169.254.1.1": "link-local", "fe80::1": "link-local", "0.0.0.0": "unspecified", "::": "unspecified",
		"100.64.0.1": "shared", "239.1.1.1": "multicast", "224.0.0.1": "link-local", "255.255.255.255": "reserved", "192.0.2.1": "documentation",
		"64:ff9b::7f00:1": "carries 127.0.0.1", "64:ff9b::a9fe:a9fe": "carries 169.254.169.254", "2002:a00:1::": "carries 10.0.0.1",
		"2001:db8::1": "documentation", "2001::1": "Teredo",
	}
	for s, why := range blocked {
		if got := BlockedAddr(netip.MustParseAddr(s)); !strings.Contains(got, why) {
			t.Errorf("BlockedAddr(%s) = %q, want %q", s, got, why)
		}
	}
	for _, s := range []string{"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "64:ff9b::5db8:d70e", "1.1.1.1"} {
		if got := BlockedAddr(netip.MustParseAddr(s)); got != "" {
			t.Errorf("BlockedAddr(%s) = %q, want allowed", s, got)
		}
	}
}

func TestEgressAllows(t *testing.T) {
	e := Egress{Exact: []string{"api.example.com"}, Wild: []string{".example.org"}}
	for host, want := range map[string]bool{
		"api.example.com": true, "example.com": false, "x.api.example.com": false, "evil.com": false,
		"a.example.org": true, "a.b.example.org": true, "example.org": false, "xexample.org": false,
	} {
		if got := e.Allows(host); got != want {
			t.Errorf("Allows(%q) = %v", host, got)
		}
	}
	if !(Egress{Any: true}).Allows("anything.example") {
		t.Error("* did not allow a host")
	}
}

func TestBlockedName(t *testing.T) {
	for _, h := range []string{"localhost", "LOCALHOST.", "a.localhost", "metadata.google.internal", "x.internal", "printer.local", "nas.home.arpa", "1.0.0.127.in-addr.arpa"} {
		if BlockedName(h) == "" {
			t.Errorf("BlockedName(%q) allowed it", h)
		}
	}
	for _, h := range []string{"api.example.com", "localhost.example.com", "internal.example.com"} {
		if why := BlockedName(h); why != "" {
			t.Errorf("BlockedName(%q) = %q", h, why)
		}
	}
}
