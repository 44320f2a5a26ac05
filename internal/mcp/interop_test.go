package mcp

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/keys"
)

// TestUndeclaredCapabilitiesAreNotServed: the box declares tools only, so prompts, resources, completions
// and logging answer -32601 (method not found) instead of an empty list.
func TestUndeclaredCapabilitiesAreNotServed(t *testing.T) {
	tb := newTestBox(t, nil)
	cs := connect(t, tb.service(), Conn{Host: "local", Caps: keys.All}, "Claude Code")
	ctx := context.Background()
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || caps.Prompts != nil || caps.Resources != nil || caps.Logging != nil || caps.Completions != nil {
		t.Fatalf("declared: %+v", caps)
	}
	for name, call := range map[string]func() error{
		"prompts/list":     func() error { _, err := cs.ListPrompts(ctx, nil); return err },
		"resources/list":   func() error { _, err := cs.ListResources(ctx, nil); return err },
		"logging/setLevel": func() error { return cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}) },
	} {
		var je *jsonrpc.Error
		if err := call(); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: %v, want -32601", name, err)
		}
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
}
