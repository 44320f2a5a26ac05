package oauth_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/boxmem/box/internal/passkeytest"
)

// browserOwner is the owner at a headless Chromium whose virtual authenticator holds the box's passkey.
type browserOwner struct {
	t   *testing.T
	f   *fx
	ctx context.Context
}

func (f *fx) browserOwner(t *testing.T) *browserOwner {
	bctx, cancel := passkeytest.Browser(t)
	ctx, stop := context.WithTimeout(bctx, 100*time.Second)
	t.Cleanup(func() { stop(); cancel() })
	b := &browserOwner{t: t, f: f, ctx: ctx}
	link, err := f.web.SetupLink(context.Background(), f.base)
	if err != nil {
		t.Fatal(err)
	}
	b.run("setup", chromedp.Navigate(link), passkeytest.Tap("#setup"), chromedp.WaitVisible(chromedp.CSS("#did")))
	return b
}

func (b *browserOwner) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		loc, _ := chromedp.Run(b.ctx, chromedp.Location())
		body, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		b.t.Fatalf("%s: %v\nat %s\n%.1500s", step, err, loc, body)
	}
}

// approve opens an authorization URL, checks the consent page, ticks the given checkboxes and approves
// with the passkey; it returns once the browser has left the box for the client's redirect.
func (b *browserOwner) approve(authURL string, tick ...string) {
	b.t.Helper()
	b.run("consent page", chromedp.Navigate(authURL), chromedp.WaitVisible(chromedp.CSS("#consent-approve")))
	if ticked, _ := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`!!document.getElementById("c-build") && document.getElementById("c-build").checked`)); ticked {
		b.t.Fatal("building is pre-ticked")
	}
	for _, id := range tick {
		b.run("tick "+id, chromedp.Evaluate[chromedp.Void](`document.getElementById("`+id+`").checked = true`))
	}
	b.run("approve", passkeytest.Tap("#consent-approve"))
	for {
		if loc, err := chromedp.Run(b.ctx, chromedp.Location()); err == nil && !strings.HasPrefix(loc, b.f.base) {
			return
		}
		select {
		case <-b.ctx.Done():
			b.run("left the box", chromedp.WaitVisible(chromedp.CSS("#never-there")))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// The Go SDK's OAuth client end to end: it finds the box from the 401, registers, sends the browser to
// /authorize; the owner ticks Memory on the box's consent page and approves with a (virtual) passkey; the
// client gets its code on a loopback redirect, trades it, and sees exactly the tools its checkboxes allow.
// Then the owner disconnects it in Settings and its next call is refused.
func TestGoSDKClientWithBrowserConsent(t *testing.T) {
	f := newFx(t)
	owner := f.browserOwner(t)
	ctx := owner.ctx

	// The client's loopback redirect.
	got := make(chan *auth.AuthorizationResult, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cb := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		got <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		w.Write([]byte("You can close this window."))
	})}
	go cb.Serve(ln)
	defer cb.Close()
	redirect := "http://" + ln.Addr().String() + "/callback"

	asked := 0
	fetch := func(_ context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		if asked++; asked > 1 {
			return nil, errors.New("the owner is not there to consent again")
		}
		owner.run("open", chromedp.Navigate(args.URL), chromedp.WaitVisible(chromedp.CSS("#redirect-host")))
		if s, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#redirect-host"))); s != ln.Addr().String() {
			return nil, errors.New("the consent page shows the redirect host as " + s)
		}
		owner.approve(args.URL, "c-memory")
		select {
		case r := <-got:
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Go SDK test", RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}}},
		RedirectURL: redirect, AuthorizationCodeFetcher: fetch,
	})
	if err != nil {
		t.Fatal(err)
	}
	tr := &sdk.StreamableClientTransport{Endpoint: f.base + "/mcp", OAuthHandler: h, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-oauth", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	if !names["memory_overview"] || !names["memory_remember"] || names["propose_section"] {
		t.Fatalf("tools for reading + Memory: %v", names)
	}

	// Settings → Other assistants lists it; Disconnect ends it on the next call.
	owner.run("settings", chromedp.Navigate(f.base+"/settings"), chromedp.WaitVisible(chromedp.CSS("#oauth-conns li[data-grant]")))
	if s, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#oauth-conns li[data-grant]"))); !contains(s, "Go SDK test", "Memory", ln.Addr().String()) {
		t.Fatalf("connection row: %q", s)
	}
	ts, err := h.TokenSource(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	owner.run("disconnect", passkeytest.Tap("#oauth-conns li[data-grant] button"), chromedp.WaitVisible(chromedp.CSS("#oauth-conns li.empty")))
	if st, _ := f.mcpStatus(tok.AccessToken); st != http.StatusUnauthorized {
		t.Fatalf("the disconnected token answers %d", st)
	}
	if _, err := cs.ListTools(ctx, nil); err == nil || asked != 2 {
		t.Fatalf("a disconnected client still lists tools (asked %d times): %v", asked, err)
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
