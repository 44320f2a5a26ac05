// Package provider owns talking to a model service with the owner's own key or subscription: one
// interface for streaming a reply with tool calls and usage, listing models and checking a key, over
// the OpenAI-compatible chat completions API, the Anthropic Messages API, and the Claude Code and
// Codex CLIs signed in to the owner's plan. It must not touch the box, the vault or the ledger: the
// key (or the CLI's folder) comes in, a reply and the provider's own usage figures go out
// (docs/BRAIN.md).
package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// Provider is one model service.
type Provider interface {
	// Stream sends one request and calls emit with each piece of the reply as it arrives; it returns the
	// whole reply with its tool calls assembled and the provider's own usage. On an error the reply holds
	// what arrived before it (its usage may be partial).
	Stream(ctx context.Context, req Request, emit func(Delta)) (Reply, error)
	// Models lists the models from the provider's own list endpoint, sorted by id.
	Models(ctx context.Context) ([]Model, error)
	// CheckKey makes one cheap authenticated call: nil means the key is accepted.
	CheckKey(ctx context.Context) error
	// Name is the provider as the owner knows it ("OpenAI", "Anthropic", "the model server at …").
	Name() string
}

// Kind is the wire protocol a provider speaks.
type Kind string

const (
	OpenAI    Kind = "openai"    // any OpenAI-compatible chat completions endpoint
	Anthropic Kind = "anthropic" // the Anthropic Messages API
)

// Config says how to reach a provider. Key is the owner's secret: Config's String, GoString, Format,
// LogValue and MarshalJSON never print it, and no error of this package contains it. A Config is built
// and handed to New at once: kept in a field of another struct that is not exported, its Key would
// print (fmt reads such a field without its methods). New keeps the key only as a key (below).
type Config struct {
	Kind    Kind
	BaseURL string // "" means the vendor's own: https://api.openai.com/v1 or https://api.anthropic.com
	Key     string // may be empty for a local server without auth
	// HTTP is the client to use; nil means one with the package's connection timeouts.
	HTTP *http.Client
	// FirstByte bounds the wait for the response headers; 0 means 60 s.
	FirstByte time.Duration
	// Idle bounds the silence between two streamed events; 0 means 90 s.
	Idle time.Duration
	// Now is the clock for Retry-After dates; nil means time.Now.
	Now func() time.Time
}

func (c Config) String() string {
	return fmt.Sprintf("provider.Config{Kind:%s BaseURL:%s Key:%s}", c.Kind, c.BaseURL, Redact(c.Key))
}
func (c Config) GoString() string              { return c.String() }
func (c Config) Format(f fmt.State, verb rune) { _, _ = fmt.Fprint(f, c.String()) }
func (c Config) LogValue() slog.Value          { return slog.StringValue(c.String()) }
func (c Config) MarshalJSON() ([]byte, error)  { return json.Marshal(c.String()) }

// key is how a provider holds the owner's key: behind a pointer, so a provider printed whole (where fmt
// reads unexported fields without their methods) shows an address, and printed alone it shows the
// last four characters.
type key struct{ p *string }

func hide(s string) key { return key{p: &s} }

// reveal is the key itself, for the request header and for scrubbing a failure's text.
func (k key) reveal() string {
	if k.p == nil {
		return ""
	}
	return *k.p
}

func (k key) String() string                { return Redact(k.reveal()) }
func (k key) GoString() string              { return k.String() }
func (k key) Format(f fmt.State, verb rune) { _, _ = fmt.Fprint(f, k.String()) }
func (k key) LogValue() slog.Value          { return slog.StringValue(k.String()) }
func (k key) MarshalJSON() ([]byte, error)  { return json.Marshal(k.String()) }

// shown is how a provider prints and logs: its name, never its configuration.
type shown struct{ name func() string }

func (s shown) String() string                { return "provider(" + s.name() + ")" }
func (s shown) GoString() string              { return s.String() }
func (s shown) Format(f fmt.State, verb rune) { _, _ = fmt.Fprint(f, s.String()) }
func (s shown) LogValue() slog.Value          { return slog.StringValue(s.String()) }
func (s shown) MarshalJSON() ([]byte, error)  { return json.Marshal(s.String()) }

// Redact shows a key as its last four characters only ("…abcd"); short keys show nothing.
func Redact(key string) string {
	if key == "" {
		return "none"
	}
	if len(key) < 12 {
		return "…"
	}
	return "…" + key[len(key)-4:]
}

// New returns the provider for cfg.
func New(cfg Config) (Provider, error) {
	const op = "provider.new"
	if cfg.FirstByte == 0 {
		cfg.FirstByte = 60 * time.Second
	}
	if cfg.Idle == 0 {
		cfg.Idle = 90 * time.Second
	}
	if cfg.HTTP == nil {
		cfg.HTTP = defaultClient()
	} else {
		// The caller's client, copied so that it too never follows a redirect with the key's header.
		c := *cfg.HTTP
		c.CheckRedirect = refuseRedirect
		cfg.HTTP = &c
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if strings.ContainsAny(cfg.Key, "\r\n") {
		return nil, errs.E(op, errs.Invalid, "The key has a line break in it; paste it again as one line.")
	}
	k := hide(cfg.Key)
	cfg.Key = ""
	switch cfg.Kind {
	case OpenAI:
		base, err := baseURL(cfg.BaseURL, "https://api.openai.com/v1")
		if err != nil {
			return nil, err
		}
		p := &openAI{cfg: cfg, key: k, base: base, vendor: vendorOf(base)}
		p.shown = shown{p.Name}
		return p, nil
	case Anthropic:
		base, err := baseURL(cfg.BaseURL, "https://api.anthropic.com")
		if err != nil {
			return nil, err
		}
		p := &anthropic{cfg: cfg, key: k, base: base}
		p.shown = shown{p.Name}
		return p, nil
	}
	return nil, errs.E(op, errs.Invalid, "Unknown provider %q: use openai (any OpenAI-compatible server) or anthropic.", cfg.Kind)
}

// baseURL checks a base URL: http or https, a host, no credentials or query; the trailing slash goes.
func baseURL(raw, def string) (*url.URL, error) {
	const op = "provider.new"
	if raw == "" {
		raw = def
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errs.E(op, errs.Invalid, "The base URL %q is not an http or https address like https://api.openai.com/v1.", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errs.E(op, errs.Invalid, "The base URL must not carry a user, password, query or fragment; put the key in the key field.")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 0 // Stream bounds the first byte itself, so its error names it
	return &http.Client{Transport: t, CheckRedirect: refuseRedirect}
}

// refuseRedirect: a redirect could carry the key's header to another host; a provider never needs one.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Role is who speaks a message.
type Role string

const (
	User      Role = "user"
	Assistant Role = "assistant"
)

// Request is one call to a model.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []Tool
	MaxTokens int // 0 means the provider's default (Anthropic needs one: 4096)
}

// Message is one turn of the conversation. An assistant message may carry tool calls; the user message
// after it carries their results (and may add text).
type Message struct {
	Role    Role
	Text    string
	Calls   []ToolCall   // Assistant only
	Results []ToolResult // User only: answers to the previous message's calls, in any order
}

// Tool is a function the model may call; Schema is its JSON schema (an object).
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// ToolCall is the model asking to run a tool. Input is always a JSON object: when the model's
// arguments were not valid JSON, Input is {} and BadInput holds what it sent, so the caller answers
// with an error instead of running the tool on a guess.
type ToolCall struct {
	ID       string
	Name     string
	Input    json.RawMessage
	BadInput string
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string
	Content string
	IsError bool
}

// Delta is one piece of a streamed reply: text, or the name of a tool the model starts to call.
type Delta struct {
	Text string
	Tool string
}

// Stop is why a reply ended.
type Stop string

const (
	StopEnd      Stop = "end"        // the model finished
	StopToolUse  Stop = "tool_use"   // the model wants its tool calls run
	StopLength   Stop = "max_tokens" // cut at the token limit
	StopRefusal  Stop = "refusal"    // the provider's safety system stopped it
	StopOther    Stop = "other"      // a reason this package does not know
	stopNotEnded Stop = ""
)

// Reply is a whole model reply.
type Reply struct {
	Model string // the model the provider says answered
	Text  string
	Calls []ToolCall
	Stop  Stop
	Usage Usage
}

// Usage is the provider's own count for one call. InputTokens counts every input token, cached or not
// (Anthropic reports cached ones apart; they are added in). Cost is the provider's own figure in US dollars
// when it gives one (OpenRouter does); otherwise HasCost is false and the price table decides.
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int // the parts of InputTokens read from or written to the provider's prompt cache
	CacheWriteTokens int
	Cost             float64
	HasCost          bool
	// Subscription says the call ran on the owner's plan through a CLI: it is not billed per token,
	// and Cost, when given, is the CLI's own estimate of what the API would charge (docs/BRAIN.md).
	Subscription bool
}

// Model is one entry of the provider's model list. Price is set when the list itself says it.
type Model struct {
	ID            string
	Name          string
	ContextTokens int
	Price         *Price
}

// Price is US dollars per million tokens.
type Price struct {
	In  float64 `json:"in" yaml:"in"`
	Out float64 `json:"out" yaml:"out"`
}

// Cost is the price of a call with these token counts.
func (p Price) Cost(in, out int) float64 { return (float64(in)*p.In + float64(out)*p.Out) / 1e6 }
