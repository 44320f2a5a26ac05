// Package providertest is test code only: local HTTP servers on 127.0.0.1:0 that speak the model
// providers' own wire formats (OpenAI chat completions with SSE chunks, the Anthropic Messages API with
// its named SSE events, their error bodies and model lists), scripted reply by reply, and stand-ins for
// the subscription CLIs (claude, codex) and npm that speak their documented output (cli.go). It imports
// nothing of the box, so any layer's tests can talk to a provider through the real protocol.
package providertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reply is one scripted answer to a POST. With Fail set, the server answers with that error instead.
type Reply struct {
	Model        string
	Text         []string // streamed in this order, one event each
	Calls        []Call
	Stop         string // the wire's own stop reason; "" picks stop/end_turn or tool_calls/tool_use
	InputTokens  int
	OutputTokens int
	CachedTokens int      // OpenAI: prompt_tokens_details.cached_tokens; Anthropic: cache_read_input_tokens
	Cost         *float64 // OpenRouter's usage.cost
	Fail         *Fail
	// StreamError, when set, is sent as an error event after the text (Anthropic's "error" event,
	// OpenRouter's error chunk), and the stream ends there.
	StreamError *Fail
	// CutAfter > 0 closes the connection after that many events, without the stream's end.
	CutAfter int
	// Hold, when set, delays the response headers until it is closed or the client goes away.
	Hold chan struct{}
	// Pause waits between two streamed events.
	Pause time.Duration
}

// Call is one tool call; its arguments arrive in the given pieces.
type Call struct {
	ID, Name string
	Args     []string
}

// Fail is an error answer in the provider's own error shape.
type Fail struct {
	Status  int
	Type    string // OpenAI error.type / Anthropic error.type
	Code    string // OpenAI error.code
	Message string
	Header  map[string]string
}

// Timing is the server's side of one reply's time to first token.
type Timing struct{ Arrived, FirstToken time.Time }

// Server is a running stand-in. Requests holds each POST body decoded, in order.
type Server struct {
	URL    string // base URL as a client is configured with it (OpenAI: …/v1; Anthropic: the root)
	Key    string // the key it accepts; "" accepts any request without checking
	Models string // the JSON body of the model list; "" lists "model-a" and "model-b"
	// Timings, when set, receives for each streamed reply when its request arrived and when its first
	// text event was flushed: the provider's own time to first token.
	Timings chan Timing

	t        testing.TB
	mu       sync.Mutex
	replies  []Reply
	requests []map[string]any
	headers  []http.Header
	paths    []string
}

// OpenAI starts a server speaking the chat completions API under /v1.
func OpenAI(t testing.TB, key string, replies ...Reply) *Server {
	s := &Server{Key: key, t: t, replies: replies}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.openAIChat)
	mux.HandleFunc("GET /v1/models", s.list(openAIAuth, `{"object":"list","data":[{"id":"model-a","object":"model","created":1700000000,"owned_by":"system"},{"id":"model-b","object":"model","created":1700000000,"owned_by":"system"}]}`))
	mux.HandleFunc("GET /v1/key", s.list(openAIAuth, `{"data":{"label":"sk-or-v1-abc...xyz","limit":null,"usage":0.5,"is_free_tier":false}}`))
	mux.HandleFunc("GET /v1/api_keys/rate_limits", s.list(openAIAuth, `{"data":{"accessPermitted":true,"apiTier":{"id":"paid","isCharged":true},"rateLimits":[]}}`))
	srv := httptest.NewServer(s.record(mux))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

// Anthropic starts a server speaking the Messages API under /v1.
func Anthropic(t testing.TB, key string, replies ...Reply) *Server {
	s := &Server{Key: key, t: t, replies: replies}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
	mux.HandleFunc("GET /v1/models", s.list(anthropicAuth, `{"data":[{"type":"model","id":"model-a","display_name":"Model A","created_at":"2025-02-19T00:00:00Z"},{"type":"model","id":"model-b","display_name":"Model B","created_at":"2025-02-19T00:00:00Z"}],"has_more":false,"first_id":"model-a","last_id":"model-b"}`))
	srv := httptest.NewServer(s.record(mux))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Push adds replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the POST bodies received so far.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.requests...)
}

// Headers returns the headers of every request received so far, GETs included.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// Paths returns the path and query of every request received so far.
func (s *Server) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

func (s *Server) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.paths = append(s.paths, r.URL.RequestURI())
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (s *Server) next() (Reply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.replies) == 0 {
		return Reply{}, false
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r, true
}

type dialect struct {
	header  func(r *http.Request) string
	refused Fail
	errBody func(f Fail) string
}

var openAIAuth = dialect{
	header: func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") },
	refused: Fail{Status: 401, Type: "invalid_request_error", Code: "invalid_api_key",
		Message: "Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys."},
	errBody: func(f Fail) string {
		code := "null"
		if f.Code != "" {
			code = fmt.Sprintf("%q", f.Code)
		}
		return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%s}}`, f.Message, f.Type, code)
	},
}

var anthropicAuth = dialect{
	header:  func(r *http.Request) string { return r.Header.Get("X-Api-Key") },
	refused: Fail{Status: 401, Type: "authentication_error", Message: "invalid x-api-key"},
	errBody: func(f Fail) string {
		return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`, f.Type, f.Message)
	},
}

// authorized answers 401 in the dialect's shape when the key is wrong. OpenAI's message echoes the
// key masked (first 8 and last 4 characters), as the real service does.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, d dialect) bool {
	if s.Key == "" {
		return true
	}
	got := d.header(r)
	if got == s.Key {
		return true
	}
	f := d.refused
	if strings.Contains(f.Message, "%s") {
		masked := got
		if len(got) > 12 {
			masked = got[:8] + strings.Repeat("*", len(got)-12) + got[len(got)-4:]
		}
		f.Message = fmt.Sprintf(f.Message, masked)
	}
	writeFail(w, d, f)
	return false
}

func writeFail(w http.ResponseWriter, d dialect, f Fail) {
	for k, v := range f.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.Status)
	_, _ = fmt.Fprint(w, d.errBody(f))
}

func (s *Server) list(d dialect, def string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(w, r, d) {
			return
		}
		body := def
		if s.Models != "" && strings.HasSuffix(r.URL.Path, "/models") {
			body = s.Models
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, body)
	}
}

// begin decodes the POST, takes the next reply and handles Hold and Fail; ok says to stream it.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, d dialect) (Reply, map[string]any, bool) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeFail(w, d, Fail{Status: 400, Type: "invalid_request_error", Message: "the body is not JSON"})
		return Reply{}, nil, false
	}
	s.mu.Lock()
	s.requests = append(s.requests, body)
	s.mu.Unlock()
	if !s.authorized(w, r, d) {
		return Reply{}, nil, false
	}
	rep, ok := s.next()
	if !ok {
		s.t.Errorf("providertest: a request came with no reply scripted")
		writeFail(w, d, Fail{Status: 500, Type: "api_error", Message: "no reply scripted"})
		return Reply{}, nil, false
	}
	if rep.Hold != nil {
		select {
		case <-rep.Hold:
		case <-r.Context().Done():
			return Reply{}, nil, false
		}
	}
	if rep.Fail != nil {
		writeFail(w, d, *rep.Fail)
		return Reply{}, nil, false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return rep, body, true
}

// streamer writes events, flushing each, and stops after CutAfter events.
type streamer struct {
	ctx     context.Context
	w       http.ResponseWriter
	rep     Reply
	n       int
	timings chan Timing
	arrived time.Time
	gotText bool
}

func (st *streamer) send(name, data string, text bool) bool {
	if st.rep.CutAfter > 0 && st.n >= st.rep.CutAfter {
		return false
	}
	if st.n > 0 && st.rep.Pause > 0 {
		select {
		case <-time.After(st.rep.Pause):
		case <-st.ctx.Done():
		}
	}
	if st.ctx.Err() != nil {
		return false
	}
	st.n++
	if name != "" {
		_, _ = fmt.Fprintf(st.w, "event: %s\n", name)
	}
	_, _ = fmt.Fprintf(st.w, "data: %s\n\n", data)
	st.w.(http.Flusher).Flush()
	if text && !st.gotText && st.timings != nil {
		st.gotText = true
		st.timings <- Timing{Arrived: st.arrived, FirstToken: time.Now()}
	}
	return true
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (s *Server) openAIChat(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	rep, body, ok := s.begin(w, r, openAIAuth)
	if !ok {
		return
	}
	model := rep.Model
	if model == "" {
		model, _ = body["model"].(string)
	}
	st := &streamer{ctx: r.Context(), w: w, rep: rep, timings: s.Timings, arrived: arrived}
	chunk := func(choices string, usage string) string {
		return fmt.Sprintf(`{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":%s,"service_tier":"default","system_fingerprint":"fp_3a668b2eb1","choices":%s,"usage":%s}`, js(model), choices, usage)
	}
	choice := func(delta, finish string) string {
		return fmt.Sprintf(`[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]`, delta, finish)
	}
	if !st.send("", chunk(choice(`{"role":"assistant","content":"","refusal":null}`, "null"), "null"), false) {
		return
	}
	for _, t := range rep.Text {
		if !st.send("", chunk(choice(fmt.Sprintf(`{"content":%s}`, js(t)), "null"), "null"), true) {
			return
		}
	}
	for i, c := range rep.Calls {
		first := fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]}`, i, js(c.ID), js(c.Name))
		if !st.send("", chunk(choice(first, "null"), "null"), false) {
			return
		}
		for _, a := range c.Args {
			d := fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, js(a))
			if !st.send("", chunk(choice(d, "null"), "null"), false) {
				return
			}
		}
	}
	if f := rep.StreamError; f != nil { // OpenRouter's mid-stream error chunk
		st.send("", fmt.Sprintf(`{"id":"cmpl-abc123","object":"chat.completion.chunk","created":1741569952,"model":%s,"provider":"openai","error":{"code":%s,"message":%q},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`, js(model), js(f.Code), f.Message), false)
		return
	}
	stop := rep.Stop
	if stop == "" {
		stop = "stop"
		if len(rep.Calls) > 0 {
			stop = "tool_calls"
		}
	}
	if !st.send("", chunk(choice(`{}`, js(stop)), "null"), false) {
		return
	}
	if opts, _ := body["stream_options"].(map[string]any); opts != nil && opts["include_usage"] == true {
		usage := map[string]any{
			"prompt_tokens": rep.InputTokens, "completion_tokens": rep.OutputTokens, "total_tokens": rep.InputTokens + rep.OutputTokens,
			"prompt_tokens_details":     map[string]any{"cached_tokens": rep.CachedTokens, "audio_tokens": 0},
			"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
		}
		if rep.Cost != nil {
			usage["cost"] = *rep.Cost
		}
		if !st.send("", chunk("[]", js(usage)), false) {
			return
		}
	}
	st.send("", "[DONE]", false)
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	if r.Header.Get("Anthropic-Version") == "" {
		writeFail(w, anthropicAuth, Fail{Status: 400, Type: "invalid_request_error", Message: "anthropic-version: header is required"})
		return
	}
	rep, body, ok := s.begin(w, r, anthropicAuth)
	if !ok {
		return
	}
	if _, ok := body["max_tokens"].(float64); !ok {
		s.t.Errorf("providertest: an Anthropic request without max_tokens")
	}
	model := rep.Model
	if model == "" {
		model, _ = body["model"].(string)
	}
	st := &streamer{ctx: r.Context(), w: w, rep: rep, timings: s.Timings, arrived: arrived}
	start := fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY","type":"message","role":"assistant","content":[],"model":%s,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":%d,"output_tokens":1}}}`, js(model), rep.InputTokens, rep.CachedTokens)
	if !st.send("message_start", start, false) {
		return
	}
	idx := 0
	if len(rep.Text) > 0 {
		if !st.send("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, idx), false) ||
			!st.send("ping", `{"type": "ping"}`, false) {
			return
		}
		for _, t := range rep.Text {
			if !st.send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, idx, js(t)), true) {
				return
			}
		}
		if !st.send("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, idx), false) {
			return
		}
		idx++
	}
	if f := rep.StreamError; f != nil {
		st.send("error", fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, f.Type, f.Message), false)
		return
	}
	for _, c := range rep.Calls {
		if !st.send("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, idx, js(c.ID), js(c.Name)), false) {
			return
		}
		for _, a := range append([]string{""}, c.Args...) {
			if !st.send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, idx, js(a)), false) {
				return
			}
		}
		if !st.send("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, idx), false) {
			return
		}
		idx++
	}
	stop := rep.Stop
	if stop == "" {
		stop = "end_turn"
		if len(rep.Calls) > 0 {
			stop = "tool_use"
		}
	}
	if !st.send("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, js(stop), rep.OutputTokens), false) {
		return
	}
	st.send("message_stop", `{"type":"message_stop"}`, false)
}
