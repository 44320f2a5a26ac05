package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/state"
	"github.com/boxmem/box/internal/todo"
	"github.com/boxmem/box/internal/validate"
)

// fixedAt is the memory's clock in these tests, so an inbox line's time is known.
var fixedAt = time.Date(2026, 11, 29, 14, 3, 22, 0, time.Local)

// testBox is a real box in a temp folder, composed as the composition root composes it (package app
// cannot be imported here: it imports this package): one box handle, its memory, state store, keys and gate.
type testBox struct {
	box   *box.Box
	mem   *memory.Memory
	state *state.Store
	keys  *keys.Store
	gate  *gate.Gate
}

// newTestBox makes a box as `box init` does, with files (box path → text) in its first commit, and
// composes its services; all are closed when the test ends.
func newTestBox(t *testing.T, files map[string]string) *testBox {
	t.Helper()
	ctx := context.Background()
	seed := map[string][]byte{layout.Router: []byte(note.RouterSkeleton)}
	for p, s := range files {
		seed[p] = []byte(s)
	}
	var v *validate.Validator
	b, err := box.Init(ctx, t.TempDir(), box.InitOptions{HookBinary: "box", Files: seed,
		Options: memory.BoxOptions(box.Options{Now: func() time.Time { return fixedAt }, Validate: func(root string, paths []string, files map[string][]byte) []finding.Finding {
			if v == nil {
				v = validate.New(root, validate.Options{})
			}
			return v.Writes(root, paths, files)
		}})})
	if err != nil {
		t.Fatal(err)
	}
	tb := &testBox{box: b}
	if tb.mem, err = memory.New(ctx, b, memory.Options{}); err != nil {
		t.Fatal(err)
	}
	if tb.state, err = state.Open(b.Root, state.Options{}); err != nil {
		t.Fatal(err)
	}
	tb.keys = keys.NewStore(tb.state)
	tb.gate = gate.New(b)
	tb.gate.Register("forget", tb.mem.ForgetOp())
	tb.gate.Register("remember", tb.mem.RememberOp())
	for name, op := range todo.New(b).Ops() {
		tb.gate.Register(name, op)
	}
	t.Cleanup(func() {
		if err := errors.Join(tb.keys.Close(), tb.state.Close(), tb.mem.Close(), b.Close()); err != nil {
			t.Error(err)
		}
	})
	return tb
}

// service is the MCP service over this box, as the server builds it.
func (tb *testBox) service() *Service {
	return New(Config{Memory: tb.mem, Todos: todo.New(tb.box), State: tb.state, Gate: tb.gate, Address: "https://box.example"})
}

// file reads a box path from disk.
func (tb *testBox) file(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tb.box.Root, filepath.FromSlash(strings.TrimPrefix(p, "/"))))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// An assistant that confirms a forget of more than five lines gets an approval card for the owner, not a
// removal: nothing is forgotten until the owner says yes with their passkey.
func TestAssistantForgetPastFiveBecomesACard(t *testing.T) {
	ctx := context.Background()
	tb := newTestBox(t, nil)
	owner := memory.Actor{Who: "owner", Via: "cli", Trust: "own"}
	for i := range 6 {
		if _, err := tb.mem.Remember(ctx, owner, memory.RememberInput{Text: fmt.Sprintf("Leo swims on day %d.", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t, tb.service(), Conn{Who: "Claude", Host: "claude.ai", Caps: keys.Caps{Memory: true}}, "Claude")

	out, isErr := text(t, cs, "memory_forget", map[string]any{"words": "leo swims"})
	if isErr || !strings.Contains(out, `"needsConfirm":true`) || !strings.Contains(out, "confirm true") || strings.Contains(out, "--yes") {
		t.Fatalf("without confirm: want the list and needsConfirm, got isError=%v %s", isErr, out)
	}
	out, isErr = text(t, cs, "memory_forget", map[string]any{"words": "leo swims", "confirm": true})
	if isErr {
		t.Fatalf("with confirm: %s", out)
	}
	if !strings.Contains(out, `"removed":0`) {
		t.Errorf("an assistant's confirm removed lines on its own: %s", out)
	}
	cards, _ := filepath.Glob(filepath.Join(tb.box.Root, "_bookkeeping", "approvals", "*.approval.card"))
	if len(cards) != 1 {
		t.Fatalf("want one approval card, got %v (answer: %s)", cards, out)
	}
	card, _ := os.ReadFile(cards[0])
	if !strings.Contains(string(card), "Claude") {
		t.Errorf("the card does not say who sent it:\n%s", card)
	}
	res, err := tb.mem.Search(ctx, memory.SearchInput{Words: "leo swims", Limit: 20})
	if err != nil || len(res.Hits) != 6 {
		t.Errorf("the six lines should all still be there: %d hits, %v", len(res.Hits), err)
	}
}

// With "Change my box" at Never, an assistant's writes are refused in one sentence and nothing is written.
func TestChangeNeverRefusesAssistantWrites(t *testing.T) {
	ctx := context.Background()
	tb := newTestBox(t, nil)
	m := tb.mem
	if _, err := tb.gate.SetSwitch(ctx, gate.By{Via: "cli", Local: true}, gate.Change, gate.Never); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, tb.service(), Conn{Who: "Claude", Host: "claude.ai", Caps: keys.Caps{Memory: true}}, "Claude")
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{"memory_remember", map[string]any{"text": "Leo swims."}}, {"todos_add", map[string]any{"text": "Buy milk"}}} {
		out, isErr := text(t, cs, call.tool, call.args)
		if !isErr || out != ChangeNeverSentence {
			t.Errorf("%s at Never: isError=%v %q", call.tool, isErr, out)
		}
	}
	if res, _ := m.Search(ctx, memory.SearchInput{Words: "leo swims"}); len(res.Hits) != 0 {
		t.Error("a write went through at Never")
	}
	if out, isErr := text(t, cs, "memory_search", map[string]any{"words": "leo"}); isErr {
		t.Errorf("reading must still work at Never: %s", out)
	}
}
