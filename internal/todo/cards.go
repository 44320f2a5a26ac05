package todo

import (
	"context"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
)

// The ops of the to-do cards, as the gate runs them once the owner approves (docs/GATE.md, "Ask me on
// every surface").
const (
	OpAdd  = "todo-add"
	OpDone = "todo-done"
)

// AddAction is the exact action "add this to-do", for a "Save this?" card. It is checked as Add checks
// it first, so a card never holds what Add would refuse (a secret's text).
func AddAction(list, text string) (gate.Action, error) {
	list, text, err := checkAdd(list, text)
	if err != nil {
		return gate.Action{}, err
	}
	return gate.Action{Kind: "save", Switch: gate.Change, Summary: "add the to-do “" + text + "” to " + title(list),
		Payload: map[string]any{"op": OpAdd, "list": list, "text": text}}, nil
}

// DoneAction is the exact action "tick off this item", bound to its id, list and text.
func DoneAction(it Item) gate.Action {
	return gate.Action{Kind: "save", Switch: gate.Change, Summary: "tick off the to-do “" + it.Text + "”",
		Payload: map[string]any{"op": OpDone, "id": it.ID, "list": it.List, "text": it.Text}}
}

// Ops is how approved to-do cards run, under the name of whoever asked: an item is added as the card
// shows it; an item is ticked off only if it is still there, open, with the same text (else the action
// rebuilt from the lists no longer hashes as the card did, and nothing runs).
func (s *Store) Ops() map[string]gate.Op {
	field := func(a gate.Action, k string) string {
		p, _ := a.Payload.(map[string]any)
		v, _ := p[k].(string)
		return v
	}
	return map[string]gate.Op{
		OpAdd: {
			Current: func(_ context.Context, stored gate.Action) (gate.Action, error) { return stored, nil },
			Run: func(_ context.Context, c gate.ApprovalCard, a gate.Action) (gate.Effect, error) {
				list, text, err := checkAdd(field(a, "list"), field(a, "text"))
				if err != nil {
					return gate.Effect{}, err
				}
				it := Item{ID: newID(), Text: text, List: list}
				ch := addChange(c.Proposer(), it)
				return gate.Effect{Change: &ch, Text: func() string { return "Added the to-do: " + it.Text }}, nil
			},
		},
		OpDone: {
			Current: func(ctx context.Context, stored gate.Action) (gate.Action, error) {
				lists, err := s.Lists(ctx)
				if err != nil {
					return gate.Action{}, err
				}
				it, err := find(lists, field(stored, "id"))
				if errs.Is(err, errs.NotFound) || err == nil && (it.Done || it.ID != field(stored, "id")) {
					gone := stored
					gone.Payload = map[string]any{"op": OpDone, "gone": true}
					return gone, nil
				}
				if err != nil {
					return gate.Action{}, err
				}
				return DoneAction(it), nil
			},
			Run: func(_ context.Context, c gate.ApprovalCard, a gate.Action) (gate.Effect, error) {
				it := Item{ID: field(a, "id"), List: field(a, "list"), Text: field(a, "text")}
				ch := doneChange(c.Proposer(), it)
				return gate.Effect{Change: &ch, Text: func() string { return "Ticked off the to-do: " + it.Text }}, nil
			},
		},
	}
}
