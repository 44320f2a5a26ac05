package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/providertest"
)

const testKey = "sk-test-4f9a2c7e1b8d3f6a0c5e9b2d7a4f1c8e"

// both runs a test against each protocol's stand-in server.
var both = []struct {
	kind  provider.Kind
	start func(t testing.TB, key string, replies ...providertest.Reply) *providertest.Server
}{
	{provider.OpenAI, providertest.OpenAI},
	{provider.Anthropic, providertest.Anthropic},
}

func open(t *testing.T, kind provider.Kind, srv *providertest.Server, key string) provider.Provider {
	t.Helper()
	p, err := provider.New(provider.Config{Kind: kind, BaseURL: srv.URL, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStreamText(t *testing.T) {
	for _, b := range both {
		t.Run(string(b.kind), func(t *testing.T) {
			srv := b.start(t, testKey, providertest.Reply{Model: "model-a-2025", Text: []string{"Leo ", "swims on ", "Thursdays."},
				InputTokens: 120, OutputTokens: 7, CachedTokens: 20})
			p := open(t, b.kind, srv, testKey)
			var pieces []string
			reply, err := p.Stream(context.Background(), provider.Request{Model: "model-a", System: "You are the box.",
				Messages: []provider.Message{{Role: provider.User, Text: "When does Leo swim?"}}}, func(d provider.Delta) {
				pieces = append(pieces, d.Text)
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"Leo ", "swims on ", "Thursdays."}; !reflect.DeepEqual(pieces, want) {
				t.Errorf("pieces %q, want %q", pieces, want)
			}
			if reply.Text != "Leo swims on Thursdays." || reply.Stop != provider.StopEnd || reply.Model != "model-a-2025" {
				t.Errorf("reply %+v", reply)
			}
			// OpenAI counts cached tokens inside prompt_tokens; Anthropic apart, and they are added in.
			wantIn := 120
			if b.kind == provider.Anthropic {
				wantIn = 140
			}
			if u := reply.Usage; u.InputTokens != wantIn || u.OutputTokens != 7 || u.CacheReadTokens != 20 || u.HasCost {
				t.Errorf("usage %+v, want in %d out 7 cached 20 without cost", u, wantIn)
			}
			req := srv.Requests()[0]
			if req["stream"] != true || req["model"] != "model-a" {
				t.Errorf("request %v", req)
			}
			h := srv.Headers()[0]
			switch b.kind {
			case provider.OpenAI:
				if opts, _ := req["stream_options"].(map[string]any); opts["include_usage"] != true {
					t.Errorf("stream_options %v: usage must be asked for", req["stream_options"])
				}
				msgs := req["messages"].([]any)
				if sys := msgs[0].(map[string]any); sys["role"] != "system" || sys["content"] != "You are the box." {
					t.Errorf("system message %v", sys)
				}
				if h.Get("Authorization") != "Bearer "+testKey {
					t.Errorf("Authorization %q", h.Get("Authorization"))
				}
			case provider.Anthropic:
				if req["system"] != "You are the box." || req["max_tokens"] != float64(4096) {
					t.Errorf("request %v", req)
				}
				if h.Get("X-Api-Key") != testKey || h.Get("Anthropic-Version") != "2023-06-01" {
					t.Errorf("headers %v", h)
				}
			}
		})
	}
}

// TestToolRoundTrip: the model calls two tools with arguments in pieces; the results go back in the
// provider's own shape and the model answers.
func TestToolRoundTrip(t *testing.T) {
	for _, b := range both {
		t.Run(string(b.kind), func(t *testing.T) {
			srv := b.start(t, testKey,
				providertest.Reply{Text: []string{"Saving that."}, Calls: []providertest.Call{
					{ID: "call_1", Name: "memory_remember", Args: []string{`{"te`, `xt":"Leo swims`, ` Thursdays"}`}},
					{ID: "call_2", Name: "memory_search", Args: []string{`{"query":`, `"leo"}`}},
				}, InputTokens: 50, OutputTokens: 30},
				providertest.Reply{Text: []string{"Saved."}, InputTokens: 90, OutputTokens: 2})
			p := open(t, b.kind, srv, testKey)
			tools := []provider.Tool{
				{Name: "memory_remember", Description: "Save one fact.", Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
				{Name: "memory_search", Description: "Search.", Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
			}
			msgs := []provider.Message{{Role: provider.User, Text: "Remember Leo swims Thursdays"}}
			var started []string
			reply, err := p.Stream(context.Background(), provider.Request{Model: "m", Messages: msgs, Tools: tools}, func(d provider.Delta) {
				if d.Tool != "" {
					started = append(started, d.Tool)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if reply.Stop != provider.StopToolUse || len(reply.Calls) != 2 {
				t.Fatalf("reply %+v", reply)
			}
			if c := reply.Calls[0]; c.ID != "call_1" || c.Name != "memory_remember" || string(c.Input) != `{"text":"Leo swims Thursdays"}` || c.BadInput != "" {
				t.Errorf("call 0 %+v", c)
			}
			if c := reply.Calls[1]; c.ID != "call_2" || string(c.Input) != `{"query":"leo"}` {
				t.Errorf("call 1 %+v", c)
			}
			if !reflect.DeepEqual(started, []string{"memory_remember", "memory_search"}) {
				t.Errorf("tool deltas %v", started)
			}
			msgs = append(msgs, provider.Message{Role: provider.Assistant, Text: reply.Text, Calls: reply.Calls},
				provider.Message{Role: provider.User, Results: []provider.ToolResult{
					{CallID: "call_1", Content: "Saved to the inbox."},
					{CallID: "call_2", Content: "no such note", IsError: true},
				}})
			reply, err = p.Stream(context.Background(), provider.Request{Model: "m", Messages: msgs, Tools: tools}, func(provider.Delta) {})
			if err != nil || reply.Text != "Saved." || reply.Stop != provider.StopEnd {
				t.Fatalf("second reply %+v, %v", reply, err)
			}
			checkToolWire(t, b.kind, srv.Requests())
		})
	}
}

// checkToolWire checks the requests carry the tools and the fed-back calls and results as each API
// documents them.
func checkToolWire(t *testing.T, kind provider.Kind, reqs []map[string]any) {
	t.Helper()
	get := func(v any, path ...any) any {
		for _, p := range path {
			switch k := p.(type) {
			case string:
				v = v.(map[string]any)[k]
			case int:
				v = v.([]any)[k]
			}
		}
		return v
	}
	second := reqs[1]
	switch kind {
	case provider.OpenAI:
		if get(reqs[0], "tools", 0, "type") != "function" || get(reqs[0], "tools", 0, "function", "name") != "memory_remember" ||
			get(reqs[0], "tools", 0, "function", "parameters", "required", 0) != "text" {
			t.Errorf("tools %v", reqs[0]["tools"])
		}
		// user, assistant with tool_calls, tool, tool
		if get(second, "messages", 1, "role") != "assistant" ||
			get(second, "messages", 1, "tool_calls", 0, "id") != "call_1" ||
			get(second, "messages", 1, "tool_calls", 0, "function", "arguments") != `{"text":"Leo swims Thursdays"}` {
			t.Errorf("assistant message %v", get(second, "messages", 1))
		}
		if get(second, "messages", 2, "role") != "tool" || get(second, "messages", 2, "tool_call_id") != "call_1" ||
			get(second, "messages", 2, "content") != "Saved to the inbox." {
			t.Errorf("tool message %v", get(second, "messages", 2))
		}
		if get(second, "messages", 3, "tool_call_id") != "call_2" || get(second, "messages", 3, "content") != "Error: no such note" {
			t.Errorf("tool error message %v", get(second, "messages", 3))
		}
		if n := len(second["messages"].([]any)); n != 4 {
			t.Errorf("%d messages, want 4", n)
		}
	case provider.Anthropic:
		if get(reqs[0], "tools", 0, "name") != "memory_remember" || get(reqs[0], "tools", 0, "input_schema", "type") != "object" {
			t.Errorf("tools %v", reqs[0]["tools"])
		}
		if get(second, "messages", 1, "role") != "assistant" || get(second, "messages", 1, "content", 0, "type") != "text" ||
			get(second, "messages", 1, "content", 1, "type") != "tool_use" || get(second, "messages", 1, "content", 1, "id") != "call_1" ||
			get(second, "messages", 1, "content", 1, "input", "text") != "Leo swims Thursdays" {
			t.Errorf("assistant message %v", get(second, "messages", 1))
		}
		if get(second, "messages", 2, "role") != "user" || get(second, "messages", 2, "content", 0, "type") != "tool_result" ||
			get(second, "messages", 2, "content", 0, "tool_use_id") != "call_1" || get(second, "messages", 2, "content", 1, "is_error") != true {
			t.Errorf("tool results %v", get(second, "messages", 2))
		}
	}
}

func TestBadToolArguments(t *testing.T) {
	for _, b := range both {
		t.Run(string(b.kind), func(t *testing.T) {
			srv := b.start(t, "", providertest.Reply{Calls: []providertest.Call{{ID: "c1", Name: "memory_remember", Args: []string{`{"text": "unfinished`}}}})
			reply, err := open(t, b.kind, srv, "").Stream(context.Background(), provider.Request{Model: "m"}, func(provider.Delta) {})
			if err != nil {
				t.Fatal(err)
			}
			if c := reply.Calls[0]; string(c.Input) != "{}" || c.BadInput != `{"text": "unfinished` {
				t.Errorf("call %+v: invalid arguments must come back as {} with BadInput", c)
			}
		})
	}
}

// TestFailures: each way a provider says no becomes its Reason, its errs kind and one sentence that
// never holds the key.
func TestFailures(t *testing.T) {
	cases := []struct {
		name   string
		kind   provider.Kind
		reply  providertest.Reply
		key    string // the key the client sends; "" means the right one
		reason provider.Reason
		ekind  errs.Kind
		says   string
		retry  time.Duration
	}{
		{"openai wrong key", provider.OpenAI, providertest.Reply{}, "sk-test-wrong0000000000000000000000000abcd", provider.KeyRefused, errs.Unauthorized, "refused the key (HTTP 401)", 0},
		{"anthropic wrong key", provider.Anthropic, providertest.Reply{}, "sk-ant-wrong000000000000000000000000abcd", provider.KeyRefused, errs.Unauthorized, "refused the key (HTTP 401)", 0},
		{"anthropic permission", provider.Anthropic, providertest.Reply{Fail: &providertest.Fail{Status: 403, Type: "permission_error", Message: "Your API key does not have permission to use the specified resource."}}, "", provider.KeyRefused, errs.Unauthorized, "HTTP 403", 0},
		{"openai no quota", provider.OpenAI, providertest.Reply{Fail: &providertest.Fail{Status: 429, Type: "insufficient_quota", Code: "insufficient_quota", Message: "You exceeded your current quota, please check your plan and billing details."}}, "", provider.NoCredit, errs.Refused, "no credit left", 0},
		{"openrouter 402", provider.OpenAI, providertest.Reply{Fail: &providertest.Fail{Status: 402, Message: "Insufficient credits. Add more using https://openrouter.ai/credits"}}, "", provider.NoCredit, errs.Refused, "no credit left", 0},
		{"anthropic credit", provider.Anthropic, providertest.Reply{Fail: &providertest.Fail{Status: 400, Type: "invalid_request_error", Message: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}, "", provider.NoCredit, errs.Refused, "no credit left", 0},
		{"openai rate limit", provider.OpenAI, providertest.Reply{Fail: &providertest.Fail{Status: 429, Type: "requests", Code: "rate_limit_exceeded", Message: "Rate limit reached for gpt-4o-mini", Header: map[string]string{"Retry-After": "20"}}}, "", provider.RateLimited, errs.Limited, "try again in 20 s", 20 * time.Second},
		{"anthropic rate limit", provider.Anthropic, providertest.Reply{Fail: &providertest.Fail{Status: 429, Type: "rate_limit_error", Message: "Number of request tokens has exceeded your per-minute rate limit", Header: map[string]string{"Retry-After": "90"}}}, "", provider.RateLimited, errs.Limited, "try again in 2 min", 90 * time.Second},
		{"openai down", provider.OpenAI, providertest.Reply{Fail: &providertest.Fail{Status: 503, Type: "server_error", Message: "The server is overloaded"}}, "", provider.Down, errs.Busy, "not answering properly (HTTP 503)", 0},
		{"anthropic overloaded", provider.Anthropic, providertest.Reply{Fail: &providertest.Fail{Status: 529, Type: "overloaded_error", Message: "Overloaded"}}, "", provider.Down, errs.Busy, "HTTP 529", 0},
		{"unknown model", provider.OpenAI, providertest.Reply{Fail: &providertest.Fail{Status: 404, Type: "invalid_request_error", Code: "model_not_found", Message: "The model `gpt-9` does not exist or you do not have access to it."}}, "", provider.BadRequest, errs.Invalid, "does not exist", 0},
		{"anthropic mid-stream overload", provider.Anthropic, providertest.Reply{Text: []string{"Hel"}, StreamError: &providertest.Fail{Type: "overloaded_error", Message: "Overloaded"}}, "", provider.Down, errs.Busy, "overloaded right now", 0},
		{"openrouter mid-stream error", provider.OpenAI, providertest.Reply{Text: []string{"Hel"}, StreamError: &providertest.Fail{Code: "server_error", Message: "Provider disconnected"}}, "", provider.Down, errs.Busy, "failed while answering", 0},
		{"openai cut", provider.OpenAI, providertest.Reply{Text: []string{"a", "b", "c"}, CutAfter: 2}, "", provider.BrokenStream, errs.Other, "could not be read", 0},
		{"anthropic cut", provider.Anthropic, providertest.Reply{Text: []string{"a", "b", "c"}, CutAfter: 4}, "", provider.BrokenStream, errs.Other, "could not be read", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := providertest.OpenAI
			if c.kind == provider.Anthropic {
				start = providertest.Anthropic
			}
			srv := start(t, testKey, c.reply)
			key := testKey
			if c.key != "" {
				key = c.key
			}
			_, err := open(t, c.kind, srv, key).Stream(context.Background(), provider.Request{Model: "m",
				Messages: []provider.Message{{Role: provider.User, Text: "hi"}}}, func(provider.Delta) {})
			checkFailure(t, err, key, c.reason, c.ekind, c.says)
			if f := provider.FailureOf(err); f != nil && f.RetryAfter != c.retry {
				t.Errorf("RetryAfter %v, want %v", f.RetryAfter, c.retry)
			}
		})
	}
}

func checkFailure(t *testing.T, err error, key string, reason provider.Reason, kind errs.Kind, says string) {
	t.Helper()
	f := provider.FailureOf(err)
	if f == nil {
		t.Fatalf("err %v: want a Failure", err)
	}
	if f.Reason != reason || errs.KindOf(err) != kind {
		t.Errorf("reason %s kind %s, want %s %s (%v)", f.Reason, errs.KindOf(err), reason, kind, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, says) {
		t.Errorf("sentence %q does not say %q", msg, says)
	}
	if strings.Count(msg, ". ") > 0 || !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "?") {
		t.Errorf("sentence %q: want one sentence", msg)
	}
	for _, s := range []string{msg, f.Detail, fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", f)} {
		if strings.Contains(s, key) || strings.Contains(s, key[:8]+"*") {
			t.Errorf("the key leaks into %q", s)
		}
	}
}

func TestTimeouts(t *testing.T) {
	for _, b := range both {
		t.Run(string(b.kind), func(t *testing.T) {
			hold := make(chan struct{})
			defer close(hold)
			srv := b.start(t, testKey, providertest.Reply{Hold: hold}, providertest.Reply{Text: []string{"a", "b"}, Pause: 2 * time.Second})
			for i, cfg := range []provider.Config{
				{Kind: b.kind, BaseURL: srv.URL, Key: testKey, FirstByte: 100 * time.Millisecond},
				{Kind: b.kind, BaseURL: srv.URL, Key: testKey, Idle: 100 * time.Millisecond},
			} {
				p, _ := provider.New(cfg)
				_, err := p.Stream(context.Background(), provider.Request{Model: "m"}, func(provider.Delta) {})
				want := []string{"did not answer within 100ms", "did not go on within 100ms"}[i]
				checkFailure(t, err, testKey, provider.Timeout, errs.Busy, want)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, _ := provider.New(provider.Config{Kind: provider.OpenAI, BaseURL: "http://" + addr + "/v1", Key: testKey})
	_, err = p.Stream(context.Background(), provider.Request{Model: "m"}, func(provider.Delta) {})
	checkFailure(t, err, testKey, provider.Down, errs.Busy, "refused the connection")
	if !strings.HasPrefix(err.Error(), "The model server at "+addr) {
		t.Errorf("sentence %q: want it to name the server", err)
	}
}

// TestCancel: the caller stopping is not a provider failure.
func TestCancel(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	srv := providertest.OpenAI(t, "", providertest.Reply{Hold: hold})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := open(t, provider.OpenAI, srv, "").Stream(ctx, provider.Request{Model: "m"}, func(provider.Delta) {})
	if err == nil || provider.FailureOf(err) != nil {
		t.Fatalf("err %v: want the caller's cancellation, not a Failure", err)
	}
}

func TestModels(t *testing.T) {
	for _, b := range both {
		t.Run(string(b.kind), func(t *testing.T) {
			srv := b.start(t, testKey)
			models, err := open(t, b.kind, srv, testKey).Models(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(models) != 2 || models[0].ID != "model-a" || models[1].ID != "model-b" {
				t.Errorf("models %+v", models)
			}
			_, err = open(t, b.kind, srv, "sk-wrong-key-000000000000000000000").Models(context.Background())
			checkFailure(t, err, "sk-wrong-key-000000000000000000000", provider.KeyRefused, errs.Unauthorized, "refused the key")
		})
	}
	t.Run("prices from the list", func(t *testing.T) {
		srv := providertest.OpenAI(t, "")
		// OpenRouter gives dollars per token as text; Venice dollars per million in model_spec; Venice
		// lists image models too.
		srv.Models = `{"data":[
			{"id":"anthropic/claude-haiku","name":"Claude Haiku","context_length":200000,"pricing":{"prompt":"0.000001","completion":"0.000005","request":"0","image":"0"}},
			{"id":"venice-uncensored","type":"text","object":"model","model_spec":{"name":"Venice Uncensored","availableContextTokens":32768,"pricing":{"input":{"usd":0.2,"diem":0.2},"output":{"usd":0.9,"diem":0.9}}}},
			{"id":"flux-dev","type":"image","model_spec":{"name":"FLUX"}}]}`
		models, err := open(t, provider.OpenAI, srv, "").Models(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := []provider.Model{
			{ID: "anthropic/claude-haiku", Name: "Claude Haiku", ContextTokens: 200000, Price: &provider.Price{In: 1, Out: 5}},
			{ID: "venice-uncensored", Name: "Venice Uncensored", ContextTokens: 32768, Price: &provider.Price{In: 0.2, Out: 0.9}},
		}
		if len(models) != 2 {
			t.Fatalf("models %+v", models)
		}
		for i := range want {
			g, w := models[i], want[i]
			if g.ID != w.ID || g.Name != w.Name || g.ContextTokens != w.ContextTokens || g.Price == nil ||
				!near(g.Price.In, w.Price.In) || !near(g.Price.Out, w.Price.Out) {
				t.Errorf("model %d: %+v %+v, want %+v %+v", i, g, g.Price, w, w.Price)
			}
		}
	})
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestCheckKey: the cheap authenticated call, per service. OpenRouter's and Venice's model lists answer
// without a key, so their own key endpoints are used; the host decides, so the client dials the
// stand-in for those names.
func TestCheckKey(t *testing.T) {
	for _, b := range both {
		srv := b.start(t, testKey)
		if err := open(t, b.kind, srv, testKey).CheckKey(context.Background()); err != nil {
			t.Errorf("%s: good key: %v", b.kind, err)
		}
		err := open(t, b.kind, srv, "sk-wrong-key-000000000000000000000").CheckKey(context.Background())
		checkFailure(t, err, "sk-wrong-key-000000000000000000000", provider.KeyRefused, errs.Unauthorized, "refused the key")
	}
	for host, path := range map[string]string{"openrouter.ai": "/v1/key", "api.venice.ai": "/v1/api_keys/rate_limits", "api.openai.com": "/v1/models"} {
		srv := providertest.OpenAI(t, testKey)
		addr := strings.TrimPrefix(strings.TrimSuffix(srv.URL, "/v1"), "http://")
		tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}
		p, _ := provider.New(provider.Config{Kind: provider.OpenAI, BaseURL: "http://" + host + "/v1", Key: testKey, HTTP: &http.Client{Transport: tr}})
		if err := p.CheckKey(context.Background()); err != nil {
			t.Errorf("%s: %v", host, err)
		}
		if got := srv.Paths(); len(got) != 1 || got[0] != path {
			t.Errorf("%s: key check asked %v, want %s", host, got, path)
		}
	}
}

func TestNames(t *testing.T) {
	for base, want := range map[string]string{"": "OpenAI", "https://openrouter.ai/api/v1": "OpenRouter",
		"https://api.venice.ai/api/v1": "Venice", "http://127.0.0.1:8080/v1": "The model server at 127.0.0.1:8080"} {
		p, err := provider.New(provider.Config{Kind: provider.OpenAI, BaseURL: base})
		if err != nil || p.Name() != want {
			t.Errorf("%q: %v %v, want %s", base, p, err, want)
		}
	}
	p, _ := provider.New(provider.Config{Kind: provider.Anthropic})
	if p.Name() != "Anthropic" {
		t.Errorf("anthropic name %q", p.Name())
	}
}

func TestNewRefuses(t *testing.T) {
	for _, cfg := range []provider.Config{
		{Kind: "gemini"},
		{Kind: provider.OpenAI, BaseURL: "ftp://example.com"},
		{Kind: provider.OpenAI, BaseURL: "https://user:pass@example.com/v1"},
		{Kind: provider.OpenAI, BaseURL: "https://example.com/v1?key=x"},
		{Kind: provider.OpenAI, Key: "sk-abc\nX-Evil: 1"},
	} {
		if _, err := provider.New(cfg); !errs.Is(err, errs.Invalid) {
			t.Errorf("%v: err %v, want Invalid", cfg, err)
		}
	}
}

// TestConfigHidesKey: printing or logging a Config shows the last four characters at most.
func TestConfigHidesKey(t *testing.T) {
	cfg := provider.Config{Kind: provider.OpenAI, Key: testKey}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("brain", "cfg", cfg)
	enc, _ := json.Marshal(cfg)
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%s", cfg),
		fmt.Sprintf("%d", cfg), fmt.Sprintf("%x", cfg), logged.String(), string(enc)} {
		if strings.Contains(s, testKey[:12]) || strings.Contains(s, fmt.Sprintf("%x", testKey[4:16])) || !strings.Contains(s, "…"+testKey[len(testKey)-4:]) && !strings.Contains(s, fmt.Sprintf("%x", "…"+testKey[len(testKey)-4:])) {
			t.Errorf("printed config %q", s)
		}
	}
}

// TestNoRedirect: a redirect would carry the key's header elsewhere; it is not followed, with the
// package's client or with one the caller gives (which is copied, never changed).
func TestNoRedirect(t *testing.T) {
	got := make(chan string, 4)
	other := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization") + r.Header.Get("X-Api-Key")
	})}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go other.Serve(ln)
	defer other.Close()
	redirect := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+ln.Addr().String()+r.URL.Path, http.StatusTemporaryRedirect)
	})}
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	go redirect.Serve(ln2)
	defer redirect.Close()
	for _, kind := range []provider.Kind{provider.OpenAI, provider.Anthropic} {
		for _, client := range []*http.Client{nil, {}} {
			name := fmt.Sprintf("%s, own client %v", kind, client != nil)
			p, _ := provider.New(provider.Config{Kind: kind, BaseURL: "http://" + ln2.Addr().String() + "/v1", Key: testKey, HTTP: client})
			_, err := p.Stream(context.Background(), provider.Request{Model: "m"}, func(provider.Delta) {})
			if provider.FailureOf(err) == nil {
				t.Errorf("%s: err %v: want a Failure", name, err)
			}
			if _, err := p.Models(context.Background()); provider.FailureOf(err) == nil {
				t.Errorf("%s: models: err %v: want a Failure", name, err)
			}
			// A followed redirect reaches the other server before the call returns.
			for len(got) > 0 {
				t.Errorf("%s: the redirect was followed, carrying %q", name, <-got)
			}
			if client != nil && client.CheckRedirect != nil {
				t.Errorf("%s: the caller's client was changed", name)
			}
		}
	}
}

// TestProviderHidesKey: a provider printed, logged or encoded whole, alone or inside another struct
// (where fmt reads unexported fields without their methods), never shows the key.
func TestProviderHidesKey(t *testing.T) {
	for _, kind := range []provider.Kind{provider.OpenAI, provider.Anthropic} {
		p, err := provider.New(provider.Config{Kind: kind, Key: testKey})
		if err != nil {
			t.Fatal(err)
		}
		type hidden struct{ p provider.Provider }
		type open struct{ P provider.Provider }
		var text, js strings.Builder
		slog.New(slog.NewTextHandler(&text, nil)).Info("brain", "provider", p, "in", hidden{p}, "open", open{p})
		slog.New(slog.NewJSONHandler(&js, nil)).Info("brain", "provider", p, "in", hidden{p}, "open", open{p})
		enc, _ := json.Marshal(map[string]any{"p": p, "open": open{p}})
		out := []string{fmt.Sprintf("%v %+v %#v %s %x %d %q", p, p, p, p, p, p, p),
			fmt.Sprintf("%v %+v %#v %x %d", hidden{p}, hidden{p}, hidden{p}, hidden{p}, hidden{p}),
			fmt.Sprintf("%v %+v %#v", open{p}, open{p}, open{p}), text.String(), js.String(), string(enc)}
		for _, o := range out {
			if strings.Contains(o, testKey[:12]) || strings.Contains(o, testKey[12:24]) || strings.Contains(o, fmt.Sprintf("%x", testKey[4:16])) {
				t.Errorf("%s: printed %q", kind, o)
			}
		}
		if !strings.Contains(out[0], "provider("+p.Name()+")") {
			t.Errorf("%s: a provider prints as %q", kind, out[0])
		}
	}
}
