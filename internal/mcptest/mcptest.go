// Package mcptest holds what tests that drive the box over MCP share: calling a tool and reading its
// text, and a raw request for tests that speak the protocol's HTTP themselves. It is imported by tests only
// and knows nothing of the box.
package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call calls a tool and returns its text content joined, and whether it is an isError result; a
// protocol error fails the test.
func Call(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// Propose calls a build tool that must make a card (ok, with a proposal id) and returns the proposal id;
// anything else fails the test.
func Propose(t testing.TB, cs *sdk.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	out, isErr := Call(t, cs, tool, args)
	var p struct {
		OK       bool
		Proposal string
	}
	if isErr || json.Unmarshal([]byte(out), &p) != nil || !p.OK || p.Proposal == "" {
		t.Fatalf("%s: isError=%v %s", tool, isErr, out)
	}
	return p.Proposal
}

// Post is a raw JSON-RPC request to an MCP endpoint as a Streamable HTTP client sends it: POSTed JSON,
// JSON or an event stream accepted, a protocol version.
func Post(url, body string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		panic(err) // a test's own URL
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	return req
}
