package server

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequestID feeds any body to the JSON-RPC id reader: it never panics, returns valid JSON or nothing,
// and leaves the body whole for the next reader.
func FuzzRequestID(f *testing.F) {
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		id := requestID(r)
		if len(id) > 0 && !json.Valid(id) {
			t.Fatalf("id %q is not JSON", id)
		}
		rest, err := io.ReadAll(r.Body)
		if err != nil || string(rest) != body {
			t.Fatalf("body not restored: %q", rest)
		}
	})
}
