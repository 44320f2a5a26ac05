// Package hooks owns `box hook EVENT`: the nine agent-session hooks (Claude Code's protocol, which Codex
// mirrors) and their session records under .box/sessions/; it writes memory only through box.Do.
package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
)

// The events `box hook` answers, as the agents name them.
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	PreCompact       = "PreCompact"
	Stop             = "Stop"
	SessionEnd       = "SessionEnd"
)

// Events lists every event in the order a session fires them.
var Events = []string{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact, Stop, SessionEnd}

// Caps are the token caps per emission (docs/HOOKS.md, "What each hook does").
const (
	CapStart   = 600
	CapRecord  = 1200
	CapRules   = 700
	CapPrompt  = 1000
	CapRead    = 900
	CapSearch  = 500
	CapWrite   = 900
	CapPost    = 300
	CapStop    = 600
	maxPayload = 16 << 20
)

// defaultBudget bounds a hook whose caller named no budget.
const defaultBudget = 10 * time.Second

// Input is the hook JSON an agent writes on stdin: the common fields and those of each event.
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	Source         string          `json:"source,omitempty"`  // SessionStart: startup, resume, clear, compact
	Prompt         string          `json:"prompt,omitempty"`  // UserPromptSubmit
	Trigger        string          `json:"trigger,omitempty"` // PreCompact: manual, auto
	Reason         string          `json:"reason,omitempty"`  // SessionEnd
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	StopHookActive bool            `json:"stop_hook_active,omitempty"`

	raw []byte
}

// ParseInput reads a hook payload. Unknown fields are ignored; a payload that is not a JSON object is an
// error (Run fails open on it).
func ParseInput(data []byte) (Input, error) {
	var in Input
	if len(data) > maxPayload {
		return in, errors.New("hook payload over 16 MiB")
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return in, errs.Wrap("hooks.payload", errs.Invalid, err, "The hook payload is not a JSON object")
	}
	in.raw = data
	return in, nil
}

// Output is the JSON a hook prints on stdout. Decision "block" with Reason is how Stop and PostToolUse
// refuse; PreToolUse decides through HookSpecificOutput.
type Output struct {
	Decision           string    `json:"decision,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	HookSpecificOutput *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is hookSpecificOutput: context to add, or a PreToolUse permission decision.
type Specific struct {
	HookEventName            string `json:"hookEventName"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"` // allow, deny, ask
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// Result is what `box hook` writes and exits with. Code is 0, or 2 with Stderr (the agents' blocking code).
type Result struct {
	Out    *Output
	Stderr string
	Code   int
}

// addContext adds text for the model (silent when text is empty).
func addContext(event, text string) Result {
	if strings.TrimSpace(text) == "" {
		return Result{}
	}
	return Result{Out: &Output{HookSpecificOutput: &Specific{HookEventName: event, AdditionalContext: text}}}
}

// deny refuses a tool call with the reason the model reads.
func deny(reason string) Result {
	return Result{Out: &Output{HookSpecificOutput: &Specific{HookEventName: PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason}}}
}

// block refuses a Stop (or flags a PostToolUse) with the reason the model reads.
func block(reason string) Result { return Result{Out: &Output{Decision: "block", Reason: reason}} }

// Env is where a hook runs: how it finds the owner's box, and the clock.
type Env struct {
	BoxFlag string // --box baked into the hook command by box wire
	BoxEnv  string // $BOX_DIR
	Cwd     string // the process's working directory (used when the payload has no cwd)
	Now     func() time.Time
	// Budget is the timeout the agent gives the hook (box wire writes it); Run answers within it less a
	// fifth. Zero means 10 s.
	Budget time.Duration
	// Open opens the owner's box services (the composition root's light mode) for the hooks that read or
	// write the memory; nil makes those hooks answer nothing.
	Open func(ctx context.Context, root string) (*Services, error)
}

// Run answers one hook event. It never fails: a missing, frozen or broken box, a bad payload, a panic or
// the budget running out all end in an empty Result (exit 0, nothing emitted) and a line in
// .box/logs/hooks.log when a box was found — a session is never blocked by our bug.
func Run(ctx context.Context, event string, payload []byte, env Env) Result {
	if env.Now == nil {
		env.Now = time.Now
	}
	if !slices.Contains(Events, event) {
		return Result{}
	}
	budget := env.Budget
	if budget <= 0 {
		budget = defaultBudget
	}
	ctx, cancel := context.WithTimeout(ctx, budget-budget/5)
	defer cancel()
	done := make(chan Result, 1)
	var opened atomic.Pointer[session]
	go func() {
		defer func() {
			if r := recover(); r != nil {
				opened.Load().logf("panic in %s: %v\n%s", event, r, debug.Stack())
				done <- Result{}
			}
		}()
		in, err := ParseInput(payload)
		if err != nil {
			done <- Result{}
			return
		}
		if in.Cwd == "" {
			in.Cwd = env.Cwd
		}
		s, err := openSession(in, env)
		if err != nil {
			done <- Result{}
			return
		}
		opened.Store(s)
		res, err := s.answer(ctx, event)
		if err != nil {
			s.logf("%s: %v", event, err)
			res = Result{}
		}
		done <- res
	}()
	select {
	case r := <-done:
		return r
	case <-ctx.Done():
		opened.Load().logf("%s: over its budget; answered nothing", event)
		return Result{}
	}
}

// answer dispatches one event.
func (s *session) answer(ctx context.Context, event string) (Result, error) {
	switch event {
	case SessionStart:
		return s.sessionStart(ctx)
	case UserPromptSubmit:
		return s.promptSubmit(ctx)
	case PreToolUse:
		return s.preToolUse()
	case PostToolUse:
		return s.postToolUse(ctx)
	case PreCompact:
		return Result{}, s.preCompact(ctx)
	case Stop:
		return s.stop()
	case SessionEnd:
		return Result{}, s.sessionEnd(ctx)
	}
	return Result{}, nil
}

// findBox resolves the owner's box: --box, else BOX_DIR, else the nearest box above the session's cwd.
func findBox(in Input, env Env) (string, error) {
	return box.Discover(env.BoxFlag, env.BoxEnv, in.Cwd)
}

// logf appends one line to .box/logs/hooks.log; with no box there is nowhere to log, and that is fine.
func (s *session) logf(format string, args ...any) {
	if s == nil || s.root == "" {
		return
	}
	dir := filepath.Join(s.root, ".box", "logs")
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "hooks.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }() // hooks fail open: a close is not worth failing a session for
	_, _ = fmt.Fprintf(f, "%s %s %s\n", time.Now().UTC().Format(time.RFC3339), s.id, strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "\n    "))
}
