package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/note"
)

// An assistant that confirms a forget of more than five lines gets an approval card for the owner, not a
// removal: nothing is forgotten until the owner says yes with their passkey.
func TestAssistantForgetPastFiveBecomesACard(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	b, err := box.Init(ctx, root, box.InitOptions{HookBinary: "box", Files: map[string][]byte{layout.Router: []byte(note.RouterSkeleton)}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m, err := memory.Open(ctx, b.Root, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	owner := memory.Actor{Who: "owner", Via: "cli", Trust: "own"}
	for i := range 6 {
		if _, err := m.Remember(ctx, owner, memory.RememberInput{Text: fmt.Sprintf("Leo swims on day %d.", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	svc := New(Config{Memory: m, State: &fakeState{}, Gate: gate.New(b, nil), Root: b.Root})
	cs := connect(t, svc, Conn{Who: "Claude", Host: "claude.ai", Caps: keys.Caps{Memory: true}}, "Claude")

	out, isErr := text(t, cs, "memory_forget", map[string]any{"words": "leo swims"})
	if isErr || !strings.Contains(out, `"needsConfirm":true`) {
		t.Fatalf("without confirm: want the list and needsConfirm, got isError=%v %s", isErr, out)
	}
	out, isErr = text(t, cs, "memory_forget", map[string]any{"words": "leo swims", "confirm": true})
	if isErr {
		t.Fatalf("with confirm: %s", out)
	}
	if !strings.Contains(out, `"removed":0`) {
		t.Errorf("an assistant's confirm removed lines on its own: %s", out)
	}
	cards, _ := filepath.Glob(filepath.Join(b.Root, "_bookkeeping", "approvals", "*.approval.card"))
	if len(cards) != 1 {
		t.Fatalf("want one approval card, got %v (answer: %s)", cards, out)
	}
	card, _ := os.ReadFile(cards[0])
	if !strings.Contains(string(card), "Claude") {
		t.Errorf("the card does not say who sent it:\n%s", card)
	}
	res, err := m.Search(ctx, memory.SearchInput{Words: "leo swims", Limit: 20})
	if err != nil || len(res.Hits) != 6 {
		t.Errorf("the six lines should all still be there: %d hits, %v", len(res.Hits), err)
	}
}
