package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/bench/benchkit"
	"github.com/boxmem/box/internal/keys"
)

// compare loads n facts into both servers and measures search latency and write throughput.
func (h *harness) compare(ctx context.Context, n int) (rows, wrows []string, err error) {
	label := fmt.Sprintf("facts-%d", n)
	root, err := h.newBox(ctx, label)
	if err != nil {
		return nil, nil, err
	}
	refFile := filepath.Join(h.tmp, label+".jsonl")
	if err := h.loadRef(ctx, refFile, n); err != nil {
		return nil, nil, fmt.Errorf("reference: %w", err)
	}
	t0 := time.Now()
	if err := loadBox(ctx, root, n); err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(os.Stderr, "bench/mcp: %d facts into box in %v\n", n, time.Since(t0).Round(time.Millisecond))
	bcs, err := h.boxClient(ctx, root)
	if err != nil {
		return nil, nil, err
	}
	defer bcs.Close()
	rcs, err := h.refClient(ctx, refFile)
	if err != nil {
		return nil, nil, err
	}
	defer rcs.Close()
	if err := waitIndexed(ctx, bcs); err != nil {
		return nil, nil, err
	}
	one, _ := fact(n / 2)
	for _, q := range []struct{ label, words string }{{"one hit", one}, {"no match", "xylophone"}, {"broad", "gardening"}} {
		bl, bhits, err := measure(ctx, bcs, "memory_search", map[string]any{"words": q.words}, boxHits)
		if err != nil {
			return nil, nil, err
		}
		rl, rhits, err := measure(ctx, rcs, "search_nodes", map[string]any{"query": q.words}, refHits)
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, fmt.Sprintf("| %d | %s (`%s`) | %s | %s | %s | %s | %d / %d |", n, q.label, q.words,
			ms(benchkit.Percentile(bl, 50)), ms(benchkit.Percentile(bl, 95)), ms(benchkit.Percentile(rl, 50)), ms(benchkit.Percentile(rl, 95)), bhits, rhits))
	}
	for run, writers := range []int{1, 16} {
		prefix := fmt.Sprintf("w%c%c", 'a'+run, 'a'+len(wrows)) // unique per run and size
		brate, _, err := h.writeRun(ctx, writers, prefix, func(ctx context.Context) (*sdk.ClientSession, error) { return h.boxClient(ctx, root) },
			"memory_remember", func(nm, text string) map[string]any { return map[string]any{"text": text} })
		if err != nil {
			return nil, nil, err
		}
		bk, bfound, err := h.keptBox(ctx, root, prefix)
		if err != nil {
			return nil, nil, err
		}
		rrate, _, err := h.writeRun(ctx, writers, prefix, func(ctx context.Context) (*sdk.ClientSession, error) { return h.refClient(ctx, refFile) },
			"create_entities", func(nm, text string) map[string]any {
				return map[string]any{"entities": []map[string]any{{"name": nm, "entityType": "person", "observations": []string{text}}}}
			})
		if err != nil {
			return nil, nil, err
		}
		rk := keptRef(ctx, rcs, prefix)
		wrows = append(wrows, fmt.Sprintf("| %d | %d | %.0f | %d of %d (%d found by search) | %.0f | %d of %d |", n, writers, brate, bk, *writes, bfound, rrate, rk, *writes))
	}
	return rows, wrows, nil
}

// waitIndexed polls the overview until the box's index has caught up (at most a minute).
func waitIndexed(ctx context.Context, cs *sdk.ClientSession) error {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		res, err := callOK(ctx, cs, "memory_overview", nil)
		if err != nil {
			return err
		}
		var o struct{ Indexing bool }
		json.Unmarshal([]byte(textOf(res)), &o)
		if !o.Indexing {
			return nil
		}
	}
	return fmt.Errorf("the box was still indexing after a minute")
}

func boxHits(res *sdk.CallToolResult) int {
	var r struct{ Hits []json.RawMessage }
	json.Unmarshal([]byte(textOf(res)), &r)
	return len(r.Hits)
}

func refHits(res *sdk.CallToolResult) int {
	var r struct{ Entities []json.RawMessage }
	json.Unmarshal([]byte(textOf(res)), &r)
	return len(r.Entities)
}

// measure calls a tool *calls times after three warm-ups and returns the latencies and the last result count.
func measure(ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any, count func(*sdk.CallToolResult) int) ([]time.Duration, int, error) {
	var lat []time.Duration
	hits := 0
	for i := range *calls + 3 {
		t := time.Now()
		res, err := callOK(ctx, cs, tool, args)
		if err != nil {
			return nil, 0, err
		}
		if i >= 3 {
			lat = append(lat, time.Since(t))
		}
		hits = count(res)
	}
	return lat, hits, nil
}

// writeRun starts `writers` clients (not timed), then times *writes writes split between them.
func (h *harness) writeRun(ctx context.Context, writers int, prefix string, dial func(context.Context) (*sdk.ClientSession, error),
	tool string, args func(name, text string) map[string]any) (float64, int, error) {
	var sessions []*sdk.ClientSession
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	for range writers {
		cs, err := dial(ctx)
		if err != nil {
			return 0, 0, err
		}
		sessions = append(sessions, cs)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := 0
	start := time.Now()
	for w, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < *writes; i += writers {
				nm := name(prefix, i)
				text := fmt.Sprintf("%s planted tulips in %s.", strings.ToUpper(nm[:1])+nm[1:], cities[i%len(cities)])
				if _, err := callOK(ctx, cs, tool, args(nm, text)); err == nil {
					mu.Lock()
					acked++
					mu.Unlock()
				} else {
					fmt.Fprintf(os.Stderr, "bench/mcp: %s refused a write: %v\n", tool, err)
				}
			}
		}()
	}
	wg.Wait()
	return float64(*writes) / time.Since(start).Seconds(), acked, nil
}

// keptBox counts the written facts on disk in the box, and how many a freshly started box mcp finds
// by search (the long-lived client's index may still be catching up with other processes' writes).
func (h *harness) keptBox(ctx context.Context, root, prefix string) (onDisk, found int, err error) {
	var text strings.Builder
	filepath.WalkDir(filepath.Join(root, "_content"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			text.Write(b)
		}
		return nil
	})
	all := strings.ToLower(text.String())
	cs, err := h.boxClient(ctx, root)
	if err != nil {
		return 0, 0, err
	}
	defer cs.Close()
	if err := waitIndexed(ctx, cs); err != nil {
		return 0, 0, err
	}
	for i := range *writes {
		nm := name(prefix, i)
		if strings.Contains(all, nm) {
			onDisk++
		}
		if res, err := callOK(ctx, cs, "memory_search", map[string]any{"words": nm}); err == nil && boxHits(res) > 0 {
			found++
		}
	}
	return onDisk, found, nil
}

// keptRef counts the written entities still in the reference server's file.
func keptRef(ctx context.Context, cs *sdk.ClientSession, prefix string) int {
	res, err := callOK(ctx, cs, "read_graph", map[string]any{})
	if err != nil {
		return 0
	}
	var g struct{ Entities []struct{ Name string } }
	json.Unmarshal([]byte(textOf(res)), &g)
	seen := map[string]bool{}
	for _, e := range g.Entities {
		if strings.HasPrefix(e.Name, prefix) {
			seen[e.Name] = true
		}
	}
	return len(seen)
}

func ms(d time.Duration) string { return benchkit.Millis(d, 2) }

// served measures box serve itself: initialize on a big box, 32 HTTP clients searching, resident memory.
func (h *harness) served(ctx context.Context) []string {
	var rows []string
	row := func(k, v string) { rows = append(rows, "| "+k+" | "+v+" |") }
	root, err := h.notesBox(ctx, "notes", *notes)
	if err != nil {
		row("32 clients, RSS", "not measured: "+err.Error())
	} else if s, err := h.serve(ctx, root, 32); err != nil {
		row("32 clients, RSS", "not measured: "+err.Error())
	} else {
		if *leanCalls > 0 {
			if lean, err := h.leanRows(ctx, s); err != nil {
				row("lean request path", "not measured: "+err.Error())
			} else {
				h.lean = lean
			}
		}
		lat, failed := s.searchLoad(ctx, 50)
		row(fmt.Sprintf("memory_search, 32 concurrent HTTP clients × 50 calls, %d notes: p50 / p99", *notes),
			fmt.Sprintf("%s / %s (%d refused or failed)", ms(benchkit.Percentile(lat, 50)), ms(benchkit.Percentile(lat, 99)), failed))
		time.Sleep(3 * time.Second) // let each key's rate bucket refill after the search load
		rate, acked, found := s.writeLoad(ctx, 16, *writes)
		row(fmt.Sprintf("memory_remember, 16 concurrent HTTP clients on one box serve (group commit), %d notes", *notes),
			fmt.Sprintf("%.0f writes/s; %d of %d acknowledged, %d of them found by search right after", rate, acked, *writes, found))
		rss, hwm := s.rss()
		row(fmt.Sprintf("resident memory of box serve with %d notes, after that load (RSS / peak)", *notes), rss+" / "+hwm)
		s.stop()
	}
	if *big <= 0 {
		return rows
	}
	root, err = h.notesBox(ctx, "big", *big)
	if err != nil {
		row("initialize", "not measured: "+err.Error())
		return rows
	}
	s, err := h.serve(ctx, root, 1)
	if err != nil {
		row("initialize", "not measured: "+err.Error())
		return rows
	}
	defer s.stop()
	row(fmt.Sprintf("start to first initialize answered, %d notes (process start, box open, listen, initialize)", *big), ms(s.firstInit))
	var lat []time.Duration
	for range 20 {
		t := time.Now()
		cs, err := s.connect(ctx, s.keys[0])
		if err != nil {
			row("initialize", "failed: "+err.Error())
			return rows
		}
		lat = append(lat, time.Since(t))
		cs.Close()
	}
	row(fmt.Sprintf("initialize (+ initialized) on the %d-note box, p50 / max of 20", *big), ms(benchkit.Percentile(lat, 50))+" / "+ms(benchkit.Percentile(lat, 100)))
	return rows
}

// notesBox makes a box holding n entity notes, committed.
func (h *harness) notesBox(ctx context.Context, label string, n int) (string, error) {
	root, err := h.newBox(ctx, label)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "_content", "memory", "notes")
	os.MkdirAll(dir, 0o755)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				nm, body := noteText(i)
				os.WriteFile(filepath.Join(dir, "entity-"+nm+".md"), []byte(body), 0o644)
			}
		}()
	}
	wg.Wait()
	if err := benchkit.Commit(ctx, root, "bench notes"); err != nil {
		return "", err
	}
	return root, nil
}

// noteText is the generated note of fact i: its name and its file's text.
func noteText(i int) (string, string) {
	nm, text := fact(i)
	title := strings.ToUpper(nm[:1]) + nm[1:]
	return nm, fmt.Sprintf("---\ntype: note\nkind: entity\ntitle: %s\ndescription: %s\n---\n# %s\n\n## Snapshot\n%s\n\n## Key facts\n- Likes %s.\n- Lives in %s.\n",
		title, text, title, text, hobbies[i%len(hobbies)], cities[i%len(cities)])
}

type served struct {
	cmd       *exec.Cmd
	url       string
	keys      []string
	firstInit time.Duration
}

var servingLine = regexp.MustCompile(`at (http://\S+/mcp)`)

// serve starts box serve on a free port with k keys and waits for the first initialize to be answered.
func (h *harness) serve(ctx context.Context, root string, k int) (*served, error) {
	ap, err := benchkit.Open(ctx, root)
	if err != nil {
		return nil, err
	}
	s := &served{}
	for i := range k {
		_, key, err := ap.Keys.New(ctx, fmt.Sprintf("bench-%d", i), keys.Caps{Memory: true})
		if err != nil {
			ap.Close()
			return nil, err
		}
		s.keys = append(s.keys, key)
	}
	if err := ap.Close(); err != nil {
		return nil, err
	}
	start := time.Now()
	s.cmd = exec.Command(h.bin, "serve", "--addr", "127.0.0.1:0", "--box", root)
	out, _ := s.cmd.StdoutPipe()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	m := servingLine.FindStringSubmatch(line)
	if err != nil || m == nil {
		s.stop()
		return nil, fmt.Errorf("box serve printed %q: %v", line, err)
	}
	s.url = m[1]
	cs, err := s.connect(ctx, s.keys[0])
	if err != nil {
		s.stop()
		return nil, err
	}
	s.firstInit = time.Since(start)
	cs.Close()
	return s, nil
}

func (s *served) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
}

type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

var transport = &http.Transport{MaxIdleConnsPerHost: 64}

func (s *served) connect(ctx context.Context, key string) (*sdk.ClientSession, error) {
	t := &sdk.StreamableClientTransport{Endpoint: s.url, MaxRetries: -1, HTTPClient: &http.Client{Transport: bearer{key, transport}}}
	return client().Connect(ctx, t, nil)
}

// searchLoad runs one client per key, each making n searches for a note's unique name.
func (s *served) searchLoad(ctx context.Context, n int) ([]time.Duration, int) {
	var mu sync.Mutex
	var lat []time.Duration
	failed := 0
	var wg sync.WaitGroup
	for c, key := range s.keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := s.connect(ctx, key)
			if err != nil {
				mu.Lock()
				failed += n
				mu.Unlock()
				return
			}
			defer cs.Close()
			for i := range n {
				q, _ := fact((c*n + i) * 7 % *notes)
				t := time.Now()
				_, err := callOK(ctx, cs, "memory_search", map[string]any{"words": q})
				d := time.Since(t)
				mu.Lock()
				if err != nil {
					failed++
				} else {
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lat, failed
}

// writeLoad has `clients` HTTP clients remember n facts between them, then searches each one.
func (s *served) writeLoad(ctx context.Context, clients, n int) (rate float64, acked, found int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var sessions []*sdk.ClientSession
	for c := range clients {
		cs, err := s.connect(ctx, s.keys[c%len(s.keys)])
		if err != nil {
			return 0, 0, 0
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	start := time.Now()
	for c, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += clients {
				nm := name("hw", i)
				if _, err := callOK(ctx, cs, "memory_remember", map[string]any{"text": strings.ToUpper(nm[:1]) + nm[1:] + " planted tulips in Graz."}); err == nil {
					mu.Lock()
					acked++
					mu.Unlock()
				} else {
					fmt.Fprintln(os.Stderr, "bench/mcp: http remember:", err)
				}
			}
		}()
	}
	wg.Wait()
	rate = float64(n) / time.Since(start).Seconds()
	for i := range n {
		if res, err := callOK(ctx, sessions[i%clients], "memory_search", map[string]any{"words": name("hw", i)}); err == nil && boxHits(res) > 0 {
			found++
		}
	}
	return rate, acked, found
}

// rss reads the server's resident and peak resident memory.
func (s *served) rss() (string, string) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return "?", "?"
	}
	field := func(k string) string {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, k+":"); ok {
				var kb int
				fmt.Sscan(strings.TrimSpace(v), &kb)
				return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
			}
		}
		return "?"
	}
	return field("VmRSS"), field("VmHWM")
}
