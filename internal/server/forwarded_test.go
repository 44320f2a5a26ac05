package server

import (
	"net/http/httptest"
	"testing"
)

// Behind the configured proxy the caller's address is the one the proxy appended last: the entries
// before it are whatever the client sent, so a client cannot choose the host its cards and diary show.
func TestRemoteHostTrustsOnlyTheProxysEntry(t *testing.T) {
	s := &Server{AllowedHosts: []string{"box.example.com"}}
	r := httptest.NewRequest("POST", "http://box.example.com/mcp", nil)
	r.RemoteAddr = "127.0.0.1:4242"
	r.Header.Set("X-Forwarded-For", "claude.ai, 203.0.113.9")
	if got := s.remoteHost(r); got != "203.0.113.9" {
		t.Errorf("remoteHost = %q, want the proxy's own entry 203.0.113.9", got)
	}
	direct := httptest.NewRequest("POST", "http://127.0.0.1:7317/mcp", nil)
	direct.RemoteAddr = "127.0.0.1:4242"
	direct.Header.Set("X-Forwarded-For", "claude.ai")
	if got := s.remoteHost(direct); got != "127.0.0.1" {
		t.Errorf("without the proxy, remoteHost = %q, want the peer", got)
	}
	// A client elsewhere that reaches the listener itself names the allowed host in vain: the proxy runs
	// on this machine.
	spoof := httptest.NewRequest("POST", "http://box.example.com/mcp", nil)
	spoof.RemoteAddr = "198.51.100.7:4242"
	spoof.Header.Set("X-Forwarded-For", "203.0.113.9")
	if got := s.remoteHost(spoof); got != "198.51.100.7" {
		t.Errorf("a direct client with the allowed host: remoteHost = %q, want its own address", got)
	}
}
