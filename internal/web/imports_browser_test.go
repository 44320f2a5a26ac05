package web_test

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/boxmem/box/internal/passkeytest"
)

// Bring your memories in a real browser with a virtual passkey: from Settings, upload a memory.jsonl,
// see the dry run (a secret counted by place, never shown), import it, undo it; then download the
// markdown export and find a zip of the box's notes.
func TestBrowserImportAndExport(t *testing.T) {
	passkeytest.Chromium(t)
	f := newImportFx(t, 1<<20)
	src := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(src, []byte(graphJSONL), 0o644); err != nil {
		t.Fatal(err)
	}
	downloads := t.TempDir()

	ctx, run, text := browse(t, 110*time.Second)
	shot := shooter(t, ctx)

	link, err := f.w.SetupLink(context.Background(), f.base)
	if err != nil || link == "" {
		t.Fatalf("setup link: %v", err)
	}
	run("setup", chromedp.Navigate(link), passkeytest.Tap("#setup"), chromedp.WaitVisible(chromedp.CSS("#did")))
	run("settings", chromedp.Navigate(f.base+"/settings"), passkeytest.Tap("#to-imports"), chromedp.WaitVisible(chromedp.CSS("#upload-form")))
	shot("imports")

	before := f.head()
	run("upload", chromedp.SetUploadFiles(chromedp.CSS("#import-file"), []string{src}), passkeytest.Tap("#import-check"),
		chromedp.WaitVisible(chromedp.CSS("#dryrun")))
	if s := text("#dryrun-text"); !strings.Contains(s, "Would import from memory.jsonl: 4 lines for the inbox") || !strings.Contains(s, "1 left out") {
		t.Fatalf("dry run: %q", s)
	}
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if strings.Contains(body, "Tr0ub4dor") {
		t.Fatal("the page shows a refused secret")
	}
	if f.head() != before {
		t.Fatal("the dry run wrote to the box")
	}
	shot("imports-dryrun")

	run("import", passkeytest.Tap("#import-run"), chromedp.WaitVisible(chromedp.CSS("#undo-import-btn")))
	if s := text("main > .note"); !strings.Contains(s, "Imported from memory.jsonl (server-memory): 4 lines") {
		t.Fatalf("import: %q", s)
	}
	if n := len(mustLines(t, f.fx, "leo swims thursdays")); n != 1 || len(f.left()) != 0 {
		t.Fatalf("imported %d lines, upload folder %v", n, f.left())
	}
	shot("imports-done")
	// From here the page's script comes a second late: the export below is clicked on the page the undo's
	// own navigation leads to, which nothing waits for (passkeytest.Tap waits for the page to load).
	slowScript(t, ctx, time.Second)
	run("undo", passkeytest.Tap("#undo-import-btn"), chromedp.WaitNotPresent(chromedp.CSS("#undo-import-btn")))
	if n := len(mustLines(t, f.fx, "leo swims thursdays")); n != 0 {
		t.Fatalf("undo left %d lines", n)
	}

	run("download", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		yes := true
		_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads, EventsEnabled: &yes})
		return err
	}), passkeytest.Tap("#export-markdown"))
	var got string
	for deadline := time.Now().Add(20 * time.Second); got == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ents, _ := os.ReadDir(downloads)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".zip") {
				got = filepath.Join(downloads, e.Name())
			}
		}
	}
	if got == "" || !strings.HasPrefix(filepath.Base(got), "box-") {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("no zip downloaded (%q); the page says:\n%.1000s", got, page)
	}
	zr, err := zip.OpenReader(got)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	found := false
	for _, zf := range zr.File {
		found = found || zf.Name == "_content/memory/MEMORY.md"
	}
	if !found {
		t.Fatal("the downloaded zip lacks the router")
	}
}
