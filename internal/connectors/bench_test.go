package connectors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/gate"
)

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
