// Command mcp benchmarks box's MCP server side by side with the reference @modelcontextprotocol/server-memory
// (npm, stdio): the same Go SDK client, the same facts. It prints a Markdown section for BENCHMARKS.md.
//
//	go run ./bench/mcp [-sizes 1000,10000] [-calls 100] [-writes 160] [-big 100000] [-lean 200] [-serve-only]   (bench/run.sh mcp)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/bench/benchkit"
	"github.com/boxmem/box/internal/memory"
)

var (
	sizes  = flag.String("sizes", "1000,10000", "fact counts to compare at")
	calls  = flag.Int("calls", 100, "calls per measured query")
	writes = flag.Int("writes", 160, "writes per throughput run (split over the clients)")
	big    = flag.Int("big", 100000, "notes in the box whose initialize latency is measured")
	notes  = flag.Int("notes", 10000, "notes in the box served to 32 HTTP clients and measured for RSS")

	leanCalls  = flag.Int("lean", 200, "calls per query and round of the lean request path (0 skips it)")
	leanWarm   = flag.Int("lean-warm", 2, "calls at the start of each block of the lean request path that are not timed")
	leanRounds = flag.Int("lean-rounds", 3, "rounds of the lean request path (each calls box serve and the bare server in alternating blocks)")
	broadWords = flag.String("broad", "lyon,likes", "the lean request path's broad queries: words in thousands of notes (comma-separated)")
	serveOnly  = flag.Bool("serve-only", false, "measure only box serve (the lean path and the serve table), not the comparison with the reference")
)

func main() {
	benchkit.Run("mcp", func(tmp, bin string) error { return run(context.Background(), tmp, bin) })
}

func run(ctx context.Context, tmp, bin string) error {
	h, err := newHarness(tmp, bin)
	if err != nil {
		return err
	}
	fmt.Println("<!-- bench:mcp -->")
	defer fmt.Println("<!-- bench:end -->")
	fmt.Println("## MCP: box and the reference memory server")
	fmt.Println()
	fmt.Printf("`go run ./bench/mcp` (bench/run.sh mcp). Box is `box mcp` over stdio; the reference is `@modelcontextprotocol/server-memory` %s over stdio (Node %s). "+
		"Both are driven by the same Go SDK client with the same facts (one sentence per fact: `<unique name> likes <hobby> in <city>.`; "+
		"box gets them through memory.Remember, the reference as one entity each). Latencies are per tools/call, client side.\n\n", refVersion, h.nodeVersion)
	var rows, wrows []string
	for _, s := range strings.Split(*sizes, ",") {
		if *serveOnly {
			break
		}
		n, _ := strconv.Atoi(strings.TrimSpace(s))
		if n <= 0 {
			continue
		}
		r, w, err := h.compare(ctx, n)
		if err != nil {
			return fmt.Errorf("at %d facts: %w", n, err)
		}
		rows, wrows = append(rows, r...), append(wrows, w...)
	}
	if len(rows) > 0 {
		fmt.Println("| facts | query | box p50 | box p95 | reference p50 | reference p95 | results box / reference |")
		fmt.Println("|---|---|---|---|---|---|---|")
		fmt.Println(strings.Join(rows, "\n"))
		fmt.Println()
		fmt.Println("| facts | writers | box writes/s | box kept on disk | reference writes/s | reference kept |")
		fmt.Println("|---|---|---|---|---|---|")
		fmt.Println(strings.Join(wrows, "\n"))
		fmt.Println()
	}
	servedRows := h.served(ctx)
	fmt.Println("| box serve (Streamable HTTP) | value |")
	fmt.Println("|---|---|")
	for _, r := range servedRows {
		fmt.Println(r)
	}
	fmt.Println()
	if len(h.lean) > 0 {
		fmt.Println(leanHeader())
		fmt.Println(strings.Join(h.lean, "\n"))
		fmt.Println()
	}
	return nil
}

const refVersion = "2026.8.31"

type harness struct {
	tmp, repo, bin, nodeSh, nodeVersion string
	lean                                []string // the lean request path's rows, when measured
}

func newHarness(tmp, bin string) (*harness, error) {
	repo, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for !exists(filepath.Join(repo, "go.mod")) {
		if repo = filepath.Dir(repo); repo == "/" {
			return nil, errors.New("run from inside the box repository")
		}
	}
	h := &harness{tmp: tmp, bin: bin, repo: repo, nodeSh: filepath.Join(repo, "scripts", "node.sh")}
	out, err := exec.Command(h.nodeSh, "node", "-v").Output()
	if err != nil {
		return nil, fmt.Errorf("scripts/node.sh: %w", err)
	}
	h.nodeVersion = strings.TrimSpace(string(out))
	return h, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

var (
	hobbies = []string{"gardening", "chess", "climbing", "baking", "cycling", "painting", "sailing", "pottery", "running", "fishing"}
	cities  = []string{"Lyon", "Porto", "Leeds", "Bergen", "Graz", "Ghent", "Turin"}
)

// name is a unique word per fact: a prefix and four letters, all the same length.
func name(prefix string, i int) string {
	b := []byte(prefix + "aaaa")
	for k := len(b) - 1; k >= len(prefix); k-- {
		b[k] = byte('a' + i%26)
		i /= 26
	}
	return string(b)
}

func fact(i int) (string, string) {
	n := name("zor", i)
	return n, fmt.Sprintf("%s likes %s in %s.", strings.ToUpper(n[:1])+n[1:], hobbies[i%len(hobbies)], cities[i%len(cities)])
}

// newBox makes an empty box.
func (h *harness) newBox(ctx context.Context, label string) (string, error) {
	root := filepath.Join(h.tmp, label)
	if err := benchkit.NewBox(ctx, root); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(root)
}

// loadBox remembers n facts through the real memory engine, 16 writers at once (group commit).
func loadBox(ctx context.Context, root string, n int) error {
	ap, err := benchkit.Open(ctx, root)
	if err != nil {
		return fmt.Errorf("the memory engine: %w", err)
	}
	defer ap.Close()
	m := ap.Memory
	a := memory.Actor{Who: "owner", Via: "cli", Trust: "own"}
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				_, text := fact(i)
				if _, err := m.Remember(ctx, a, memory.RememberInput{Text: text}); err != nil {
					errc <- fmt.Errorf("remember %q: %w", text, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

// loadRef creates n entities in the reference server's file, 500 per call.
func (h *harness) loadRef(ctx context.Context, file string, n int) error {
	cs, err := h.refClient(ctx, file)
	if err != nil {
		return err
	}
	defer cs.Close()
	for start := 0; start < n; start += 500 {
		var ents []map[string]any
		for i := start; i < min(n, start+500); i++ {
			nm, text := fact(i)
			ents = append(ents, map[string]any{"name": nm, "entityType": "person", "observations": []string{text}})
		}
		if _, err := callOK(ctx, cs, "create_entities", map[string]any{"entities": ents}); err != nil {
			return err
		}
	}
	return nil
}

func client() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
}

func (h *harness) boxClient(ctx context.Context, root string) (*sdk.ClientSession, error) {
	cmd := exec.Command(h.bin, "mcp")
	cmd.Env = append(os.Environ(), "BOX_DIR="+root)
	return client().Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
}

func (h *harness) refClient(ctx context.Context, file string) (*sdk.ClientSession, error) {
	cmd := exec.Command(h.nodeSh, "mcp-server-memory")
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+file)
	return client().Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
}

// callOK calls a tool and turns isError into an error.
func callOK(ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any) (*sdk.CallToolResult, error) {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("%s: %s", tool, textOf(res))
	}
	return res, nil
}

func textOf(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
