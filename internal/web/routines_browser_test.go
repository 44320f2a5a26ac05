package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/passkeytest"
	"github.com/boxmem/box/internal/providertest"
)

// Routines in a real browser with a virtual passkey: add one in Settings → Routines (time, days ticked,
// prompt), add the morning paper (off), turn the first off, run it now and read its report on Today (as
// text, not HTML), remove it.
func TestBrowserRoutines(t *testing.T) {
	passkeytest.Chromium(t)
	const key = "sk-test-BROWSER-ROUTINE-91ce"
	f := newFx(t)
	srv := providertest.OpenAI(t, key, providertest.Reply{Model: "model-a", Text: []string{"# Evening\n", "You walked <i>far</i> today."}})
	if _, err := f.a.Brain.Set(context.Background(), box.Actor{Who: "owner", Via: "web", Trust: "own"},
		brain.SetInput{Provider: "openai", BaseURL: srv.URL, Model: "model-a", Key: key}); err != nil {
		t.Fatal(err)
	}
	ctx, run, text := browse(t, 100*time.Second)
	link, err := f.w.SetupLink(context.Background(), f.base)
	if err != nil {
		t.Fatal(err)
	}
	run("setup", chromedp.Navigate(link), passkeytest.Tap("#setup"), chromedp.WaitVisible(chromedp.CSS("#did")))

	run("add", chromedp.Navigate(f.base+"/settings#routines"), chromedp.WaitVisible(chromedp.CSS("#routines")),
		passkeytest.Tap("#routines details summary"), chromedp.WaitVisible(chromedp.CSS("#routine-save")),
		chromedp.SetValue(chromedp.CSS("#routine-name"), "evening"), chromedp.SetValue(chromedp.CSS("#routine-at"), "21:00"),
		passkeytest.Tap(`#routine-add input[name=day][value=mon]`), passkeytest.Tap(`#routine-add input[name=day][value=fri]`),
		chromedp.SetValue(chromedp.CSS("#routine-prompt"), "What did I do today?"),
		passkeytest.Tap("#routine-save"), chromedp.WaitVisible(chromedp.CSS(`[data-routine="evening"]`)))
	if s := text(`[data-routine="evening"]`); !strings.Contains(s, "21:00 on mon, fri · on") {
		t.Fatalf("the routine as listed: %q", s)
	}
	run("starter", passkeytest.Tap(`[data-starter="morning-paper"]`), chromedp.WaitVisible(chromedp.CSS(`[data-routine="morning-paper"]`)))
	if s := text(`[data-routine="morning-paper"]`); !strings.Contains(s, "07:00 every day · off") {
		t.Fatalf("the starter: %q", s)
	}
	run("off", passkeytest.Tap(`[data-routine="evening"] [data-action="off"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-routine="evening"] [data-action="on"]`)))
	if s := text("main > .note"); !strings.Contains(s, "The routine evening is off") {
		t.Fatalf("the sentence after off: %q", s)
	}
	run("run now", passkeytest.Tap(`[data-routine="evening"] [data-action="run"]`), chromedp.WaitVisible(chromedp.CSS(`[data-report="evening"]`)))
	if s := text(`[data-report="evening"] .report-text`); !strings.Contains(s, "You walked <i>far</i> today.") {
		t.Fatalf("the report on Today: %q", s)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-report] i').length`)); n != 0 {
		t.Fatal("the report's text ran as HTML")
	}
	run("remove", chromedp.Navigate(f.base+"/settings#routines"), chromedp.WaitVisible(chromedp.CSS(`[data-routine="evening"]`)),
		passkeytest.Tap(`[data-routine="evening"] [data-action="remove"]`),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-routine="evening"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-routine="morning-paper"]`)))
}
