package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
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

// TestSearchKindsAsOverviewShowsThem: memory_search narrows to entity or topic notes, the kinds
// memory_overview shows; a kind the box does not have is refused naming every valid one.
func TestSearchKindsAsOverviewShowsThem(t *testing.T) {
	tb := newTestBox(t, map[string]string{
		"/_content/memory/notes/entity-ana.md":     "---\ntype: note\nkind: person\ntitle: Ana\ndescription: Grows tomatoes in the garden.\nsource: own\n---\n# Ana\n",
		"/_content/memory/notes/topic-garden.md":   "---\ntype: note\nkind: topic\ntitle: Garden\ndescription: The garden plan.\nsource: own\n---\n# Garden\n",
		"/_content/memory/notes/entity-gardenr.md": "---\ntype: note\nkind: person\ntitle: Bo\ndescription: The garden help.\nsource: own\n---\n# Bo\n",
	})
	cs := connect(t, tb.service(), Conn{Host: "local", Caps: keys.Caps{}}, "c")
	var all, ents, tops struct{ Hits []struct{ Name string } }
	call(t, cs, "memory_search", map[string]any{"words": "garden"}, &all)
	call(t, cs, "memory_search", map[string]any{"words": "garden", "kind": "entity"}, &ents)
	call(t, cs, "memory_search", map[string]any{"words": "garden", "kind": "topic"}, &tops)
	if len(all.Hits) != 3 || len(ents.Hits) != 2 || len(tops.Hits) != 1 || tops.Hits[0].Name != "topic-garden" {
		t.Fatalf("all %v, entity %v, topic %v", all.Hits, ents.Hits, tops.Hits)
	}
	for _, h := range ents.Hits {
		if !strings.HasPrefix(h.Name, "entity-") {
			t.Errorf("kind entity found %s", h.Name)
		}
	}
	if out, isErr := text(t, cs, "memory_search", map[string]any{"words": "garden", "kind": "people"}); !isErr || !strings.Contains(out, `"entity"`) || !strings.Contains(out, `"doc"`) {
		t.Errorf("an unknown kind: %v %s", isErr, out)
	}
	if out, isErr := text(t, cs, "memory_search", map[string]any{"words": "garden", "trust": "mine"}); !isErr || !strings.Contains(out, `"own" or "outside"`) {
		t.Errorf("an unknown trust: %v %s", isErr, out)
	}
	if _, err := tb.mem.Search(context.Background(), memory.SearchInput{Words: "garden", Kind: "people"}); !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "entity, topic") {
		t.Errorf("memory.Search with an unknown kind: %v", err)
	}
}

// TestBadArgumentsAreOneSentence: arguments that do not fit a tool come back as one plain sentence naming
// the field and what it takes, never the SDK's validation text.
func TestBadArgumentsAreOneSentence(t *testing.T) {
	tb := newTestBox(t, nil)
	cs := connect(t, tb.service(), Conn{Host: "local", Caps: keys.All}, "c")
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"memory_search", map[string]any{"words": 5}, `"words" must be text`},
		{"memory_search", map[string]any{}, `needs "words"`},
		{"memory_search", map[string]any{"words": "x", "limit": 500}, `from 1 to 50`},
		{"memory_search", map[string]any{"words": "x", "limit": 2.5}, `whole number`},
		{"memory_search", map[string]any{"words": "x", "colour": "red"}, `takes no "colour"`},
		{"memory_remember", map[string]any{"text": []string{"a"}}, `"text" must be text`},
		{"memory_forget", map[string]any{"words": "x", "confirm": "yes"}, `true or false`},
		{"memory_recent", map[string]any{"limit": nil}, `whole number`},
		{"memory_read_note", nil, `needs "name"`},
	} {
		out, isErr := text(t, cs, tc.tool, tc.args)
		if !isErr || !strings.Contains(out, tc.want) || strings.Contains(out, "validating") || strings.Contains(out, "reflect") {
			t.Errorf("%s %v: %v %q, want a sentence with %q", tc.tool, tc.args, isErr, out, tc.want)
		}
	}
}

// TestSchemasHaveOneTypePerValue: no tool's input or output schema has a list of types ("null" with
// "array"), which some clients cannot read.
func TestSchemasHaveOneTypePerValue(t *testing.T) {
	tb := newTestBox(t, nil)
	cs := connect(t, tb.service(), Conn{Host: "local", Caps: keys.All}, "c")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		data, _ := json.Marshal([]any{tl.InputSchema, tl.OutputSchema})
		if strings.Contains(string(data), `"type":[`) {
			t.Errorf("%s: %s", tl.Name, data)
		}
	}
	for _, tl := range catalog { // the unlisted ones too
		data, _ := json.Marshal(tl.in)
		if strings.Contains(string(data), `"type":[`) {
			t.Errorf("%s: %s", tl.name, data)
		}
	}
}
