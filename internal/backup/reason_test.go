package backup

import "testing"

// Two failures are one outage when their sentences differ only in timings or byte counts; a status, a
// port or any other number makes them two.
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
	} {
		if got := reason(c.a) == reason(c.b); got != c.same {
			t.Errorf("%q and %q: same %v (%q, %q)", c.a, c.b, got, reason(c.a), reason(c.b))
		}
	}
}
