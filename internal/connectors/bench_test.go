package connectors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/boxmem/box/bench/benchkit"
	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/apptest"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectortest"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/sandbox"
)

// BenchmarkCall is one call of the Bus times connector as every surface makes it (Service.Call: the
// checks, the bundle read and checked again, the key from the vault, a fresh sandbox, one fetch, the
// diary line's commit), beside the same call made straight on a sandbox (sandbox's own benchmarks
// measure the sandbox: start to first result, the cost of a fetch). It reports p50 and p95 of the
// whole call and what the service adds over the sandbox's p50.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	api := &connectortest.BusAPI{Key: cityKey}
	site := connectortest.NewSite(b, api, connectortest.BusHost)
	a := apptest.Open(b, app.Options{ConnectorNet: site.Net})
	connectortest.Install(b, a.Builds, a.Gate, a.Connectors.CheckOptions(ctx), connectortest.BusManifest, connectortest.BusFiles())
	if _, err := a.Connectors.SetKey(ctx, owner, "bus-times", "API_KEY", cityKey); err != nil {
		b.Fatal(err)
	}
	bt, err := a.Builds.SetOn(ctx, owner, "bus-times", true)
	if err != nil || bt.Status != builds.StatusOn {
		b.Fatalf("on: %+v %v", bt, err)
	}
	cfg, err := a.Connectors.Config(bt, bt.Version, true)
	if err != nil {
		b.Fatal(err)
	}
	bare, err := sandbox.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Close()
	args := json.RawMessage(`{"stop": "12"}`)
	var whole, sandboxed []time.Duration
	b.ResetTimer()
	for b.Loop() {
		began := time.Now()
		if _, err := a.Connectors.Call(ctx, ownerCLI, "bus-times", "next_buses", args); err != nil {
			b.Fatal(err)
		}
		whole = append(whole, time.Since(began))
		began = time.Now()
		if _, err := bare.Call(ctx, "next_buses", args); err != nil {
			b.Fatal(err)
		}
		sandboxed = append(sandboxed, time.Since(began))
	}
	p50, p95 := benchkit.Percentile(whole, 50), benchkit.Percentile(whole, 95)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p95), "p95-ms")
	b.ReportMetric(ms(benchkit.Percentile(sandboxed, 50)), "sandbox-p50-ms")
	b.ReportMetric(ms(p50-benchkit.Percentile(sandboxed, 50)), "service-overhead-ms")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkApproveConnector is one connector's card approved, from the owner's yes to its status after
// its test: the install commit, one boxed test against the city's API (a fresh sandbox child), and the
// outcome's commit.
func BenchmarkApproveConnector(b *testing.B) {
	ctx := context.Background()
	c := newCity(b)
	a := openApp(b, c)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		m := bundle(b, map[string]any{"name": fmt.Sprintf("Bus times %d", i)}, nil)
		manifest, _ := json.Marshal(m["manifest"])
		files, _ := json.Marshal(m["files"])
		p, err := a.Builds.ProposeConnector(ctx, builds.ConnectorInput{Manifest: manifest, Files: files}, a.Connectors.CheckOptions(ctx),
			gate.Asker{Connection: "Bench", Via: "mcp", Conn: fmt.Sprintf("k-bench-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := a.Gate.Approve(ctx, p.Card.ID, local); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if got, _ := a.Builds.Connector(ctx, fmt.Sprintf("bus-times-%d", i)); got.Status != builds.StatusOn {
			b.Fatalf("status %s: %+v", got.Status, got.Health)
		}
		b.StartTimer()
	}
}
