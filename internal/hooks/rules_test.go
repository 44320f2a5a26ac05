package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/state"
)

func TestTokensAndTrim(t *testing.T) {
	if got := Tokens("abcd efgh"); got != 3 {
		t.Errorf("Tokens = %d, want 3 (9 chars)", got)
	}
	if got := Tokens("a b c d e f"); got != 6 {
		t.Errorf("Tokens = %d, want 6 (word floor)", got)
	}
	text := strings.Repeat("twelve chars\n", 100)
	for _, limit := range []int{1, 5, 20, 100, 1000} {
		out := Trim(text, limit)
		if Tokens(out) > limit {
			t.Errorf("Trim(%d) = %d tokens", limit, Tokens(out))
		}
		if limit < 300 && !strings.HasSuffix(out, ellipsis) {
			t.Errorf("Trim(%d) cut without the ellipsis: %q", limit, out)
		}
		for _, l := range strings.Split(strings.TrimSuffix(out, ellipsis), "\n") {
			if l != "" && l != "twelve chars" && limit > 5 {
				t.Errorf("Trim(%d) cut inside a line: %q", limit, l)
			}
		}
	}
	if Trim("short", 10) != "short" {
		t.Error("Trim changed a text under the cap")
	}
}

func TestIsTask(t *testing.T) {
	for prompt, want := range map[string]bool{
		"Fix the flaky test in the memory package": true,
		"ok":       false,
		"Thanks!":  false,
		"continue": false,
		"/compact": false,
		"<task-notification><task-id>1</task-id></task-notification>": false,
		"<command-name>/clear</command-name>":                         false,
		"  <system-reminder>the date changed</system-reminder>":       false,
		"why is it slow":                   false, // one content word
		"Where does Leo swim on Tuesdays?": true,
		"rename ParseThing":                true,
		"it won't build":                   false, // one content word: "won" is a negation's, not "win"'s
		"why can’t it start":               false,
		"Leo's swim times":                 true,
		"IT WON'T BUILD":                   false,
		"call O'Brien":                     true, // "call" and "brien"
	} {
		if got := IsTask(prompt); got != want {
			t.Errorf("IsTask(%q) = %v, want %v", prompt, got, want)
		}
	}
}

// The words a brief searches for are words in any script, composed or not: a name with an accent is the
// name, not the letters before the accent.
func TestKeywordsOfAnyScript(t *testing.T) {
	for prompt, want := range map[string][]string{
		"Book the table for José at Zürich":             {"zürich", "book", "josé", "table"},
		"Book the table for Jose\u0301 at Zu\u0308rich": {"zürich", "book", "josé", "table"},
		"Ask Zoë about the Ångström numbers":            {"ångström", "ask", "zoë", "numbers"},
		"Передай Ивану отчёт":                           {"передай", "ивану", "отчёт"},
		"Leo's swim times won't change":                 {"leo", "change", "times", "swim"},
	} {
		if got := keywords(prompt, 10); !slices.Equal(got, want) {
			t.Errorf("keywords(%q) = %q, want %q", prompt, got, want)
		}
	}
}

// A pasted log is read for key words only as far as maxKeywordBytes, cut at a whole letter.
func TestKeywordsReadTheStartOfALongPrompt(t *testing.T) {
	long := "Check Zanzibar " + strings.Repeat("é", maxKeywordBytes) + " Quixotic"
	got := keywords(long, 10)
	if !slices.Equal(got, []string{"zanzibar", "check"}) {
		t.Errorf("keywords of a %d-byte prompt = %q, want zanzibar and check: not the 64 KiB run of é, nor the words past %d bytes", len(long), got, maxKeywordBytes)
	}
}

func TestDeclName(t *testing.T) {
	for pattern, want := range map[string]string{
		"func ParseHook":              "ParseHook",
		`func\s+ParseHook\(`:          "ParseHook",
		`func \(.*\) Open`:            "Open",
		`func \(b \*Box\) Open\b`:     "Open",
		"func (b *Box) Open":          "Open",
		`type\s+Box\s+struct`:         "Box",
		"^type Box ":                  "Box",
		"(class|interface) Widget":    "Widget",
		"export function renderPage":  "renderPage",
		"export default class Widget": "Widget",
		"def search_notes":            "search_notes",
		"async def fetch":             "fetch",
		"ParseHook(":                  "",
		"TODO: type this":             "",
		`"func ParseHook"`:            "ParseHook",
		"func":                        "",
		"":                            "",
	} {
		if got := DeclName(pattern); got != want {
			t.Errorf("DeclName(%q) = %q, want %q", pattern, got, want)
		}
	}
}

func TestParseShellSearch(t *testing.T) {
	for cmd, want := range map[string]*search{
		`grep -rn "func ParseThing" internal/`:   {pattern: "func ParseThing", within: "internal/"},
		`rg -n 'type Box struct' | head -5`:      {pattern: "type Box struct"},
		`rg -i -g '*.go' 'func open'`:            {pattern: "func open", glob: "*.go", fold: true},
		`git grep -e "def search" -- tools`:      {pattern: "def search"},
		`grep -rn 'func X' . && echo done`:       nil,
		`grep -rn 'func X' . > out.txt`:          nil,
		`grep -rn 'func X' . | xargs rm`:         nil,
		`ls -la`:                                 nil,
		`cat $(grep -l 'func X' .)`:              nil,
		`grep --include=*.py -rn "class Finder"`: {pattern: "class Finder", glob: "*.py"},
	} {
		got, ok := parseShellSearch(cmd)
		if want == nil {
			if ok {
				t.Errorf("parseShellSearch(%q) = %+v, want no search", cmd, got)
			}
			continue
		}
		if !ok || got.pattern != want.pattern || got.glob != want.glob || got.fold != want.fold || want.within != "" && got.within != want.within {
			t.Errorf("parseShellSearch(%q) = %+v %v, want %+v", cmd, got, ok, *want)
		}
	}
}

func TestOpenGates(t *testing.T) {
	ledger := "| OWNS | CHECK | EXPECT | STATUS |\n|---|---|---|---|\n| a | go test | ok | open |\n| b | make | ok | met |\n| c | lint | clean | ✓ |\n" +
		"\nNot a table line\n| x | y |\n\n- [ ] OWNS: web | CHECK: npm test | EXPECT: green\n- [x] OWNS: py | CHECK: pytest | EXPECT: green\n- [ ] a todo without a check\n"
	got := OpenGates(ledger)
	if len(got) != 2 || !strings.Contains(got[0], "go test") || !strings.Contains(got[1], "npm test") {
		t.Errorf("OpenGates = %q", got)
	}
	if g := OpenGates("| OWNS | CHECK | EXPECT |\n|--|--|--|\n| a | b | c |\n"); len(g) != 1 {
		t.Errorf("a row without STATUS is open: %q", g)
	}
	if g := OpenGates("# no ledger here\n| a | b |\n"); len(g) != 0 {
		t.Errorf("a table without OWNS/CHECK/EXPECT is no ledger: %q", g)
	}
}

func TestSieve(t *testing.T) {
	sv := Sieve(bigOutput())
	if strings.Contains(sv.Clean, "\x1b[") {
		t.Error("ANSI escapes survived the sieve")
	}
	if !strings.Contains(sv.Clean, "(cached)  [×25]") {
		t.Errorf("repeated lines were not collapsed")
	}
	if n := len(strings.Split(sv.Digest, "\n")); n > sieveHead+sieveTail+sieveErrors+3 {
		t.Errorf("digest has %d lines", n)
	}
	if len(sv.Errors) == 0 || len(sv.Errors) > sieveErrors {
		t.Errorf("errors: %q", sv.Errors)
	}
	small := Sieve("one\ntwo\n")
	if small.Digest != "one\ntwo" {
		t.Errorf("a small output changed: %q", small.Digest)
	}
}

func TestReadTranscript(t *testing.T) {
	u, err := ReadTranscript("testdata/transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{Turns: 2, Input: 1500, Output: 60, CacheRead: 19200, CacheCreation: 300}
	if u != want {
		t.Errorf("ReadTranscript = %+v, want %+v (a message split over lines counts once)", u, want)
	}
}

// TestCompactionRoundTrip: the record frozen at PreCompact is restated once after the compaction, by
// SessionStart (source compact), and a later prompt does not restate it again.
func TestCompactionRoundTrip(t *testing.T) {
	f := newFixture(t)
	run := f.session("round", f.project)
	run(UserPromptSubmit, map[string]any{"prompt": "Refactor ParseThing to return the box"})
	run(PostToolUse, map[string]any{"tool_name": "Edit", "tool_input": map[string]any{"file_path": filepath.Join(f.project, "internal", "real.go")}})
	run(PostToolUse, map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "go vet ./..."}, "tool_response": map[string]any{"stdout": ""}})
	if r := run(PreCompact, map[string]any{"trigger": "auto"}); r.Out != nil || r.Code != 0 {
		t.Fatalf("PreCompact emitted %+v", r)
	}
	// a command after the freeze is not part of the restated moment
	run(PostToolUse, map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "echo later"}, "tool_response": map[string]any{"stdout": "later"}})
	got := run(SessionStart, map[string]any{"source": "compact"}).text()
	for _, want := range []string{"compaction 1", "Refactor ParseThing", "internal/real.go", "go vet ./...", "OWNS internal/", "Rules (CLAUDE.md"} {
		if !strings.Contains(got, want) {
			t.Errorf("restatement lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "echo later") {
		t.Errorf("restatement is not the frozen record:\n%s", got)
	}
	if again := run(UserPromptSubmit, map[string]any{"prompt": "ok"}).text(); again != "" {
		t.Errorf("the same compaction was restated twice:\n%s", again)
	}
	var mk Marker
	data, _ := os.ReadFile(filepath.Join(f.box, ".box", "sessions", "round", markerFile))
	json.Unmarshal(data, &mk)
	if mk.Compactions != 1 || mk.Answered != 1 || mk.By != SessionStart {
		t.Errorf("marker = %+v", mk)
	}
}

// TestFailOpen: whatever is wrong, the hook answers nothing with exit 0.
func TestFailOpen(t *testing.T) {
	f := newFixture(t)
	start := []byte(`{"session_id":"x","cwd":"` + f.project + `","hook_event_name":"SessionStart","source":"startup"}`)
	cases := map[string]struct {
		event   string
		payload []byte
		env     Env
	}{
		"no box":         {SessionStart, start, Env{}},
		"box is gone":    {SessionStart, start, Env{BoxFlag: filepath.Join(t.TempDir(), "nothing")}},
		"not JSON":       {PreToolUse, []byte("{not json"), f.env},
		"empty payload":  {Stop, nil, f.env},
		"unknown event":  {"Notification", start, f.env},
		"JSON array":     {UserPromptSubmit, []byte(`[1,2]`), f.env},
		"huge tool args": {PreToolUse, []byte(`{"session_id":"x","cwd":"/","tool_name":"Read","tool_input":{"file_path":7,"offset":"x"}}`), f.env},
	}
	for name, c := range cases {
		r := Run(context.Background(), c.event, c.payload, c.env)
		if r.Out != nil || r.Code != 0 || r.Stderr != "" {
			t.Errorf("%s: answered %+v", name, r)
		}
	}
	// a panic in a hook is caught and logged
	panicky := f.env
	panicky.Now = func() time.Time { panic("the clock broke") }
	compact := []byte(`{"session_id":"p","cwd":"` + f.project + `","hook_event_name":"PreCompact"}`)
	if r := Run(context.Background(), PreCompact, compact, panicky); r.Out != nil || r.Code != 0 {
		t.Errorf("panic: answered %+v", r)
	}
	if log, _ := os.ReadFile(filepath.Join(f.box, ".box", "logs", "hooks.log")); !strings.Contains(string(log), "panic in PreCompact: the clock broke") {
		t.Errorf("the panic was not logged: %s", log)
	}
	// a hook over its budget answers nothing
	slow := f.env
	slow.Budget = time.Nanosecond
	stop := []byte(`{"session_id":"p","cwd":"` + f.project + `","hook_event_name":"Stop"}`)
	if r := Run(context.Background(), Stop, stop, slow); r.Out != nil {
		t.Errorf("over budget: answered %+v", r)
	}
	if r := Run(context.Background(), Stop, stop, f.env); r.Out == nil || r.Out.Decision != "block" {
		t.Errorf("in budget, the open gates should block: %+v", r)
	}
	// a broken marker is a broken box
	broken := newFixture(t)
	os.WriteFile(filepath.Join(broken.box, ".box", "box.json"), []byte("{"), 0o644)
	if r := Run(context.Background(), SessionStart, start, broken.env); r.Out != nil {
		t.Errorf("broken box: answered %+v", r)
	}
	// a frozen box says nothing, and the log says why
	st, err := state.Open(f.box, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetFrozen(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if r := Run(context.Background(), SessionStart, start, f.env); r.Out != nil {
		t.Errorf("frozen box: answered %+v", r)
	}
	log, _ := os.ReadFile(filepath.Join(f.box, ".box", "logs", "hooks.log"))
	if !strings.Contains(string(log), "frozen or locked") {
		t.Errorf("hooks.log does not say why: %s", log)
	}
}

// FuzzHookInput: no payload makes the parsing or the pure rules panic.
func FuzzHookInput(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/payloads/*.json")
	for _, s := range seeds {
		data, _ := os.ReadFile(s)
		f.Add(data)
	}
	f.Add([]byte(`{"tool_input":{"command":["bash","-lc","rg 'func X'"],"offset":"12","limit":1e99}}`))
	f.Add([]byte(`{"prompt":"<task-notification>","tool_response":"plain"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseInput(data)
		if err != nil {
			return
		}
		a := in.toolArgs()
		DeclName(a.Pattern)
		parseShellSearch(string(a.Command))
		IsTask(in.Prompt)
		responseText(in.ToolResponse)
		OpenGates(in.Prompt)
		Trim(in.Prompt, 5)
	})
}

// TestScopeEnforce: with scope enforce, a write outside the brief's folders is denied once; a write inside
// them, or the same write repeated, goes through.
func TestScopeEnforce(t *testing.T) {
	f := newFixture(t)
	mustWrite(t, filepath.Join(f.box, SettingsFile), `{"scope": "enforce"}`)
	run := f.session("enf", f.project)
	if r := run(UserPromptSubmit, map[string]any{"prompt": "Make ParseThing return the Box"}); !strings.Contains(r.text(), "Scope: internal") {
		t.Fatalf("brief: %q", r.text())
	}
	write := func(path string) Result {
		return run(PreToolUse, map[string]any{"tool_name": "Write", "tool_input": map[string]any{"file_path": filepath.Join(f.project, path), "content": "x"}})
	}
	if r := write("internal/new.go"); r.Out != nil {
		t.Errorf("an in-scope write was refused: %+v", r.Out)
	}
	if r := write("web/app.ts"); r.Out == nil || r.Out.HookSpecificOutput.PermissionDecision != "deny" {
		t.Errorf("an out-of-scope write went through in enforce")
	}
	if r := write("web/app.ts"); r.Out != nil {
		t.Errorf("the repeated write was refused again: %+v", r.Out)
	}
}

// TestCapsHold: an oversized guide and router (with many rotten paths) still give answers within the caps.
func TestCapsHold(t *testing.T) {
	f := newFixture(t)
	var guide strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&guide, "- rule %d: see `internal/gone%d.go` and keep the tests green at all times\n", i, i)
	}
	mustWrite(t, filepath.Join(f.project, "CLAUDE.md"), guide.String())
	router := filepath.Join(f.box, "_content", "memory", "MEMORY.md")
	old, _ := os.ReadFile(router)
	mustWrite(t, router, string(old)+strings.Repeat("- [core] a very long core fact that goes on and on about the owner's preferences\n", 400))
	for _, c := range []struct {
		source string
		limit  int
	}{{"startup", CapStart}, {"compact", CapRecord + CapRules + 2}} {
		p, _ := json.Marshal(map[string]any{"session_id": "caps", "cwd": f.project, "hook_event_name": SessionStart, "source": c.source})
		r := Run(context.Background(), SessionStart, p, f.env)
		if n := Tokens(r.text()); n == 0 || n > c.limit {
			t.Errorf("SessionStart %s: %d tokens, cap %d", c.source, n, c.limit)
		}
		if c.source == "startup" && strings.Count(r.text(), "gone") > maxRot {
			t.Errorf("the rot notice names more than %d lines", maxRot)
		}
	}
}

// TestLongGuideIsRead: a project guide longer than a hook reads is read as far as it reads, not skipped:
// its rules are restated and its rotten paths named.
func TestLongGuideIsRead(t *testing.T) {
	f := newFixture(t)
	guide := "# Project rules\n\n- Never push on Fridays; the parser was `internal/gone.go`.\n" +
		strings.Repeat("- keep the tests green at all times, whatever the hour and whoever asks\n", 2*maxGuideBytes/70)
	if len(guide) <= maxGuideBytes {
		t.Fatalf("the guide is %d bytes, not longer than %d", len(guide), maxGuideBytes)
	}
	mustWrite(t, filepath.Join(f.project, "CLAUDE.md"), guide)
	for source, want := range map[string]string{"startup": "internal/gone.go", "compact": "Never push on Fridays"} {
		p, _ := json.Marshal(map[string]any{"session_id": "long", "cwd": f.project, "hook_event_name": SessionStart, "source": source})
		if got := Run(context.Background(), SessionStart, p, f.env).text(); !strings.Contains(got, want) {
			t.Errorf("SessionStart %s lacks %q:\n%s", source, want, got)
		}
	}
}
