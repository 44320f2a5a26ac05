package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Claude Code in headless mode: `claude -p --output-format stream-json --verbose` writes one JSON
// object a line: system (init), stream_event (the Messages API's own streaming events, with
// --include-partial-messages), assistant (one per finished content block; `error` set when the CLI
// answered itself, as when not signed in), rate_limit_event, result (the run's usage and
// total_cost_usd). Checked against 2.1.332 (docs/BRAIN.md).

// claudeLocked are the flags every run carries: no built-in tools, no MCP servers, no skills, plugins'
// commands, CLAUDE.md files, hooks or settings files, nothing kept on disk, one turn.
var claudeLocked = []string{
	"--tools", "", "--permission-mode", "dontAsk", "--strict-mcp-config", "--safe-mode",
	"--disable-slash-commands", "--setting-sources", "", "--no-session-persistence",
}

var claudeSpec = cliSpec{
	name: "Claude Code", bin: "claude", pkg: ClaudeCodePackage, version: ClaudeCodeVersion,
	account: "your Claude subscription",
	stream: func(sys, _ string, req Request) []string {
		args := append([]string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"}, claudeLocked...)
		args = append(args, "--max-turns", "1")
		if sys != "" {
			args = append(args, "--system-prompt-file", sys)
		}
		if req.Model != "" && req.Model != "default" {
			args = append(args, "--model", req.Model)
		}
		return args
	},
	env: func(req Request) []string {
		// Switches, not secrets: keep the pinned version (no self-update) and send nothing but the calls.
		env := []string{"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
		if req.MaxTokens > 0 {
			env = append(env, "CLAUDE_CODE_MAX_OUTPUT_TOKENS="+strconv.Itoa(req.MaxTokens))
		}
		return env
	},
	parser: func(s *Subscription, req Request, emit func(Delta)) cliStream {
		return &ccStream{cliLines: newCLILines(s, req, emit), asked: req.Model}
	},
}

// ccHead is what every line of Claude Code's stream-json output has; the rest is read by type, so a
// field of the same name in an event the box does not read (system/ui_invalidate's "event" is a
// string) never breaks the line.
type ccHead struct {
	Type    string          `json:"type"`
	Subtype string          `json:"subtype"`
	Parent  json.RawMessage `json:"parent_tool_use_id"`
}

// ccInit is system/init: the session's model and what it may use.
type ccInit struct {
	Model      string            `json:"model"`
	Tools      []json.RawMessage `json:"tools"`
	MCPServers []json.RawMessage `json:"mcp_servers"`
}

// ccStreamEvent is stream_event: the Messages API's own streaming event.
type ccStreamEvent struct {
	Event *anEvent `json:"event"`
}

// ccAssistant is one finished content block; Error is set when the CLI answered itself.
type ccAssistant struct {
	Message *struct {
		Model   string `json:"model"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"message"`
	Error json.RawMessage `json:"error"`
}

type ccRateLimit struct {
	Info *struct {
		Status   string `json:"status"`
		ResetsAt int64  `json:"resetsAt"`
	} `json:"rate_limit_info"`
}

// ccResult ends the run: its usage, Claude Code's cost estimate, and whether it failed.
type ccResult struct {
	Subtype   string   `json:"subtype"`
	IsError   bool     `json:"is_error"`
	Result    string   `json:"result"`
	Stop      string   `json:"stop_reason"`
	Cost      *float64 `json:"total_cost_usd"`
	Usage     *anUsage `json:"usage"`
	APIStatus *int     `json:"api_error_status"`
	Errors    []string `json:"errors"`
}

// ccStream assembles one run: text from text_delta stream events (or from the assistant message
// when none streamed), the sign-in and limit errors, and the result's usage.
type ccStream struct {
	cliLines
	asked    string // the model the request named
	streamed bool   // text deltas arrived since the last assistant message
	apiError string // the assistant message's error, when the CLI answered itself
	apiText  string
	resetsAt int64 // a rejected rate_limit_event's reset time
	result   *ccResult
}

func (s *ccStream) line(b []byte) (bool, error) {
	const op = "provider.stream"
	var h ccHead
	if err := json.Unmarshal(b, &h); err != nil {
		return s.unreadable("a line was not JSON")
	}
	if sub := bytes.TrimSpace(h.Parent); len(sub) > 0 && !bytes.Equal(sub, []byte("null")) {
		return true, nil // a subagent's message; none can start without tools
	}
	bad := func() (bool, error) { return s.unreadable("a " + h.Type + " event was not in its documented shape") }
	switch h.Type {
	case "system":
		if h.Subtype != "init" {
			break
		}
		var ev ccInit
		if json.Unmarshal(b, &ev) != nil {
			return bad()
		}
		if len(ev.Tools) > 0 || len(ev.MCPServers) > 0 {
			// The flags asked for none; a CLI that starts with tools anyway is not run on.
			return false, fail(op, &Failure{Reason: BadRequest, sentence: "Claude Code started with tools of its own, which the box turned off; the box stopped it (check the pinned version in Settings → Brain)."})
		}
		if ev.Model != "" {
			s.model = ev.Model
		}
	case "stream_event":
		var ev ccStreamEvent
		if json.Unmarshal(b, &ev) != nil {
			return bad()
		}
		switch e := ev.Event; {
		case e == nil:
		case e.Type == "message_start" && e.Message != nil && e.Message.Model != "":
			s.model = e.Message.Model
		case e.Type == "content_block_delta" && e.Delta != nil && e.Delta.Type == "text_delta":
			s.streamed, s.got = true, true
			s.text.text(e.Delta.Text)
		}
	case "assistant":
		var ev ccAssistant
		if json.Unmarshal(b, &ev) != nil {
			return bad()
		}
		if ev.Message == nil {
			break
		}
		if code := errorCode(ev.Error); code != "" {
			s.apiError = code
			for _, c := range ev.Message.Content {
				s.apiText += c.Text
			}
			break
		}
		if m := ev.Message.Model; m != "" && m != "<synthetic>" {
			s.model = m
		}
		if !s.streamed {
			for _, c := range ev.Message.Content {
				if c.Type == "text" && c.Text != "" {
					s.got = true
					s.text.text(c.Text)
				}
			}
		}
		s.streamed = false
	case "rate_limit_event":
		var ev ccRateLimit
		if json.Unmarshal(b, &ev) != nil {
			return bad()
		}
		if r := ev.Info; r != nil && r.Status == "rejected" {
			s.resetsAt = r.ResetsAt
		}
	case "result":
		var ev ccResult
		if json.Unmarshal(b, &ev) != nil {
			return bad()
		}
		s.result = &ev
		return false, nil
	}
	return true, nil
}

// errorCode reads the assistant message's error, a string such as "authentication_failed".
func errorCode(raw json.RawMessage) string {
	var code string
	if json.Unmarshal(raw, &code) != nil {
		return ""
	}
	return code
}

func (s *ccStream) finish(ex exitInfo, err error) (Reply, error) {
	const op = "provider.stream"
	res := s.result
	if err == nil && res != nil && !res.IsError && s.apiError == "" && !s.got && res.Result != "" {
		s.text.text(res.Result) // nothing streamed and no assistant text: the result carries it
	}
	reply, err := s.end(err)
	if res != nil {
		if res.Usage != nil {
			reply.Usage = res.Usage.usage()
		}
		if res.Cost != nil {
			reply.Usage.Cost, reply.Usage.HasCost = *res.Cost, true
		}
	}
	reply.Usage.Subscription = true
	switch {
	case err != nil:
		return reply, err
	case res == nil && s.apiError != "":
		return reply, fail(op, s.apiFailure(nil))
	case res == nil && ex.code != 0:
		return reply, fail(op, s.sub.crashed(ex))
	case res == nil:
		return reply, fail(op, brokenFailure(s.sub.spec.name, "the output ended before its result"))
	case res.IsError || s.apiError != "":
		if s.apiError == "max_output_tokens" && !res.IsError {
			reply.Stop = StopLength
			return reply, nil
		}
		return reply, fail(op, s.apiFailure(res.APIStatus))
	}
	if reply.Stop == stopNotEnded {
		reply.Stop = StopEnd
		if res.Stop != "" {
			reply.Stop = anthropicStop(res.Stop)
		}
	}
	return reply, nil
}

// apiFailure turns what the CLI said about a failed call into a Failure: the assistant message's
// error code first, then the API status the result names, then its subtype.
func (s *ccStream) apiFailure(status *int) *Failure {
	sub := s.sub
	detail := s.apiText
	if s.result != nil {
		detail = strings.TrimSpace(detail + " " + s.result.Result + " " + strings.Join(s.result.Errors, " "))
	}
	detail = hideSecrets(detail)
	st := 0
	if status != nil {
		st = *status
	}
	switch code := s.apiError; {
	case code == "authentication_failed" || code == "oauth_org_not_allowed" || code == "verification_required" || st == 401:
		return sub.signedOut(detail)
	case code == "account_on_hold" || st == 403:
		return &Failure{Reason: KeyRefused, Status: st, Detail: detail, sentence: "Claude refused this account (it may be on hold): check it on claude.ai, or pick another brain in Settings → Brain."}
	case code == "billing_error" || st == 402:
		return &Failure{Reason: NoCredit, Status: st, Detail: detail, sentence: "Claude Code says the account has no plan or credit left for this: check it on claude.ai, or pick another brain in Settings → Brain."}
	case code == "rate_limit" || st == 429:
		var retry time.Duration
		if s.resetsAt > 0 {
			if at := time.Unix(s.resetsAt, 0); at.After(sub.cfg.Now()) {
				retry = at.Sub(sub.cfg.Now())
			}
		}
		f := sub.limited(detail, retry, "")
		f.Status = st
		return f
	case code == "model_not_found" || st == 404:
		return &Failure{Reason: BadRequest, Status: st, Detail: detail, sentence: fmt.Sprintf("Claude Code cannot use the model %q: pick another in Settings → Brain.", s.asked)}
	case code == "invalid_request" || st == 400 || st == 413:
		return &Failure{Reason: BadRequest, Status: st, Detail: detail, sentence: "Claude Code refused the request: " + firstSentence(orWord(detail, code)) + "."}
	case code == "overloaded" || code == "server_error" || st >= 500:
		return &Failure{Reason: Down, Status: st, Detail: detail, sentence: "Claude is not answering properly right now; try again in a few minutes."}
	}
	f := sub.down(detail) // error_during_execution and the like: the Detail keeps the CLI's words
	f.Status = st
	return f
}

// firstSentence keeps a CLI's message up to its first full stop, so the box's sentence stays one.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(strings.TrimSpace(s), ".")
}

func orWord(detail, code string) string {
	if detail != "" {
		return detail
	}
	if code != "" {
		return code
	}
	return "no reason given"
}

// parseClaudeStatus reads `claude auth status --json`: {"loggedIn": true, "authMethod": "claude.ai",
// "subscriptionType": "max", …}. Anything else reads as not signed in.
func parseClaudeStatus(b []byte) SignIn {
	var v struct {
		LoggedIn   bool   `json:"loggedIn"`
		AuthMethod string `json:"authMethod"`
		Plan       string `json:"subscriptionType"`
	}
	if json.Unmarshal(bytes.TrimSpace(b), &v) != nil || !v.LoggedIn {
		return SignIn{}
	}
	return SignIn{SignedIn: true, Method: label(v.AuthMethod), Plan: label(v.Plan)}
}

// label keeps a short word from a CLI's output (letters, digits, . _ - and spaces), "" otherwise.
func label(s string) string {
	if len(s) > 40 {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._- ", r)) {
			return ""
		}
	}
	return s
}

// claudeModels asks Claude Code which models this account may use: the initialize request of its
// stream-json control protocol (what the Agent SDKs' supportedModels() sends) answers with them.
func (s *Subscription) claudeModels(ctx context.Context, r runDir) ([]Model, error) {
	const op = "provider.models"
	args := append([]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}, claudeLocked...)
	req := `{"type":"control_request","request_id":"box_models","request":{"subtype":"initialize"}}` + "\n"
	var models []Model
	var perr error
	found := false
	ex, err := s.run(ctx, s.command(r, args, s.spec.env(Request{}), req), func(b []byte) (bool, error) {
		ms, ok, err := parseClaudeModels(b)
		if !ok {
			return true, nil
		}
		models, perr, found = ms, err, true
		return false, nil
	})
	switch {
	case err != nil:
		return nil, err
	case perr != nil:
		return nil, fail(op, brokenFailure(s.spec.name, perr.Error()))
	case !found && ex.code != 0:
		return nil, fail(op, s.crashed(ex))
	case !found:
		return nil, fail(op, brokenFailure(s.spec.name, "it did not answer the initialize request"))
	}
	return models, nil
}

// parseClaudeModels reads one output line: ok says it was the answer to the box's initialize
// request; its models are value (what --model takes), displayName and resolvedModel.
func parseClaudeModels(b []byte) ([]Model, bool, error) {
	var v struct {
		Type     string `json:"type"`
		Response *struct {
			Subtype   string `json:"subtype"`
			RequestID string `json:"request_id"`
			Error     string `json:"error"`
			Response  *struct {
				Models []struct {
					Value    string `json:"value"`
					Resolved string `json:"resolvedModel"`
					Display  string `json:"displayName"`
				} `json:"models"`
			} `json:"response"`
		} `json:"response"`
	}
	if json.Unmarshal(b, &v) != nil || v.Type != "control_response" || v.Response == nil || v.Response.RequestID != "box_models" {
		return nil, false, nil
	}
	if v.Response.Subtype != "success" || v.Response.Response == nil {
		return nil, true, fmt.Errorf("it refused the initialize request")
	}
	var out []Model
	for _, m := range v.Response.Response.Models {
		if m.Value == "" {
			continue
		}
		name := m.Display
		if m.Resolved != "" && m.Resolved != m.Value {
			name = strings.TrimSpace(name + " (" + m.Resolved + ")")
		}
		out = append(out, Model{ID: m.Value, Name: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, true, nil
}
