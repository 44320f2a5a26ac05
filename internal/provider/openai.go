package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// openAI speaks the OpenAI chat completions API, which OpenRouter, Venice, llama.cpp, Ollama and vLLM
// also speak. Written on net/http rather than the official SDK: see docs/BRAIN.md ("Why not the SDKs").
type openAI struct {
	shown  // prints and logs as its name
	cfg    Config
	key    key
	base   *url.URL
	vendor vendor
}

// vendor is what differs between OpenAI-compatible services: the name shown and the key check.
type vendor struct {
	name     string
	keyCheck string // path under the base URL of a cheap call that needs the key
	openAI   bool   // api.openai.com: max_completion_tokens instead of max_tokens
}

func vendorOf(base *url.URL) vendor {
	switch strings.ToLower(base.Hostname()) {
	case "api.openai.com":
		return vendor{name: "OpenAI", keyCheck: "/models", openAI: true}
	case "openrouter.ai":
		return vendor{name: "OpenRouter", keyCheck: "/key"} // its /models answers without a key
	case "api.venice.ai":
		return vendor{name: "Venice", keyCheck: "/api_keys/rate_limits"} // same
	}
	return vendor{name: "The model server at " + base.Host, keyCheck: "/models"}
}

func (p *openAI) Name() string { return p.vendor.name }

func (p *openAI) wire() *wire {
	return &wire{cfg: p.cfg, key: p.key, name: p.vendor.name, header: func(h http.Header) {
		if k := p.key.reveal(); k != "" {
			h.Set("Authorization", "Bearer "+k)
		}
	}}
}

func (p *openAI) url(path string) string { return p.base.String() + path }

// The request and chunk shapes of the chat completions API, only the fields the box uses.
type oaRequest struct {
	Model         string      `json:"model"`
	Messages      []oaMessage `json:"messages"`
	Tools         []oaTool    `json:"tools,omitempty"`
	Stream        bool        `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int `json:"max_tokens,omitempty"`
	MaxCompletionTokens int `json:"max_completion_tokens,omitempty"`
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string      `json:"content"`
			Refusal   *string      `json:"refusal"`
			ToolCalls []oaToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens     int `json:"cached_tokens"`
			CacheWriteTokens int `json:"cache_write_tokens"`
		} `json:"prompt_tokens_details"`
		Cost *float64 `json:"cost"`
	} `json:"usage"`
	Error *struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

func str(s string) *string { return &s }

func (p *openAI) request(req Request) oaRequest {
	out := oaRequest{Model: req.Model, Stream: true}
	out.StreamOptions.IncludeUsage = true
	if p.vendor.openAI {
		out.MaxCompletionTokens = req.MaxTokens
	} else {
		out.MaxTokens = req.MaxTokens
	}
	if req.System != "" {
		out.Messages = append(out.Messages, oaMessage{Role: "system", Content: str(req.System)})
	}
	for _, m := range req.Messages {
		for _, r := range m.Results {
			content := r.Content
			if r.IsError && !strings.HasPrefix(content, "Error") {
				content = "Error: " + content // the chat completions API has no error flag on a tool result
			}
			out.Messages = append(out.Messages, oaMessage{Role: "tool", ToolCallID: r.CallID, Content: str(content)})
		}
		if m.Role == User && m.Text == "" && len(m.Results) > 0 {
			continue
		}
		msg := oaMessage{Role: string(m.Role), Content: str(m.Text)}
		if m.Role == Assistant && len(m.Calls) > 0 {
			if m.Text == "" {
				msg.Content = nil
			}
			for _, c := range m.Calls {
				tc := oaToolCall{ID: c.ID, Type: "function"}
				tc.Function.Name = c.Name
				tc.Function.Arguments = string(inputOrEmpty(c.Input))
				msg.ToolCalls = append(msg.ToolCalls, tc)
			}
		}
		out.Messages = append(out.Messages, msg)
	}
	for _, t := range req.Tools {
		ot := oaTool{Type: "function"}
		ot.Function.Name, ot.Function.Description, ot.Function.Parameters = t.Name, t.Description, schemaOrEmpty(t.Schema)
		out.Tools = append(out.Tools, ot)
	}
	return out
}

func (p *openAI) Stream(ctx context.Context, req Request, emit func(Delta)) (Reply, error) {
	w := p.wire()
	s := &oaStream{assembly: w.assembly(emit)}
	return s.finish(req.Model, w.stream(ctx, p.url("/chat/completions"), p.request(req), s.handle))
}

// oaStream assembles one chat completions stream: text deltas, tool call deltas by index, the last
// usage seen (the usage-only chunk after finish_reason, or llama.cpp's on the finish chunk), [DONE].
type oaStream struct {
	assembly
	done bool
}

func (s *oaStream) handle(ev event) (bool, error) {
	const op = "provider.stream"
	if bytes.Equal(bytes.TrimSpace(ev.data), []byte("[DONE]")) {
		s.done = true
		return false, nil
	}
	var ch oaChunk
	if err := json.Unmarshal(ev.data, &ch); err != nil {
		return false, fail(op, brokenFailure(s.name, "a chunk was not JSON"))
	}
	if ch.Error != nil {
		return false, fail(op, streamFailure(s.name, s.key.reveal(), ch.Error.Type, codeString(ch.Error.Code), ch.Error.Message))
	}
	if ch.Model != "" {
		s.reply.Model = ch.Model
	}
	if u := ch.Usage; u != nil {
		s.reply.Usage = Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
		if d := u.PromptTokensDetails; d != nil {
			s.reply.Usage.CacheReadTokens, s.reply.Usage.CacheWriteTokens = d.CachedTokens, d.CacheWriteTokens
		}
		if u.Cost != nil {
			s.reply.Usage.Cost, s.reply.Usage.HasCost = *u.Cost, true
		}
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		for _, t := range []*string{c.Delta.Content, c.Delta.Refusal} {
			if t != nil {
				s.text(*t)
			}
		}
		for i, tc := range c.Delta.ToolCalls {
			idx := i
			if tc.Index != nil {
				idx = *tc.Index
			}
			pc := s.calls[idx]
			if pc == nil {
				var err error
				if pc, err = s.startCall(idx, "", ""); err != nil {
					return false, err
				}
			}
			if tc.ID != "" {
				pc.id = tc.ID
			}
			if tc.Function.Name != "" && pc.name == "" {
				pc.name = tc.Function.Name
				s.emit(Delta{Tool: pc.name})
			}
			if !pc.add(tc.Function.Arguments) {
				return false, fail(op, brokenFailure(s.name, "a tool call's arguments are too long"))
			}
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			s.reply.Stop = openAIStop(*c.FinishReason)
		}
	}
	return true, nil
}

func (s *oaStream) finish(model string, err error) (Reply, error) {
	const op = "provider.stream"
	reply := s.reply
	reply.Calls = assemble(s.calls)
	if len(reply.Calls) > 0 && (reply.Stop == StopEnd || reply.Stop == stopNotEnded && s.done) {
		reply.Stop = StopToolUse // some local servers say "stop" after a tool call
	}
	if reply.Model == "" {
		reply.Model = model
	}
	if err != nil {
		return reply, err
	}
	if reply.Stop == stopNotEnded && !s.done {
		return reply, fail(op, brokenFailure(s.name, "the stream ended before the reply did"))
	}
	if reply.Stop == stopNotEnded {
		reply.Stop = StopEnd
	}
	return reply, nil
}

func openAIStop(r string) Stop {
	switch r {
	case "stop":
		return StopEnd
	case "tool_calls", "function_call":
		return StopToolUse
	case "length":
		return StopLength
	case "content_filter":
		return StopRefusal
	}
	return StopOther
}

// streamFailure is an error sent inside a stream that had already begun (OpenRouter does this when the
// upstream model fails midway).
func streamFailure(name, key, typ, code, msg string) *Failure {
	f := &Failure{Detail: scrub(msg, key)}
	switch {
	case code == "insufficient_quota" || typ == "insufficient_quota" || code == "402" || typ == "billing_error":
		f.Reason = NoCredit
		f.sentence = name + " says the account has no credit left: add credit there, or pick another brain in Settings → Brain."
	case code == "rate_limit_exceeded" || code == "429" || typ == "rate_limit_error":
		f.Reason = RateLimited
		f.sentence = name + " is limiting how fast this key may ask; try again in a minute."
	case typ == "overloaded_error":
		f.Reason = Down
		f.sentence = name + " is overloaded right now; try again in a few minutes."
	default:
		f.Reason = Down
		f.sentence = name + " failed while answering; try again in a few minutes."
	}
	return f
}

func codeString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

func (p *openAI) Models(ctx context.Context) ([]Model, error) {
	const op = "provider.models"
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			Name          string `json:"name"`
			Type          string `json:"type"`
			ContextLength int    `json:"context_length"` // OpenRouter
			Pricing       *struct {
				Prompt     string `json:"prompt"` // OpenRouter: dollars per token, as text
				Completion string `json:"completion"`
			} `json:"pricing"`
			Spec *struct { // Venice
				Name          string `json:"name"`
				ContextTokens int    `json:"availableContextTokens"`
				Pricing       *struct {
					Input  struct{ USD float64 } `json:"input"`
					Output struct{ USD float64 } `json:"output"`
				} `json:"pricing"`
			} `json:"model_spec"`
		} `json:"data"`
	}
	if err := p.wire().getJSON(ctx, op, p.url("/models"), &list); err != nil {
		return nil, err
	}
	var out []Model
	for _, d := range list.Data {
		if d.ID == "" || !textModel(d.Type) {
			continue
		}
		m := Model{ID: d.ID, Name: d.Name, ContextTokens: d.ContextLength}
		if pr := d.Pricing; pr != nil {
			in, err1 := strconv.ParseFloat(pr.Prompt, 64)
			outp, err2 := strconv.ParseFloat(pr.Completion, 64)
			if err1 == nil && err2 == nil && in >= 0 && outp >= 0 {
				m.Price = &Price{In: in * 1e6, Out: outp * 1e6}
			}
		}
		if s := d.Spec; s != nil {
			if m.Name == "" {
				m.Name = s.Name
			}
			if m.ContextTokens == 0 {
				m.ContextTokens = s.ContextTokens
			}
			if s.Pricing != nil {
				m.Price = &Price{In: s.Pricing.Input.USD, Out: s.Pricing.Output.USD}
			}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// textModel drops the image, speech and embedding models a mixed list (Venice) marks by type.
func textModel(typ string) bool {
	switch typ {
	case "", "text", "chat", "llm", "model":
		return true
	}
	return false
}

func (p *openAI) CheckKey(ctx context.Context) error {
	var any json.RawMessage
	return p.wire().getJSON(ctx, "provider.check", p.url(p.vendor.keyCheck), &any)
}

// assembly is what both protocols' streams build: the reply and its tool calls by index.
type assembly struct {
	name  string
	key   key
	emit  func(Delta)
	reply Reply
	calls map[int]*partialCall
}

func (w *wire) assembly(emit func(Delta)) assembly {
	return assembly{name: w.name, key: w.key, emit: emit, calls: map[int]*partialCall{}}
}

// startCall begins the tool call at idx; a name announces it to emit.
func (a *assembly) startCall(idx int, id, name string) (*partialCall, error) {
	if len(a.calls) >= maxCalls {
		return nil, fail("provider.stream", brokenFailure(a.name, "too many tool calls"))
	}
	pc := &partialCall{order: idx, id: id, name: name}
	a.calls[idx] = pc
	if name != "" {
		a.emit(Delta{Tool: name})
	}
	return pc, nil
}

// text adds a piece of the reply's text and passes it on.
func (a *assembly) text(t string) {
	if t != "" {
		a.reply.Text += t
		a.emit(Delta{Text: t})
	}
}

// partialCall is a tool call being assembled from stream deltas.
type partialCall struct {
	order    int
	id, name string
	args     strings.Builder
}

// maxArgs bounds one tool call's arguments.
const maxArgs = 1 << 20

func (c *partialCall) add(s string) bool {
	if c.args.Len()+len(s) > maxArgs {
		return false
	}
	c.args.WriteString(s)
	return true
}

// assemble orders the calls and checks their arguments; a call whose arguments are not a JSON object
// gets {} and keeps what the model sent in BadInput.
func assemble(calls map[int]*partialCall) []ToolCall {
	var list []*partialCall
	for _, c := range calls {
		list = append(list, c)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].order < list[j].order })
	var out []ToolCall
	for _, c := range list {
		tc := ToolCall{ID: c.id, Name: c.name}
		raw := strings.TrimSpace(c.args.String())
		var obj map[string]json.RawMessage
		switch {
		case raw == "":
			tc.Input = json.RawMessage("{}")
		case json.Unmarshal([]byte(raw), &obj) == nil && obj != nil:
			tc.Input = json.RawMessage(raw)
		default:
			tc.Input, tc.BadInput = json.RawMessage("{}"), raw
		}
		out = append(out, tc)
	}
	return out
}

func inputOrEmpty(in json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(in)) == 0 {
		return json.RawMessage("{}")
	}
	return in
}

func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(s)) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return s
}

var _ Provider = (*openAI)(nil)
