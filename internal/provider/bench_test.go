package provider_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/providertest"
)

// BenchmarkFirstToken measures the time to the first streamed token that the box's provider layer adds
// over the provider's own: (the client's first token − the client's start) − (the server's first flush
// − the request's arrival), reported as p50 and p90. "raw" is the floor any client pays on the same
// machine, measured side by side: a bare net/http POST read line by line to the first text event.
// The target is under 20 ms p50 (docs/BRAIN.md).
func BenchmarkFirstToken(b *testing.B) {
	for _, k := range both {
		for _, client := range []string{"box", "raw"} {
			b.Run(string(k.kind)+"/"+client, func(b *testing.B) {
				srv := k.start(b, testKey)
				srv.Timings = make(chan providertest.Timing, b.N)
				p, _ := provider.New(provider.Config{Kind: k.kind, BaseURL: srv.URL, Key: testKey})
				raw := rawClient(k.kind, srv.URL)
				req := provider.Request{Model: "m", System: strings.Repeat("You are the box. ", 40),
					Messages: []provider.Message{{Role: provider.User, Text: "When does Leo swim?"}}}
				added := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for range b.N {
					srv.Push(providertest.Reply{Text: []string{"FIRST", " and the rest of the answer."}, InputTokens: 300, OutputTokens: 8})
					start := time.Now()
					var first time.Time
					if client == "box" {
						_, err := p.Stream(context.Background(), req, func(d provider.Delta) {
							if first.IsZero() && d.Text != "" {
								first = time.Now()
							}
						})
						if err != nil {
							b.Fatal(err)
						}
					} else {
						first = raw(b)
					}
					tm := <-srv.Timings
					added = append(added, first.Sub(start)-tm.FirstToken.Sub(tm.Arrived))
				}
				b.StopTimer()
				reportPercentiles(b, added, "added")
			})
		}
	}
}

// reportPercentiles reports the p50 and p90 of ds as "<name>-µs-p50" and "<name>-µs-p90".
func reportPercentiles(b *testing.B, ds []time.Duration, name string) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), name+"-µs-p50")
	b.ReportMetric(float64(ds[len(ds)*9/10].Microseconds()), name+"-µs-p90")
}

// rawClient posts a minimal request with a plain client and returns when the first text event arrives.
func rawClient(kind provider.Kind, base string) func(b *testing.B) time.Time {
	c := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	url, body := base+"/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"When does Leo swim?"}]}`
	if kind == provider.Anthropic {
		url, body = base+"/v1/messages", `{"model":"m","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"When does Leo swim?"}]}`
	}
	return func(b *testing.B) time.Time {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("X-Api-Key", testKey)
		req.Header.Set("Anthropic-Version", "2023-06-01")
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var first time.Time
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if first.IsZero() && bytes.Contains(sc.Bytes(), []byte("FIRST")) {
				first = time.Now()
			}
		}
		return first
	}
}
