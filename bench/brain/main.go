// Command brain measures the brain's chat path on a box with many notes (docs/BRAIN.md, "Speed"): the
// prompt a turn sends (router + the notes the message needs: how many notes, how many tokens) and the
// time to the first streamed token the box adds over the provider's own, side by side with the
// provider layer alone and a bare net/http client reading the same stream. The provider is a local
// stand-in speaking OpenAI's chat completions protocol (internal/providertest), which needs a
// testing.TB: the measurement runs once inside testing.Benchmark for that.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/bench/benchkit"
	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/providertest"
)

var (
	notes = flag.Int("notes", 10000, "notes in the generated box")
	turns = flag.Int("turns", 200, "chat turns timed for the first token")
	asks  = flag.Int("prompts", 60, "chat turns whose prompt is measured")
)

const key = "sk-bench-0000000000000000"

func main() { benchkit.Run("brain", run) }

func run(tmp, _ string) error {
	ctx := context.Background()
	root := filepath.Join(tmp, "memory-box")
	names, err := generate(ctx, root, *notes)
	if err != nil {
		return err
	}
	var out string
	var runErr error
	var once sync.Once
	testing.Benchmark(func(b *testing.B) {
		once.Do(func() { out, runErr = measure(ctx, b, tmp, root, names) })
	})
	if runErr != nil {
		return runErr
	}
	fmt.Print(out)
	return nil
}

var words = strings.Fields(`swims plays works lives visits likes prefers studies teaches cooks reads paints runs sings
	Thursday Monday garden school office piano chess football bakery library museum river market Paris Lyon Berlin`)

var syllables = strings.Fields("ka lo mi ren ta vo si na del or bru fen gal hu ji ke la mo ni pe qui ra su te ul ve wi xa yo zo")

// name is a made-up first and last name: distinct enough that a question about one person matches a
// few notes, as real names do.
func name(r *rand.Rand) string {
	part := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		return strings.ToUpper(b.String()[:1]) + b.String()[1:]
	}
	return part(2) + " " + part(3)
}

// generate writes n person notes and a router with core facts, and commits them; it returns the notes' titles.
func generate(ctx context.Context, root string, n int) ([]string, error) {
	if err := benchkit.NewBox(ctx, root); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(uint64(n), 3))
	dir := filepath.Join(root, "_content/memory/notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var titles []string
	for i := 0; i < n; i++ {
		title := name(r)
		data := note.NewNote("person", title, nil, []string{"moc-people"})
		data, _ = note.SetDescription(data, fmt.Sprintf("%s, someone the owner knows", title))
		for f := 0; f < 4; f++ {
			fact := fmt.Sprintf("%s %s %s on %s.", title, words[r.IntN(len(words))], words[r.IntN(len(words))], words[r.IntN(len(words))])
			data, _ = note.AddFact(data, note.Fact{Text: fact, ID: inbox.NewID()})
		}
		if err := os.WriteFile(filepath.Join(dir, note.Name("person", title)+".md"), data, 0o644); err != nil {
			return nil, err
		}
		titles = append(titles, title)
	}
	router := note.RouterSkeleton
	for i := 0; i < 20; i++ {
		router = strings.Replace(router, "## Core facts\n", fmt.Sprintf("## Core facts\n- [core] The owner's fact number %d: %s %s. ^core%04d\n", i, words[r.IntN(len(words))], words[r.IntN(len(words))], i), 1)
	}
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(layout.Router)), []byte(router), 0o644); err != nil {
		return nil, err
	}
	return titles, benchkit.Commit(ctx, root, "bench: generated notes")
}

type sample struct{ box, provider time.Duration }

func measure(ctx context.Context, tb testing.TB, tmp, root string, titles []string) (string, error) {
	srv := providertest.OpenAI(tb, key)
	srv.Timings = make(chan providertest.Timing, 1)
	a, err := app.Open(ctx, root, app.Options{VaultDir: filepath.Join(tmp, "vault")})
	if err != nil {
		return "", err
	}
	defer a.Close()
	if _, err := a.Brain.Set(ctx, box.Actor{Who: "owner", Via: "cli"}, brain.SetInput{Provider: "openai", BaseURL: srv.URL, Model: "model-a", Key: key}); err != nil {
		return "", err
	}
	r := rand.New(rand.NewPCG(11, 13))

	// The prompt of a turn: its notes, and its size in tokens (characters / 4, the common estimate for
	// English text; the system prompt, the tool definitions and the messages all count).
	var tokens, noteCounts, sys []int
	for i := 0; i < *asks; i++ {
		t := titles[r.IntN(len(titles))]
		msg := fmt.Sprintf("What does %s do on %s?", t, words[r.IntN(len(words))])
		srv.Push(providertest.Reply{Text: []string{"ok"}})
		if _, err := a.Brain.Chat(ctx, brain.ChatInput{Text: msg}, nil); err != nil {
			return "", err
		}
		<-srv.Timings
		reqs := srv.Requests()
		body, _ := json.Marshal(reqs[len(reqs)-1])
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return "", err
		}
		tokens = append(tokens, (len(body)+3)/4)
		sys = append(sys, (len(req.Messages[0].Content)+3)/4)
		_, section, _ := strings.Cut(req.Messages[0].Content, "## Notes that may matter for this message\n")
		noteCounts = append(noteCounts, strings.Count(section, "\n- ")+boolInt(strings.HasPrefix(section, "- ")))
	}

	// Time to the first token: the box's chat path, the provider layer alone, and a bare client.
	chat, err := firstTokens(*turns, srv, titles, func(msg string, first func()) error {
		_, err := a.Brain.Chat(ctx, brain.ChatInput{Text: msg}, func(e brain.Event) {
			if e.Type == "text" {
				first()
			}
		})
		return err
	})
	if err != nil {
		return "", err
	}
	p, err := provider.New(provider.Config{Kind: provider.OpenAI, BaseURL: srv.URL, Key: key})
	if err != nil {
		return "", err
	}
	prov, err := firstTokens(*turns, srv, titles, func(msg string, first func()) error {
		_, err := p.Stream(ctx, provider.Request{Model: "model-a", Messages: []provider.Message{{Role: provider.User, Text: msg}}}, func(d provider.Delta) {
			if d.Text != "" {
				first()
			}
		})
		return err
	})
	if err != nil {
		return "", err
	}
	bare, err := firstTokens(*turns, srv, titles, func(msg string, first func()) error { return bareStream(ctx, srv.URL, msg, first) })
	if err != nil {
		return "", err
	}
	return table(len(titles), tokens, sys, noteCounts, [][]sample{bare, prov, chat}), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// firstTokens times n calls: from the call to its first text piece, minus the stand-in's own time from
// the request's arrival to its first token.
func firstTokens(n int, srv *providertest.Server, titles []string, call func(msg string, first func()) error) ([]sample, error) {
	var out []sample
	for i := 0; i < n; i++ {
		srv.Push(providertest.Reply{Text: []string{"Leo ", "swims ", "on Thursdays."}})
		var got time.Time
		start := time.Now()
		if err := call(fmt.Sprintf("When does %s swim?", titles[(i*7919)%len(titles)]), func() {
			if got.IsZero() {
				got = time.Now()
			}
		}); err != nil {
			return nil, err
		}
		tm := <-srv.Timings
		own := tm.FirstToken.Sub(tm.Arrived)
		out = append(out, sample{box: got.Sub(start) - own, provider: own})
	}
	return out, nil
}

// bareStream is the peer: a plain net/http client posting the same request and reading the SSE lines
// until the first content.
func bareStream(ctx context.Context, base, msg string, first func()) error {
	body, _ := json.Marshal(map[string]any{"model": "model-a", "stream": true, "messages": []map[string]string{{"role": "user", "content": msg}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"content":"`) {
			first()
		}
	}
	return sc.Err()
}

func table(n int, tokens, sys, noteCounts []int, rows [][]sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- bench:brain -->\n## The brain's chat\n\n")
	fmt.Fprintf(&b, "%s, %s. Reproduce: `go run ./bench/brain` (bench/run.sh brain; flags -notes %d -turns %d -prompts %d).\n",
		time.Now().Format("2006-01-02"), benchkit.Machine(), *notes, *turns, *asks)
	fmt.Fprintf(&b, "A generated box of %d person notes (four facts each) and a router with 20 core facts; the brain is set to a local\n"+
		"stand-in speaking OpenAI's chat completions (internal/providertest), so the provider's own time is known and taken out.\n\n", n)
	fmt.Fprintf(&b, "**Prompt per turn** (target: router + at most 8 notes, under 4,000 tokens at 10k notes). Each of %d questions names a\n"+
		"person (made-up names, a few notes each); tokens are the request's characters / 4 (system prompt, the nine tool definitions, the message).\n\n", len(tokens))
	b.WriteString("| | median | max |\n|---|---:|---:|\n")
	fmt.Fprintf(&b, "| notes in the prompt | %d | %d |\n", med(noteCounts), slices.Max(noteCounts))
	fmt.Fprintf(&b, "| system prompt (router + notes + rules), tokens | %d | %d |\n", med(sys), slices.Max(sys))
	fmt.Fprintf(&b, "| whole request, tokens | %d | %d |\n\n", med(tokens), slices.Max(tokens))
	fmt.Fprintf(&b, "**Time to the first streamed token added over the provider's own** (target: under 20 ms p50 through the real chat\n"+
		"path): the caller's time to the first text piece minus the stand-in's own time from the request's arrival to its first\n"+
		"token; %d calls each. The chat path reads the settings, the ledger and the vault, searches the memory for the prompt's\n"+
		"notes, reads the router and builds the tools before it calls.\n\n", len(rows[0]))
	b.WriteString("| path | p50 | p90 | p99 | provider's own p50 |\n|---|---:|---:|---:|---:|\n")
	for i, name := range []string{"bare net/http client (peer)", "provider.Stream alone", "box chat (brain.Chat)"} {
		var box, own []time.Duration
		for _, s := range rows[i] {
			box, own = append(box, s.box), append(own, s.provider)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, ms(benchkit.Percentile(box, 50)), ms(benchkit.Percentile(box, 90)),
			ms(benchkit.Percentile(box, 99)), ms(benchkit.Percentile(own, 50)))
	}
	b.WriteString("<!-- bench:end -->\n")
	return b.String()
}

func med(v []int) int {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return benchkit.Millis(d, 2) }
