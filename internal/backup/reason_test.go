package backup

import "testing"

// Two failures are one outage when their sentences differ only in timings, byte counts, the address a
// name resolved to or a count of tries; a status, a port or any other number makes them two.
func TestReason(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"Failed to connect to host port 443 after 0 ms: Connection refused", "Failed to connect to host port 443 after 12 ms: Connection refused", true},
		{"Operation timed out after 30001 milliseconds with 0 out of 0 bytes received", "Operation timed out after 30000 milliseconds with 0 out of 512 bytes received", true},
		{"The push to usb did not finish within 2m0s, so it was stopped", "The push to usb did not finish within 1m30.5s, so it was stopped", true},
		{"The requested URL returned error: 502", "The requested URL returned error: 503", false},
		{"HTTP 502", "HTTP 503", false},
		{"ssh: connect to host example.com port 22: Connection refused", "ssh: connect to host example.com port 2222: Connection refused", false},
		{"Failed to connect to example.com port 443 after 0 ms: Couldn't connect to server (192.0.2.10)", "Failed to connect to example.com port 443 after 3 ms: Couldn't connect to server (198.51.100.7)", true},
		{"ssh: connect to host 192.0.2.10 port 22: Connection timed out", "ssh: connect to host 192.0.2.11 port 22: Connection timed out", true},
		{"ssh: connect to host 2001:db8::1 port 22: Network is unreachable", "ssh: connect to host 2001:db8::2f port 22: Network is unreachable", true},
		{"dial tcp [::1]:2222: connect: connection refused", "dial tcp [2001:db8::1]:2222: connect: connection refused", true},
		{"dial tcp [fe80::1%eth0]:443: i/o timeout", "dial tcp [fe80::2%eth0]:443: i/o timeout", true},
		{"dial tcp 192.0.2.10:443: i/o timeout", "dial tcp 192.0.2.11:443: i/o timeout", true},
		{"dial tcp 192.0.2.10:22: connect: connection refused", "dial tcp 192.0.2.10:2222: connect: connection refused", false},
		{"dial tcp [::1]:22: connect: connection refused", "dial tcp [::1]:2222: connect: connection refused", false},
		{"connect to address:2001:db8::1: refused", "connect to address:2001:db8::2: refused", true},
		{"ssh: connect to host 2001:db8::1: Connection refused", "ssh: connect to host 2001:db8::2: Connection refused", true},
		{"The remote hung up after 3 out of 5 attempts", "The remote hung up after 4 out of 5 attempts", true},
		{"The requested URL returned error: 502 (192.0.2.10)", "The requested URL returned error: 503 (192.0.2.10)", false},
	} {
		if got := reason(c.a) == reason(c.b); got != c.same {
			t.Errorf("%q and %q: same %v (%q, %q)", c.a, c.b, got, reason(c.a), reason(c.b))
		}
	}
}
