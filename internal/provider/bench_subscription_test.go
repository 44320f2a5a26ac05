package provider_test

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/providertest"
)

// BenchmarkSubscriptionFirstToken measures the time from asking to the first streamed token through a
// subscription CLI, side by side: "box" is Stream (the call's folder, the system prompt file, the
// transcript, the process, the event parser, the tool scanner); "raw" starts the same stand-in with
// the same arguments and stdin and reads its output until the first text line, the floor any client
// pays. The box's added time is box − raw at p50; the target is under 20 ms (docs/BRAIN.md).
func BenchmarkSubscriptionFirstToken(b *testing.B) {
	for _, cli := range clis {
		for _, client := range []string{"box", "raw"} {
			b.Run(string(cli)+"/"+client, func(b *testing.B) {
				dir := b.TempDir()
				s, err := provider.NewSubscription(provider.SubscriptionConfig{CLI: cli, Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				name := map[provider.CLI]string{provider.ClaudeCode: "claude", provider.Codex: "codex"}[cli]
				sc := providertest.InstallCLI(b, filepath.Join(dir, "npm", "node_modules", ".bin", name))
				req := provider.Request{Model: "m", System: strings.Repeat("You are the box. ", 40), Tools: memoryTools,
					Messages: say("When does Leo swim?")}
				var args []string
				var stdin string
				if client == "raw" { // one box call first, to learn the exact arguments and stdin
					sc.Push(providertest.CLIRun{Text: []string{"x"}})
					if _, err := s.Stream(context.Background(), req, func(provider.Delta) {}); err != nil {
						b.Fatal(err)
					}
					seen := sc.Seen()[0]
					args, stdin = seen.Args, seen.Stdin
				}
				runs := make([]providertest.CLIRun, b.N)
				for i := range runs {
					runs[i] = providertest.CLIRun{Text: []string{"FIRST", " and the rest of the answer."}, InputTokens: 300, OutputTokens: 8}
				}
				sc.Push(runs...)
				took := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for range b.N {
					start := time.Now()
					var first time.Time
					if client == "box" {
						_, err := s.Stream(context.Background(), req, func(d provider.Delta) {
							if first.IsZero() && d.Text != "" {
								first = time.Now()
							}
						})
						if err != nil {
							b.Fatal(err)
						}
					} else {
						first = rawFirst(b, sc.Bin, args, stdin, s.Home())
					}
					took = append(took, first.Sub(start))
				}
				b.StopTimer()
				reportPercentiles(b, took, "first-token")
			})
		}
	}
}

// rawFirst runs the CLI bare and returns when its first text line arrives.
func rawFirst(b *testing.B, bin string, args []string, stdin, home string) time.Time {
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var first time.Time
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if first.IsZero() && bytes.Contains(sc.Bytes(), []byte("FIRST")) {
			first = time.Now()
		}
	}
	cmd.Wait()
	return first
}
