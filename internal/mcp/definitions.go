package mcp

import (
	"context"
	"encoding/json"
	"errors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/keys"
)

// Definition is one tool as tools/list shows it. The box's own chat offers the memory tools to its model
// under these names, descriptions and schemas, so they are written once, here (docs/BRAIN.md, "The chat").
type Definition struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// Definitions lists the tools a connection with caps is given, read through a real tools/list over an
// in-process session, so it is whatever the listing says, however the catalog is built.
func (s *Service) Definitions(ctx context.Context, caps keys.Caps) (_ []Definition, err error) {
	const op = "mcp.definitions"
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.Server(Conn{Who: "box chat", Host: "local", Caps: caps}).Connect(ctx, st, nil)
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "the tool list could not be read")
	}
	defer func() { err = errors.Join(err, ss.Close()) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "box-chat", Version: s.Version}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "the tool list could not be read")
	}
	defer func() { err = errors.Join(err, cs.Close()) }()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, "the tool list could not be read")
	}
	out := make([]Definition, 0, len(res.Tools))
	for _, t := range res.Tools {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, errs.Wrap(op, errs.Other, err, "a tool's schema could not be read")
		}
		out = append(out, Definition{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return out, nil
}
