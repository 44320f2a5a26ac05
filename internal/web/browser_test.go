package web_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/passkeytest"
)

func artifacts(t *testing.T) string {
	if d := os.Getenv("BOX_ARTIFACTS"); d != "" {
		os.MkdirAll(d, 0o755)
		return d
	}
	return t.TempDir()
}

// The whole owner journey in a real browser with a virtual passkey: first-run setup, sign out and in,
// make a key, approve and decline cards, undo, every tab at phone size, freeze, erase.
func TestBrowser(t *testing.T) {
	f := newFx(t)
	ctx, run, text := browse(t, 110*time.Second)
	shot := shooter(t, ctx)

	// First run: the setup link makes the passkey and signs in.
	link, err := f.w.SetupLink(context.Background(), f.base)
	if err != nil || link == "" {
		t.Fatalf("setup link: %v", err)
	}
	run("setup", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#setup")))
	shot("setup")
	run("make passkey", passkeytest.Tap("#setup"), chromedp.WaitVisible(chromedp.CSS("#did")))
	shot("today-empty")

	// Sign out, then sign in with the discoverable passkey.
	run("sign out", chromedp.Navigate(f.base+"/settings"), passkeytest.Tap(`form[action="/signout"] button`),
		chromedp.WaitVisible(chromedp.CSS("#signin")))
	shot("signin")
	run("sign in", passkeytest.Tap("#signin"), chromedp.WaitVisible(chromedp.CSS("#did")))

	// Make a key: a card, approved with the passkey, shows the key once.
	run("make key", chromedp.Navigate(f.base+"/settings"), chromedp.SendKeys(chromedp.CSS("#keyname"), "Claude Code"),
		passkeytest.Tap(`input[name="memory"]`), passkeytest.Tap("#makekey"),
		chromedp.WaitVisible(chromedp.CSS("button.approve")))
	shot("today-card")
	run("approve key", passkeytest.Tap("button.approve"), chromedp.WaitVisible(chromedp.CSS("#secret-value")))
	secret := text("#secret-value")
	if !strings.HasPrefix(secret, keys.Prefix) {
		t.Fatalf("key shown: %q", secret)
	}
	if _, err := f.k.Verify(context.Background(), secret); err != nil {
		t.Fatalf("the key shown does not work: %v", err)
	}

	// An assistant asks to forget more than 5 lines: a card that says who sent it; approve it.
	sixLines(t, f)
	forgetCard(t, f, "leo swims")
	run("forget card", chromedp.Navigate(f.base+"/today"), chromedp.WaitVisible(chromedp.CSS("button.approve")))
	if s := text(".card .sender"); !strings.Contains(s, "Claude") {
		t.Fatalf("sender: %q", s)
	}
	run("approve forget", passkeytest.Tap("button.approve"),
		passkeytest.Poll(`document.querySelector(".note.live") && document.querySelector(".note.live").innerText.includes("Forgot 6 lines")`))
	// Undo brings the lines back.
	run("undo", chromedp.Navigate(f.base+"/today"), passkeytest.Tap("#undo-last"), chromedp.WaitVisible(chromedp.CSS("main > .note")))
	if n := len(mustLines(t, f, "leo swims")); n != 6 {
		t.Fatalf("undo brought back %d lines", n)
	}
	// Decline one card with No, and send one back with Change it.
	forgetCard(t, f, "leo swims")
	run("decline", chromedp.Navigate(f.base+"/today"), passkeytest.Tap("button.decline"),
		chromedp.WaitVisible(chromedp.CSS("main > .note")))
	if s := text("main > .note"); !strings.Contains(s, "Declined") {
		t.Fatalf("decline: %q", s)
	}
	forgetCard(t, f, "leo monday")
	run("change it", chromedp.Navigate(f.base+"/today"), passkeytest.Tap(".change summary"),
		chromedp.SendKeys(chromedp.CSS(".change textarea"), "Only the old ones"), passkeytest.Tap(".change button"),
		chromedp.WaitVisible(chromedp.CSS("main > .note")))
	if w, _ := f.g.Waiting(context.Background()); len(w) != 0 || len(mustLines(t, f, "leo swims")) != 6 {
		t.Fatalf("declined cards ran or stayed: %d waiting", len(w))
	}
	shot("today")

	// Every tab at phone size.
	run("todo", chromedp.Navigate(f.base+"/todo"), chromedp.SendKeys(chromedp.CSS("#todo-text"), "Buy swim goggles"),
		passkeytest.Tap(`form[action="/todo/add"] button`), chromedp.WaitVisible(chromedp.CSS("button.check")))
	shot("todo")
	run("memory", chromedp.Navigate(f.base+"/memory"), chromedp.SendKeys(chromedp.CSS("#q"), "swims"),
		passkeytest.Poll(`document.querySelectorAll("#hits li").length > 0`))
	shot("memory")
	run("partial matches", chromedp.SendKeys(chromedp.CSS("#q"), " zebra"), // "swims zebra"
		passkeytest.Poll(`document.querySelector("#hits li.partial-head + li.partial mark") !== null`))
	run("chat", chromedp.Navigate(f.base+"/chat"), chromedp.SendKeys(chromedp.CSS("#chattext"), "when does leo swim?"),
		passkeytest.Tap("#chatform button"), passkeytest.Poll(`document.querySelectorAll("#chatlog li.box").length > 0`))
	if s := text("#chatlog li.box"); !strings.Contains(s, "swims") || !strings.Contains(s, "brain") {
		t.Fatalf("chat: %q", s)
	}
	shot("chat")
	run("diary", chromedp.Navigate(f.base+"/diary"), chromedp.WaitVisible(chromedp.CSS("ol.diary")))
	shot("diary")
	run("settings", chromedp.Navigate(f.base+"/settings"), chromedp.WaitVisible(chromedp.CSS("#switches")))
	shot("settings")

	// A switch set to do more without asking: the page asks for the passkey, then sends the form with it.
	run("share: Just do it", passkeytest.Tap(`[data-switch="share-just-do-it"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-switch="share-just-do-it"][aria-pressed="true"]`)))
	if sw, _ := f.g.Switches(context.Background()); sw.Of(gate.Share) != gate.JustDoIt {
		t.Fatalf("share is %q", sw.Of(gate.Share))
	}

	// Freeze, see it, unfreeze.
	run("freeze", passkeytest.Tap("#freeze"), chromedp.WaitVisible(chromedp.CSS(".banner.frozen")))
	if frozen, _ := f.st.Frozen(context.Background()); !frozen {
		t.Fatal("not frozen")
	}
	shot("frozen")
	// The unfreeze is a passkey ceremony then a form post and a redirect: load the settings page anew before
	// typing, so no node is found in a document that is about to be replaced.
	run("unfreeze", passkeytest.Tap("#freeze"), chromedp.WaitNotPresent(chromedp.CSS(".banner.frozen")),
		chromedp.Navigate(f.base+"/settings"), chromedp.WaitVisible(chromedp.CSS("#phrase")))
	if frozen, _ := f.st.Frozen(context.Background()); frozen {
		t.Fatal("still frozen")
	}

	// Erase: the typed phrase and a fresh passkey.
	run("erase", chromedp.SendKeys(chromedp.CSS("#phrase"), "erase my box"), passkeytest.Tap("#erase"),
		passkeytest.Poll(`document.querySelector(".note.live") && document.querySelector(".note.live").innerText.includes("erased")`))
	if n := len(mustLines(t, f, "leo")); n != 0 {
		t.Fatalf("erase left %d lines", n)
	}
	if _, err := f.k.Verify(context.Background(), secret); err == nil {
		t.Fatal("erase must disconnect every assistant")
	}
}

func mustLines(t *testing.T, f *fx, words string) []memory.Match {
	t.Helper()
	l, err := f.m.ForgetPreview(context.Background(), words)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Adding and removing a passkey in a real browser: each asks for one of the owner's passkeys first. A second
// virtual authenticator (the phone) holds the new passkey.
func TestBrowserPasskeys(t *testing.T) {
	f := newFx(t)
	ctx, cancel := passkeytest.Browser(t)
	defer cancel()
	deadline, stop := context.WithTimeout(ctx, 90*time.Second)
	defer stop()
	ctx = deadline
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 40*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("%s: %v\n%.1500s", step, err, body)
		}
	}
	link, err := f.w.SetupLink(context.Background(), f.base)
	if err != nil || link == "" {
		t.Fatalf("setup link: %v", err)
	}
	run("setup", chromedp.Navigate(link), passkeytest.Tap("#setup"), chromedp.WaitVisible(chromedp.CSS("#did")))
	first := f.passkeyIDsIn(ctx, t)
	run("add", chromedp.Navigate(f.base+"/settings"), passkeytest.SecondAuthenticator(), passkeytest.Tap("#addpasskey"))
	settled(ctx, t, "added", `location.search.includes("saved") && document.querySelectorAll("button.removepasskey").length === 2`)
	run("remove", passkeytest.Tap(`button.removepasskey[data-passkey="`+first[0]+`"]`))
	settled(ctx, t, "removed", `location.search.includes("removed") && document.querySelectorAll("button.removepasskey").length === 1`)
	if left := f.passkeyIDsIn(ctx, t); len(left) != 1 || left[0] == first[0] {
		t.Fatalf("passkeys left: %v", left)
	}
}

// settled waits until expr is true on the page, across the navigation a click starts.
func settled(ctx context.Context, t *testing.T, what, expr string) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
	}
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	t.Fatalf("%s: never true: %s\n%.1500s", what, expr, body)
}

// passkeyIDsIn reads the passkey ids Settings lists in the browser.
func (f *fx) passkeyIDsIn(ctx context.Context, t *testing.T) []string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(f.base+"/settings"), chromedp.WaitVisible(chromedp.CSS("#addpasskey"))); err != nil {
		t.Fatal(err)
	}
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("button.removepasskey")).map(b => b.dataset.passkey)`))
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
