package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/boxmem/box/internal/mcptest"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcp"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/passkeytest"
)

// The "Done means" in one flow through `box serve` itself (the cobra verb, in process): a new owner
// makes a passkey with the setup link, makes a key in Settings, an assistant with that key asks over MCP to
// forget six lines, the owner approves the card with the passkey, undoes it, and freezing stops the assistant.
func TestServeOwnerJourney(t *testing.T) {
	passkeytest.Chromium(t) // before the server starts: only -short skips, and says so
	started := time.Now()
	srv := startServe(t)
	shots := t.TempDir()
	if d := os.Getenv("BOX_ARTIFACTS"); d != "" {
		os.MkdirAll(d, 0o755)
		shots = d
	}

	bctx, cancel := passkeytest.Browser(t)
	t.Cleanup(cancel)
	ctx, stop := context.WithTimeout(bctx, 60*time.Second)
	t.Cleanup(stop)
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("%s: %v\nat %s\n%.1500s\nserver stderr:\n%s", name, err, loc, body, srv.stderr.String())
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text %s: %v", sel, err)
		}
		return s
	}
	shot := func(name string) {
		t.Helper()
		img, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		passkeytest.CheckShot(t, name, img, 844)
		os.WriteFile(filepath.Join(shots, "serve-"+name+".png"), img, 0o644)
	}

	// First run: the link box serve printed makes the passkey and signs in.
	step("setup", chromedp.Navigate(srv.setupLink), chromedp.WaitVisible(chromedp.CSS("#setup")),
		passkeytest.Tap("#setup"), chromedp.WaitVisible(chromedp.CSS("#did")))

	// The owner makes a key with Memory ticked: its access card, approved with the passkey, shows it once.
	step("make key", chromedp.Navigate(srv.owner+"/settings"), chromedp.SendKeys(chromedp.CSS("#keyname"), "Claude Code"),
		passkeytest.Tap(`input[name="memory"]`), passkeytest.Tap("#makekey"), chromedp.WaitVisible(chromedp.CSS("button.approve")))
	step("approve key", passkeytest.Tap("button.approve"), chromedp.WaitVisible(chromedp.CSS("#secret-value")))
	key := strings.TrimSpace(text("#secret-value"))
	if !strings.HasPrefix(key, keys.Prefix) {
		t.Fatalf("key shown: %q", key)
	}

	// The assistant, with that key over Streamable HTTP, remembers six lines and asks to forget them.
	cs := connectMCP(t, srv.mcp, key)
	for _, d := range swimDays {
		if out, isErr := mcptest.Call(t, cs, "memory_remember", map[string]any{"text": "Leo swims on " + d + "."}); isErr {
			t.Fatalf("remember: %s", out)
		}
	}
	if n := swims(t, cs); n != 6 {
		t.Fatalf("memory_search finds %d of the 6 lines just remembered", n)
	}
	var forgot memory.ForgetResult
	out, isErr := mcptest.Call(t, cs, "memory_forget", map[string]any{"words": "leo swims", "confirm": true})
	if isErr || json.Unmarshal([]byte(out), &forgot) != nil {
		t.Fatalf("forget with confirm: isError=%v %s", isErr, out)
	}
	if forgot.Removed != 0 || !strings.Contains(forgot.Text, "card is waiting") {
		t.Fatalf("an assistant's forget of 6 lines must wait for the owner: %s", out)
	}
	if n := swims(t, cs); n != 6 {
		t.Fatalf("before the owner says yes, memory_search finds %d of 6 lines", n)
	}

	// The owner sees the card on Today, says who sent it, and approves it with the passkey.
	step("forget card", chromedp.Navigate(srv.owner+"/today"), chromedp.WaitVisible(chromedp.CSS("button.approve")))
	if s := text(".card .sender"); !strings.Contains(s, "Claude Code") {
		t.Fatalf("the card does not say who sent it: %q", s)
	}
	if s := text("button.approve"); s != "Yes, just this once" {
		t.Fatalf("approve button: %q", s)
	}
	shot("today-card")
	step("approve forget", passkeytest.Tap("button.approve"),
		passkeytest.Poll(`document.querySelector(".note.live") && document.querySelector(".note.live").innerText.includes("Forgot 6 lines")`))
	if n := swims(t, cs); n != 0 {
		t.Fatalf("after the owner approved, memory_search still finds %d lines", n)
	}

	// Undo on Today brings the lines back, and the assistant finds them again.
	step("undo", chromedp.Navigate(srv.owner+"/today"), passkeytest.Tap("#undo-last"), chromedp.WaitVisible(chromedp.CSS("main > .note")))
	if s := text("main > .note"); !strings.Contains(s, "undid") || !strings.Contains(s, "forgot 6 lines") {
		t.Fatalf("undo says: %q", s)
	}
	shot("today-undone")
	if n := swims(t, cs); n != 6 {
		t.Fatalf("after undo, memory_search finds %d of 6 lines", n)
	}

	// Freezing in Settings → Safety stops the assistant's next call; unfreezing lets it work again.
	step("freeze", chromedp.Navigate(srv.owner+"/settings"), passkeytest.Tap("#freeze"), chromedp.WaitVisible(chromedp.CSS(".banner.frozen")))
	if out, isErr := mcptest.Call(t, cs, "memory_search", map[string]any{"words": "leo swims"}); !isErr || out != mcp.FrozenSentence {
		t.Fatalf("a frozen box answered: isError=%v %s", isErr, out)
	}
	step("unfreeze", passkeytest.Tap("#freeze"), chromedp.WaitNotPresent(chromedp.CSS(".banner.frozen")))
	if n := swims(t, cs); n != 6 {
		t.Fatalf("after unfreezing, memory_search finds %d of 6 lines", n)
	}
	t.Logf("the owner's journey took %s", time.Since(started).Round(time.Millisecond))
}

// served is a running `box serve`: the owner's address (localhost, where the passkey lives), the /mcp
// address it printed, the setup link, and its stderr.
type served struct {
	owner, mcp, setupLink string
	dir                   string // the box
	stderr                *lockedBuffer
}

var (
	servingRe = regexp.MustCompile(`box serving \S+ at (http://\S+/mcp)`)
	setupRe   = regexp.MustCompile(`make your passkey here \(.*\): (http://box\.localhost:\d+)(/\S+)`)
)

// startServe runs `box serve --addr 127.0.0.1:0` in process with BOX_DIR naming a folder with no box, as a
// new owner would, and stops it when the test ends.
func startServe(t *testing.T) served {
	t.Helper()
	var out, errb lockedBuffer
	dir := filepath.Join(t.TempDir(), "mybox")
	env := map[string]string{"BOX_DIR": dir}
	g := &Global{IO: IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }, Cwd: t.TempDir()}}
	cmd := g.rootCmd()
	cmd.SetArgs([]string{"serve", "--addr", "127.0.0.1:0"})
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("box serve did not stop cleanly: %v\n%s", err, errb.String())
			}
		case <-time.After(20 * time.Second):
			t.Errorf("box serve did not stop within 20s\n%s", errb.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("box serve ended: %v\n%s%s", err, out.String(), errb.String())
		default:
		}
		m, s := servingRe.FindStringSubmatch(out.String()), setupRe.FindStringSubmatch(errb.String())
		if m != nil && s != nil {
			if !strings.Contains(errb.String(), "a new one was made at "+dir) {
				t.Fatalf("box serve did not say it made the box at %s:\n%s", dir, errb.String())
			}
			return served{owner: s[1], mcp: m[1], setupLink: s[1] + s[2], dir: dir, stderr: &errb}
		}
		if time.Now().After(deadline) {
			t.Fatalf("box serve printed no address and setup link in 20s:\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
	}
}

// lockedBuffer is a buffer the server writes from its goroutines while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type bearerKey struct{ key string }

func (b bearerKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connectMCP is the Go SDK client over Streamable HTTP with a key, closed when the test ends (before the
// server stops).
func connectMCP(t *testing.T, endpoint, key string) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerKey{key}, Timeout: 20 * time.Second}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect with the key made in Settings: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

var swimDays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// swims is how many of the six "Leo swims on …" lines memory_search finds.
func swims(t *testing.T, cs *sdk.ClientSession) int {
	t.Helper()
	out, isErr := mcptest.Call(t, cs, "memory_search", map[string]any{"words": "leo swims"})
	var res memory.SearchResult
	if isErr || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("memory_search: isError=%v %s", isErr, out)
	}
	found := map[string]bool{}
	for _, h := range res.Hits {
		for _, d := range swimDays {
			if strings.Contains(h.Snippet, " on "+d+".") {
				found[d] = true
			}
		}
	}
	return len(found)
}
