package gate

import (
	"context"
	"errors"
	"io/fs"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
)

// Find reads a card by id, waiting or decided (from the archive), so that whoever proposed it can ask
// where it stands. A malformed id is NotFound: it never reaches a path.
func (g *Gate) Find(ctx context.Context, id string) (ApprovalCard, error) {
	c, err := g.Get(ctx, id)
	if err == nil || !errs.Is(err, errs.NotFound) || !ValidID(id) {
		return c, err
	}
	p := ArchiveApprovals + "/" + id + ".approval.card"
	data, rerr := layout.ReadFile(g.b.Root, p)
	if errors.Is(rerr, fs.ErrNotExist) {
		return ApprovalCard{}, errs.E("gate.find", errs.NotFound, "There is no card %s.", id)
	}
	if rerr != nil {
		return ApprovalCard{}, errs.Wrap("gate.find", errs.Other, rerr, "The card cannot be read")
	}
	c, err = parseCard(p, data)
	if err == nil && c.ID != id {
		err = errs.E("gate.find", errs.Invalid, "The card file %s names another id; it was not used.", p)
	}
	return c, err
}
