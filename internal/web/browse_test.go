package web_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/boxmem/box/internal/passkeytest"
)

// browse opens a headless Chromium for one test, bounded by limit: run does steps (a failing step ends
// the test with the page's address and text), text reads an element's text.
func browse(t *testing.T, limit time.Duration) (context.Context, func(string, ...chromedp.Action[chromedp.Void]), func(string) string) {
	t.Helper()
	bctx, cancel := passkeytest.Browser(t)
	ctx, stop := context.WithTimeout(bctx, limit)
	t.Cleanup(func() { stop(); cancel() })
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 40*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("%s: %v\nat %s\n%.2000s", step, err, loc, body)
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
	return ctx, run, text
}

// shooter takes phone-size screenshots into the test's artifacts folder, failing a blank one.
func shooter(t *testing.T, ctx context.Context) func(string) {
	dir := artifacts(t)
	return func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		passkeytest.CheckShot(t, name, png, 0)
		os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	}
}

// slowScript holds every later request for the page's script for delay, with the browser's cache off: the
// page is shown while its handlers are not yet bound, as on a slow or busy machine.
func slowScript(t *testing.T, ctx context.Context, delay time.Duration) {
	t.Helper()
	paused := make(chan fetch.RequestID, 16)
	// The listener may not run a command itself: the requests are let go from a goroutine of their own.
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			select {
			case paused <- e.RequestID:
			default: // never blocks the browser's events; a request not let go ends with the test
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case id := <-paused:
				select {
				case <-ctx.Done():
					return
				case <-time.After(delay):
				}
				chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
			}
		}
	}()
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/static/app.js*"}}}); err != nil {
		t.Fatal(err)
	}
}
