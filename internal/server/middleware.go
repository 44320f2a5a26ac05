package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/mcp"
)

// reqInfo travels with a request so the log line can name the connection (never the key).
type reqInfo struct {
	conn   string
	c      mcp.Conn // who is calling, once auth admitted the request
	server *sdk.Server
	build  func() *sdk.Server
	once   sync.Once
}

type infoKey struct{}

func info(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(infoKey{}).(*reqInfo)
	return ri
}

// serverFrom returns this request's MCP server, made once even though the SDK asks more than once.
func serverFrom(ctx context.Context) *sdk.Server {
	ri := info(ctx)
	if ri == nil || ri.build == nil {
		return nil
	}
	ri.once.Do(func() { ri.server = ri.build() })
	return ri.server
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (for the write deadline).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeDeadline ends a /mcp request whose answer is not written within MCPWriteTimeout: a client that never
// reads its answer loses the connection instead of holding it, and the answer, open. The call itself must
// be done a tenth of that sooner (the tool's context ends), so a write that cannot finish in time is abandoned
// whole, before it commits, and its answer still has time to say so.
func (s *Server) writeDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.MCPWriteTimeout)); err != nil {
			s.Logger.Debug("the write deadline could not be set", "err", err)
		}
		// The call applies it (mcp.WithDeadline), not the request's context: the SDK would stop waiting for
		// the call's answer at the same moment and send an empty one.
		done := time.Now().Add(s.MCPWriteTimeout - s.MCPWriteTimeout/10)
		next.ServeHTTP(w, r.WithContext(mcp.WithDeadline(r.Context(), done)))
	})
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// logRequests writes one line per request that was refused or failed (status 400 and up) or took longer
// than slowRequest; every other request only at debug level, so a busy connection costs no log writes.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &reqInfo{}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), infoKey{}, ri)))
		took := time.Since(start)
		level := slog.LevelDebug
		if sw.status >= http.StatusBadRequest || took > slowRequest {
			level = slog.LevelInfo
		}
		if !s.Logger.Enabled(r.Context(), level) {
			return
		}
		s.Logger.Log(r.Context(), level, "http", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"ms", float64(took.Microseconds())/1000, "conn", ri.conn, "remote", r.RemoteAddr)
	})
}

// slowRequest is how long a request may take before its line is logged at info level.
const slowRequest = time.Second

// checkHost refuses a Host or Origin that is neither loopback nor an allowed host: a page on another site
// that rebinds its DNS name to 127.0.0.1 still sends its own name, and is refused.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			http.Error(w, "Forbidden: this box does not answer to the host "+strconv.Quote(r.Host)+"; the owner adds it with box serve --allowed-host", http.StatusForbidden)
			return
		}
		// A page boxed in its sandboxed frame has an opaque origin, "null": it may call only its own
		// bridge, which answers by the page's token alone (docs/PAGES.md, "The bridge's routes").
		if o := r.Header.Get("Origin"); o != "" && !(o == "null" && strings.HasPrefix(r.URL.Path, "/api/sections/")) {
			u, err := url.Parse(o)
			if err != nil || !s.hostAllowed(u.Host) {
				http.Error(w, "Forbidden: requests from the web origin "+strconv.Quote(o)+" are not allowed", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) hostAllowed(hostport string) bool {
	host, port := hostport, "80"
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if s.isAllowedHost(host) { // the owner named it (a reverse proxy's), on whatever port it answers
		return true
	}
	ip, err := netip.ParseAddr(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || (err == nil && ip.IsLoopback()) {
		// This machine's names, on this server's own port only: another port is another local server,
		// whose pages would pass for the box's (a passkey asked on box.localhost:8000, a request sent
		// with the owner's cookie, which browsers share across a host's ports).
		own := s.ownPort()
		return own == "" || port == own
	}
	return false
}

// ownPort is the port the server listens on; "" when it has no listener yet.
func (s *Server) ownPort() string {
	if s.Listener == nil {
		return ""
	}
	_, p, err := net.SplitHostPort(s.Listener.Addr().String())
	if err != nil {
		return ""
	}
	return p
}

func (s *Server) isAllowedHost(host string) bool {
	for _, a := range s.AllowedHosts {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// viaProxy reports whether a request came through a configured reverse proxy: its Host is an allowed one
// and it came from this machine. The Host alone is the client's to choose: a client reaching the listener
// directly (box serve --addr 0.0.0.0) would pick its own X-Forwarded-For, and so its place in the limits.
func (s *Server) viaProxy(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	peer, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(peer)
	return err == nil && ip.IsLoopback() && s.isAllowedHost(strings.ToLower(host))
}

// BaseURL is the box's address as the client sees it: the configured public URL, else the request's. It
// is the OAuth issuer; the web UI's consent page uses the same.
func (s *Server) BaseURL(r *http.Request) string { return s.baseURL(r) }

func (s *Server) baseURL(r *http.Request) string {
	if s.PublicURL != "" {
		return strings.TrimSuffix(s.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil || (s.viaProxy(r) && r.Header.Get("X-Forwarded-Proto") == "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// remoteHost is where a call came from: the peer, or behind a configured proxy the address that proxy
// appended last (the entries before it are whatever the client sent, so they prove nothing).
func (s *Server) remoteHost(r *http.Request) string {
	if s.viaProxy(r) {
		fwd := strings.Split(r.Header.Get("X-Forwarded-For"), ",")
		if f := strings.TrimSpace(fwd[len(fwd)-1]); f != "" {
			return f
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// limitBody refuses an oversize body with 413 before anything reads it.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.MaxBody {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, -32600,
				"The request is larger than this box accepts ("+strconv.FormatInt(s.MaxBody, 10)+" bytes); send less at once.", nil)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.MaxBody)
		next.ServeHTTP(w, r)
	})
}

// refuseLocked answers every call to a locked box with 503 and JSON-RPC error -32000, data.locked true;
// a lock flag it cannot read answers the same (closed, never open).
func (s *Server) refuseLocked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		locked, err := s.State.Locked(r.Context())
		if err != nil {
			s.Logger.Error("the lock flag cannot be read; refusing", "err", err)
		}
		if locked || err != nil {
			e := mcp.LockedError(s.baseURL(r))
			writeRPCError(w, http.StatusServiceUnavailable, requestID(r), e.Code, e.Message, e.Data)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// auth admits a request with a valid mbx_ key or OAuth access token and makes its connection's MCP
// server; anything else is 401 with the RFC 9728 pointer a client follows to find how to get a token, and
// the scope to ask for (the default: reading and saving memory; messages and building are for the owner to
// tick on the consent page, not for every client to ask).
func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		metadata := func() string { // only a refusal needs it
			return `resource_metadata="` + s.baseURL(r) + `/.well-known/oauth-protected-resource/mcp", scope="` + grants.DefaultScope + `"`
		}
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			w.Header().Set("WWW-Authenticate", "Bearer "+metadata())
			writeRPCError(w, http.StatusUnauthorized, requestID(r), -32001,
				"This box needs a key or an OAuth token: connect with OAuth, or send Authorization: Bearer mbx_…; the owner makes a key with `box keys new` or in Settings → Other assistants.", nil)
			return
		}
		c, err := s.connection(r, token)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", `+metadata())
			msg := errs.Sentence(err)
			if msg == "" {
				msg = "This key or token could not be checked; try again."
				s.Logger.Error("auth: a credential could not be checked", "err", err)
			}
			writeRPCError(w, http.StatusUnauthorized, requestID(r), -32001, msg, nil)
			return
		}
		ri := info(r.Context())
		if ri == nil {
			ri = &reqInfo{}
			r = r.WithContext(context.WithValue(r.Context(), infoKey{}, ri))
		}
		ri.conn, ri.c = c.Who+" ("+c.KeyID+")", c
		ri.build = func() *sdk.Server { return s.MCP.ServerFor(c) }
		r = r.WithContext(context.WithValue(r.Context(), connKey{}, c.KeyID))
		next.ServeHTTP(w, r)
	})
}

// connection is who a bearer token is: an mbx_ key (keys) or an OAuth access token (grants).
func (s *Server) connection(r *http.Request, token string) (mcp.Conn, error) {
	host, client := s.remoteHost(r), clip(r.Header.Get("User-Agent"), 80)
	if strings.HasPrefix(token, grants.AccessPrefix) && s.Grants != nil {
		g, err := s.Grants.Verify(r.Context(), token, s.baseURL(r)+"/mcp")
		if err != nil {
			return mcp.Conn{}, err
		}
		return mcp.Conn{Who: g.Client, Host: host, KeyID: g.ID, Caps: g.Caps, Client: client}, nil
	}
	conn, err := s.Keys.Verify(r.Context(), token)
	if err != nil {
		return mcp.Conn{}, err
	}
	s.Keys.Touch(conn.ID, host, client)
	return mcp.Conn{Who: conn.Name, Host: host, KeyID: conn.ID, Caps: conn.Caps, Client: client}, nil
}

type connKey struct{}

// rateLimit lets each connection make Burst calls at once and Rate a second on average; past that, 429.
// A JSON-RPC batch (protocol 2025-03-26) is charged one call per message in it. A single request for a
// method the box does not serve is answered here with JSON-RPC -32601, whatever the protocol version.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := r.Context().Value(connKey{}).(string)
		m := peek(r)
		if m.trailing {
			writeRPCError(w, http.StatusBadRequest, nil, -32700,
				"The request holds more after its JSON value; send one request, or one batch, per POST.", nil)
			return
		}
		if m.calls > int(s.limiter.burst) && s.limiter.rate >= 0 {
			writeRPCError(w, http.StatusTooManyRequests, nil, -32000,
				"This batch holds "+strconv.Itoa(m.calls)+" calls, more than this box takes at once ("+strconv.Itoa(int(s.limiter.burst))+"); send fewer at a time.", nil)
			return
		}
		if wait, ok := s.limiter.take(id, time.Now(), m.calls); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			writeRPCError(w, http.StatusTooManyRequests, m.id, -32000,
				"This connection is calling the box faster than it allows; wait a few seconds and try again.", nil)
			return
		}
		if m.method != "" && !mcp.Serves(m.method) {
			if len(m.id) == 0 { // a notification gets no answer
				w.WriteHeader(http.StatusAccepted)
				return
			}
			e := mcp.MethodNotFound(m.method)
			writeRPCError(w, http.StatusOK, m.id, e.Code, e.Message, nil)
			return
		}
		if s.direct(w, r, m.body) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// message is what the middleware reads of a POST's JSON-RPC body.
type message struct {
	calls  int             // messages in it: a batch's length, else 1
	method string          // a single message's method ("" for a batch or what is not JSON-RPC)
	id     json.RawMessage // a single request's id
	body   []byte          // the whole body, when it could be read
	// trailing: something other than white space follows the body's first JSON value. The SDK's reader
	// takes the first value alone, so a batch and what follows it would be counted here as what it is not.
	trailing bool
}

// peek reads a POST's body (already bounded by limitBody) and hands it on whole to the next reader.
func peek(r *http.Request) message {
	m := message{calls: 1}
	if r.Body == nil || r.Method != http.MethodPost {
		return m
	}
	body, err := io.ReadAll(r.Body)
	rest := io.Reader(bytes.NewReader(body))
	if err != nil {
		rest = io.MultiReader(rest, errReader{err}) // the next reader meets the same error (413 for a body too large)
	}
	r.Body = readCloser{rest, r.Body}
	if err != nil {
		return m
	}
	m.body = body
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(body, &batch); err != nil {
			m.trailing = trailing(body)
		} else if len(batch) > 0 {
			m.calls = len(batch)
		}
		return m
	}
	var one struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &one); err != nil {
		m.trailing = trailing(body)
		return m
	}
	m.method, m.id = one.Method, one.ID
	if string(m.id) == "null" {
		m.id = nil
	}
	return m
}

// trailing reports whether body, which json.Unmarshal refused, is a JSON value and then more: what the
// SDK's reader, which stops after the first value, would take as the value alone.
func trailing(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	var first json.RawMessage
	return dec.Decode(&first) == nil && len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) > 0
}

type readCloser struct {
	io.Reader
	io.Closer
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// requestID is the JSON-RPC id of a single request body, restoring the body for whoever reads it next.
func requestID(r *http.Request) json.RawMessage {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return nil
	}
	return msg.ID
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, message string, data json.RawMessage) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": message}
	if len(data) > 0 {
		e["data"] = data
	}
	writeJSON(w, status, map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// limiter is a token bucket per connection.
type limiter struct {
	rate  float64
	burst float64
	mu    sync.Mutex
	b     map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(rate float64, burst int) *limiter {
	return &limiter{rate: rate, burst: float64(burst), b: map[string]*bucket{}}
}

// take spends n tokens of id's bucket; when too few are left it says how long until there are.
func (l *limiter) take(id string, now time.Time, n int) (time.Duration, bool) {
	if l.rate < 0 {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	bk := l.b[id]
	if bk == nil {
		bk = &bucket{tokens: l.burst, last: now}
		l.b[id] = bk
	}
	bk.tokens = min(l.burst, bk.tokens+now.Sub(bk.last).Seconds()*l.rate)
	bk.last = now
	if need := float64(n); bk.tokens < need {
		return time.Duration((need - bk.tokens) / l.rate * float64(time.Second)), false
	}
	bk.tokens -= float64(n)
	return 0, true
}

// realPeer gives the web UI the caller's address behind a configured proxy (the proxy's own entry), so its
// per-address limits count callers, not the proxy.
func (s *Server) realPeer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.viaProxy(r) {
			r2 := r.Clone(r.Context())
			r2.RemoteAddr = net.JoinHostPort(s.remoteHost(r), "0")
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}
