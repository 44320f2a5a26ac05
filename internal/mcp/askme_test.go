package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/todo"
)

// With "Change my box" at Ask me, nothing an assistant writes over MCP runs without the owner: forget
// (even of a core fact), remember, and to-dos each answer that a card waits (not an error) and change
// nothing; approving the card runs exactly that action, under the assistant's name.
func TestAskMeHoldsAnAssistantsWrites(t *testing.T) {
	ctx := context.Background()
	tb := newTestBox(t, nil)
	owner := memory.Actor{Who: "owner", Via: "cli", Trust: "own"}
	if _, err := tb.mem.Remember(ctx, owner, memory.RememberInput{Text: "Leo is allergic to peanuts.", Core: true}); err != nil {
		t.Fatal(err)
	}
	lists := todo.New(tb.box)
	item, err := lists.Add(ctx, owner, "", "Book the dentist for Leo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.gate.SetSwitch(ctx, gate.By{Via: "cli", Local: true}, gate.Change, gate.AskMe); err != nil {
		t.Fatal(err)
	}
	router := func() string {
		data, _ := os.ReadFile(filepath.Join(tb.box.Root, "_content", "memory", "MEMORY.md"))
		return string(data)
	}
	cs := connect(t, tb.service(), Conn{Who: "Claude", Host: "claude.ai", KeyID: "k_claude", Caps: keys.Caps{Memory: true}}, "Claude")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"memory_forget", map[string]any{"words": "leo peanuts"}},
		{"memory_remember", map[string]any{"text": "Leo swims on Thursdays."}},
		{"todos_add", map[string]any{"text": "Buy goggles"}},
		{"todos_done", map[string]any{"id": item.ID}},
	} {
		out, isErr := text(t, cs, c.tool, c.args)
		if isErr || !strings.Contains(out, "Ask me") || !strings.Contains(out, "card waits") {
			t.Errorf("%s at Ask me: isError=%v %s", c.tool, isErr, out)
		}
	}
	if !strings.Contains(router(), "peanuts") {
		t.Fatal("an assistant removed the owner's core fact at Ask me")
	}
	if hits, _ := tb.mem.ForgetPreview(ctx, "leo thursdays"); len(hits) != 0 {
		t.Fatalf("remembered at Ask me: %v", hits)
	}
	ls, _ := lists.Lists(ctx)
	if len(ls) != 1 || len(ls[0].Items) != 1 || ls[0].Items[0].Done {
		t.Fatalf("to-dos changed at Ask me: %+v", ls)
	}
	cards, err := tb.gate.Waiting(ctx)
	if err != nil || len(cards) != 4 {
		t.Fatalf("cards: %d %v", len(cards), err)
	}
	for _, c := range cards {
		if c.ProposedBy.Who != "Claude" || c.ProposedBy.Conn != "k_claude" || c.FromOwner() {
			t.Errorf("a card not under the assistant's name: %+v", c.ProposedBy)
		}
		if _, err := tb.gate.Approve(ctx, c.ID, gate.By{Via: "cli", Local: true}); err != nil {
			t.Fatalf("approve %s: %v", c.Title, err)
		}
	}
	if strings.Contains(router(), "peanuts") {
		t.Error("the approved forget did not remove the core fact")
	}
	if hits, _ := tb.mem.ForgetPreview(ctx, "leo thursdays"); len(hits) != 1 {
		t.Errorf("the approved remember: %v", hits)
	} else if day, _ := os.ReadFile(filepath.Join(tb.box.Root, filepath.FromSlash(hits[0].Path))); !strings.Contains(string(day), "Claude (claude.ai) · mcp · outside · Leo swims") {
		t.Errorf("the approved line is not the assistant's, outside:\n%s", day)
	}
	ls, _ = lists.Lists(ctx)
	if len(ls) != 1 || len(ls[0].Items) != 2 || !ls[0].Items[0].Done || ls[0].Items[1].Text != "Buy goggles" {
		t.Errorf("the approved to-dos: %+v", ls)
	}
	es, _ := tb.box.Diary(ctx, 20, func(e diary.Entry) bool { return e.Op == "todo-add" })
	if len(es) != 2 || es[0].Actor != "Claude" || es[0].Trust != "outside" || es[0].Conn != "k_claude" {
		t.Errorf("the approved to-do is not under the assistant's name: %+v", es)
	}
}
