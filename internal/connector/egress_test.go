package connector

import (
	"testing"
)

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
