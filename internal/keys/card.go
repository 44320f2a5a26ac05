package keys

import (
	"context"
	"fmt"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
)

// Action is the exact action "make a key for name with these checkboxes", for a "Give an assistant
// access" card (switch access).
func Action(name string, caps Caps) gate.Action {
	return gate.Action{Kind: "access", Switch: gate.Access, Summary: fmt.Sprintf("a key for %s that can %s", name, caps.Sentence()),
		Payload: map[string]any{"op": "key", "name": name, "caps": map[string]any{"memory": caps.Memory, "messages": caps.Messages, "build": caps.Build}}}
}

// Sentence says what a key may do, in the owner's words: "read memory, save to memory and …".
func (c Caps) Sentence() string {
	what := []string{"read memory"}
	if c.Memory {
		what = append(what, "save to memory")
	}
	if c.Messages {
		what = append(what, "read your messages and mail")
	}
	if c.Build {
		what = append(what, "build for your box (30 days)")
	}
	if len(what) == 1 {
		return what[0]
	}
	return strings.Join(what[:len(what)-1], ", ") + " and " + what[len(what)-1]
}

// Op is how an approved access card runs (the gate calls it): the key is made in the state store once
// the card is archived, and shown once.
func (s *Store) Op() gate.Op {
	return gate.Op{
		Current: func(_ context.Context, stored gate.Action) (gate.Action, error) { return stored, nil },
		Run: func(_ context.Context, _ gate.ApprovalCard, a gate.Action) (gate.Effect, error) {
			p, _ := a.Payload.(map[string]any)
			name, _ := p["name"].(string)
			cm, ok := p["caps"].(map[string]any)
			if name == "" || !ok {
				return gate.Effect{}, errs.E("keys.card", errs.Invalid, "The card does not say which key to make; nothing ran.")
			}
			var caps Caps
			caps.Memory, _ = cm["memory"].(bool)
			caps.Messages, _ = cm["messages"].(bool)
			caps.Build, _ = cm["build"].(bool)
			var made Connection
			return gate.Effect{
				After: func(ctx context.Context) (string, error) {
					c, secret, err := s.New(ctx, name, caps)
					made = c
					return secret, err
				},
				Text: func() string {
					return fmt.Sprintf("The key for %s is made; copy it now, it is shown only once.", made.Name)
				},
			}, nil
		},
	}
}
