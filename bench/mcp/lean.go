package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/boxmem/box/bench/benchkit"
)

// The lean request path: the official TypeScript SDK client calls memory_search on box serve, and the same
// client calls a bare HTTP server that answers each JSON-RPC request at once with a canned result (box's own
// answer to the same request, recorded first), so the difference is what box serve adds to the client and
// HTTP alone. Targets: at most 1.5× for a query finding one fact or nothing, 3× for a broad one.

// leanBlock is how many calls in a row go to one server before the other's turn.
const leanBlock = 20

// leanQuery is one measured search.
type leanQuery struct{ label, words string }

// leanRows measures the three searches on s (box serve on a box of *notes notes) and a canned server.
func (h *harness) leanRows(ctx context.Context, s *served) ([]string, error) {
	one, _ := fact(*notes / 2)
	qs := []leanQuery{{"one fact", one}, {"nothing", "xylophone"}}
	for _, w := range strings.Split(*broadWords, ",") {
		qs = append(qs, leanQuery{"broad", strings.TrimSpace(w)})
	}
	if err := indexed(ctx, strings.TrimSuffix(s.url, "/mcp")+"/healthz"); err != nil {
		return nil, err
	}
	c, err := record(ctx, s.url, s.keys[0], qs)
	if err != nil {
		return nil, fmt.Errorf("recording box's answers: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	bare := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go bare.Serve(ln)
	defer bare.Close()
	bareURL := "http://" + ln.Addr().String() + "/mcp"
	words := make([]string, len(qs))
	for i, q := range qs {
		words[i] = q.words
	}
	// Each round calls the two servers in short blocks, in turn, so a busy moment of the machine falls on both.
	boxLat, bareLat := map[string][]time.Duration{}, map[string][]time.Duration{}
	for round := range *leanRounds {
		for i, w := range words {
			// A key per query and round, each with its own rate bucket: one query's calls stay within the
			// burst box serve allows one connection, so the limit is never what is measured.
			key := s.keys[(round*len(words)+i)%len(s.keys)]
			box, bare, err := h.tsLean(ctx, s.url, bareURL, key, []string{w})
			if err != nil {
				return nil, err
			}
			for w, l := range box {
				boxLat[w] = append(boxLat[w], l...)
			}
			for w, l := range bare {
				bareLat[w] = append(bareLat[w], l...)
			}
		}
	}
	var rows []string
	for _, q := range qs {
		b, f := benchkit.Percentile(boxLat[q.words], 50), benchkit.Percentile(bareLat[q.words], 50)
		rows = append(rows, fmt.Sprintf("| %s (`%s`: %d returned, %d notes hold the word) | %s | %s | %s | %s | %.2f× |", q.label, q.words, c.hits[q.words], c.matching[q.words],
			ms(f), ms(benchkit.Percentile(bareLat[q.words], 95)), ms(b), ms(benchkit.Percentile(boxLat[q.words], 95)), float64(b)/float64(f)))
	}
	return rows, nil
}

// indexed waits until box serve's index has caught up (its /healthz says so), at most two minutes.
func indexed(ctx context.Context, healthz string) error {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, healthz, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		var h struct{ Indexing bool }
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err == nil && !h.Indexing {
			return nil
		}
	}
	return fmt.Errorf("box serve was still indexing after two minutes")
}

// tsLean runs clients/ts-lean.cjs against box serve and the bare server and returns each query's latencies
// on each.
func (h *harness) tsLean(ctx context.Context, boxURL, bareURL, key string, words []string) (box, bare map[string][]time.Duration, err error) {
	args := append([]string{"node", filepath.Join(h.repo, "clients", "ts-lean.cjs"), boxURL, bareURL, key, strconv.Itoa(*leanCalls),
		strconv.Itoa(leanBlock), strconv.Itoa(*leanWarm)}, words...)
	out, err := exec.CommandContext(ctx, h.nodeSh, args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, nil, fmt.Errorf("ts-lean.cjs: %v: %s", err, ee.Stderr)
		}
		return nil, nil, fmt.Errorf("ts-lean.cjs: %w", err)
	}
	var ms struct{ Box, Bare map[string][]float64 }
	if err := json.Unmarshal(out, &ms); err != nil {
		return nil, nil, fmt.Errorf("ts-lean.cjs printed %q: %w", out, err)
	}
	durations := func(m map[string][]float64) map[string][]time.Duration {
		lat := map[string][]time.Duration{}
		for w, l := range m {
			for _, v := range l {
				lat[w] = append(lat[w], time.Duration(v*float64(time.Millisecond)))
			}
		}
		return lat
	}
	return durations(ms.Box), durations(ms.Bare), nil
}

// canned answers JSON-RPC at once: initialize, tools/list and each search with the result box gave.
type canned struct {
	results  map[string]json.RawMessage // by method, and "tools/call " + words
	hits     map[string]int
	matching map[string]int
}

func (c *canned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments struct{ Words string } `json:"arguments"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(m.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	key := m.Method
	if m.Method == "tools/call" {
		key += " " + m.Params.Arguments.Words
	}
	res, ok := c.results[key]
	if !ok {
		res = json.RawMessage(`{}`)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, res)
}

// record asks box serve, over plain HTTP, what it answers to initialize, tools/list and each search, and
// counts the generated notes each search word is in.
func record(ctx context.Context, url, key string, qs []leanQuery) (*canned, error) {
	c := &canned{results: map[string]json.RawMessage{}, hits: map[string]int{}, matching: map[string]int{}}
	for _, q := range qs {
		re := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(q.words) + `\b`)
		for i := range *notes {
			if _, body := noteText(i); re.MatchString(body) {
				c.matching[q.words]++
			}
		}
	}
	post := func(method string, params any) (json.RawMessage, error) {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var out struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(data, &out); err != nil || out.Result == nil {
			return nil, fmt.Errorf("%s: HTTP %d %s", method, resp.StatusCode, data)
		}
		return out.Result, nil
	}
	init, err := post("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "ts-lean", "version": "1.0.0"}})
	if err != nil {
		return nil, err
	}
	c.results["initialize"] = init
	if c.results["tools/list"], err = post("tools/list", map[string]any{}); err != nil {
		return nil, err
	}
	for _, q := range qs {
		res, err := post("tools/call", map[string]any{"name": "memory_search", "arguments": map[string]any{"words": q.words}})
		if err != nil {
			return nil, err
		}
		var r struct {
			IsError           bool
			StructuredContent struct{ Hits []json.RawMessage }
		}
		json.Unmarshal(res, &r)
		if r.IsError {
			return nil, fmt.Errorf("memory_search %q: %s", q.words, res)
		}
		c.results["tools/call "+q.words], c.hits[q.words] = res, len(r.StructuredContent.Hits)
	}
	return c, nil
}

func leanHeader() string {
	return strings.Join([]string{
		fmt.Sprintf("The lean request path: the official TypeScript SDK client (`clients/ts-lean.cjs`, calls one at a time, %d per query, server and round, %d rounds) "+
			"calls memory_search on `box serve` with %d notes and, in blocks of %d back-to-back calls in turn (the first %d of each untimed), a bare HTTP server in this harness that answers each JSON-RPC request at once "+
			"with a canned result (box's own answer to that request, recorded first): the floor, the client and HTTP alone. Target: box at most 1.5× the floor "+
			"for one fact or nothing, 3× for a broad query (thousands of matches, 10 returned).", *leanCalls, *leanRounds, *notes, leanBlock, *leanWarm),
		"",
		"| memory_search | bare p50 | bare p95 | box serve p50 | box serve p95 | box / bare (p50) |",
		"|---|---|---|---|---|---|",
	}, "\n")
}
