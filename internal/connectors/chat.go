package connectors

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connector"
)

// The connectors' tools as the box's chat offers them to its model: c_<id>__<tool>
// (docs/CONNECTORS.md, "Calls").

const toolPrefix, toolSep = "c_", "__"

// ToolName is the chat's name of a connector's tool. A connector id has no underscore, so the first
// "__" after the prefix ends it.
func ToolName(id, tool string) string { return toolPrefix + id + toolSep + tool }

// SplitToolName reads a chat tool's name back into the connector id and its tool; ok is false for a
// name that is not a connector's.
func SplitToolName(name string) (id, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, toolPrefix)
	if !ok {
		return "", "", false
	}
	id, tool, ok = strings.Cut(rest, toolSep)
	return id, tool, ok && id != "" && tool != "" && connector.Slug(id) == id
}

// ChatTool is one tool of a connector that is on, as the chat offers it: the box's facts about it, and
// the words its sender wrote (Description, What), which are outside content.
type ChatTool struct {
	Name        string          // c_<id>__<tool>
	Connector   string          // the connector's emoji and name
	Description string          // the tool's description, as sent
	What        string          // what the connector is for, as sent
	Hosts       []string        // where it reaches; ["*"]: any website
	Write       bool            // it acts as the owner
	Schema      json.RawMessage // its inputSchema
}

// ChatTools are the tools of every connector that is on, none in safe mode or on a frozen box. A
// connector whose bundle no longer reads is left out (its own calls say why).
func (s *Service) ChatTools(ctx context.Context) ([]ChatTool, error) {
	if s.opts.State.Quiet(ctx) != nil || s.opts.Builds.SafeMode(ctx) {
		return nil, nil
	}
	all, err := s.opts.Builds.Connectors(ctx)
	if err != nil {
		return nil, err
	}
	var out []ChatTool
	for _, b := range all {
		if b.Status != builds.StatusOn {
			continue
		}
		bundle, err := s.opts.Builds.Bundle(b, b.Version)
		if err != nil {
			continue
		}
		m := bundle.Manifest
		for _, t := range m.Tools {
			out = append(out, ChatTool{Name: ToolName(b.ID, t.Name), Connector: strings.TrimSpace(m.Emoji + " " + m.Name),
				Description: t.Description, What: m.What, Hosts: bundle.Envelope.Hosts, Write: t.Effect == connector.Write, Schema: t.InputSchema})
		}
	}
	return out, nil
}
