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

// The Go SDK's OAuth client end to end: it finds the box from the 401, registers, sends the browser to
// /authorize; the owner ticks Memory on the box's consent page and approves with a (virtual) passkey; the
// client gets its code on a loopback redirect, trades it, and sees exactly the tools its checkboxes allow.
// Then the owner disconnects it in Settings and its next call is refused.
func TestGoSDKClientWithBrowserConsent(t *testing.T) {
	f := newFx(t)
	bctx, cancel := passkeytest.Browser(t)
	defer cancel()
	ctx, stop := context.WithTimeout(bctx, 90*time.Second)
	defer stop()
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("%s: %v\nat %s\n%.1500s", step, err, loc, body)
		}
	}
	click := func(sel string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
	}

	// The owner's passkey, made in this browser through the setup link.
	link, err := f.web.SetupLink(context.Background(), f.base)
	if err != nil {
		t.Fatal(err)
	}
	run("setup", chromedp.Navigate(link), click("#setup"), chromedp.WaitVisible(chromedp.CSS("#did")))

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
		run("consent page", chromedp.Navigate(args.URL), chromedp.WaitVisible(chromedp.CSS("#consent-approve")))
		if s, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#redirect-host"))); s != ln.Addr().String() {
			return nil, errors.New("the consent page shows the redirect host as " + s)
		}
		if ticked, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("c-build").checked`)); ticked {
			return nil, errors.New("building is pre-ticked")
		}
		run("approve", chromedp.Evaluate[chromedp.Void](`document.getElementById("c-memory").checked = true`), click("#consent-approve"))
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
	run("settings", chromedp.Navigate(f.base+"/settings"), chromedp.WaitVisible(chromedp.CSS("#oauth-conns li[data-grant]")))
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
	run("disconnect", click("#oauth-conns li[data-grant] button"), chromedp.WaitVisible(chromedp.CSS("#oauth-conns li.empty")))
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
