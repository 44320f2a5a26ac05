package connectors

import (
	"context"
	"encoding/json"
	"sort"
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
	Schema      json.RawMessage // its inputSchema's shape only, no words of its sender (modelSchema)
	Arguments   []string        // the descriptions and titles its inputSchema carried, "path: text", as sent
	Words       bool            // the shape still carries words: a name, enum or format that is not a plain token
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
			schema, notes, words := modelSchema(t.InputSchema)
			out = append(out, ChatTool{Name: ToolName(b.ID, t.Name), Connector: strings.TrimSpace(m.Emoji + " " + m.Name),
				Description: t.Description, What: m.What, Hosts: bundle.Envelope.Hosts, Write: t.Effect == connector.Write,
				Schema: schema, Arguments: notes, Words: words})
		}
	}
	return out, nil
}

// shapeKeys are the JSON Schema keywords the chat's model sees of a tool's inputSchema: its shape. Every
// other keyword (description, title, examples, default, pattern, $comment, …) is text its sender wrote;
// the box's own check of the arguments still uses the whole schema (docs/CONNECTORS.md, "Calls").
var shapeKeys = map[string]bool{"type": true, "properties": true, "required": true, "items": true, "enum": true, "const": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true, "additionalProperties": true, "format": true,
	"anyOf": true, "oneOf": true, "allOf": true, "not": true, "$ref": true, "$defs": true}

// modelSchema is a tool's inputSchema as the chat offers it to its model, outside any fence: its shape
// only. The descriptions and titles come back as notes ("path: text") for the fenced description; words
// is true when the shape itself still carries more than plain tokens (a property name, an enum or const
// string, a format or $ref that is not one), so the turn is treated as having read outside content.
func modelSchema(raw json.RawMessage) (json.RawMessage, []string, bool) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return json.RawMessage(`{"type":"object"}`), nil, true
	}
	var notes []string
	words := false
	var walk func(v any, path string) any
	plain := func(s string) {
		if !plainToken(s) {
			words = true
		}
	}
	walk = func(v any, path string) any {
		m, ok := v.(map[string]any)
		if !ok {
			if _, isBool := v.(bool); !isBool { // true/false are schemas too
				words = true
			}
			return v
		}
		out := map[string]any{}
		for k, x := range m {
			switch {
			case k == "description" || k == "title":
				if s, ok := x.(string); ok && s != "" {
					label := strings.TrimPrefix(path, ".")
					if label == "" {
						label = "the arguments"
					}
					notes = append(notes, label+": "+s)
				}
			case !shapeKeys[k]:
			case k == "properties" || k == "$defs":
				props, _ := x.(map[string]any)
				kept := map[string]any{}
				for name, sub := range props {
					plain(name)
					kept[name] = walk(sub, path+"."+name)
				}
				out[k] = kept
			case k == "items" || k == "not" || k == "additionalProperties":
				out[k] = walk(x, path+"[]")
			case k == "anyOf" || k == "oneOf" || k == "allOf":
				list, _ := x.([]any)
				kept := make([]any, 0, len(list))
				for _, sub := range list {
					kept = append(kept, walk(sub, path))
				}
				out[k] = kept
			case k == "required" || k == "enum" || k == "const" || k == "type" || k == "format" || k == "$ref":
				list, ok := x.([]any)
				if !ok {
					list = []any{x}
				}
				for _, e := range list {
					switch e := e.(type) {
					case string:
						plain(e)
					case float64, bool, nil:
					default:
						words = true
					}
				}
				out[k] = x
			default: // a number or a boolean bound
				switch x.(type) {
				case float64, bool:
					out[k] = x
				}
			}
		}
		return out
	}
	shaped := walk(v, "")
	sort.Strings(notes)
	b, _ := json.Marshal(shaped) // read from JSON
	return b, notes, words
}

// plainToken is a short name with no spaces: a property, an enum value, a format, a $ref.
func plainToken(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:/#$@+", r)) {
			return false
		}
	}
	return true
}
