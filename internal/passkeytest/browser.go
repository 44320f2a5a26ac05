package passkeytest

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
)

// Chromium finds a headless Chromium: $BOX_CHROME, else scripts/chromium.sh (which installs Debian's
// chromium-headless-shell when missing). -short skips.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("BOX_CHROME"); p != "" {
		return p
	}
	if testing.Short() {
		t.Skip("browser tests need Chromium; run without -short (scripts/chromium.sh installs it)")
	}
	_, file, _, _ := runtime.Caller(0)
	out, err := exec.Command(filepath.Join(filepath.Dir(file), "..", "..", "scripts", "chromium.sh")).Output()
	p := strings.TrimSpace(string(out))
	if err != nil || p == "" {
		t.Fatalf("no Chromium: scripts/chromium.sh: %v (set BOX_CHROME to a chromium binary)", err)
	}
	return p
}

// Browser starts a headless Chromium at a phone's size with a DevTools virtual authenticator (CTAP 2.1,
// resident keys, user verification that always succeeds). The returned context carries no timeout.
func Browser(t testing.TB) (context.Context, context.CancelFunc) {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(Chromium(t)), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(390, 844))
	ctx, cancelCtx := chromedp.NewContext(actx)
	cancel := func() { cancelCtx(); cancelAlloc() }
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: 390, Height: 844, DeviceScaleFactor: 1, Mobile: true}); err != nil {
			return err
		}
		if _, err := chromedp.Call(ctx, cdpwebauthn.Enable, cdpwebauthn.EnableParams{}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, cdpwebauthn.AddVirtualAuthenticator, cdpwebauthn.AddVirtualAuthenticatorParams{
			Options: &cdpwebauthn.VirtualAuthenticatorOptions{Protocol: cdpwebauthn.AuthenticatorProtocolCtap2,
				Ctap2version: cdpwebauthn.Ctap2versionCtap21, Transport: cdpwebauthn.AuthenticatorTransportInternal,
				HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
		return err
	})); err != nil {
		cancel()
		t.Fatal(err)
	}
	return ctx, cancel
}

// SecondAuthenticator adds another virtual authenticator (another device of the owner's) beside the one
// Browser made.
func SecondAuthenticator() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdpwebauthn.AddVirtualAuthenticator, cdpwebauthn.AddVirtualAuthenticatorParams{
			Options: &cdpwebauthn.VirtualAuthenticatorOptions{Protocol: cdpwebauthn.AuthenticatorProtocolCtap2,
				Ctap2version: cdpwebauthn.Ctap2versionCtap21, Transport: cdpwebauthn.AuthenticatorTransportUsb,
				HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
		return err
	})
}

// Tap scrolls the element to the middle of the screen (clear of a bottom tab bar) and clicks it like a finger,
// once the page has loaded: a page shows its buttons before its deferred script has bound their handlers,
// and a click then (after a form's own navigation, which nothing waits for) sends the form without them.
func Tap(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.WaitVisible(chromedp.CSS(sel)), Poll(`document.readyState === "complete"`),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf("document.querySelector(%q).scrollIntoView({block: \"center\"})", sel)),
		chromedp.Click(chromedp.CSS(sel)))
}

// Poll waits until the JavaScript expression is true.
func Poll(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](expr)(ctx, t)
		return chromedp.Void{}, err
	}
}

// CheckShot fails a blank screenshot: a PNG 390 px wide (and height tall, when not 0) with real content.
func CheckShot(t testing.TB, name string, data []byte, height int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: not a PNG: %v", name, err)
	}
	b := img.Bounds()
	if b.Dx() != 390 || (height != 0 && b.Dy() != height) {
		t.Errorf("%s: %dx%d, want 390 wide (and %d tall when set)", name, b.Dx(), b.Dy(), height)
	}
	colours := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	if len(colours) < 20 {
		t.Errorf("%s: looks blank (%d colours)", name, len(colours))
	}
}
