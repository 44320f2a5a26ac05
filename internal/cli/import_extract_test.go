package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/providertest"
)

// box import claude --extract through the real binary, against a local server speaking OpenAI's
// protocol: refused with no brain (nothing written); with one, each conversation is read once, fenced
// as outside content, its proposed facts come in as lines with the conversation's id (a proposed secret
// refused by place), the calls are on the ledger; importing again reads nothing; a spent budget is
// refused before anything is read.
func TestImportExtract(t *testing.T) {
	const key = "sk-test-EXTRACT-5d1c9e7a3b2f4e60"
	root := initBox(t)
	data := t.TempDir()
	export, _ := filepath.Abs("../imports/testdata/claude")
	five := 5.0
	srv := providertest.OpenAI(t, key,
		providertest.Reply{Model: "model-a", Text: []string{"- Mira bakes sourdough on Sundays.\n", "- The owner's bank password is hunter2hunter2\n", "- Mira bakes sourdough on Sundays.\n"}, Cost: &five},
		providertest.Reply{Model: "model-a", Text: []string{"NONE"}, Cost: &five},
	)
	stdin := ""
	do := func(wantCode int, args ...string) ran {
		t.Helper()
		got := runKeyed(t, data, stdin, append([]string{"--box", root}, args...)...)
		if got.code != wantCode {
			t.Fatalf("box %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got.code, wantCode, got.stdout, got.stderr)
		}
		return got
	}
	commits := func() string { return do(0, "diary", "--json").stdout }

	before := commits()
	if got := do(ExitUsage, "import", "claude", export, "--extract"); !strings.Contains(got.stderr, "no brain is set") {
		t.Fatalf("no brain: %s", got.stderr)
	}
	if got := do(ExitUsage, "import", "server-memory", "../imports/testdata/server-memory/memory.jsonl", "--extract"); !strings.Contains(got.stderr, "works with chatgpt and claude") {
		t.Fatalf("--extract on server-memory: %s", got.stderr)
	}
	if commits() != before {
		t.Fatal("a refused --extract wrote")
	}

	stdin = key + "\n"
	do(0, "brain", "set", "--provider", "openai", "--base-url", srv.URL, "--model", "model-a", "--key-stdin")
	stdin = ""
	var out struct {
		Lines   int      `json:"lines"`
		Refused int      `json:"refused"`
		Places  []string `json:"refusedAt"`
		Read    int      `json:"read"`
		Spent   float64  `json:"spent"`
	}
	got := do(0, "--json", "import", "claude", export, "--extract")
	if err := json.Unmarshal([]byte(got.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Read != 2 || out.Spent != 10 || out.Refused < 1 || strings.Contains(got.stdout+got.stderr, "hunter2") {
		t.Fatalf("extract: %+v\n%s", out, got.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d calls, want one per conversation", len(reqs))
	}
	body, _ := json.Marshal(reqs[0])
	if !strings.Contains(string(body), `\u003coutside_content\u003e`) && !strings.Contains(string(body), "<outside_content>") || !strings.Contains(string(body), "nail polish") {
		t.Fatalf("the conversation is not fenced as outside content: %.600s", body)
	}
	days, _ := filepath.Glob(filepath.Join(root, "_content", "inbox", "*.md"))
	var inbox strings.Builder
	for _, d := range days {
		b, _ := os.ReadFile(d)
		inbox.Write(b)
	}
	if n := strings.Count(inbox.String(), "Mira bakes sourdough on Sundays. ^"); n != 1 ||
		!strings.Contains(inbox.String(), "from: conversations.json · id: conversation c0ffee00-0000-4000-8000-000000000001, proposed: ") {
		t.Fatalf("the proposed fact once, with its conversation's id:\n%s", inbox.String())
	}
	if st := do(0, "brain", "status", "--json").stdout; !strings.Contains(st, `"calls": 2`) {
		t.Fatalf("the calls are not on the ledger: %s", st)
	}

	// Again: every conversation was read, nothing is asked (the server has no reply left).
	if got := do(0, "import", "claude", export, "--extract"); !strings.Contains(got.stdout, "Nothing new") || len(srv.Requests()) != 2 {
		t.Fatalf("again: %s %s (%d calls)", got.stdout, got.stderr, len(srv.Requests()))
	}

	// The budget is spent ($10 of $1, and no fast model): refused before anything is read.
	do(0, "brain", "budget", "1")
	changed := t.TempDir()
	conv, _ := os.ReadFile(filepath.Join(export, "conversations.json"))
	os.WriteFile(filepath.Join(changed, "conversations.json"), []byte(strings.Replace(string(conv), "feed it twice a day", "feed it three times a day", 1)), 0o644)
	before = commits()
	if got := do(ExitRefused, "import", "claude", changed, "--extract"); !strings.Contains(got.stderr, "budget") || !strings.Contains(got.stderr, "Nothing was imported") {
		t.Fatalf("spent budget: %s", got.stderr)
	}
	if commits() != before || len(srv.Requests()) != 2 {
		t.Fatal("a refused --extract wrote or called the model")
	}
}
