package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/boxmem/box/internal/mcptest"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/keys"
)

// repoRoot is the module root, for scripts/ and clients/.
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// boxBinary builds cmd/box once per test run.
func boxBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "box-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "box")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/boxmem/box/cmd/box").CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v\n%s", binErr, binPath)
	}
	return binPath
}

// node returns scripts/node.sh, which brings Node 22+ and the client packages. Only BOX_SKIP_NODE=1 skips,
// loudly; CI must run these.
func node(t testing.TB) string {
	t.Helper()
	if os.Getenv("BOX_SKIP_NODE") == "1" {
		t.Skip("SKIPPED: BOX_SKIP_NODE=1 — the TypeScript SDK, Inspector and conformance clients did not run")
	}
	return filepath.Join(repoRoot(t), "scripts", "node.sh")
}

func runNode(t testing.TB, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "MCP_AUTO_OPEN_ENABLED=false", "CI=true")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Logf("stderr of %v:\n%s", args, stderr.String())
	}
	return string(out), err
}

func TestStdioWithTheBuiltBinary(t *testing.T) {
	bin := boxBinary(t)
	a, err := app.Init(context.Background(), t.TempDir(), nil, "true", app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := a.Root
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(os.Environ(), "BOX_DIR="+root)
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "Codex", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := toolNames(t, cs)
	for _, n := range []string{"memory_remember", "todos_add"} {
		if !names[n] {
			t.Errorf("%s not listed over stdio, which has every checkbox", n)
		}
	}
	if names["whatsapp_recent"] || !strings.Contains(cs.InitializeResult().Instructions, "no message or mail account is plugged") {
		t.Error("over stdio a message tool is listed though no account is plugged in, or the instructions do not say so")
	}
	if text, isErr := mcptest.Call(t, cs, "todos_add", map[string]any{"text": "Renew the passport"}); isErr {
		t.Fatal(text)
	}
	log, _ := exec.Command("git", "-C", root, "log", "-1", "--format=%B").CombinedOutput()
	for _, want := range []string{"Box-Actor: Codex", "Box-Via: mcp", "Box-Trust: outside"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("commit lacks %q:\n%s", want, log)
		}
	}
}

func TestTypeScriptSDKClient(t *testing.T) {
	e := start(t)
	_, key := e.key("TS", keys.Caps{Memory: true})
	out, err := runNode(t, 90*time.Second, "node", filepath.Join(repoRoot(t), "clients", "ts-client.cjs"), e.base+"/mcp", key)
	if err != nil {
		t.Fatalf("ts-client: %v\n%s", err, out)
	}
	var got struct {
		Server       struct{ Name string }
		Instructions string
		Tools        []string
		Add, List    struct {
			IsError bool
			Text    string
		}
		Denied struct {
			IsError bool
			Text    string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Server.Name != "box" || len(got.Tools) != 9 || !strings.Contains(got.Instructions, "Reading memory, Memory") {
		t.Errorf("server %+v, tools %v", got.Server, got.Tools)
	}
	if got.Add.IsError || !strings.Contains(got.List.Text, "Water the plants") {
		t.Errorf("add %+v list %+v", got.Add, got.List)
	}
	if !got.Denied.IsError || !strings.Contains(got.Denied.Text, "Can build for my box") {
		t.Errorf("denied %+v", got.Denied)
	}
}

func TestInspectorCLIListsTools(t *testing.T) {
	e := start(t)
	_, key := e.key("Inspector", keys.Caps{})
	out, err := runNode(t, 90*time.Second, "mcp-inspector", "--cli", e.base+"/mcp", "--transport", "http",
		"--header", "Authorization: Bearer "+key, "--method", "tools/list")
	if err != nil {
		t.Fatalf("inspector: %v\n%s", err, out)
	}
	var got struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Tools) != 5 {
		t.Fatalf("a read-only key should list the 5 reading tools: %s", out)
	}
}

// TestConformance runs @modelcontextprotocol/conformance's server scenarios against /mcp through a loopback
// proxy that adds the key (the suite cannot send one) and keeps the Host and Origin it was sent.
func TestConformance(t *testing.T) {
	// The suite fires its scenarios as fast as it can through one key, unpaced, against the default limit.
	e := start(t)
	_, key := e.key("Conformance", keys.Caps{Memory: true})
	ln := serveProxy(t, newKeyProxy(t, e.base, key))
	expected := filepath.Join(repoRoot(t), "internal", "mcp", "testdata", "conformance-expected-failures.yml")
	results := t.TempDir()
	args := []string{"conformance", "server", "--url", "http://" + ln.Addr().String() + "/mcp", "--expected-failures", expected,
		"--output-dir", results}
	if s := os.Getenv("BOX_CONFORMANCE_ARGS"); s != "" {
		args = append(args, strings.Fields(s)...)
	}
	out, err := runNode(t, 150*time.Second, args...)
	t.Logf("conformance:\n%s", tail(out, 60))
	if err != nil {
		logFailedChecks(t, results)
		t.Fatalf("conformance: %v (scenarios outside %s failed, or an expected failure now passes)", err, expected)
	}
}

// keyProxy forwards every request to a box with its key added, keeping the Host and Origin it was sent.
type keyProxy struct{ httputil.ReverseProxy }

func newKeyProxy(t testing.TB, base, key string) *keyProxy {
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p := &keyProxy{}
	p.Rewrite = func(r *httputil.ProxyRequest) {
		// The Host and Origin the client sent (the conformance suite checks the box's answers to them), on
		// the box's port where they name the proxy's: another port of this machine is another server to the
		// box, and the proxy stands for the box.
		r.SetURL(target)
		r.Out.Host = r.In.Host
		if la, ok := r.In.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			_, own, _ := net.SplitHostPort(la.String())
			swap := func(v string) string {
				if rest, ok := strings.CutSuffix(v, ":"+own); ok {
					return rest + ":" + target.Port()
				}
				return v
			}
			r.Out.Host = swap(r.In.Host)
			if o := r.In.Header.Get("Origin"); o != "" {
				r.Out.Header.Set("Origin", swap(o))
			}
		}
		r.Out.Header.Set("Authorization", "Bearer "+key)
	}
	return p
}

// ServeHTTP reads the request's body whole before forwarding it. Streamed, the body would be read once more
// by the transport after it was sent (to check it ended), and the server closes a body as soon as the answer
// starts going out: a transport slow to make that read meets a closed body and drops the connection to the
// box mid-answer.
func (p *keyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "the test's proxy could not read the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	p.ReverseProxy.ServeHTTP(w, r)
}

// TestKeyProxyAnswersWholeWhenItsRequestIsReadLate holds TestConformance's proxy to forwarding a long answer
// whole when its transport is slow to finish sending the request, as on a loaded machine: the transport's
// last read of the request's body (after the declared length, to check it ended) waits until the answer has
// started going out, by events, not by time.
func TestKeyProxyAnswersWholeWhenItsRequestIsReadLate(t *testing.T) {
	e := start(t)
	_, key := e.key("Proxy", keys.Caps{Memory: true})
	p := newKeyProxy(t, e.base, key)
	connClosed := make(chan struct{})
	var once sync.Once
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return closeSignal{c, func() { once.Do(func() { close(connClosed) }) }}, nil
	}}
	t.Cleanup(tr.CloseIdleConnections)
	p.Transport = tr
	started, lateRead := make(chan struct{}), make(chan struct{})
	ln := serveProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = &lateBody{ReadCloser: r.Body, wait: started, reading: lateRead}
		p.ServeHTTP(&answerStart{ResponseWriter: w, started: started, lateRead: lateRead, connClosed: connClosed}, r)
	}))
	resp, err := http.DefaultClient.Do(mcptest.Post("http://"+ln.Addr().String()+"/mcp", listTools))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the answer was cut after %d bytes: %v", len(body), err)
	}
	var got struct {
		Result struct{ Tools []struct{ Name string } }
	}
	if err := json.Unmarshal(body, &got); err != nil || len(got.Result.Tools) != 9 {
		t.Fatalf("tools/list through the proxy: %v\n%s", err, tail(string(body), 5))
	}
}

// lateBody is a request body whose first read after its end waits until wait is closed (a second at most).
type lateBody struct {
	io.ReadCloser
	wait, reading chan struct{}
	ended, late   bool
}

func (b *lateBody) Read(p []byte) (int, error) {
	if b.ended && !b.late {
		b.late = true
		close(b.reading)
		select {
		case <-b.wait:
		case <-time.After(time.Second):
		}
	}
	n, err := b.ReadCloser.Read(p)
	b.ended = b.ended || err == io.EOF
	return n, err
}

// answerStart closes started once more of the answer was written than the server buffers (2 KiB: its
// headers are on the wire and the request's body is closed); when a late read of the request was waiting
// for that, it holds the write until the connection to the box is closed (a second at most).
type answerStart struct {
	http.ResponseWriter
	started, lateRead, connClosed chan struct{}
	n                             int
}

func (w *answerStart) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if w.n += n; w.n > 2048 && w.started != nil {
		close(w.started)
		w.started = nil
		select {
		case <-w.lateRead:
			select {
			case <-w.connClosed:
			case <-time.After(time.Second):
			}
		default:
		}
	}
	return n, err
}

func (w *answerStart) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// closeSignal is a connection that calls closed when it is closed.
type closeSignal struct {
	net.Conn
	closed func()
}

func (c closeSignal) Close() error { c.closed(); return c.Conn.Close() }

// serveProxy serves h on 127.0.0.1:0 until the test ends.
func serveProxy(t testing.TB, h http.Handler) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ps := &http.Server{Handler: h}
	go ps.Serve(ln)
	t.Cleanup(func() { ps.Close() })
	return ln
}

// logFailedChecks logs every failed check the suite saved under dir (one checks.json per scenario), with
// its message: the summary above names only the scenario.
func logFailedChecks(t *testing.T, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*", "checks.json"))
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Logf("%s: %v", f, err)
			continue
		}
		var checks []struct {
			ID, Status, ErrorMessage string
			Details                  json.RawMessage
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Logf("%s: %v", f, err)
			continue
		}
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "WARNING" { // the baseline check fails on either
				t.Logf("%s: %s: %s %s", filepath.Base(filepath.Dir(f)), c.ID, c.ErrorMessage, tail(string(c.Details), 5))
			}
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestServeAndKeysCLI drives the built binary as the owner would: box serve makes the box it does not find,
// prints where and the ready line; box keys new/list/revoke work against the running server.
func TestServeAndKeysCLI(t *testing.T) {
	bin := boxBinary(t)
	dir := filepath.Join(t.TempDir(), "mybox")
	env := append(os.Environ(), "BOX_DIR="+dir)
	serve := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	serve.Env = env
	var stderr strings.Builder
	serve.Stderr = &stderr
	stdout, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	var key string // never in the server's log
	defer func() {
		serve.Process.Signal(os.Interrupt)
		if err := serve.Wait(); err != nil {
			t.Errorf("box serve did not stop cleanly: %v\n%s", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "a new one was made at "+dir) {
			t.Errorf("box serve did not say where it made the box:\n%s", stderr.String())
		}
		if key != "" && strings.Contains(stderr.String(), key[4:]) {
			t.Error("the server logged the key")
		}
	}()
	rd := bufio.NewReader(stdout)
	var lines []string
	for range 2 {
		l, _ := rd.ReadString('\n')
		lines = append(lines, strings.TrimSpace(l))
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "ready: claude mcp add --transport http box http://127.0.0.1:") ||
		!strings.HasSuffix(lines[1], `/mcp --header "Authorization: Bearer <key>"`) {
		t.Fatalf("stdout: %q", lines)
	}
	url := strings.Fields(lines[1])[7]
	if _, err := box.ReadMarker(dir); err != nil {
		t.Fatalf("no box was made at BOX_DIR: %v", err)
	}
	boxCLI := func(args ...string) []byte {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("box %v: %v", args, err)
		}
		return out
	}
	var made struct {
		ID, Key string
		Caps    keys.Caps
	}
	json.Unmarshal(boxCLI("keys", "new", "--name", "Claude Code", "--memory", "--json"), &made)
	if !strings.HasPrefix(made.Key, "mbx_") || !made.Caps.Memory {
		t.Fatalf("keys new: %+v", made)
	}
	key = made.Key
	tr := &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: bearer{made.Key, http.DefaultTransport}}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cli-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect with the new key: %v", err)
	}
	defer cs.Close()
	if !toolNames(t, cs)["memory_remember"] {
		t.Error("a Memory key does not see memory_remember")
	}
	var list struct{ Keys []keys.Connection }
	json.Unmarshal(boxCLI("keys", "list", "--json"), &list)
	if len(list.Keys) != 1 || list.Keys[0].ID != made.ID {
		t.Fatalf("keys list: %+v", list)
	}
	boxCLI("keys", "revoke", made.ID)
	if _, err := cs.ListTools(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("the revoked key still works: %v", err)
	}
}
