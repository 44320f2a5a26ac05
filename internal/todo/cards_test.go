package todo

import (
	"context"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
)

// A to-do card runs exactly its action as whoever asked: an add adds the card's text; a tick-off runs
// only while the item is still open as the card showed it (ticked off meanwhile, the card expires); a
// secret never reaches a card.
func TestToDoCards(t *testing.T) {
	ctx := context.Background()
	b, err := box.Init(ctx, t.TempDir(), box.InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := New(b)
	g := gate.New(b)
	for name, op := range s.Ops() {
		g.Register(name, op)
	}
	owner := box.Actor{Who: "owner", Via: "cli", Trust: "own"}
	if _, err := g.SetSwitch(ctx, gate.By{Via: "cli", Local: true}, gate.Change, gate.AskMe); err != nil {
		t.Fatal(err)
	}
	claude := gate.Asker{Connection: "Claude", Via: "mcp", Conn: "k_claude"}
	if _, err := AddAction("", "my password is hunter2hunter2"); !errs.Is(err, errs.Refused) {
		t.Fatalf("a secret on a card: %v", err)
	}
	add, err := AddAction("shopping", "  Buy   goggles ")
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Hold(ctx, add, claude)
	if err != nil || out.Card == nil || !strings.Contains(out.Card.Title, "Save this?: add the to-do “Buy goggles”") {
		t.Fatalf("the add card: %+v %v", out, err)
	}
	if _, err := g.Approve(ctx, out.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
		t.Fatal(err)
	}
	it, err := s.Find(ctx, "Buy goggles")
	if err != nil || it.List != "shopping" {
		t.Fatalf("the approved add: %+v %v", it, err)
	}
	es, _ := b.Diary(ctx, 2, nil)
	if es[1].Op != "todo-add" || es[1].Actor != "Claude" || es[1].Trust != "outside" || es[1].Commit != es[0].Commit {
		t.Fatalf("the add runs as the assistant, in the approval's commit: %+v", es)
	}
	out, err = g.Hold(ctx, DoneAction(it), claude)
	if err != nil || out.Card == nil {
		t.Fatalf("the tick-off card: %+v %v", out, err)
	}
	if _, err := s.Done(ctx, owner, it.ID); err != nil { // the owner ticks it off first
		t.Fatal(err)
	}
	if _, err := g.Approve(ctx, out.Card.ID, gate.By{Via: "cli", Local: true}); !errs.Is(err, errs.Conflict) {
		t.Fatalf("approving a tick-off of an item ticked off meanwhile: %v", err)
	}
}
