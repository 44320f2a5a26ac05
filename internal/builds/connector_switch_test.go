package builds

import (
	"strings"
	"testing"

	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/gate"
)

// The switch and kind of a connector's card: reaching a host it did not reach before is "Share outside
// my box", any website always is; reaching more is "Let a connector reach more" (docs/CONNECTORS.md, "Cards").
func TestConnectorCardSwitch(t *testing.T) {
	env := func(hosts ...string) connector.Envelope { return connector.Envelope{Hosts: hosts} }
	for _, tc := range []struct {
		name     string
		now, old connector.Envelope
		base     int
		kind, sw string
	}{
		{"new, reaching a host", env("api.example.com"), env(), 0, "add-connector", gate.Share},
		{"new, reaching nothing", env(), env(), 0, "add-connector", gate.Change},
		{"new, any website", env("*"), env(), 0, "add-connector", gate.Share},
		{"update, same hosts", env("api.example.com"), env("api.example.com"), 1, "add-connector", gate.Change},
		{"update, one more host", env("api.example.com", "cdn.example.com"), env("api.example.com"), 1, "connector-reach", gate.Share},
		{"update, to any website", env("*"), env("api.example.com"), 1, "connector-reach", gate.Share},
		{"update, any website still", env("*"), env("*"), 1, "add-connector", gate.Share},
		{"update, narrower than any website", env("api.example.com"), env("*"), 1, "add-connector", gate.Change},
	} {
		a := connectorAction{Name: "X", Envelope: tc.now, Base: tc.base}
		a.Adds = tc.now.Adds(tc.old)
		got := connectorGateAction(a, tc.old)
		if got.Kind != tc.kind || got.Switch != tc.sw {
			t.Errorf("%s: %s under %s, want %s under %s", tc.name, got.Kind, got.Switch, tc.kind, tc.sw)
		}
	}
}

// A write tool's line on the card says what is true at every setting: it follows "Send as me", which may
// be Just do it (docs/CONNECTORS.md, "Cards").
func TestConnectorCardWriteTool(t *testing.T) {
	a := connectorAction{What: "posts", Envelope: connector.Envelope{Tools: []connector.ToolUse{{Name: "post", Effect: connector.Write}}}}
	var line string
	for _, f := range connectorFacts(a, "Claude") {
		if strings.HasPrefix(f, "Tool post:") {
			line = f
		}
	}
	if !strings.Contains(line, `follows your "Send as me" switch`) || strings.Contains(line, "asks first") {
		t.Errorf("the write tool's line: %q", line)
	}
}
