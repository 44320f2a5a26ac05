package keys

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/gate"
)

// Make makes a key for the owner without a card (a local owner at the command line) and writes its diary
// line: keys live in the state store, outside the tree, so the diary is their history. A key whose line
// cannot be written is revoked at once: there is no key the diary does not know. The caller has asked
// the gate first (gate.Check on the access switch).
func (s *Store) Make(ctx context.Context, b *box.Box, name string, caps Caps, by box.Actor) (Connection, string, error) {
	c, token, err := s.New(ctx, name, caps)
	if err != nil {
		return Connection{}, "", err
	}
	summary := fmt.Sprintf("%s made a key for %s (%s): %s", by.Who, c.Name, c.ID, strings.Join(c.Caps.Names(), ", "))
	if err := record(ctx, b, by, "key", summary, ""); err != nil {
		_, rerr := s.Revoke(ctx, c.ID)
		return Connection{}, "", errors.Join(err, rerr)
	}
	return c, token, nil
}

// Disconnect revokes the key id for the owner and writes its diary line, the one way every surface does
// it (box keys revoke, Disconnect in Settings). Revoking comes first: if the line cannot be written, the
// key stays revoked (closed) and the error says the diary missed it.
func (s *Store) Disconnect(ctx context.Context, b *box.Box, id string, by box.Actor, reason string) (Connection, error) {
	c, err := s.Revoke(ctx, id)
	if err != nil {
		return c, err
	}
	return c, record(ctx, b, by, "revoke", fmt.Sprintf("%s revoked the key for %s (%s)", by.Who, c.Name, c.ID), reason)
}

// record writes the diary line of an access decision (a key made or revoked): the gate's paper trail,
// permanent, with no undo.
func record(ctx context.Context, b *box.Box, by box.Actor, op, summary, reason string) error {
	_, err := b.Do(ctx, box.Change{Actor: by, Op: op, Switch: gate.Access, Summary: summary, Reason: reason, Permanent: true,
		Apply: func(*box.Tx) error { return nil }})
	return err
}
