package web_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/passkeytest"
	"github.com/boxmem/box/internal/providertest"
)

// The brain in a real browser with a virtual passkey: set a brain in Settings (the key checked with a
// local server that speaks OpenAI's protocol), chat and see a tool call remember a fact as the answer
// streams, see a "Save this?" card after the chat read outside content, and see the budget step the
// main model down to the fast one. Then the key is nowhere in the box, its git objects or state.db.
func TestBrowserBrain(t *testing.T) {
	passkeytest.Chromium(t)
	const key = "sk-test-BROWSER-2c9e71f04ab3d5"
	f := newFx(t)
	quarter := 0.25
	srv := providertest.OpenAI(t, key,
		// "Leo has swim practice on Thursdays": a remember, then the answer.
		providertest.Reply{Model: "model-b", Calls: []providertest.Call{{ID: "c1", Name: "memory_remember", Args: []string{`{"text":"Leo has swim practice on Thursdays."}`}}}, Cost: &quarter},
		providertest.Reply{Model: "model-b", Text: []string{"Got it: ", "Leo swims ", "on Thursdays."}, Cost: &quarter, Pause: 20 * time.Millisecond},
		// "When is Bob's birthday?": a search that reads an assistant's line, a remember the owner did not ask for.
		providertest.Reply{Model: "model-b", Calls: []providertest.Call{{ID: "c2", Name: "memory_search", Args: []string{`{"words":"bob birthday"}`}}}},
		providertest.Reply{Model: "model-b", Calls: []providertest.Call{{ID: "c3", Name: "memory_remember", Args: []string{`{"text":"Bob's birthday is on 12 May."}`}}}},
		providertest.Reply{Model: "model-b", Text: []string{"Bob's birthday is on 12 May; a card is waiting if you want it saved."}},
		// Past the budget, a careful message: the fast model answers.
		providertest.Reply{Model: "model-b", Text: []string{"Here is a short plan."}},
	)
	remember(t, f.m, "Claude", "Bob's birthday is on 12 May.")

	ctx, run, text := browse(t, 110*time.Second)
	shot := shooter(t, ctx)

	link, err := f.w.SetupLink(context.Background(), f.base)
	if err != nil {
		t.Fatal(err)
	}
	run("setup", chromedp.Navigate(link), passkeytest.Tap("#setup"), chromedp.WaitVisible(chromedp.CSS("#did")))

	// Without a brain the chat says where to set one, and Settings → Brain offers it.
	run("no brain", chromedp.Navigate(f.base+"/chat"), chromedp.WaitVisible(chromedp.CSS("#where")))
	if s := text("#where"); !strings.Contains(s, "Settings → Brain") {
		t.Fatalf("chat without a brain: %q", s)
	}
	// Set the brain in Settings: a wrong key is refused, the right one is saved and shown by its last four.
	fill := func(k string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.Navigate(f.base+"/settings#brain"), chromedp.WaitVisible(chromedp.CSS("#setbrain")),
			chromedp.SetValue(chromedp.CSS("#provider"), "openai"), chromedp.SetValue(chromedp.CSS("#base_url"), srv.URL),
			chromedp.SetValue(chromedp.CSS("#model"), "model-a"), chromedp.SetValue(chromedp.CSS("#fast_model"), "model-b"),
			chromedp.SetValue(chromedp.CSS("#key"), k), passkeytest.Tap("#setbrain"), chromedp.WaitVisible(chromedp.CSS("main > .note")))
	}
	run("wrong key", fill("sk-wrong-000000000000000"))
	if s := text("main > .note"); !strings.Contains(s, "refused the key") {
		t.Fatalf("wrong key: %q", s)
	}
	run("set brain", fill(key), chromedp.WaitVisible(chromedp.CSS("#brain-key")))
	if s := text("#brain-key"); !strings.Contains(s, "(…d5)") && !strings.Contains(s, "(…b3d5)") {
		t.Fatalf("key shown as %q", s)
	}
	shot("settings-brain")

	// Chat: the answer streams, and the remember the model called is shown.
	say := func(msg string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.SendKeys(chromedp.CSS("#chattext"), msg), passkeytest.Tap("#chatform button"))
	}
	run("chat", chromedp.Navigate(f.base+"/chat"), chromedp.WaitVisible(chromedp.CSS("#chatlog[data-brain='1']")),
		say("Leo has swim practice on Thursdays"),
		passkeytest.Poll(`[...document.querySelectorAll("#chatlog li.box .meta")].some(m => m.innerText.includes("Remembered: Leo has swim practice"))`))
	if s := text("#where"); !strings.Contains(s, "Your messages go to the model server at 127.0.0.1:") {
		t.Fatalf("where: %q", s)
	}
	if s := text("#chatlog li.box"); !strings.Contains(s, "Got it: Leo swims on Thursdays.") {
		t.Fatalf("answer: %q", s)
	}
	if hits, _ := f.m.Search(context.Background(), memory.SearchInput{Words: "leo swim practice", Kind: "inbox"}); len(hits.Hits) != 1 || hits.Hits[0].Who != "chat" {
		t.Fatalf("the fact: %+v", hits.Hits)
	}
	shot("chat-brain")

	// Outside content read, a fact the owner did not ask to save: a "Save this?" card.
	run("outside", say("When is Bob's birthday?"), chromedp.WaitVisible(chromedp.CSS("#chatlog a.cardlink")),
		passkeytest.Tap("#chatlog a.cardlink"), chromedp.WaitVisible(chromedp.CSS("button.approve")))
	if s := text(".card"); !strings.Contains(strings.ToLower(s), "save this?") || !strings.Contains(s, "Bob's birthday") {
		t.Fatalf("card: %q", s)
	}
	shot("today-save-this")

	// The budget: $0.50 spent, budget $0.50 → the fast model answers a careful message, and says so.
	run("budget", chromedp.Navigate(f.base+"/settings#brain"), chromedp.SetValue(chromedp.CSS("#budget"), "0.5"),
		passkeytest.Tap("#setbudget"), chromedp.WaitVisible(chromedp.CSS("#brain-standing")))
	if s := text("#brain-standing"); !strings.Contains(s, "fast model answers") {
		t.Fatalf("standing: %q", s)
	}
	run("step down", chromedp.Navigate(f.base+"/chat"), chromedp.WaitVisible(chromedp.CSS("#chattext")),
		say("Help me plan my finances carefully"),
		passkeytest.Poll(`[...document.querySelectorAll("#chatlog li.note")].some(m => m.innerText.includes("fast model answers"))`),
		passkeytest.Poll(`[...document.querySelectorAll("#chatlog li.box")].some(m => m.innerText.includes("Here is a short plan."))`))
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1]["model"]; got != "model-b" {
		t.Fatalf("past the budget a careful message went to %v", got)
	}
	shot("chat-budget")

	// The key is in no file of the box, no git object, not state.db.
	var found []string
	filepath.WalkDir(f.a.Root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(key)) {
				found = append(found, p)
			}
		}
		return nil
	})
	objects, err := exec.Command("git", "-C", f.a.Root, "cat-file", "--batch-all-objects", "--batch").Output()
	if err != nil || bytes.Contains(objects, []byte(key)) || len(found) != 0 {
		t.Fatalf("the key is in clear: %v (git: %v)", found, err)
	}
}
