package provider

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/lazyregexp"
)

// Codex in non-interactive mode: `codex exec --json` writes one JSON object a line: thread.started,
// turn.started, item.started/updated/completed (agent_message, reasoning, error, …), error (also
// the transient "Reconnecting…" notes), turn.completed with the turn's usage, or turn.failed.
// An agent message arrives whole, on item.completed: Codex streams no text deltas in this mode.
// Checked against 0.171.0 (docs/BRAIN.md).

// codexConfig are the config overrides every Codex command carries: sign-in kept in a file in its
// HOME (not a keyring shared with other programs), no update check.
var codexConfig = []string{"-c", `cli_auth_credentials_store="file"`, "-c", "check_for_update_on_startup=false"}

// codexLocked are what a thinking run adds: a read-only sandbox, no approvals, no web search, no
// environment context, and the tools and features that reach outside turned off.
var codexLocked = []string{
	"--sandbox", "read-only", "--skip-git-repo-check", "--ephemeral", "--ignore-user-config", "--ignore-rules", "--color", "never",
	"-c", `approval_policy="never"`, "-c", `web_search="disabled"`, "-c", "include_environment_context=false", "-c", "include_apps_instructions=false",
	"--disable", "shell_tool", "--disable", "unified_exec", "--disable", "apps", "--disable", "plugins", "--disable", "hooks",
	"--disable", "image_generation", "--disable", "browser_use", "--disable", "computer_use", "--disable", "in_app_browser",
	"--disable", "multi_agent", "--disable", "view_image", "--disable", "goals", "--disable", "tool_suggest", "--disable", "skill_search",
}

var codexSpec = cliSpec{
	name: "Codex", bin: "codex", pkg: CodexPackage, version: CodexVersion,
	account: "your ChatGPT plan",
	stream: func(sys, work string, req Request) []string {
		args := append([]string{"exec", "--json", "-C", work}, codexLocked...)
		args = append(args, codexConfig...)
		if b, err := json.Marshal(sys); err == nil && sys != "" { // a JSON string is a TOML basic string
			args = append(args, "-c", "model_instructions_file="+string(b))
		}
		if req.Model != "" && req.Model != "default" {
			args = append(args, "-m", req.Model)
		}
		return append(args, "-") // the prompt comes on stdin
	},
	env: func(Request) []string { return nil },
	parser: func(s *Subscription, req Request, emit func(Delta)) cliStream {
		return &cxStream{cliLines: newCLILines(s, req, emit)}
	},
}

// cxEvent is one line of `codex exec --json`, only the fields the box reads. Each is decoded as
// raw JSON first and read only for the event types that carry it, so another type's field of the
// same name cannot break a line.
type cxEvent struct {
	Type    string          `json:"type"`
	Usage   json.RawMessage `json:"usage"`   // turn.completed
	Message json.RawMessage `json:"message"` // error
	Error   json.RawMessage `json:"error"`   // turn.failed
	Item    json.RawMessage `json:"item"`    // item.completed
}

type cxUsage struct {
	Input  int `json:"input_tokens"`
	Cached int `json:"cached_input_tokens"`
	Output int `json:"output_tokens"`
}

type cxItem struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type cxStream struct {
	cliLines
	errors []string // the error events and the turn's failure, for classification
	done   string   // turn.completed or turn.failed, once it came
	usage  *cxUsage
}

func (s *cxStream) line(b []byte) (bool, error) {
	const op = "provider.stream"
	var ev cxEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		return s.unreadable("a line was not JSON")
	}
	bad := func() (bool, error) { return s.unreadable("a " + ev.Type + " event was not in its documented shape") }
	switch ev.Type {
	case "item.completed":
		var it cxItem
		if json.Unmarshal(ev.Item, &it) != nil {
			return bad()
		}
		if it.Type == "agent_message" && it.Text != "" {
			if s.got {
				s.text.text("\n\n")
			}
			s.got = true
			s.text.text(it.Text)
		}
	case "error":
		var msg string
		if json.Unmarshal(ev.Message, &msg) != nil {
			return bad()
		}
		if strings.HasPrefix(msg, "Reconnecting") {
			if strings.Contains(msg, "waiting for network") {
				return false, fail(op, &Failure{Reason: Down, Detail: hideSecrets(msg), sentence: "Codex cannot reach OpenAI: the box seems to be offline; try again when it is online."})
			}
			return true, nil // Codex retries by itself; a lasting failure ends in turn.failed
		}
		s.errors = append(s.errors, msg)
	case "turn.completed":
		var u cxUsage
		if json.Unmarshal(ev.Usage, &u) != nil {
			return bad()
		}
		s.done, s.usage = ev.Type, &u
		return false, nil
	case "turn.failed":
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(ev.Error, &e) != nil {
			return bad()
		}
		s.errors = append(s.errors, e.Message)
		s.done = ev.Type
		return false, nil
	}
	return true, nil
}

func (s *cxStream) finish(ex exitInfo, err error) (Reply, error) {
	const op = "provider.stream"
	reply, err := s.end(err)
	if u := s.usage; u != nil {
		reply.Usage = Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.Cached}
	}
	reply.Usage.Subscription = true
	switch {
	case err != nil:
		return reply, err
	case s.done == "turn.completed":
		if reply.Stop == stopNotEnded {
			reply.Stop = StopEnd
		}
		return reply, nil
	case s.done == "" && len(s.errors) == 0 && ex.code != 0:
		if f := codexFailure(s.sub, []string{ex.stderr}); f.Reason == SignedOut {
			return reply, fail(op, f) // "Error: not logged in" before any event
		}
		return reply, fail(op, s.sub.crashed(ex))
	case s.done == "" && len(s.errors) == 0:
		return reply, fail(op, brokenFailure(s.sub.spec.name, "the output ended before the turn did"))
	}
	return reply, fail(op, codexFailure(s.sub, s.errors))
}

var tryAgain = lazyregexp.New(`(?i)try again (at|in) ([A-Za-z0-9 :,/]{1,40}[A-Za-z0-9])`)

// codexFailure classifies what Codex said went wrong. Codex passes the service's words on (a 401,
// "You've hit your usage limit …"), and its turn.failed may only say the stream broke, so every
// message of the run counts, the most telling first.
func codexFailure(sub *Subscription, msgs []string) *Failure {
	all := strings.Join(msgs, " | ")
	low := strings.ToLower(all)
	detail := hideSecrets(all)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(low, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("usage limit"):
		when := ""
		if m := tryAgain.FindStringSubmatch(all); m != nil {
			when = strings.ToLower(m[1]) + " " + m[2]
		}
		return sub.limited(detail, 0, when)
	case has("401", "unauthorized", "not logged in", "log in again", "sign in again", "login again", "refresh token", "token has expired", "token expired", "missing bearer", "please run `codex login`"):
		return sub.signedOut(detail)
	case has("402", "payment required"):
		return &Failure{Reason: NoCredit, Detail: detail, sentence: "Codex says the ChatGPT plan has no credit left for this: check it on chatgpt.com, or pick another brain in Settings → Brain."}
	case has("429", "too many requests", "rate limit"):
		return &Failure{Reason: RateLimited, Detail: detail, sentence: "OpenAI is limiting how fast Codex may ask; try again in a minute."}
	case has("400 bad request", "model is not supported", "does not exist", "model_not_found", "unsupported model", "invalid_request"):
		return &Failure{Reason: BadRequest, Detail: detail, sentence: "Codex refused the request: " + firstSentence(orWord(detail, "no reason given")) + "."}
	}
	return sub.down(detail)
}

// parseCodexStatus reads `codex login status` (it writes to stderr): exit 0 and "Logged in using
// ChatGPT" (or "… an API key - sk-…", of which the box keeps only the method), exit 1 "Not logged in".
func parseCodexStatus(out string, code int) SignIn {
	_, rest, ok := strings.Cut(out, "Logged in using ")
	if code != 0 || !ok {
		return SignIn{}
	}
	method, _, _ := strings.Cut(rest, "\n")
	method, _, _ = strings.Cut(method, " | ") // the box joins the lines of stderr so
	method, _, _ = strings.Cut(method, " - ")
	method = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(method), "an "))
	if strings.Contains(strings.ToLower(method), "api key") {
		return SignIn{SignedIn: true, Method: "API key"}
	}
	return SignIn{SignedIn: true, Method: label(method)}
}

// codexModels reads `codex debug models`: the model catalog this Codex knows, as JSON.
func (s *Subscription) codexModels(ctx context.Context, r runDir) ([]Model, error) {
	const op = "provider.models"
	var out []byte
	args := append(append([]string{"debug"}, codexConfig...), "models")
	ex, err := s.run(ctx, s.command(r, args, nil, ""), func(b []byte) (bool, error) {
		if len(out) < 32<<20 {
			out = append(append(out, b...), '\n')
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if ex.code != 0 {
		return nil, fail(op, s.crashed(ex))
	}
	models, ok := parseCodexModels(out)
	if !ok {
		return nil, fail(op, brokenFailure(s.spec.name, "its model list was not JSON"))
	}
	return models, nil
}

// parseCodexModels reads {"models":[{"slug","display_name","visibility","context_window"}…]}; the
// models Codex hides from its own picker are left out.
func parseCodexModels(b []byte) ([]Model, bool) {
	var v struct {
		Models []struct {
			Slug       string `json:"slug"`
			Display    string `json:"display_name"`
			Visibility string `json:"visibility"`
			Context    int    `json:"context_window"`
		} `json:"models"`
	}
	if json.Unmarshal(b, &v) != nil {
		return nil, false
	}
	var out []Model
	for _, m := range v.Models {
		if m.Slug == "" || (m.Visibility != "" && m.Visibility != "list") {
			continue
		}
		out = append(out, Model{ID: m.Slug, Name: m.Display, ContextTokens: max(m.Context, 0)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, true
}
