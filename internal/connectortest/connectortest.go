// Package connectortest is test code only: a local HTTPS site that connectors reach under public names
// (sandbox.TestNet: every other dial recorded and refused without connecting), and the seed's Bus times
// connector as an assistant sends it, installed through the real proposal and approval, for the tests that
// install and call connectors through the box.
package connectortest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"testing"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/sandbox"
	"github.com/boxmem/box/internal/sitetest"
)

// Site is a local HTTPS server standing in for the public sites a connector reaches.
type Site struct {
	Net  *sandbox.TestNet
	site *sitetest.Site
}

// NewSite serves h over TLS on 127.0.0.1 under each of hosts; any other name does not resolve, and a
// dial anywhere but the site is recorded and refused without connecting.
func NewSite(t testing.TB, h http.Handler, hosts ...string) *Site {
	t.Helper()
	site := sitetest.New(t, h, hosts...)
	return &Site{site: site, Net: &sandbox.TestNet{
		Hosts:   site.Hosts(),
		RootCAs: site.Roots,
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return nil, fmt.Errorf("no such host %s", host)
		},
		Dial: site.Dial,
	}}
}

// Dials are the addresses a connection was attempted to that were not the site: none, in a sound box.
func (s *Site) Dials() []string { return s.site.Dials() }

// BusHost is the city's API the Bus times connector reaches.
const BusHost = "api.example.com"

// BusManifest is the seed's Bus times connector (docs/CONNECTORS.md, "The manifest"): one read tool,
// next_buses, with the owner's API_KEY sent to the city's API; and one write tool, report_delay, which
// acts as the owner.
const BusManifest = `{
  "name": "Bus times", "what": "The next buses at the owner's stop, from the city's public API.", "emoji": "🚌",
  "egress": ["api.example.com"],
  "credentials": [{"name": "API_KEY", "host": "api.example.com", "what": "Your key from the city's developer page"}],
  "tools": [
    {"name": "next_buses", "description": "The next buses at a stop",
     "inputSchema": {"type": "object", "properties": {"stop": {"type": "string"}}, "required": ["stop"]}, "effect": "read"},
    {"name": "report_delay", "description": "Tell the city a bus is late, as the owner",
     "inputSchema": {"type": "object", "properties": {"line": {"type": "string"}}, "required": ["line"]}, "effect": "write"}],
  "test": [{"tool": "next_buses", "args": {"stop": "12"}, "expect": "nonempty"}],
  "limits": {"timeoutS": 10, "memory": 64}
}`

// BusIndex is its code: the key goes only where the placeholder is, and each call counts itself in
// ctx.store.
const BusIndex = `const base = 'https://api.example.com';
async function get(ctx, path, init) {
  const r = await ctx.fetch(base + path, init);
  if (!r.ok) throw new Error('the city answered ' + r.status);
  return await r.json();
}
async function counted(ctx) {
  const n = ((await ctx.store.get('calls')) || 0) + 1;
  await ctx.store.set('calls', n);
  return n;
}
export const tools = {
  next_buses: async ({ stop }, ctx) => {
    const buses = await get(ctx, '/stops/' + encodeURIComponent(stop), { headers: { 'x-api-key': '{{key:API_KEY}}' } });
    return { stop, buses, calls: await counted(ctx) };
  },
  report_delay: async ({ line }, ctx) => {
    const r = await get(ctx, '/delays', { method: 'POST', headers: { 'x-api-key': '{{key:API_KEY}}', 'content-type': 'application/json' }, body: JSON.stringify({ line }) });
    return { reported: r.ok, calls: await counted(ctx) };
  },
};`

// BusFiles is BusIndex as the files object a proposal sends.
func BusFiles() json.RawMessage {
	b, _ := json.Marshal(map[string]string{"index.mjs": BusIndex}) // a string map always marshals
	return b
}

// BusAPI is the city's API: the buses at stop 12, and delay reports, each only with the key; every
// report it took is counted.
type BusAPI struct {
	Key string // the key it takes

	mu      sync.Mutex
	reports []string
}

// Reports are the lines reported late, in order.
func (a *BusAPI) Reports() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.reports...)
}

func (a *BusAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Host != BusHost {
		http.Error(w, "wrong host "+r.Host, http.StatusBadRequest)
		return
	}
	if r.Header.Get("x-api-key") != a.Key {
		http.Error(w, `{"error": "a key is needed"}`, http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/stops/12":
		_, _ = w.Write([]byte(`[{"line": "4", "in": "3 min"}, {"line": "31", "in": "9 min"}]`))
	case r.Method == http.MethodPost && r.URL.Path == "/delays":
		var in struct{ Line string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		a.mu.Lock()
		a.reports = append(a.reports, in.Line)
		a.mu.Unlock()
		_, _ = w.Write([]byte(`{"ok": true}`))
	default:
		http.NotFound(w, r)
	}
}

// Claude is the assistant that sends the connector in these tests.
var Claude = gate.Asker{Connection: "Claude", Via: "mcp", Host: "claude.ai", Conn: "k-claude"}

// Install sends the connector (its manifest and files as JSON) as Claude would, through the real
// proposal, and approves its card as the local owner does (box cards approve): its tests run before it
// answers. It returns the connector as installed, on or failed.
func Install(t testing.TB, r *builds.Builds, g *gate.Gate, opts connector.Options, manifest string, files json.RawMessage) builds.Build {
	t.Helper()
	ctx := context.Background()
	p, err := r.ProposeConnector(ctx, builds.ConnectorInput{Manifest: json.RawMessage(manifest), Files: files}, opts, Claude)
	if err != nil {
		t.Fatalf("propose: %v", err)
	}
	if p.Card.ID == "" {
		t.Fatalf("the proposal made no card: %+v", p)
	}
	if _, err := g.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
		t.Fatalf("approve: %v", err)
	}
	b, err := r.Connector(ctx, p.Build)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
