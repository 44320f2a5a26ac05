package provider_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/boxmem/box/internal/provider"
)

// TestLive talks to the real services, only when a real key is in the environment: OPENAI_API_KEY
// (with OPENAI_BASE_URL and BOX_LIVE_OPENAI_MODEL to point it at OpenRouter, Venice or a local server)
// and ANTHROPIC_API_KEY (BOX_LIVE_ANTHROPIC_MODEL). Each call is a few tokens.
func TestLive(t *testing.T) {
	for _, c := range []struct {
		kind               provider.Kind
		keyEnv, baseEnv    string
		modelEnv, defModel string
	}{
		{provider.OpenAI, "OPENAI_API_KEY", "OPENAI_BASE_URL", "BOX_LIVE_OPENAI_MODEL", "gpt-4o-mini"},
		{provider.Anthropic, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "BOX_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5"},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			key := os.Getenv(c.keyEnv)
			if key == "" {
				t.Skipf("no live test: %s is not set (set it to a real key to talk to the real service)", c.keyEnv)
			}
			model := os.Getenv(c.modelEnv)
			if model == "" {
				model = c.defModel
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p, err := provider.New(provider.Config{Kind: c.kind, BaseURL: os.Getenv(c.baseEnv), Key: key})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.CheckKey(ctx); err != nil {
				t.Fatal(err)
			}
			models, err := p.Models(ctx)
			if err != nil || len(models) == 0 {
				t.Fatalf("models: %d, %v", len(models), err)
			}
			pieces := 0
			reply, err := p.Stream(ctx, provider.Request{Model: model, MaxTokens: 16,
				Messages: []provider.Message{{Role: provider.User, Text: "Say OK."}}}, func(d provider.Delta) { pieces++ })
			if err != nil {
				t.Fatal(err)
			}
			if reply.Text == "" || pieces == 0 || reply.Usage.InputTokens == 0 || reply.Usage.OutputTokens == 0 {
				t.Errorf("reply %+v after %d pieces: want text and the provider's usage", reply, pieces)
			}
			bad, _ := provider.New(provider.Config{Kind: c.kind, BaseURL: os.Getenv(c.baseEnv), Key: key[:len(key)-4] + "0000"})
			if f := provider.FailureOf(bad.CheckKey(ctx)); f == nil || f.Reason != provider.KeyRefused {
				t.Errorf("a broken key: %v, want KeyRefused", f)
			}
		})
	}
}
