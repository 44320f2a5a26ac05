package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// anthropic speaks the Anthropic Messages API (version 2023-06-01), on net/http like openAI.
type anthropic struct {
	shown // prints and logs as its name
	cfg   Config
	key   key
	base  *url.URL
}

// anthropicVersion is the API version header every request carries.
const anthropicVersion = "2023-06-01"

// defaultMaxTokens is sent when a request names none: the Messages API requires max_tokens.
const defaultMaxTokens = 4096

func (p *anthropic) Name() string {
	if strings.EqualFold(p.base.Hostname(), "api.anthropic.com") {
		return "Anthropic"
	}
	return "The Anthropic-compatible server at " + p.base.Host
}

func (p *anthropic) wire() *wire {
	return &wire{cfg: p.cfg, key: p.key, name: p.Name(), header: func(h http.Header) {
		if k := p.key.reveal(); k != "" {
			h.Set("X-Api-Key", k)
		}
		h.Set("Anthropic-Version", anthropicVersion)
	}}
}

// url joins the API path; a base URL given with its /v1 works the same as one without.
func (p *anthropic) url(path string) string {
	return strings.TrimSuffix(p.base.String(), "/v1") + "/v1" + path
}

type anRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    string      `json:"system,omitempty"`
	Messages  []anMessage `json:"messages"`
	Tools     []anTool    `json:"tools,omitempty"`
	Stream    bool        `json:"stream"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anUsage struct {
	InputTokens   *int `json:"input_tokens"`
	OutputTokens  *int `json:"output_tokens"`
	CacheCreation *int `json:"cache_creation_input_tokens"`
	CacheRead     *int `json:"cache_read_input_tokens"`
}

type anEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Model string  `json:"model"`
		Usage anUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock *struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (p *anthropic) request(req Request) anRequest {
	out := anRequest{Model: req.Model, MaxTokens: req.MaxTokens, System: req.System, Stream: true}
	if out.MaxTokens == 0 {
		out.MaxTokens = defaultMaxTokens
	}
	for _, m := range req.Messages {
		msg := anMessage{Role: string(m.Role)}
		for _, r := range m.Results {
			msg.Content = append(msg.Content, anBlock{Type: "tool_result", ToolUseID: r.CallID, Content: r.Content, IsError: r.IsError})
		}
		if m.Text != "" { // the API refuses an empty text block
			msg.Content = append(msg.Content, anBlock{Type: "text", Text: m.Text})
		}
		for _, c := range m.Calls {
			msg.Content = append(msg.Content, anBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: inputOrEmpty(c.Input)})
		}
		out.Messages = append(out.Messages, msg)
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: schemaOrEmpty(t.Schema)})
	}
	return out
}

func (p *anthropic) Stream(ctx context.Context, req Request, emit func(Delta)) (Reply, error) {
	w := p.wire()
	s := &anStream{assembly: w.assembly(emit)}
	return s.finish(req.Model, w.stream(ctx, p.url("/messages"), p.request(req), s.handle))
}

// anStream assembles one Messages stream: blocks by index, tool input from input_json_delta, usage
// from message_start then message_delta's cumulative counts, and the end at message_stop.
type anStream struct {
	assembly
	usage   anUsage
	stopped bool
}

func (s *anStream) handle(e event) (bool, error) {
	const op = "provider.stream"
	var ev anEvent
	if err := json.Unmarshal(e.data, &ev); err != nil {
		return false, fail(op, brokenFailure(s.name, "an event was not JSON"))
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			s.reply.Model = ev.Message.Model
			s.usage.merge(ev.Message.Usage)
		}
	case "content_block_start":
		b := ev.ContentBlock
		switch {
		case b == nil:
		case b.Type == "tool_use":
			if _, err := s.startCall(ev.Index, b.ID, b.Name); err != nil {
				return false, err
			}
		case b.Type == "text":
			s.text(b.Text)
		}
	case "content_block_delta":
		switch d := ev.Delta; {
		case d == nil:
		case d.Type == "text_delta":
			s.text(d.Text)
		case d.Type == "input_json_delta":
			if c := s.calls[ev.Index]; c != nil && !c.add(d.PartialJSON) {
				return false, fail(op, brokenFailure(s.name, "a tool call's input is too long"))
			}
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			s.reply.Stop = anthropicStop(ev.Delta.StopReason)
		}
		if ev.Usage != nil {
			s.usage.merge(*ev.Usage) // counts here are cumulative: they replace the start's
		}
	case "message_stop":
		s.stopped = true
		return false, nil
	case "error":
		if ev.Error == nil {
			return false, fail(op, brokenFailure(s.name, "an error event without its error"))
		}
		return false, fail(op, streamFailure(s.name, s.key.reveal(), ev.Error.Type, "", ev.Error.Message))
	}
	return true, nil
}

func (s *anStream) finish(model string, err error) (Reply, error) {
	const op = "provider.stream"
	reply := s.reply
	reply.Calls = assemble(s.calls)
	reply.Usage = s.usage.usage()
	if reply.Model == "" {
		reply.Model = model
	}
	if err != nil {
		return reply, err
	}
	if !s.stopped {
		return reply, fail(op, brokenFailure(s.name, "the stream ended before message_stop"))
	}
	if reply.Stop == stopNotEnded {
		reply.Stop = StopEnd
	}
	return reply, nil
}

func (u *anUsage) merge(v anUsage) {
	for _, f := range [][2]**int{{&u.InputTokens, &v.InputTokens}, {&u.OutputTokens, &v.OutputTokens},
		{&u.CacheCreation, &v.CacheCreation}, {&u.CacheRead, &v.CacheRead}} {
		if *f[1] != nil {
			*f[0] = *f[1]
		}
	}
}

// usage adds the cached input tokens into InputTokens: Anthropic counts them apart (docs/BRAIN.md).
func (u anUsage) usage() Usage {
	n := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	read, write := n(u.CacheRead), n(u.CacheCreation)
	return Usage{InputTokens: n(u.InputTokens) + read + write, OutputTokens: n(u.OutputTokens),
		CacheReadTokens: read, CacheWriteTokens: write}
}

func anthropicStop(r string) Stop {
	switch r {
	case "end_turn", "stop_sequence":
		return StopEnd
	case "tool_use":
		return StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return StopLength
	case "refusal":
		return StopRefusal
	}
	return StopOther
}

// maxModelPages bounds the model list's pagination.
const maxModelPages = 20

func (p *anthropic) Models(ctx context.Context) ([]Model, error) {
	const op = "provider.models"
	var out []Model
	after := ""
	for range maxModelPages {
		var page struct {
			Data []struct {
				ID          string `json:"id"`
				DisplayName string `json:"display_name"`
			} `json:"data"`
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		q := url.Values{"limit": {"1000"}}
		if after != "" {
			q.Set("after_id", after)
		}
		if err := p.wire().getJSON(ctx, op, p.url("/models?"+q.Encode()), &page); err != nil {
			return nil, err
		}
		for _, d := range page.Data {
			if d.ID != "" {
				out = append(out, Model{ID: d.ID, Name: d.DisplayName})
			}
		}
		if !page.HasMore || page.LastID == "" || page.LastID == after {
			break
		}
		after = page.LastID
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (p *anthropic) CheckKey(ctx context.Context) error {
	var any json.RawMessage
	return p.wire().getJSON(ctx, "provider.check", p.url("/models?limit=1"), &any)
}

var _ Provider = (*anthropic)(nil)
