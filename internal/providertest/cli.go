package providertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The CLI stand-ins: the test binary itself, linked in place of `claude`, `codex` or `npm`, speaks
// the CLI's documented output (Claude Code's stream-json, Codex's exec --json JSON lines, their
// status and model-list commands) from a script. A package whose tests use them calls MaybeCLI first
// in its TestMain: started under one of those names next to a script, the binary plays the CLI and
// exits. The script and what each run saw live in "<bin>.standin/" beside the link, since the
// provider gives the CLI no environment to pass anything through.

// CLIRun is one scripted run of a stand-in.
type CLIRun struct {
	Model        string   // the model the CLI names; "" means the --model / -m flag, else "standin-model"
	Text         []string // Claude Code: one text_delta each; Codex: joined into one agent_message
	Whole        bool     // Claude Code: no stream events, only the assistant message
	InputTokens  int
	OutputTokens int
	CachedTokens int
	Cost         float64 // Claude Code's total_cost_usd
	// Fail picks a failure: signed_out (Codex: signed_out_early, before any event), usage_limit, rate_limited, overloaded, offline (Codex waits
	// for the network), crash (exit 2 after a first event), hang (no output at all),
	// hang_after_start (one event, then nothing), garbage (a line that is not JSON), long_line (a line
	// of 6 MB, then nothing), tools (Claude
	// Code starts with built-in tools), not_found (Claude Code: the model does not exist).
	Fail     string
	ResetsAt int64  // Claude Code usage limit: the rate_limit_event's resetsAt, Unix seconds
	Stderr   string // written to stderr before the output
	Pause    time.Duration
	// SignedIn and Plan answer `claude auth status` / `codex login status`.
	SignedIn  bool
	Plan      string
	Reconnect bool // Codex: a "Reconnecting… 1/5" note before the answer
}

// CLISeen is what one run of a stand-in saw.
type CLISeen struct {
	Args       []string
	Env        []string
	Dir        string
	DirEntries []string // the working folder's entries when the run started
	Stdin      string
	System     string // the system prompt file's content (--system-prompt-file, model_instructions_file)
	PID        int
}

// CLI is an installed stand-in.
type CLI struct {
	Bin   string
	state string
	t     testing.TB
}

// InstallCLI links the running test binary at bin (e.g. <dir>/npm/node_modules/.bin/claude) with
// its script. The CLI it plays is bin's base name: claude, codex or npm.
func InstallCLI(t testing.TB, bin string, runs ...CLIRun) *CLI {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &CLI{Bin: bin, state: bin + ".standin", t: t}
	if err := os.MkdirAll(c.state, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(bin)
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	c.write("runs.json", runs)
	return c
}

// Push adds runs to the script.
func (c *CLI) Push(runs ...CLIRun) {
	var all []CLIRun
	c.read("runs.json", &all)
	c.write("runs.json", append(all, runs...))
}

// Seen returns what each run saw, in order.
func (c *CLI) Seen() []CLISeen {
	names, _ := filepath.Glob(filepath.Join(c.state, "seen-*.json"))
	sort.Strings(names)
	var out []CLISeen
	for _, n := range names {
		var s CLISeen
		c.read(filepath.Base(n), &s)
		out = append(out, s)
	}
	return out
}

func (c *CLI) write(name string, v any) {
	data, _ := json.Marshal(v)
	if err := os.WriteFile(filepath.Join(c.state, name), data, 0o644); err != nil {
		c.t.Fatal(err)
	}
}

func (c *CLI) read(name string, v any) {
	data, err := os.ReadFile(filepath.Join(c.state, name))
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		c.t.Fatal(err)
	}
}

// MaybeCLI plays a CLI when the test binary was started as a stand-in, and exits; otherwise it
// returns at once. Call it first in TestMain.
func MaybeCLI() {
	state := os.Args[0] + ".standin"
	if _, err := os.Stat(filepath.Join(state, "runs.json")); err != nil {
		return
	}
	os.Exit(playCLI(filepath.Base(os.Args[0]), state, os.Args[1:]))
}

func playCLI(name, state string, args []string) int {
	var runs []CLIRun
	data, _ := os.ReadFile(filepath.Join(state, "runs.json"))
	_ = json.Unmarshal(data, &runs)
	next, _ := os.ReadFile(filepath.Join(state, "next"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(next)))
	_ = os.WriteFile(filepath.Join(state, "next"), []byte(strconv.Itoa(n+1)), 0o644)
	run := CLIRun{Fail: "crash", Stderr: "providertest: no run scripted"}
	if n < len(runs) {
		run = runs[n]
	}
	seen := CLISeen{Args: args, Env: os.Environ(), PID: os.Getpid()}
	seen.Dir, _ = os.Getwd()
	entries, _ := os.ReadDir(seen.Dir)
	for _, e := range entries {
		seen.DirEntries = append(seen.DirEntries, e.Name())
	}
	if sys := systemFile(args); sys != "" {
		b, _ := os.ReadFile(sys)
		seen.System = string(b)
	}
	in, _ := io.ReadAll(os.Stdin)
	seen.Stdin = string(in)
	b, _ := json.Marshal(seen)
	_ = os.WriteFile(filepath.Join(state, fmt.Sprintf("seen-%03d.json", n)), b, 0o644)

	if run.Stderr != "" {
		fmt.Fprintln(os.Stderr, run.Stderr)
	}
	out := &liner{w: bufio.NewWriter(os.Stdout), pause: run.Pause}
	defer func() { _ = out.w.Flush() }()
	model := run.Model
	if model == "" {
		model = flagValue(args, "--model", "-m")
	}
	if model == "" {
		model = "standin-model"
	}
	switch {
	case run.Fail == "hang":
		time.Sleep(time.Hour)
		return 0
	case name == "npm":
		return playNPM(args, run)
	case name == "claude" && len(args) > 1 && args[0] == "auth" && args[1] == "status":
		out.send(map[string]any{"loggedIn": run.SignedIn, "authMethod": pick(run.SignedIn, "claude.ai", "none"),
			"apiProvider": "firstParty", "subscriptionType": run.Plan, "email": "owner@example.com"})
		return map[bool]int{true: 0, false: 1}[run.SignedIn]
	case name == "claude" && len(args) > 1 && args[0] == "auth" && args[1] == "login":
		fmt.Println("Opening browser to sign in… If it does not open, visit https://claude.ai/oauth/authorize?code=standin")
		return 0
	case name == "claude" && flagValue(args, "--input-format") == "stream-json":
		return playClaudeModels(out, string(in), run)
	case name == "claude":
		return playClaude(out, model, run)
	case name == "codex" && len(args) > 0 && args[0] == "login" && contains(args, "status"):
		if !run.SignedIn {
			fmt.Fprintln(os.Stderr, "Not logged in")
			return 1
		}
		fmt.Fprintln(os.Stderr, "Logged in using ChatGPT")
		return 0
	case name == "codex" && len(args) > 0 && args[0] == "debug":
		if run.Fail == "crash" {
			return 2
		}
		fmt.Println(`{"models":[{"slug":"gpt-standin-sol","display_name":"GPT-Standin-Sol","visibility":"list","supported_in_api":true,"context_window":500000},` +
			`{"slug":"gpt-standin-hidden","display_name":"Hidden","visibility":"hide","context_window":272000},` +
			`{"slug":"gpt-standin-luna","display_name":"GPT-Standin-Luna","visibility":"list","context_window":272000}]}`)
		return 0
	case name == "codex":
		return playCodex(out, run)
	}
	fmt.Fprintln(os.Stderr, "providertest: unknown command", args)
	return 2
}

// liner writes one JSON value a line, flushing each, with the run's pause between lines.
type liner struct {
	w     *bufio.Writer
	pause time.Duration
	n     int
}

func (l *liner) send(v any) {
	if l.n > 0 && l.pause > 0 {
		time.Sleep(l.pause)
	}
	l.n++
	if s, ok := v.(string); ok {
		_, _ = l.w.WriteString(s + "\n")
	} else {
		b, _ := json.Marshal(v)
		_, _ = l.w.Write(append(b, '\n'))
	}
	_ = l.w.Flush()
}

const sessionID = "cbc7e384-52f1-40d6-acc9-9d5781bb51a6"

func playClaude(out *liner, model string, run CLIRun) int {
	tools := []string{}
	if run.Fail == "tools" {
		tools = []string{"Bash", "Read"}
	}
	// 2.1.332 opens with this one; its "event" is a string, unlike stream_event's.
	out.send(map[string]any{"type": "system", "subtype": "ui_invalidate", "event": "ui.render", "uuid": "27eddd2b-5fe4-48b7-ba5b-1edcf3e8a755", "session_id": sessionID})
	out.send(map[string]any{"type": "system", "subtype": "init", "cwd": mustWd(), "session_id": sessionID, "tools": tools,
		"mcp_servers": []any{}, "model": model, "permissionMode": "dontAsk", "slash_commands": []any{}, "apiKeySource": "none",
		"claude_code_version": "2.1.332", "output_style": "default", "skills": []any{}, "uuid": "e99dcabe-aae4-453d-bcce-d47e47b108f4"})
	usage := map[string]any{"input_tokens": run.InputTokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": run.CachedTokens,
		"output_tokens": run.OutputTokens, "server_tool_use": map[string]any{"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": "standard"}
	failWith := func(code, text string, status any) int {
		out.send(map[string]any{"type": "assistant", "message": map[string]any{"id": "35e2a6f6-34db-47ba-bf6a-97307a95e42f", "model": "<synthetic>",
			"role": "assistant", "stop_reason": "stop_sequence", "type": "message", "usage": usage,
			"content": []any{map[string]any{"type": "text", "text": text}}}, "parent_tool_use_id": nil, "session_id": sessionID,
			"error": code, "is_api_error_message": true})
		out.send(map[string]any{"type": "result", "subtype": "success", "is_error": true, "duration_ms": 705, "duration_api_ms": 0, "num_turns": 1,
			"result": text, "stop_reason": "stop_sequence", "session_id": sessionID, "total_cost_usd": 0, "usage": usage, "modelUsage": map[string]any{},
			"permission_denials": []any{}, "terminal_reason": "api_error", "api_error_status": status})
		return 1
	}
	switch run.Fail {
	case "tools":
		return 0
	case "signed_out":
		return failWith("authentication_failed", "Not logged in · Please run /login", nil)
	case "usage_limit":
		out.send(map[string]any{"type": "rate_limit_event", "rate_limit_info": map[string]any{"status": "rejected", "resetsAt": run.ResetsAt,
			"rateLimitType": "five_hour"}, "uuid": "1b7d4bd1-3f55-4a34-9b8e-3d8d5b0c8f11", "session_id": sessionID})
		return failWith("rate_limit", "You've hit your limit · resets 3pm (UTC)", 429)
	case "overloaded":
		return failWith("overloaded", "API Error: 529 Overloaded. This is a server-side issue, usually temporary.", 529)
	case "not_found":
		return failWith("model_not_found", "There's an issue with the selected model ("+model+"). It may not exist or you may not have access to it.", 404)
	case "crash", "hang_after_start", "garbage", "long_line":
		return misbehave(out, run.Fail)
	}
	text := strings.Join(run.Text, "")
	stream := func(ev map[string]any) {
		if !run.Whole {
			out.send(map[string]any{"type": "stream_event", "event": ev, "parent_tool_use_id": nil, "session_id": sessionID,
				"uuid": "0c54bf74-16cb-4e1d-80ef-d77becbd1000"})
		}
	}
	stream(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_01Standin", "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "usage": usage}})
	stream(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	for _, piece := range run.Text {
		stream(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": piece}})
	}
	out.send(map[string]any{"type": "assistant", "message": map[string]any{"id": "msg_01Standin", "type": "message", "role": "assistant",
		"model": model, "content": []any{map[string]any{"type": "text", "text": text}}, "stop_reason": nil, "usage": usage},
		"parent_tool_use_id": nil, "session_id": sessionID, "uuid": "0c54bf74-16cb-4e1d-80ef-d77becbd1001"})
	stream(map[string]any{"type": "content_block_stop", "index": 0})
	stream(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": run.OutputTokens}})
	stream(map[string]any{"type": "message_stop"})
	out.send(map[string]any{"type": "result", "subtype": "success", "is_error": false, "duration_ms": 1830, "duration_api_ms": 1702,
		"num_turns": 1, "result": text, "stop_reason": "end_turn", "session_id": sessionID, "total_cost_usd": run.Cost, "usage": usage,
		"modelUsage":         map[string]any{model: map[string]any{"inputTokens": run.InputTokens, "outputTokens": run.OutputTokens, "costUSD": run.Cost}},
		"permission_denials": []any{}, "uuid": "f562cacb-9ac0-4d17-8595-280b84faaf64"})
	return 0
}

// playClaudeModels answers the initialize control request as Claude Code does.
func playClaudeModels(out *liner, stdin string, run CLIRun) int {
	if run.Fail == "crash" {
		return 2
	}
	var req struct {
		RequestID string `json:"request_id"`
	}
	_ = json.Unmarshal([]byte(strings.TrimSpace(stdin)), &req)
	out.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": req.RequestID,
		"response": map[string]any{"commands": []any{}, "models": []any{
			map[string]any{"value": "default", "resolvedModel": "claude-standin-5-5", "displayName": "Default (recommended)"},
			map[string]any{"value": "sonnet", "resolvedModel": "claude-standin-sonnet-5-5", "displayName": "Sonnet"},
			map[string]any{"value": "haiku", "resolvedModel": "claude-standin-haiku-5-5", "displayName": "Haiku"},
		}, "account": map[string]any{"tokenSource": "none", "apiProvider": "firstParty"}}}})
	return 0
}

func playCodex(out *liner, run CLIRun) int {
	if run.Fail == "signed_out_early" {
		fmt.Fprintln(os.Stderr, "Error: not logged in. Run `codex login` first.")
		return 1
	}
	out.send(map[string]any{"type": "thread.started", "thread_id": "01a22ff9-9f5f-7041-bb2d-2cfc211d4abe"})
	out.send(map[string]any{"type": "turn.started"})
	failed := func(note, msg string) int {
		if note != "" {
			out.send(map[string]any{"type": "error", "message": note})
		}
		out.send(map[string]any{"type": "turn.failed", "error": map[string]any{"message": msg}})
		return 1
	}
	switch run.Fail {
	case "signed_out":
		return failed("unexpected status 401 Unauthorized: Missing bearer or basic authentication in header",
			"stream disconnected before completion: error sending request for url (https://chatgpt.com/backend-api/codex/responses)")
	case "usage_limit":
		msg := "You’ve hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 3:28 PM."
		return failed(msg, msg)
	case "rate_limited":
		return failed("", "unexpected status 429 Too Many Requests: Rate limit reached for requests")
	case "overloaded":
		return failed("", "unexpected status 503 Service Unavailable: upstream connect error")
	case "offline":
		out.send(map[string]any{"type": "error", "message": "Reconnecting... waiting for network (Connection failed: error sending request)"})
		time.Sleep(time.Hour)
		return 0
	case "crash", "hang_after_start", "garbage", "long_line":
		return misbehave(out, run.Fail)
	}
	if run.Reconnect {
		out.send(map[string]any{"type": "error", "message": "Reconnecting... 1/5 (stream disconnected before completion: connection reset)"})
	}
	out.send(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "reasoning", "text": "**Answering from the conversation**"}})
	out.send(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_1", "type": "agent_message", "text": strings.Join(run.Text, "")}})
	out.send(map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": run.InputTokens,
		"cached_input_tokens": run.CachedTokens, "output_tokens": run.OutputTokens}})
	return 0
}

// misbehave is what both CLIs do when broken: after their first event, die, go silent or babble.
func misbehave(out *liner, how string) int {
	switch how {
	case "crash":
		return 2
	case "hang_after_start":
		time.Sleep(time.Hour)
		return 0
	case "long_line": // more than the reader takes in one line; the rest blocks on a full pipe
		_, _ = out.w.WriteString(`{"type":"` + strings.Repeat("a", 6<<20) + "\"}\n")
		_ = out.w.Flush()
		time.Sleep(time.Hour)
		return 0
	}
	out.send("this is not JSON {")
	time.Sleep(time.Hour) // the reader must stop on the bad line, not wait for the end
	return 0
}

func playNPM(args []string, run CLIRun) int {
	if run.Fail == "crash" {
		fmt.Fprintln(os.Stderr, "npm error code E404")
		return 1
	}
	prefix := flagValue(args, "--prefix")
	for _, a := range args {
		i := strings.LastIndex(a, "@")
		if i <= 0 || strings.HasPrefix(a, "-") {
			continue
		}
		dir := filepath.Join(prefix, "node_modules", filepath.FromSlash(a[:i]))
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(filepath.Join(dir, "package.json"), []byte(fmt.Sprintf(`{"name":%q,"version":%q}`, a[:i], a[i+1:])), 0o644)
	}
	fmt.Println("added 4 packages in 22s")
	return 0
}

// systemFile is the system prompt file the arguments name, for either CLI.
func systemFile(args []string) string {
	if f := flagValue(args, "--system-prompt-file"); f != "" {
		return f
	}
	for i, a := range args {
		if a == "-c" && i+1 < len(args) && strings.HasPrefix(args[i+1], "model_instructions_file=") {
			var f string
			_ = json.Unmarshal([]byte(strings.TrimPrefix(args[i+1], "model_instructions_file=")), &f)
			return f
		}
	}
	return ""
}

func flagValue(args []string, names ...string) string {
	for i, a := range args {
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1]
			}
		}
	}
	return ""
}

func contains(args []string, s string) bool {
	for _, a := range args {
		if a == s {
			return true
		}
	}
	return false
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func mustWd() string {
	wd, _ := os.Getwd()
	return wd
}
