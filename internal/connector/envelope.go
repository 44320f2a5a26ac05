package connector

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Envelope is what a connector's card binds: the hosts it reaches, its keys and where each goes, whether
// it only reads, its tools' effects and its limits (docs/CONNECTORS.md, "The envelope").
type Envelope struct {
	ID     string     `json:"id"`
	Hosts  []string   `json:"hosts"`
	Keys   []KeyRoute `json:"keys"`
	Access string     `json:"access"` // "read" when every tool reads, else "write"
	Tools  []ToolUse  `json:"tools"`
	Limits Limits     `json:"limits"`
}

// KeyRoute is one key and the one host it is sent to.
type KeyRoute struct {
	Name string `json:"name"`
	Host string `json:"host"`
}

// ToolUse is a tool's name and effect.
type ToolUse struct {
	Name   string `json:"name"`
	Effect string `json:"effect"`
}

// EnvelopeOf derives the envelope of a checked manifest; lists are sorted so that order never changes it.
func EnvelopeOf(m *Manifest) Envelope {
	e := Envelope{ID: m.ID, Hosts: m.egress().Entries(), Keys: []KeyRoute{}, Tools: []ToolUse{}, Access: Read, Limits: m.Limits}
	for _, c := range m.Credentials {
		e.Keys = append(e.Keys, KeyRoute{Name: c.Name, Host: c.Host})
	}
	for _, t := range m.Tools {
		e.Tools = append(e.Tools, ToolUse{Name: t.Name, Effect: t.Effect})
		if t.Effect == Write {
			e.Access = Write
		}
	}
	slices.SortFunc(e.Keys, func(a, b KeyRoute) int { return cmpStr(a.Name, b.Name) })
	slices.SortFunc(e.Tools, func(a, b ToolUse) int { return cmpStr(a.Name, b.Name) })
	return e
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// AnyWebsite reports whether the connector may reach any public website (the "Share outside my box" rule).
func (e Envelope) AnyWebsite() bool { return slices.Contains(e.Hosts, AnyWebsite) }

// Hash is the SHA-256 (hex) of the envelope's JSON: fixed field order, sorted lists, no HTML escaping.
func (e Envelope) Hash() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(e) // plain strings and numbers always encode
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return hex.EncodeToString(sum[:])
}

// Adds lists, in words for the owner, what e reaches or may do that old did not: new hosts, new keys or
// keys sent elsewhere, a first tool that writes, new tools, higher limits. Empty means the new version
// reaches no further ("Let a connector reach more" is for a non-empty list).
func (e Envelope) Adds(old Envelope) []string {
	var out []string
	for _, h := range e.Hosts {
		if !slices.Contains(old.Hosts, h) && !(h != AnyWebsite && old.AnyWebsite()) {
			if h == AnyWebsite {
				out = append(out, "reaches any website")
			} else {
				out = append(out, "reaches "+h)
			}
		}
	}
	for _, k := range e.Keys {
		i := slices.IndexFunc(old.Keys, func(o KeyRoute) bool { return o.Name == k.Name })
		switch {
		case i < 0:
			out = append(out, fmt.Sprintf("needs the key %s, sent to %s", k.Name, k.Host))
		case old.Keys[i].Host != k.Host:
			out = append(out, fmt.Sprintf("sends the key %s to %s instead of %s", k.Name, k.Host, old.Keys[i].Host))
		}
	}
	for _, t := range e.Tools {
		i := slices.IndexFunc(old.Tools, func(o ToolUse) bool { return o.Name == t.Name })
		switch {
		case i < 0:
			out = append(out, fmt.Sprintf("adds the tool %s (%s)", t.Name, t.Effect))
		case old.Tools[i].Effect == Read && t.Effect == Write:
			out = append(out, fmt.Sprintf("the tool %s now writes", t.Name))
		}
	}
	if e.Limits.TimeoutS > old.Limits.TimeoutS {
		out = append(out, "may run for "+strconv.Itoa(e.Limits.TimeoutS)+" s a call")
	}
	if e.Limits.Memory > old.Limits.Memory {
		out = append(out, "may use "+strconv.Itoa(e.Limits.Memory)+" MB")
	}
	return out
}

// FilesSHA256 is the SHA-256 (hex) of a bundle's files: for each file in byte order of its name, the
// name, a NUL, the length in decimal, a NUL, then the text.
func FilesSHA256(files map[string]string) string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		_, _ = fmt.Fprintf(h, "%s\x00%d\x00%s", name, len(files[name]), files[name]) // a hash never fails to write
	}
	return hex.EncodeToString(h.Sum(nil))
}
