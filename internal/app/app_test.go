package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/apptest"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
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

func serve(t *testing.T, now func() time.Time) *served { return serveRoot(t, "", now) }

// serveRoot serves the box at root ("" makes a new one): a second call on the same root is a second
// process of the same box, with its own box handle, gate and state store.
func serveRoot(t *testing.T, root string, now func() time.Time) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var a *app.App
	var err error
	if root == "" {
		a, err = app.Init(ctx, t.TempDir(), nil, "true", app.Options{Mode: app.Serve, Now: now})
	} else {
		a, err = app.Open(ctx, root, app.Options{Mode: app.Serve, Now: now})
	}
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
	return s.connectWith(t, key), conn
}

// connectWith is an MCP client over Streamable HTTP presenting token (an mbx_ key or an OAuth access token).
func (s *served) connectWith(t *testing.T, token string) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: s.base + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token}, Timeout: 60 * time.Second}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "app-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// oauthClient registers an OAuth client, has the owner approve it (the consent page's store calls) and
// trades the code for an access token to this server's /mcp: the grant id is its connection id.
func (s *served) oauthClient(t *testing.T, name string) (token, grantID string) {
	t.Helper()
	ctx := context.Background()
	redirect := "http://127.0.0.1:9/callback"
	reg, err := s.a.Grants.Register(ctx, oauthex.ClientRegistrationMetadata{ClientName: name, RedirectURIs: []string{redirect}}, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	resource := s.base + "/mcp"
	req, err := s.a.Grants.Authorize(ctx, grants.AuthRequest{ClientID: reg.ClientID, RedirectURI: redirect, ResponseType: "code", State: "st",
		Challenge: base64.RawURLEncoding.EncodeToString(sum[:]), Method: "S256", Resource: resource, Scope: grants.DefaultScope}, resource)
	if err != nil {
		t.Fatal(err)
	}
	_, code, err := s.a.Grants.Approve(ctx, req.ID, keys.Caps{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	toks, err := s.a.Grants.Exchange(ctx, reg.ClientID, code, verifier, redirect, resource)
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.a.Grants.Verify(ctx, toks.Access, resource)
	if err != nil {
		t.Fatal(err)
	}
	return toks.Access, g.ID
}

// One box serve holds one box handle, one gate and one state-store connection pool: every surface is
// handed the root's, and every open descriptor of state.db in the process belongs to the root's pool.
func TestOneServeHoldsOneOfEach(t *testing.T) {
	s := serve(t, leapNight)
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
	s := serve(t, leapNight)
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
	per := waitingPer(t, s.a)
	if per[k1.ID] != gate.MaxWaiting || per[k2.ID] != 4 || per["owner"] != 3 {
		t.Fatalf("cards waiting per connection: %v (want %d for %s, 4 for its namesake %s, 3 for the owner)", per, gate.MaxWaiting, k1.ID, k2.ID)
	}
}

// leapNight is every test's clock: 23:59:59 local on a leap day (the owner's local day is the 29th, and
// in most zones the diary's UTC day is another).
func leapNight() time.Time { return time.Date(2028, time.February, 29, 23, 59, 59, 0, time.Local) }

// The limits are counted inside the write transaction, so they hold across every surface and every
// process of one box at once: the same key over two box serve processes, an OAuth client, two box mcp
// processes (connection "local") and the owner in the web UI all ask together; and over a day the owner
// declines the waiting cards three times, yet the key gets exactly MaxPerDay cards from both processes.
func TestCardLimitsHoldAcrossProcesses(t *testing.T) {
	now := leapNight
	one := serve(t, now)
	two := serveRoot(t, one.a.Root, now) // a second process of the same box
	ctx := context.Background()
	owner := memory.Actor{Who: "owner", Via: "cli", Trust: "own"}
	for _, d := range []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"} {
		if _, err := one.a.Memory.Remember(ctx, owner, memory.RememberInput{Text: "Leo swims on " + d + "."}); err != nil {
			t.Fatal(err)
		}
	}
	k, key, err := one.a.Keys.New(ctx, "Claude", keys.Caps{Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	viaOne, viaTwo := one.connectWith(t, key), two.connectWith(t, key)
	token, grantID := one.oauthClient(t, "ChatGPT")
	oauth := one.connectWith(t, token)
	forget := func(cs *sdk.ClientSession) string {
		text, _ := mcptest.Call(t, cs, "memory_forget", map[string]any{"words": "leo swims", "confirm": true})
		return text
	}
	local := gate.Asker{Connection: "Claude Code", Via: "mcp", Conn: "local"}
	var wg sync.WaitGroup
	run := func(n int, fn func()) {
		for range n {
			wg.Add(1)
			go func() { defer wg.Done(); fn() }()
		}
	}
	run(4, func() { forget(viaOne) })
	run(4, func() { forget(viaTwo) })
	run(7, func() { forget(oauth) })
	for _, p := range []*served{one, two} { // two box mcp processes
		run(4, func() {
			if _, err := p.a.Gate.Propose(ctx, memory.RememberAction("Leo likes the pool."), local); err != nil {
				t.Error(err)
			}
		})
	}
	run(3, func() { // the owner, in the web UI's way
		if _, err := one.a.Gate.Propose(ctx, memory.RememberAction("Ana likes the pool."), gate.Asker{Owner: true, Via: "web", OutsideRead: true}); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	per := waitingPer(t, one.a)
	if per[k.ID] != gate.MaxWaiting || per[grantID] != gate.MaxWaiting || per["local"] != gate.MaxWaiting || per["owner"] != 3 {
		t.Fatalf("cards waiting per connection: %v (want %d each for the key %s, the OAuth grant %s and local, 3 for the owner)", per, gate.MaxWaiting, k.ID, grantID)
	}

	// The day's limit: the owner declines the key's waiting cards, and both processes ask again at once.
	made := func() int {
		n := 0
		es, err := one.a.Box.Diary(ctx, 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Op == "card" && e.Conn == k.ID {
				n++
			}
		}
		return n
	}
	var last []string
	var mu sync.Mutex
	for round := 0; round < 5; round++ {
		cards, err := one.a.Gate.Waiting(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cards {
			if c.ProposedBy.Conn == k.ID {
				if _, err := one.a.Gate.Decline(ctx, c.ID, "", gate.By{Via: "web", Passkey: true}); err != nil {
					t.Fatal(err)
				}
			}
		}
		last = nil
		for _, cs := range []*sdk.ClientSession{viaOne, viaTwo} {
			run(4, func() {
				text := forget(cs)
				mu.Lock()
				last = append(last, text)
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	if n := made(); n != gate.MaxPerDay {
		t.Fatalf("the key made %d cards today across both processes, want exactly %d", n, gate.MaxPerDay)
	}
	if !slices.ContainsFunc(last, func(s string) bool { return strings.Contains(s, fmt.Sprintf("sent %d cards today", gate.MaxPerDay)) }) {
		t.Errorf("the last round was not refused for the day's limit: %q", last)
	}
	if per := waitingPer(t, two.a); per[grantID] != gate.MaxWaiting || per["local"] != gate.MaxWaiting {
		t.Errorf("the other connections' cards changed: %v", per)
	}
}

// waitingPer counts the waiting cards per connection id ("owner" for the owner's own).
func waitingPer(t *testing.T, a *app.App) map[string]int {
	t.Helper()
	waiting, err := a.Gate.Waiting(context.Background())
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
	return per
}

// A forget card removes exactly the lines it listed: a matching line that arrived after the card stays,
// and the owner's yes at the command line runs the same path as the passkey.
func TestForgetApprovedAfterANewLine(t *testing.T) {
	ctx := context.Background()
	a := apptest.Open(t, app.Options{Now: leapNight})
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
	done, err := a.Gate.Approve(ctx, out.Card.ID, apptest.Local)
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

// "Change my box" at Never: an assistant's memory write over MCP is refused with the sentence, and the
// refusal is in the diary under the connection's name and id, as the CLI's and the web UI's are.
func TestNeverOverMCPIsInTheDiary(t *testing.T) {
	s := serve(t, leapNight)
	ctx := context.Background()
	if _, err := s.a.Gate.SetSwitch(ctx, apptest.Local, gate.Change, gate.Never); err != nil {
		t.Fatal(err)
	}
	cs, k := s.connect(t, "Claude")
	text, isErr := mcptest.Call(t, cs, "memory_remember", map[string]any{"text": "Leo swims on Thursdays."})
	if !isErr || !strings.Contains(text, "Never") {
		t.Fatalf("remember at Never: %v %q", isErr, text)
	}
	es, err := s.a.Box.Diary(ctx, 1, nil)
	if err != nil || len(es) != 1 || es[0].Op != "refuse" || es[0].Conn != k.ID || es[0].Actor != "Claude" || !strings.Contains(es[0].Summary, "memory_remember") {
		t.Fatalf("the refusal over MCP in the diary: %+v %v", es, err)
	}
}

// The owner's protective acts have one rule (App.Protective): they work on a frozen box and are refused,
// with one sentence, on a locked one; Freeze follows it.
func TestProtectiveActs(t *testing.T) {
	ctx := context.Background()
	a := apptest.Open(t, app.Options{Now: leapNight})
	if err := a.State.SetFrozen(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := a.Protective(ctx); err != nil {
		t.Fatalf("frozen: %v", err)
	}
	if err := a.State.SetFlag(ctx, state.FlagLocked, true); err != nil {
		t.Fatal(err)
	}
	const said = "The box is locked; open it with your passkey first."
	if err := a.Protective(ctx); !errs.Is(err, errs.Locked) || errs.Sentence(err) != said {
		t.Errorf("locked: %v", err)
	}
	if _, err := a.Freeze(ctx, apptest.Local, false); !errs.Is(err, errs.Locked) || errs.Sentence(err) != said {
		t.Errorf("unfreeze while locked: %v", err)
	}
}
