package sandbox

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"
)

// Benchmarks for bench/sandbox (BENCHMARKS.md): start to first tool result, and what the sandbox adds to
// each fetch over the same request made straight from Go.

// BenchmarkStartToResult is one Bus times call: a fresh child, the script loaded, one fetch through the
// proxy, the result back. It reports p50 and p95 besides the mean.
func BenchmarkStartToResult(b *testing.B) {
	s := newSite(b, busAPI())
	r := runner(b, Config{Bundle: bundle(b, busTimesManifest, busTimesIndex), Test: s.net})
	args := json.RawMessage(`{"stop": "12"}`)
	var took []time.Duration
	b.ResetTimer()
	for b.Loop() {
		began := time.Now()
		if _, err := r.Call(context.Background(), "next_buses", args); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(began))
	}
	reportPercentiles(b, took)
}

// BenchmarkFetchOverhead: a call making 100 fetches minus a call making none, per fetch, against the
// same local server reached straight from Go with a keep-alive client (the fetch itself).
func BenchmarkFetchOverhead(b *testing.B) {
	s := newSite(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) }))
	index := `export const tools = { t: async ({ n }, ctx) => { for (let i = 0; i < n; i++) await (await ctx.fetch("https://api.example.com/x")).json(); return n; } };`
	r := runner(b, Config{Bundle: bundle(b, manifest(`["api.example.com"]`, ""), index), Test: s.net})
	call := func(n int) time.Duration {
		began := time.Now()
		if _, err := r.Call(context.Background(), "t", json.RawMessage(fmt.Sprintf(`{"n": %d}`, n))); err != nil {
			b.Fatal(err)
		}
		return time.Since(began)
	}
	addr := s.Addr
	direct := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: s.Roots},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
	get := func() time.Duration {
		began := time.Now()
		resp, err := direct.Get("https://api.example.com/x")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(began)
	}
	get()
	var none, hundred, straight []time.Duration
	b.ResetTimer()
	for b.Loop() {
		none = append(none, call(0))
		hundred = append(hundred, call(MaxFetches))
		straight = append(straight, get())
	}
	perFetch := (median(hundred) - median(none)) / MaxFetches
	b.ReportMetric(float64(perFetch.Microseconds()), "sandbox-fetch-µs")
	b.ReportMetric(float64(median(straight).Microseconds()), "direct-fetch-µs")
	b.ReportMetric(float64((perFetch - median(straight)).Microseconds()), "overhead-µs")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func reportPercentiles(b *testing.B, d []time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	b.ReportMetric(float64(s[len(s)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(s[(len(s)*95)/100].Microseconds())/1000, "p95-ms")
}
