// Package connector owns what a connector is: its manifest and files, the checks a bundle passes before
// any card, the egress and address rules the sandbox enforces, and the envelope a card binds with its hash
// (docs/CONNECTORS.md). It never runs connector code, reaches the network or touches the disk.
package connector

import (
	"encoding/json"

	"github.com/boxmem/box/internal/lazyregexp"
)

// Limits of a bundle (docs/CONNECTORS.md, "The manifest").
const (
	MaxBundleBytes   = 1 << 20   // the files, all together
	MaxManifestBytes = 256 << 10 // the manifest's JSON
	MaxFiles         = 20
	MaxHosts         = 10
	MaxCredentials   = 10
	MaxTools         = 20
	MaxTests         = 10

	DefaultTimeoutS = 10
	MaxTimeoutS     = 60
	DefaultMemoryMB = 64
	MinMemoryMB     = 16
	MaxMemoryMB     = 256
)

// The defaults of the fields a sender may leave out, and the only values they may take.
const (
	API     = 1
	Kind    = "connector"
	Runtime = "node-tool"
	Entry   = "index.mjs"
	Emoji   = "🔌"
)

// Effects of a tool: what the owner's card says it does.
const (
	Read  = "read"
	Write = "write"
)

// Manifest is a checked manifest with every default filled in.
type Manifest struct {
	API         int          `json:"api"`
	Kind        string       `json:"kind"`
	Runtime     string       `json:"runtime"`
	Entry       string       `json:"entry"`
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	What        string       `json:"what"`
	Emoji       string       `json:"emoji"`
	Egress      []string     `json:"egress"`
	Credentials []Credential `json:"credentials"`
	Tools       []Tool       `json:"tools"`
	Test        []Test       `json:"test"`
	Limits      Limits       `json:"limits"`
}

// Credential is a key the owner pastes in Settings; the code writes its placeholder and the sandbox
// puts the key in only on requests to Host.
type Credential struct {
	Name string `json:"name"`
	Host string `json:"host"`
	What string `json:"what,omitempty"`
}

// Tool is one tool the connector exports.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Effect      string          `json:"effect"`
}

// Test is one call run before the connector turns on, on fresh and empty state.
type Test struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Expect Expect          `json:"expect"`
}

// Limits bound one call: wall time in seconds and memory in megabytes.
type Limits struct {
	TimeoutS int `json:"timeoutS"`
	Memory   int `json:"memory"`
}

// Tool returns the tool named name, or nil.
func (m *Manifest) Tool(name string) *Tool {
	for i := range m.Tools {
		if m.Tools[i].Name == name {
			return &m.Tools[i]
		}
	}
	return nil
}

// Egress returns the manifest's allow-list in its checked form.
func (m *Manifest) egress() Egress {
	var e Egress
	for _, h := range m.Egress {
		switch {
		case h == AnyWebsite:
			e.Any = true
		case len(h) > 2 && h[:2] == "*.":
			e.Wild = append(e.Wild, h[1:])
		default:
			e.Exact = append(e.Exact, h)
		}
	}
	return e
}

// placeholderRE is a credential placeholder as code writes it: {{key:NAME}}.
var placeholderRE = lazyregexp.New(`\{\{key:([A-Za-z0-9_]*)\}\}`)

// Placeholder is what connector code writes where a key goes; the sandbox swaps it for the key on
// requests to the key's host (docs/CONNECTORS.md, "Keys").
func Placeholder(name string) string { return "{{key:" + name + "}}" }

// PlaceholderNames returns the key names of the placeholders in s, in order, repeats included.
func PlaceholderNames(s string) []string {
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// ReplacePlaceholders replaces each placeholder in s with f(name).
func ReplacePlaceholders(s string, f func(name string) string) string {
	return placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		return f(m[len("{{key:") : len(m)-2])
	})
}
