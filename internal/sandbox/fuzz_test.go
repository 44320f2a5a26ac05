package sandbox

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/egress"
)

// Seeds are in testdata/fuzz/<Name>/; run one with go test -fuzz=^FuzzName$ ./internal/sandbox.

// The parent reads frames from an untrusted child: any bytes give a message or an error, never a panic
// or a read past the cap.
func FuzzReadFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := readFrame(bytes.NewReader(data), 1<<16)
		if err != nil {
			return
		}
		if len(data) < 4 || int(binary.BigEndian.Uint32(data)) > 1<<16 {
			t.Fatalf("read a frame past the cap: %d bytes", len(data))
		}
		var buf bytes.Buffer
		if err := writeFrame(&buf, m); err != nil {
			t.Fatal(err)
		}
		if _, err := readFrame(&buf, maxToChild); err != nil {
			t.Fatalf("a frame read back fails: %v", err)
		}
	})
}

// An address the proxy accepts is http(s) on a standard port, on the egress list, and neither a blocked
// name nor a blocked address.
func FuzzTarget(f *testing.F) {
	p := &proxy{egress: connector.Egress{Exact: []string{"api.example.com"}, Wild: []string{".example.org"}}, boxHosts: []string{"box.example.org"}}
	f.Fuzz(func(t *testing.T, raw string) {
		u, host, err := p.target(raw)
		if err != nil {
			return
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || !p.egress.Allows(host) || host == "box.example.org" {
			t.Fatalf("accepted %q (host %q)", raw, host)
		}
		if port := u.Port(); port != "" && port != "80" && port != "443" {
			t.Fatalf("accepted the port of %q", raw)
		}
		if a, err := netip.ParseAddr(host); err == nil && egress.Blocked(a) != "" {
			t.Fatalf("accepted the address of %q", raw)
		}
		if connector.BlockedName(host) != "" {
			t.Fatalf("accepted the name of %q", raw)
		}
	})
}
