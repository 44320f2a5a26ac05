package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/goldenfile"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
)

// fixture is an owner's box with a few notes and a rotten router line, and a code project beside it.
type fixture struct {
	box, project, transcript string
	env                      Env
}

var fixedNow = time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)

func newFixture(t testing.TB) fixture {
	t.Helper()
	tmp := t.TempDir()
	f := fixture{box: filepath.Join(tmp, "box"), project: filepath.Join(tmp, "proj")}
	b, err := box.Init(context.Background(), f.box, box.InitOptions{HookBinary: "box"})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	notes := filepath.Join(f.box, "_content", "memory", "notes")
	leo := note.NewNote("person", "Leo Silva", []string{"Leo"}, []string{"moc-people"})
	leo, _ = note.AddFact(leo, note.Fact{Text: "Leo swims on Tuesdays at the Lisbon pool."})
	pool := note.NewNote("topic", "Lisbon pool", nil, []string{"moc-places"})
	pool, _ = note.AddFact(pool, note.Fact{Text: "The pool opens at seven; Leo swims there."})
	mustWrite(t, filepath.Join(notes, "entity-leo-silva.md"), string(leo))
	mustWrite(t, filepath.Join(notes, "topic-lisbon-pool.md"), string(pool))
	router, err := os.ReadFile(filepath.Join(f.box, filepath.FromSlash(strings.TrimPrefix(layout.Router, "/"))))
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(f.box, filepath.FromSlash(strings.TrimPrefix(layout.Router, "/"))),
		string(router)+"\n- [core] Leo's coach: see [[entity-leo-silva]] and [[entity-gone]]\n- Old plan: /_content/memory/notes/topic-old-plan.md\n")

	mustWrite(t, filepath.Join(f.box, "_content", "todos", "broken.todo.card"), "---\n[unclosed\n---\n")
	mustWrite(t, filepath.Join(f.project, ".git", "HEAD"), "ref: refs/heads/main\n")
	mustWrite(t, filepath.Join(f.project, "CLAUDE.md"), "# Project rules\n\n- Run `go test ./...` before you stop (`./...` and `github.com/x/y/z.go` are no paths).\n- The parser lives in `internal/real.go`; the old one was `internal/gone.go`.\n")
	mustWrite(t, filepath.Join(f.project, "internal", "real.go"), "package internal\n\n// Box is a thing.\ntype Box struct{}\n\n// ParseThing parses.\nfunc ParseThing() error {\n\treturn nil\n}\n\nfunc (b *Box) Open() {}\n\nconst (\n\tLimit = 3\n)\n")
	mustWrite(t, filepath.Join(f.project, "web", "app.ts"), "export function renderPage() {}\nexport class Widget {}\n")
	mustWrite(t, filepath.Join(f.project, "tools", "x.py"), "def search_notes(q):\n    pass\n\nclass Finder:\n    pass\n")
	mustWrite(t, filepath.Join(f.project, "big.txt"), strings.Repeat("a line of a big file that is priced before it is read\n", 1200))
	mustWrite(t, filepath.Join(f.project, "GATES.md"), "# Gates\n\n| gate | OWNS | CHECK | EXPECT | STATUS |\n|---|---|---|---|---|\n| tests | internal/ | go test ./... | ok | open |\n| docs | docs/ | make docs | no diff | met |\n\n- [ ] OWNS: web/ | CHECK: npm test | EXPECT: green\n- [x] OWNS: tools/ | CHECK: pytest | EXPECT: green\n")
	data, err := os.ReadFile("testdata/transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	f.transcript = filepath.Join(tmp, "transcript.jsonl")
	mustWrite(t, f.transcript, string(data))
	now := func() time.Time { return fixedNow }
	f.env = Env{BoxFlag: f.box, Now: now, Open: opener(now)}
	return f
}

// opener opens the box's services for a hook as box hook does: the composition root in its light mode.
func opener(now func() time.Time) func(context.Context, string) (*Services, error) {
	return func(ctx context.Context, root string) (*Services, error) {
		a, err := app.Open(ctx, root, app.Options{Mode: app.Hook, Now: now})
		if err != nil {
			return nil, err
		}
		return &Services{Memory: a.Memory, Quiet: a.State.Quiet, Close: a.Close}, nil
	}
}

// session runs hook events as one agent session in cwd: each payload is fields with the session's id,
// folder and event name.
func (f fixture) session(id, cwd string) func(event string, fields map[string]any) Result {
	return func(event string, fields map[string]any) Result {
		p := map[string]any{"session_id": id, "cwd": cwd, "hook_event_name": event}
		for k, v := range fields {
			p[k] = v
		}
		data, _ := json.Marshal(p)
		return Run(context.Background(), event, data, f.env)
	}
}

// texts is run answering with each result's text.
func texts(run func(string, map[string]any) Result) func(string, map[string]any) string {
	return func(event string, fields map[string]any) string { return run(event, fields).text() }
}

func mustWrite(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bigOutput is an oversized command output: colours, a repeated line, failures in the middle.
func bigOutput() string {
	var b strings.Builder
	for i := range 400 {
		switch {
		case i%50 == 25:
			fmt.Fprintf(&b, "\x1b[31m--- FAIL: TestThing%d (0.01s)\x1b[0m\n", i)
		case i >= 300 && i < 340:
			b.WriteString("ok  \tgithub.com/x/y\t(cached)\n")
		default:
			fmt.Fprintf(&b, "=== RUN   TestCase%d\n", i)
		}
	}
	return b.String()
}

// payload reads a fixture payload with the fixture's paths in place of $BOX, $PROJECT and $TRANSCRIPT.
func (f fixture) payload(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "payloads", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	big, _ := json.Marshal(bigOutput())
	r := strings.NewReplacer("$BOX", f.box, "$PROJECT", f.project, "$TRANSCRIPT", f.transcript, "$BIGOUTPUT", string(big[1:len(big)-1]))
	return []byte(r.Replace(string(data)))
}

// golden is what a hook answered, with the fixture's paths put back as placeholders.
type golden struct {
	Code   int     `json:"code"`
	Output *Output `json:"output"`
	Stderr string  `json:"stderr,omitempty"`
}

// capOf is the cap of the text a result carries.
func capOf(event string, in Input) int {
	switch event {
	case SessionStart:
		if in.Source == "compact" {
			return CapRecord + CapRules + 2
		}
		return CapStart
	case UserPromptSubmit:
		return CapRecord + CapRules + CapPrompt + 4
	case PreToolUse:
		switch in.ToolName {
		case "Read":
			return CapRead
		case "Grep", "Glob", "Bash":
			return CapSearch
		}
		return CapWrite
	case PostToolUse:
		return CapPost
	}
	return CapStop
}

func (r Result) text() string {
	if r.Out == nil {
		return r.Stderr
	}
	t := r.Out.Reason
	if s := r.Out.HookSpecificOutput; s != nil {
		t += s.AdditionalContext + s.PermissionDecisionReason
	}
	return t
}

// TestGolden runs every fixture payload in order against one box and project (the later hooks read what
// the earlier ones recorded) and compares each answer with its golden file.
func TestGolden(t *testing.T) {
	f := newFixture(t)
	names, _ := filepath.Glob("testdata/payloads/*.json")
	sort.Strings(names)
	if len(names) < 30 {
		t.Fatalf("found %d payloads", len(names))
	}
	var prompt4 string
	for _, p := range names {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		data := f.payload(t, name)
		in, err := ParseInput(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res := Run(context.Background(), in.HookEventName, data, f.env)
		if got, limit := Tokens(res.text()), capOf(in.HookEventName, in); got > limit {
			t.Errorf("%s: %d tokens over the cap of %d", name, got, limit)
		}
		g := golden{Code: res.Code, Output: res.Out, Stderr: res.Stderr}
		out, _ := json.MarshalIndent(g, "", "  ")
		text := strings.NewReplacer(f.box, "$BOX", f.project, "$PROJECT", f.transcript, "$TRANSCRIPT").Replace(string(out)) + "\n"
		goldenfile.Check(t, filepath.Join("testdata", "golden", name+".json"), []byte(text))
		switch name {
		case "04-prompt-task":
			prompt4 = res.text()
		case "05-prompt-task-again":
			if res.text() != prompt4 || prompt4 == "" {
				t.Errorf("the brief for the same prompt was not reused:\n%s\n---\n%s", prompt4, res.text())
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(f.box, ".box", "sessions", "sess-1", scopeLog)); err != nil || !bytes.Contains(data, []byte("out-of-scope")) {
		t.Errorf("the observe phase recorded no scope verdict: %v %s", err, data)
	}
	entries, err := diary.Recent(f.box, 5, func(e diary.Entry) bool { return e.Op == "session" })
	if err != nil || len(entries) != 1 || !strings.Contains(entries[0].Summary, "2 turns") {
		t.Errorf("session end wrote no diary entry with the turns: %v %+v", err, entries)
	}
}
