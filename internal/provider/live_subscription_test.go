package provider_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/provider"
)

// TestLiveSubscription runs the real CLIs, only when BOX_LIVE_SUBSCRIPTION_DIR names a subscription
// folder (with BOX_LIVE_SUBSCRIPTION_INSTALL=1 it first installs both pinned CLIs there from npm,
// about 800 MB). Without a sign-in it checks what works signed out: the status says so, the model
// lists come, and Claude Code's answer reads as SignedOut. Signed in, it also thinks once and makes
// one tool call through the text protocol.
func TestLiveSubscription(t *testing.T) {
	dir := os.Getenv("BOX_LIVE_SUBSCRIPTION_DIR")
	if dir == "" {
		t.Skip("no live test: BOX_LIVE_SUBSCRIPTION_DIR is not set (set it to a folder for the real claude and codex)")
	}
	for _, cli := range clis {
		t.Run(string(cli), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			s, err := provider.NewSubscription(provider.SubscriptionConfig{CLI: cli, Dir: dir, FirstByte: 60 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if os.Getenv("BOX_LIVE_SUBSCRIPTION_INSTALL") == "1" {
				if err := s.Install(ctx, provider.InstallOptions{Output: os.Stderr}); err != nil {
					t.Fatal(err)
				}
			}
			if got := s.Installed(); got != s.Version() {
				t.Fatalf("installed %q, want the pinned %s", got, s.Version())
			}
			models, err := s.Models(ctx)
			if err != nil || len(models) == 0 {
				t.Fatalf("models %v %v", models, err)
			}
			t.Logf("%s offers %d models, the first %+v", s.Name(), len(models), models[0])
			st, err := s.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s sign-in: %+v", s.Name(), st)
			req := provider.Request{System: "You are a test. Answer in one word.", MaxTokens: 64, Messages: say("Say OK.")}
			if !st.SignedIn {
				if cli == provider.Codex {
					return // signed out, Codex tries the network before it says so
				}
				_, err := s.Stream(ctx, req, func(provider.Delta) {})
				if f := provider.FailureOf(err); f == nil || f.Reason != provider.SignedOut {
					t.Errorf("signed out: %v, want SignedOut", err)
				}
				return
			}
			pieces := 0
			reply, err := s.Stream(ctx, req, func(d provider.Delta) { pieces++ })
			if err != nil || reply.Text == "" || pieces == 0 || reply.Usage.OutputTokens == 0 {
				t.Fatalf("reply %+v after %d pieces: %v", reply, pieces, err)
			}
			req.System = "You are the box's test. When asked to remember something, call the tool."
			req.Tools = memoryTools
			req.Messages = say("Remember that Leo swims on Thursdays.")
			reply, err = s.Stream(ctx, req, func(provider.Delta) {})
			if err != nil || len(reply.Calls) == 0 || reply.Calls[0].Name != "memory_remember" || !strings.Contains(string(reply.Calls[0].Input), "Leo") {
				t.Errorf("tool call: %+v %v", reply, err)
			}
		})
	}
}
