package app_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcptest"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/server"
	"github.com/boxmem/box/internal/state"
)

// served is a box composed by the root and served on 127.0.0.1:0, as box serve runs it.
type served struct {
	a    *app.App
	srv  *server.Server
	base string
}

func serve(t *testing.T, now func() time.Time) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Init(ctx, t.TempDir(), nil, "true", app.Options{Mode: app.Serve, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &served{a: a, base: "http://" + ln.Addr().String()}
	if s.srv, _, err = a.Server(app.ServeOptions{Listener: ln, Rate: -1}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connect is an assistant with a key, over Streamable HTTP.
func (s *served) connect(t *testing.T, name string) (*sdk.ClientSession, keys.Connection) {
	t.Helper()
	conn, key, err := s.a.Keys.New(context.Background(), name, keys.Caps{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := &sdk.StreamableClientTransport{Endpoint: s.base + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{key}, Timeout: 20 * time.Second}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "app-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, conn
}

// One box serve holds one box handle, one gate and one state-store connection pool: every surface is
// handed the root's, and every open descriptor of state.db in the process belongs to the root's pool.
func TestOneServeHoldsOneOfEach(t *testing.T) {
	s := serve(t, nil)
	a := s.a
	if a.Memory.Box() != a.Box {
		t.Error("the memory writes through another box handle")
	}
	if s.srv.Gate != a.Gate || s.srv.MCP.Gate != a.Gate {
		t.Error("the server or MCP decides through another gate")
	}
	if s.srv.State != a.State || s.srv.MCP.State != a.State || s.srv.Keys != a.Keys || s.srv.Grants != a.Grants {
		t.Error("the server or MCP reads another state store")
	}
	// Every surface touches the state store: MCP (key checks, flags), the web UI (sessions, passkeys),
	// the OAuth metadata and /healthz.
	cs, _ := s.connect(t, "Claude")
	if text, isErr := mcptest.Call(t, cs, "memory_remember", map[string]any{"text": "Leo swims on Thursdays."}); isErr {
		t.Fatal(text)
	}
	for _, p := range []string{"/signin", "/healthz", "/.well-known/oauth-authorization-server", "/today"} {
		res, err := http.Get(s.base + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	fds, err := openFiles(filepath.Join(a.Root, state.File))
	if err != nil {
		t.Skipf("SKIPPED: the process's open files cannot be listed here (%v); the pointer checks above ran", err)
	}
	if open := a.State.DB().Stats().OpenConnections; fds != open || open == 0 {
		t.Errorf("state.db is open %d times in this process, but the root's pool holds %d connections: another pool is open", fds, open)
	}
}

// openFiles counts this process's descriptors open on path.
func openFiles(path string) (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == want {
			n++
		}
	}
	return n, nil
}

// The limits hold per connection id whatever the surface: one key asking for many cards at once over
// MCP gets exactly five, a second key with the same name has its own five, and the owner's cards made in
// the web UI at the same moment count apart.
func TestCardLimitsHoldAcrossSurfaces(t *testing.T) {
	s := serve(t, nil)
	ctx := context.Background()
	owner := memory.Actor{Who: "owner", Via: "cli", Trust: "own"}
	for i := range 6 {
		for w := range 12 {
			if _, err := s.a.Memory.Remember(ctx, owner, memory.RememberInput{Text: fmt.Sprintf("Tag%d is on day %d.", w, i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	one, k1 := s.connect(t, "Claude")
	twin, k2 := s.connect(t, "Claude")
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := one
			if w >= 8 {
				cs = twin
			}
			mcptest.Call(t, cs, "memory_forget", map[string]any{"words": fmt.Sprintf("tag%d day", w), "confirm": true})
		}()
	}
	for w := range 3 { // the owner, in the web UI's way, at the same time
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.a.Gate.Propose(ctx, memory.RememberAction(fmt.Sprintf("Owner fact %d.", w)), gate.Asker{Owner: true, Via: "web", OutsideRead: true}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	waiting, err := s.a.Gate.Waiting(ctx)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, c := range waiting {
		key := c.ProposedBy.Conn
		if c.FromOwner() {
			key = "owner"
		}
		per[key]++
	}
	if per[k1.ID] != gate.MaxWaiting || per[k2.ID] != 4 || per["owner"] != 3 {
		t.Fatalf("cards waiting per connection: %v (want %d for %s, 4 for its namesake %s, 3 for the owner)", per, gate.MaxWaiting, k1.ID, k2.ID)
	}
}

// A forget card removes exactly the lines it listed: a matching line that arrived after the card stays,
// and the owner's yes at the command line runs the same path as the passkey.
func TestForgetApprovedAfterANewLine(t *testing.T) {
	ctx := context.Background()
	a, err := app.Init(ctx, t.TempDir(), nil, "true", app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	claude := memory.Actor{Who: "Claude", Via: "mcp", Conn: "k_1", Trust: "outside"}
	for _, d := range []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"} {
		if _, err := a.Memory.Remember(ctx, claude, memory.RememberInput{Text: "Leo swims on " + d + "."}); err != nil {
			t.Fatal(err)
		}
	}
	lines, err := a.Memory.ForgetPreview(ctx, "leo swims")
	if err != nil || len(lines) != 6 {
		t.Fatalf("preview: %v %v", lines, err)
	}
	out, err := a.Gate.Propose(ctx, memory.ForgetAction("leo swims", lines), gate.Asker{Connection: "Claude", Via: "mcp", Conn: "k_1"})
	if err != nil || out.Card == nil {
		t.Fatalf("propose: %+v %v", out, err)
	}
	late, err := a.Memory.Remember(ctx, claude, memory.RememberInput{Text: "Leo swims on Sunday."})
	if err != nil {
		t.Fatal(err)
	}
	done, err := a.Gate.Approve(ctx, out.Card.ID, gate.By{Via: "cli", Local: true})
	if err != nil || !strings.Contains(done.Text, "Forgot 6 lines") {
		t.Fatalf("approve: %+v %v", done, err)
	}
	left, err := a.Memory.ForgetPreview(ctx, "leo swims")
	if err != nil || len(left) != 1 || left[0].ID != late.ID {
		t.Fatalf("after the approval: %+v %v (want only the line that came after the card)", left, err)
	}
	es, err := a.Box.Diary(ctx, 2, nil)
	if err != nil || es[0].Op != "approve" || es[0].Via != "cli" || es[1].Op != "forget" || es[1].Actor != "Claude" || es[1].Conn != "k_1" {
		t.Fatalf("diary: %+v %v", es, err)
	}
}
