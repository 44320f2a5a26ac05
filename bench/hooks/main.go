// Command hooks benchmarks `box hook EVENT` as the agents run it: one process of the real binary per
// call, on a generated box of 10k notes and a code project wired to it. It prints a Markdown section
// (p50/p95 wall time per hook) for BENCHMARKS.md.
//
//	go run ./bench/hooks [-notes 10000] [-runs 40]   ($BOX_BIN or a fresh build)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxmem/box/bench/benchkit"
	"github.com/boxmem/box/internal/note"
)

var (
	notes = flag.Int("notes", 10000, "notes in the generated box")
	runs  = flag.Int("runs", 40, "calls per hook (after 3 warm-up calls)")
)

func main() { benchkit.Run("hooks", run) }

// hookCase is one hook call: the event and a payload (made per call, so a case can vary its prompt).
type hookCase struct {
	label, event string
	payload      func(i int) map[string]any
}

func run(tmp, bin string) error {
	root, proj := filepath.Join(tmp, "owner-box"), filepath.Join(tmp, "proj")
	if err := generate(root, proj, *notes); err != nil {
		return err
	}
	transcript := filepath.Join(tmp, "t.jsonl")
	os.WriteFile(transcript, []byte(`{"type":"user","message":{"content":"fix the parser"}}`+"\n"+
		`{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":10,"output_tokens":5}}}`+"\n"), 0o644)
	common := func(event, cwd string) map[string]any {
		return map[string]any{"session_id": "bench", "transcript_path": transcript, "cwd": cwd, "hook_event_name": event}
	}
	with := func(m map[string]any, kv ...any) map[string]any {
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	big := strings.Repeat("=== RUN TestSomething\n--- PASS: TestSomething (0.00s)\n", 2000)
	cases := []hookCase{
		{"SessionStart (startup)", "SessionStart", func(int) map[string]any { return with(common("SessionStart", proj), "source", "startup") }},
		{"UserPromptSubmit (new task: brief built)", "UserPromptSubmit", func(i int) map[string]any {
			return with(common("UserPromptSubmit", proj), "prompt", fmt.Sprintf("Where does Leo swim and what about ParseThing%d in the %s code?", i%50, pick(i)))
		}},
		{"UserPromptSubmit (same task: brief reused)", "UserPromptSubmit", func(int) map[string]any {
			return with(common("UserPromptSubmit", proj), "prompt", "Where does Leo swim and what about ParseThing7?")
		}},
		{"UserPromptSubmit (harness message)", "UserPromptSubmit", func(int) map[string]any {
			return with(common("UserPromptSubmit", proj), "prompt", "<task-notification>done</task-notification>")
		}},
		{"PreToolUse Read", "PreToolUse", func(i int) map[string]any {
			return with(common("PreToolUse", proj), "tool_name", "Read", "tool_input", map[string]any{"file_path": filepath.Join(proj, "pkg", fmt.Sprintf("f%d.go", i%200))})
		}},
		{"PreToolUse Grep (declaration)", "PreToolUse", func(i int) map[string]any {
			return with(common("PreToolUse", proj), "tool_name", "Grep", "tool_input", map[string]any{"pattern": fmt.Sprintf("func ParseThing%d", i)})
		}},
		{"PreToolUse Bash (rg)", "PreToolUse", func(i int) map[string]any {
			return with(common("PreToolUse", proj), "tool_name", "Bash", "tool_input", map[string]any{"command": fmt.Sprintf("rg -n 'type Thing%d struct' pkg", i)})
		}},
		{"PreToolUse Write (box guard)", "PreToolUse", func(int) map[string]any {
			return with(common("PreToolUse", root), "tool_name", "Write", "tool_input", map[string]any{"file_path": filepath.Join(root, "_content", "x", "_config", "y.md")})
		}},
		{"PostToolUse Edit (card validation)", "PostToolUse", func(i int) map[string]any {
			return with(common("PostToolUse", root), "tool_name", "Edit", "tool_input", map[string]any{"file_path": filepath.Join(root, "_content", "memory", "notes", note.Name("person", fmt.Sprintf("Leo Silva %d", i%100))+".md")})
		}},
		{"PostToolUse Bash (sieve, 4000 lines)", "PostToolUse", func(i int) map[string]any {
			return with(common("PostToolUse", proj), "tool_name", "Bash", "tool_input", map[string]any{"command": "go test ./..."}, "tool_response", map[string]any{"stdout": big + fmt.Sprint(i)})
		}},
		{"PreCompact", "PreCompact", func(int) map[string]any { return with(common("PreCompact", proj), "trigger", "auto") }},
		{"SessionStart (compact)", "SessionStart", func(int) map[string]any { return with(common("SessionStart", proj), "source", "compact") }},
		{"Stop (ledger with open gates)", "Stop", func(int) map[string]any { return with(common("Stop", proj), "stop_hook_active", false) }},
		{"SessionEnd (project: log line)", "SessionEnd", func(int) map[string]any { return with(common("SessionEnd", proj), "reason", "exit") }},
		{"SessionEnd (in the box: diary commit)", "SessionEnd", func(int) map[string]any { return with(common("SessionEnd", root), "reason", "exit") }},
	}
	type row struct {
		label    string
		p50, p95 time.Duration
	}
	var rows []row
	for _, c := range cases {
		var times []time.Duration
		for i := -3; i < *runs; i++ {
			data, _ := json.Marshal(c.payload(i + 3))
			cmd := exec.Command(bin, "--box", root, "hook", c.event)
			cmd.Dir = proj
			cmd.Stdin = bytes.NewReader(data)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil && c.event != "PostToolUse" {
				return fmt.Errorf("%s: %v\n%s", c.label, err, out)
			}
			if i >= 0 {
				times = append(times, time.Since(start))
			}
		}
		rows = append(rows, row{c.label, benchkit.Percentile(times, 50), benchkit.Percentile(times, 95)})
	}
	fmt.Println("<!-- bench:hooks -->")
	fmt.Println("## Agent hooks")
	fmt.Println()
	fmt.Printf("`box hook EVENT` as Claude Code runs it: one process of the real binary per call (`--box` wired), on a box of %d notes\n", *notes)
	fmt.Printf("and a code project of 200 Go files; %d calls per hook after 3 warm-up calls. Target: p50 under 50 ms (budgets are 10–120 s).\n\n", *runs)
	fmt.Println("| hook | p50 | p95 |")
	fmt.Println("|---|---:|---:|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s |\n", r.label, benchkit.Millis(r.p50, 1), benchkit.Millis(r.p95, 1))
	}
	fmt.Println("<!-- bench:end -->")
	return nil
}

var topics = strings.Fields("parser index memory router pool kayak piano garden invoice passport")

func pick(i int) string { return topics[i%len(topics)] }

// generate writes a box of n notes (straight to disk, one commit) and a code project with a ledger.
func generate(root, proj string, n int) error {
	ctx := context.Background()
	if err := benchkit.NewBox(ctx, root); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(uint64(n), 11))
	dir := filepath.Join(root, "_content", "memory", "notes")
	os.MkdirAll(dir, 0o755)
	first := strings.Fields("Leo Ana Maria Bob Zoe Ivan Mei Omar Lena Theo")
	for i := range n {
		title := fmt.Sprintf("%s Silva %d", first[i%len(first)], i)
		data := note.NewNote("person", title, nil, []string{"moc-people"})
		for f := 0; f < 3; f++ {
			data, _ = note.AddFact(data, note.Fact{Text: fmt.Sprintf("%s likes %s and %s.", title, pick(r.IntN(50)), pick(r.IntN(50)+3))})
		}
		if err := os.WriteFile(filepath.Join(dir, note.Name("person", title)+".md"), data, 0o644); err != nil {
			return err
		}
	}
	if err := benchkit.Commit(ctx, root, "bench: generated notes"); err != nil {
		return err
	}
	pkg := filepath.Join(proj, "pkg")
	os.MkdirAll(pkg, 0o755)
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	for i := range 200 {
		var src strings.Builder
		fmt.Fprintf(&src, "package pkg\n\n// Thing%d is generated.\ntype Thing%d struct{ n int }\n\n", i, i)
		for j := range 30 {
			fmt.Fprintf(&src, "// ParseThing%d_%d parses.\nfunc ParseThing%d_%d(s string) (Thing%d, error) {\n\treturn Thing%d{n: len(s) + %d}, nil\n}\n\n", i, j, i, j, i, i, j)
		}
		fmt.Fprintf(&src, "func ParseThing%d() {}\n", i)
		if err := os.WriteFile(filepath.Join(pkg, fmt.Sprintf("f%d.go", i)), []byte(src.String()), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(proj, "GATES.md"), []byte("| OWNS | CHECK | EXPECT | STATUS |\n|---|---|---|---|\n| pkg | go test ./pkg | ok | open |\n"), 0o644)
}
