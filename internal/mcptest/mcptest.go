// Package mcptest holds what tests that drive the box over MCP share: calling a tool and reading its
// text. It is imported by tests only and knows nothing of the box.
package mcptest

import (
	"context"
	"encoding/json"
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
