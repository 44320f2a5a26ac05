package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/mcptest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcp"
	"github.com/boxmem/box/internal/server"
	"github.com/boxmem/box/internal/state"
	"github.com/boxmem/box/internal/todo"
)

// env is a real box served on 127.0.0.1:0, composed by the composition root: real git, real state.db,
// real to-do files, the real memory.
type env struct {
	t     testing.TB
	root  string
	keys  *keys.Store
	state *state.Store
	base  string // http://127.0.0.1:port
}

func start(t testing.TB, tune ...func(*server.Server)) *env {
	t.Helper()
	a, err := app.Init(context.Background(), t.TempDir(), nil, "true", app.Options{})
	if err != nil {
		t.Fatalf("app.Init: %v", err)
	}
	return serve(t, a, tune...)
}

// serve serves the box of a, which it closes at the end of the test.
func serve(t testing.TB, a *app.App, tune ...func(*server.Server)) *env {
	t.Helper()
	t.Cleanup(func() { // after the server stops: cleanups run last first
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return serveAlso(t, a, tune...)
}

// serveAlso serves the box of a on another port, leaving a open.
func serveAlso(t testing.TB, a *app.App, tune ...func(*server.Server)) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{t: t, root: a.Root, keys: a.Keys, state: a.State}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.base = "http://" + ln.Addr().String()
	srv, _, err := a.Server(app.ServeOptions{Listener: ln})
	if err != nil {
		t.Fatal(err)
	}
	srv.Web = nil // these tests are about /mcp
	for _, f := range tune {
		f(srv)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return e
}

func (e *env) key(name string, caps keys.Caps) (keys.Connection, string) {
	e.t.Helper()
	c, k, err := e.keys.New(context.Background(), name, caps)
	if err != nil {
		e.t.Fatal(err)
	}
	return c, k
}

// bearer adds a key to every request, as claude mcp add --header does.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

// connect is the Go SDK client over Streamable HTTP with a key.
func (e *env) connect(key string) (*sdk.ClientSession, error) {
	t := &sdk.StreamableClientTransport{Endpoint: e.base + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}, Timeout: 20 * time.Second}}
	return sdk.NewClient(&sdk.Implementation{Name: "go-test", Version: "1"}, nil).Connect(context.Background(), t, nil)
}

func (e *env) mustConnect(key string) *sdk.ClientSession {
	e.t.Helper()
	cs, err := e.connect(key)
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t testing.TB, cs *sdk.ClientSession) map[string]bool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range res.Tools {
		names[tl.Name] = true
	}
	return names
}

// post sends one raw JSON-RPC request, with optional headers ("Host" sets the Host).
func (e *env) post(body string, headers map[string]string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const listTools = `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`

func TestNoKeyIs401WithResourceMetadata(t *testing.T) {
	e := start(t)
	resp := e.post(listTools, nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
	// The challenge names the scope to ask for: memory, never messages or building (the consent page offers those).
	want := `Bearer resource_metadata="` + e.base + `/.well-known/oauth-protected-resource/mcp", scope="memory.read memory.write"`
	if got := resp.Header.Get("WWW-Authenticate"); got != want {
		t.Fatalf("WWW-Authenticate %q, want %q", got, want)
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		r, err := http.Get(e.base + p)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource string   `json:"resource"`
			AS       []string `json:"authorization_servers"`
		}
		json.NewDecoder(r.Body).Decode(&doc)
		r.Body.Close()
		if doc.Resource != e.base+"/mcp" || len(doc.AS) != 1 || doc.AS[0] != e.base {
			t.Errorf("%s: %+v", p, doc)
		}
	}
	if _, err := e.connect("mbx_notakey"); err == nil {
		t.Fatal("an unknown key connected")
	}
}

func TestReadOnlyKeySeesNoWriteTools(t *testing.T) {
	e := start(t)
	_, key := e.key("Reader", keys.Caps{})
	cs := e.mustConnect(key)
	names := toolNames(t, cs)
	for _, n := range []string{"memory_overview", "memory_search", "memory_read_note", "memory_recent", "todos_list"} {
		if !names[n] {
			t.Errorf("%s missing from tools/list", n)
		}
	}
	for _, n := range []string{"memory_remember", "memory_forget", "todos_add", "todos_done", "whatsapp_recent", "propose_section"} {
		if names[n] {
			t.Errorf("%s listed for a read-only key", n)
		}
	}
	for _, tc := range []struct{ tool, box string }{
		{"memory_remember", "Memory"}, {"todos_add", "Memory"}, {"email_search", "My messages and mail"}, {"list_builds", "Can build for my box"},
	} {
		text, isErr := mcptest.Call(t, cs, tc.tool, map[string]any{"text": "Leo swims on Thursdays.", "query": "x"})
		if !isErr || !strings.Contains(text, "needs the "+tc.box+" checkbox") || !strings.Contains(text, "Settings → Other assistants") {
			t.Errorf("%s: isError=%v %q", tc.tool, isErr, text)
		}
	}
	if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, "This connection has: Reading memory.") || !strings.Contains(ins, "Not given: Memory") {
		t.Errorf("instructions do not name the checkboxes:\n%s", ins)
	}
}

func TestTodosOverMCPAreCommittedAsTheKey(t *testing.T) {
	e := start(t)
	_, key := e.key("Claude Code", keys.Caps{Memory: true})
	cs := e.mustConnect(key)
	text, isErr := mcptest.Call(t, cs, "todos_add", map[string]any{"text": "Book the dentist for Leo", "list": "family"})
	if isErr {
		t.Fatalf("todos_add: %s", text)
	}
	var item todo.Item
	json.Unmarshal([]byte(text), &item)
	if item.ID == "" {
		t.Fatalf("no id in %s", text)
	}
	text, _ = mcptest.Call(t, cs, "todos_list", nil)
	if !strings.Contains(text, "Book the dentist for Leo") {
		t.Fatalf("todos_list: %s", text)
	}
	if text, isErr := mcptest.Call(t, cs, "todos_done", map[string]any{"id": item.ID}); isErr || !strings.Contains(text, `"done":true`) {
		t.Fatalf("todos_done: %s", text)
	}
	log, err := exec.Command("git", "-C", e.root, "log", "-2", "--format=%B").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Box-Actor: Claude Code", "Box-Via: mcp", "Box-Trust: outside"} {
		if !bytes.Contains(log, []byte(want)) {
			t.Errorf("commit lacks %q:\n%s", want, log)
		}
	}
	if text, isErr := mcptest.Call(t, cs, "todos_add", map[string]any{"text": "my password is hunter22"}); !isErr {
		t.Errorf("a secret was added as a to-do: %s", text)
	}
}

func TestRevokedKeyIsRefusedOnTheNextCall(t *testing.T) {
	e := start(t)
	conn, key := e.key("Soon gone", keys.Caps{})
	cs := e.mustConnect(key)
	if _, isErr := mcptest.Call(t, cs, "todos_list", nil); isErr {
		t.Fatal("first call refused")
	}
	if _, err := e.keys.Revoke(context.Background(), conn.ID); err != nil {
		t.Fatal(err)
	}
	_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "todos_list"})
	if err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("call after revoke: %v", err)
	}
}

func TestExpiredKeyIsRefusedWithASentence(t *testing.T) {
	e := start(t)
	pastState, err := state.Open(e.root, state.Options{Now: func() time.Time { return time.Now().AddDate(0, -7, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	past := keys.NewStore(pastState)
	_, key, err := past.New(context.Background(), "Old", keys.Caps{})
	if cerr := errors.Join(past.Close(), pastState.Close()); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	resp := e.post(listTools, map[string]string{"Authorization": "Bearer " + key})
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "This key expired on") ||
		!strings.Contains(string(body), "box keys new") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestFrozenBoxRefusesEveryTool(t *testing.T) {
	e := start(t)
	_, key := e.key("Claude", keys.Caps{Memory: true})
	cs := e.mustConnect(key)
	e.state.SetFrozen(context.Background(), true)
	for _, tool := range []string{"memory_search", "todos_list", "todos_add"} {
		text, isErr := mcptest.Call(t, cs, tool, map[string]any{"words": "leo", "text": "x"})
		if !isErr || text != mcp.FrozenSentence {
			t.Errorf("%s on a frozen box: isError=%v %q", tool, isErr, text)
		}
	}
	e.state.SetFrozen(context.Background(), false)
	if text, isErr := mcptest.Call(t, cs, "todos_list", nil); isErr {
		t.Errorf("after unfreezing: %s", text)
	}
}

func TestLockedBoxAnswers503(t *testing.T) {
	e := start(t)
	_, key := e.key("Claude", keys.Caps{})
	e.state.SetFlag(context.Background(), state.FlagLocked, true)
	resp := e.post(listTools, map[string]string{"Authorization": "Bearer " + key})
	var body struct {
		ID    int `json:"id"`
		Error struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    map[string]bool `json:"data"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusServiceUnavailable || body.Error.Code != -32000 || !body.Error.Data["locked"] || body.ID != 7 ||
		body.Error.Message != "This box is locked. Ask its owner to open it with their passkey at "+e.base+"." {
		t.Fatalf("%d %+v", resp.StatusCode, body)
	}
	// The SDK client treats 503 as transient and does not read the body; it must still fail, not hang.
	if _, err := e.connect(key); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Fatalf("the Go client connected to a locked box: %v", err)
	}
}

func TestHostAndOriginChecks(t *testing.T) {
	e := start(t, func(s *server.Server) { s.AllowedHosts = []string{"box.example.com"} })
	port := e.base[strings.LastIndex(e.base, ":")+1:]
	other := "7317"
	if port == other {
		other = "7318"
	}
	for _, tc := range []struct {
		headers map[string]string
		want    int
	}{
		{map[string]string{"Host": "evil.example"}, http.StatusForbidden},                    // DNS rebinding: the attacker's own name
		{map[string]string{"Host": "evil.example:7317"}, http.StatusForbidden},               // with a port
		{map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},           // a web page calling across origins
		{map[string]string{"Host": "box.example.com"}, http.StatusUnauthorized},              // the reverse proxy's name gets in (then needs a key)
		{map[string]string{"Host": "localhost:" + port}, http.StatusUnauthorized},            // loopback names
		{map[string]string{"Host": "box.localhost:" + port}, http.StatusUnauthorized},        // the owner's own name
		{map[string]string{"Origin": "http://127.0.0.1:" + port}, http.StatusUnauthorized},   // a loopback origin
		{map[string]string{"Host": "[::1]:" + port, "Origin": "null"}, http.StatusForbidden}, // an opaque origin
		// Another port of this machine is another server: its pages are not the box's, though browsers
		// send them the box's cookie, and a passkey asked there would pass for the box's.
		{map[string]string{"Host": "box.localhost:" + other}, http.StatusForbidden},
		{map[string]string{"Host": "localhost"}, http.StatusForbidden},
		{map[string]string{"Origin": "http://localhost:" + other}, http.StatusForbidden},
	} {
		if got := e.post(listTools, tc.headers).StatusCode; got != tc.want {
			t.Errorf("%v: %d, want %d", tc.headers, got, tc.want)
		}
	}
}

func TestOversizeBodyIsRefused(t *testing.T) {
	e := start(t, func(s *server.Server) { s.MaxBody = 4096 })
	_, key := e.key("Claude", keys.Caps{Memory: true})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"todos_add","arguments":{"text":"` + strings.Repeat("a", 5000) + `"}}}`
	if got := e.post(big, map[string]string{"Authorization": "Bearer " + key}).StatusCode; got != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", got)
	}
}

func TestRateLimitPerConnection(t *testing.T) {
	e := start(t, func(s *server.Server) { s.Rate, s.Burst = 0.01, 3 })
	_, k1 := e.key("Busy", keys.Caps{})
	_, k2 := e.key("Calm", keys.Caps{})
	codes := []int{}
	for range 4 {
		codes = append(codes, e.post(listTools, map[string]string{"Authorization": "Bearer " + k1}).StatusCode)
	}
	if codes[2] != http.StatusOK || codes[3] != http.StatusTooManyRequests {
		t.Fatalf("codes %v, want the 4th to be 429", codes)
	}
	if got := e.post(listTools, map[string]string{"Authorization": "Bearer " + k2}).StatusCode; got != http.StatusOK {
		t.Fatalf("another connection was limited too: %d", got)
	}
}

func TestHealthz(t *testing.T) {
	e := start(t)
	r, err := http.Get(e.base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var h struct {
		OK       bool   `json:"ok"`
		Box      string `json:"box"`
		Indexing *bool  `json:"indexing"`
	}
	json.NewDecoder(r.Body).Decode(&h)
	if !h.OK || h.Box == "" || h.Indexing == nil {
		t.Fatalf("%+v", h)
	}
}

func TestLastUseIsRecorded(t *testing.T) {
	e := start(t)
	conn, key := e.key("Claude", keys.Caps{})
	e.post(listTools, map[string]string{"Authorization": "Bearer " + key, "User-Agent": "claude-code/2.1"})
	list, err := e.keys.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != conn.ID || list[0].LastUsed.IsZero() || list[0].LastHost != "127.0.0.1" || list[0].LastClient != "claude-code/2.1" {
		t.Fatalf("%+v", list)
	}
}

// TestMemoryToolsOverHTTP is the round trip an assistant makes: remember, find it at once, see who wrote
// it, forget it.
func TestMemoryToolsOverHTTP(t *testing.T) {
	e := start(t)
	_, key := e.key("ChatGPT", keys.Caps{Memory: true})
	cs := e.mustConnect(key)
	if text, isErr := mcptest.Call(t, cs, "memory_remember", map[string]any{"text": "Leo has swim practice on Thursdays at 5:30."}); isErr {
		t.Fatalf("remember: %s", text)
	}
	text, isErr := mcptest.Call(t, cs, "memory_search", map[string]any{"words": "leo swim"})
	if isErr || !strings.Contains(text, "<outside_content>") || !strings.Contains(text, "swim") {
		t.Fatalf("a fact saved a second ago is not found, fenced as outside: %s", text)
	}
	if text, _ := mcptest.Call(t, cs, "memory_recent", nil); !strings.Contains(text, "ChatGPT") {
		t.Errorf("recent does not say who: %s", text)
	}
	if text, isErr := mcptest.Call(t, cs, "memory_overview", nil); isErr {
		t.Errorf("overview: %s", text)
	}
	if text, isErr := mcptest.Call(t, cs, "memory_remember", map[string]any{"text": "My password is hunter22"}); !isErr {
		t.Errorf("a secret was remembered: %s", text)
	}
	if text, isErr := mcptest.Call(t, cs, "memory_forget", map[string]any{"words": "leo swim thursdays"}); isErr || !strings.Contains(text, `"removed":1`) {
		t.Errorf("forget: %s", text)
	}
	log, _ := exec.Command("git", "-C", e.root, "log", "--format=%B").CombinedOutput()
	if !strings.Contains(string(log), "Box-Actor: ChatGPT") || !strings.Contains(string(log), "Box-Trust: outside") {
		t.Errorf("the memory writes are not recorded under the key:\n%s", log)
	}
}

// BenchmarkToolsCallHTTP is one authenticated tools/call over Streamable HTTP: key check, the per-request
// MCP server (made per connection's checkboxes), the tool and its JSON.
func BenchmarkToolsCallHTTP(b *testing.B) {
	e := start(b, func(s *server.Server) { s.Rate = -1 })
	_, key := e.key("bench", keys.Caps{Memory: true})
	cs := e.mustConnect(key)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "todos_list"}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBatchesAreChargedPerCall: under protocol 2025-03-26 one POST may carry a JSON-RPC batch; each call in
// it spends a token, and a batch larger than the burst is refused whole.
func TestBatchesAreChargedPerCall(t *testing.T) {
	e := start(t, func(s *server.Server) { s.Rate, s.Burst = 0.01, 5 })
	_, key := e.key("Batcher", keys.Caps{})
	h := map[string]string{"Authorization": "Bearer " + key, "Mcp-Protocol-Version": "2025-03-26"}
	batch := func(n int) string {
		calls := make([]string, n)
		for i := range calls {
			calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, i+1)
		}
		return " [" + strings.Join(calls, ",") + "]"
	}
	if r := e.post(batch(4), h); r.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(r.Body)
		t.Fatalf("a batch of 4 within a burst of 5: %d %s", r.StatusCode, body)
	}
	if got := e.post(batch(4), h).StatusCode; got != http.StatusTooManyRequests {
		t.Fatalf("a second batch of 4 with 1 call left: %d, want 429", got)
	}
	_, other := e.key("Other", keys.Caps{})
	r := e.post(batch(6), map[string]string{"Authorization": "Bearer " + other, "Mcp-Protocol-Version": "2025-03-26"})
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "holds 6 calls") {
		t.Fatalf("a batch larger than the burst: %d %s", r.StatusCode, body)
	}
	// Bytes after the batch (which the SDK's reader leaves unread) do not make it one call: the POST is
	// refused whole, and nothing in it runs.
	_, third := e.key("Third", keys.Caps{})
	for _, tail := range []string{"x", " {}", "]", "[]"} {
		r = e.post(batch(6)+tail, map[string]string{"Authorization": "Bearer " + third, "Mcp-Protocol-Version": "2025-03-26"})
		body, _ = io.ReadAll(r.Body)
		if r.StatusCode != http.StatusBadRequest || strings.Contains(string(body), `"tools"`) {
			t.Fatalf("a batch of 6 and %q: %d %.200s", tail, r.StatusCode, body)
		}
	}
	r = e.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}} x`, map[string]string{"Authorization": "Bearer " + third})
	if body, _ = io.ReadAll(r.Body); r.StatusCode != http.StatusBadRequest || strings.Contains(string(body), `"tools"`) {
		t.Fatalf("one request and trailing bytes: %d %.200s", r.StatusCode, body)
	}
}

// TestOnlyRefusalsAreLogged: a call that succeeds writes no log line at info level (a busy connection costs
// no log writes); a refused one does, naming no key.
func TestOnlyRefusalsAreLogged(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	e := start(t, func(s *server.Server) {
		s.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	_, key := e.key("Quiet", keys.Caps{})
	if got := e.post(listTools, map[string]string{"Authorization": "Bearer " + key}).StatusCode; got != http.StatusOK {
		t.Fatalf("status %d", got)
	}
	mu.Lock()
	if strings.Contains(logs.String(), "path=/mcp") {
		t.Errorf("a successful call was logged at info level:\n%s", logs.String())
	}
	mu.Unlock()
	e.post(listTools, map[string]string{"Authorization": "Bearer mbx_nope"})
	read := func() string { mu.Lock(); defer mu.Unlock(); return logs.String() }
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(read(), "status=401") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // the line is written once the answer is sent
	}
	if out := read(); !strings.Contains(out, "status=401") || strings.Contains(out, "mbx_nope") {
		t.Errorf("a refused call was not logged, or its key was:\n%s", out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestUnknownMethodIsMethodNotFound: over HTTP, as over stdio, a method the box does not serve is JSON-RPC
// -32601 in a JSON answer (not an HTTP 400 in plain text), for every protocol version.
func TestUnknownMethodIsMethodNotFound(t *testing.T) {
	e := start(t)
	_, key := e.key("Probe", keys.Caps{})
	for _, v := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		for _, method := range []string{"foo/bar", "prompts/list", "resources/list", "logging/setLevel"} {
			r := e.post(`{"jsonrpc":"2.0","id":9,"method":"`+method+`","params":{}}`, map[string]string{"Authorization": "Bearer " + key, "Mcp-Protocol-Version": v})
			var got struct {
				ID    int
				Error struct{ Code int }
			}
			body, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(body, &got); err != nil || got.ID != 9 || got.Error.Code != -32601 {
				t.Errorf("%s under %s: HTTP %d %s", method, v, r.StatusCode, body)
			}
		}
	}
}
