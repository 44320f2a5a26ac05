// Package server composes the box's HTTP surface: /mcp, /healthz and the protected-resource documents, wrapped
// in Host/Origin checks, size and rate limits, key auth and logs. It holds no rules: keys, mcp and memory do.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/boxmem/box/internal/egress"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/httpjson"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcp"
	"github.com/boxmem/box/internal/oauth"
	"github.com/boxmem/box/internal/state"
)

// DefaultAddr is where box serve listens unless told otherwise: loopback only.
const DefaultAddr = "127.0.0.1:7317"

// The per-connection limit: sized so a busy client (the conformance suite unpaced, 16 concurrent writers
// on one SDK client) never meets it, while a flood of thousands of calls a second is stopped within one.
const (
	DefaultRate  = 200 // calls a second, sustained
	DefaultBurst = 400 // calls at once
)

// DefaultMCPWriteTimeout bounds one /mcp request from its headers to the last byte of its answer.
const DefaultMCPWriteTimeout = time.Minute

// Server is one box's HTTP server. Zero values are sensible defaults; MCP, Keys and State are required.
type Server struct {
	Addr         string       // listen address; DefaultAddr when empty; port 0 picks one
	Listener     net.Listener // used instead of Addr when set
	AllowedHosts []string     // Host names a reverse proxy may send, besides loopback names
	MCP          *mcp.Service
	Web          http.Handler // the owner's web UI, mounted at /; nil serves none
	Keys         *keys.Store
	State        *state.Store // the frozen and locked flags
	// Grants is the OAuth state; with it the box is its own authorization server (package oauth) and
	// /mcp takes OAuth access tokens besides mbx_ keys.
	Grants *grants.Store
	// Gate decides the access switch for new OAuth connections; required with Grants.
	Gate *gate.Gate
	// Fetch reaches OAuth clients' metadata documents; nil: the public internet under egress's rules.
	Fetch *egress.Client
	// OwnerName is the name the owner's passkey lives on for a box reached on this machine
	// (box.localhost): where the consent page opens; "": localhost.
	OwnerName string
	// PublicURL is the box's address as clients see it (https://box.example.com behind a reverse proxy):
	// the OAuth issuer, and with /mcp the resource. Empty: the address each request came to.
	PublicURL string
	BoxID     string
	Version   string
	// Indexing reports whether the search index is still catching up; nil means it never is.
	Indexing func(ctx context.Context) bool
	Logger   *slog.Logger
	MaxBody  int64 // largest request body; 1 MiB when zero
	// MCPWriteTimeout is how long one /mcp request may take, answer written included: a client that stops
	// reading cannot hold the box's memory or a connection past it. DefaultMCPWriteTimeout when zero.
	MCPWriteTimeout time.Duration
	Rate            float64 // calls per second one connection may make on average; DefaultRate when zero, negative for no limit
	Burst           int     // calls one connection may make at once; DefaultBurst when zero
	// OnListen is called with the bound address once the server accepts connections.
	OnListen func(net.Addr)

	limiter *limiter
	sdkOnly bool         // every tools/call through the SDK's session, never direct (tests compare the two)
	directs atomic.Int64 // tools/calls answered directly
}

func (s *Server) defaults() {
	if s.Addr == "" {
		s.Addr = DefaultAddr
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.MaxBody == 0 {
		s.MaxBody = 1 << 20
	}
	if s.Rate == 0 {
		s.Rate = DefaultRate
	}
	if s.MCPWriteTimeout == 0 {
		s.MCPWriteTimeout = DefaultMCPWriteTimeout
	}
	if s.Burst == 0 {
		s.Burst = DefaultBurst
	}
	s.limiter = newLimiter(s.Rate, s.Burst)
}

// Handler is the whole HTTP surface, for Run and for tests.
func (s *Server) Handler() http.Handler {
	s.defaults()
	streamable := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server { return serverFrom(r.Context()) },
		&sdk.StreamableHTTPOptions{
			Stateless:    true,
			JSONResponse: true,
			// The Host check below does the SDK's loopback check and also lets a configured reverse proxy in.
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        s.MaxBody,
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.writeDeadline(s.limitBody(s.refuseLocked(s.auth(s.rateLimit(streamable))))))
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", s.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/{path...}", s.resourceMetadata) // a public URL with a path
	if s.Grants != nil {
		oauth.New(oauth.Config{Grants: s.Grants, Gate: s.Gate, Issuer: s.baseURL, Peer: s.remoteHost, Fetch: s.Fetch, Logger: s.Logger, OwnerName: s.OwnerName,
			OwnHosts: s.ownHosts()}).Mount(mux)
	}
	if s.Web != nil {
		mux.Handle("/", s.realPeer(s.Web)) // every other path: the web UI checks its own sessions and CSRF
	}
	return s.logRequests(s.checkHost(mux))
}

// ownHosts are the names the box answers to besides the request's own: the allowed hosts and the public
// address's host.
func (s *Server) ownHosts() []string {
	hosts := slices.Clone(s.AllowedHosts)
	if u, err := url.Parse(s.PublicURL); err == nil && u.Hostname() != "" {
		hosts = append(hosts, u.Hostname())
	}
	return hosts
}

// Run serves until ctx is done, then shuts down gracefully, letting calls in flight finish.
func (s *Server) Run(ctx context.Context) error {
	h := s.Handler()
	ln := s.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.Addr); err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s.Logger.Info("serving", "addr", ln.Addr().String(), "box", s.BoxID)
	if s.OnListen != nil {
		s.OnListen(ln.Addr())
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(shut)
	if e := <-served; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	s.Logger.Info("stopped", "addr", ln.Addr().String())
	return err
}

// health is what /healthz answers.
type health struct {
	OK       bool   `json:"ok"`
	Box      string `json:"box"`
	Version  string `json:"version"`
	Indexing bool   `json:"indexing"`
	Frozen   bool   `json:"frozen"`
	Locked   bool   `json:"locked"`
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	h := health{OK: true, Box: s.BoxID, Version: s.Version, Indexing: s.Indexing != nil && s.Indexing(r.Context())}
	var ferr, lerr error
	h.Frozen, ferr = s.State.Frozen(r.Context())
	h.Locked, lerr = s.State.Locked(r.Context())
	if err := errors.Join(ferr, lerr); err != nil {
		s.Logger.Error("healthz: the flags cannot be read", "err", err)
		h.OK = false
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

// resourceMetadata is the RFC 9728 protected-resource document: the resource is /mcp, and the box is
// its own authorization server.
func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	base := s.baseURL(r)
	writeJSON(w, http.StatusOK, &oauthex.ProtectedResourceMetadata{
		Resource:               base + "/mcp",
		AuthorizationServers:   []string{base},
		ScopesSupported:        grants.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Box",
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v, false) }
