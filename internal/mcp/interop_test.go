package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

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

// TestInstructionsFitEveryCombination: for every combination of checkboxes, over stdio and with a key,
// and whether or not message and build tools exist on this box, the instructions stay under
// MaxInstructions (Claude Code cuts at 2,048) and begin with the rules, which a cut would otherwise drop.
func TestInstructionsFitEveryCombination(t *testing.T) {
	saved := catalog
	defer func() { catalog = saved }()
	for _, real := range []bool{false, true} {
		catalog = nil
		for _, tl := range saved {
			if real && tl.cap != reading && tl.cap != memoryCB {
				tl.never = false // as if the accounts were plugged in and building were there
			}
			catalog = append(catalog, tl)
		}
		for i := range 8 {
			caps := keys.Caps{Memory: i&1 != 0, Messages: i&2 != 0, Build: i&4 != 0}
			for _, c := range []Conn{{Host: "local", Caps: caps}, {Who: "A key with a long name for a script", Host: "10.0.0.2", KeyID: "k_abcdefgh", Caps: caps}} {
				ins := instructions(c)
				if n := utf8.RuneCountInString(ins); n > MaxInstructions {
					t.Errorf("%+v (tools real: %v): %d characters, over %d", caps, real, n, MaxInstructions)
				}
				if i := strings.Index(ins, "<outside_content>"); i < 0 || i > 400 {
					t.Errorf("%+v: the rule about <outside_content> is not among the first lines:\n%s", caps, ins)
				}
				if caps.Messages && !real && !strings.Contains(ins, "no message or mail account is plugged") {
					t.Errorf("%+v: the instructions do not say messages are not set up", caps)
				}
			}
		}
	}
}

// TestToolsThatCannotWorkAreNotListed: a connection with every checkbox is listed only the tools that can
// work on this box now; a call to one that cannot still answers its sentence.
func TestToolsThatCannotWorkAreNotListed(t *testing.T) {
	tb := newTestBox(t, nil)
	cs := connect(t, tb.service(), Conn{Host: "local", Caps: keys.All}, "Claude Code")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if byName[tl.Name].never {
			t.Errorf("%s is listed but can never succeed here", tl.Name)
		}
	}
	if len(res.Tools) == 0 || len(res.Tools) >= len(catalog) {
		t.Fatalf("%d tools listed of %d", len(res.Tools), len(catalog))
	}
	if out, isErr := text(t, cs, "whatsapp_recent", nil); !isErr || !strings.Contains(out, "isn't plugged into the box") {
		t.Errorf("whatsapp_recent: %v %q", isErr, out)
	}
}
