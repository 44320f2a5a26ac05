package brain

import (
	"errors"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/usage"
)

// The providers the owner can pick (docs/BRAIN.md, "Settings").
const (
	OpenAI     = string(provider.OpenAI)
	Anthropic  = string(provider.Anthropic)
	ClaudeCode = string(provider.ClaudeCode)
	Codex      = string(provider.Codex)
)

// Providers lists them in the order Settings shows them.
var Providers = []string{OpenAI, Anthropic, ClaudeCode, Codex}

// Settings is the brain block of /_config/settings.card. The key is never here: it is in the vault.
type Settings struct {
	Provider  string       `yaml:"provider" json:"provider"` // "" when no brain is set
	BaseURL   string       `yaml:"baseURL" json:"baseURL,omitempty"`
	Model     string       `yaml:"model" json:"model"`
	FastModel string       `yaml:"fastModel" json:"fastModel,omitempty"`
	Budget    float64      `yaml:"budget" json:"budget"` // monthly, US dollars; 0 means none
	Prices    usage.Prices `yaml:"prices" json:"prices,omitempty"`
}

// On reports whether a brain is set.
func (s Settings) On() bool { return s.Provider != "" }

// Subscription reports whether the brain is the owner's plan through a CLI (no key, no budget cap).
func (s Settings) Subscription() bool { return s.Provider == ClaudeCode || s.Provider == Codex }

// check refuses settings an owner could not have meant, in one sentence each.
func (s Settings) check() error {
	const op = "brain.settings"
	if !s.On() {
		return nil
	}
	known := false
	for _, p := range Providers {
		known = known || s.Provider == p
	}
	switch {
	case !known:
		return errs.E(op, errs.Invalid, "Unknown provider %q: use openai (any OpenAI-compatible server), anthropic, claude-code or codex.", s.Provider)
	case strings.TrimSpace(s.Model) == "":
		return errs.E(op, errs.Invalid, "Pick a model, from the provider's own list (box brain models).")
	case len(s.Model) > 200 || len(s.FastModel) > 200 || strings.ContainsAny(s.Model+s.FastModel+s.BaseURL, "\r\n"):
		return errs.E(op, errs.Invalid, "A model id is one line of at most 200 characters.")
	case s.Budget < 0 || s.Budget > 100000 || math.IsNaN(s.Budget):
		return errs.E(op, errs.Invalid, "The budget is a monthly amount in US dollars, from 0 (no budget) to 100,000.")
	case s.Subscription() && s.BaseURL != "":
		return errs.E(op, errs.Invalid, "A subscription brain has no base URL: Claude Code and Codex reach their own service.")
	}
	return s.Prices.Check()
}

// ParseBudget reads a monthly budget as the owner types it ("20", "$7.50"): the one rule for every
// surface (box brain budget, Settings → Brain). Anything more than an amount is refused.
func ParseBudget(text string) (float64, error) {
	t := strings.TrimPrefix(strings.TrimSpace(text), "$")
	usd, err := strconv.ParseFloat(t, 64)
	if err != nil || usd < 0 || usd > 100000 || math.IsNaN(usd) {
		return 0, errs.E("brain.budget", errs.Invalid, "The budget is an amount in US dollars from 0 (no budget) to 100,000, like 20 or 7.50.")
	}
	return usd, nil
}

// readSettings reads the brain block; a missing card or block is no brain. A card that cannot be read
// is an error: the box never guesses which provider to send the owner's words to.
func readSettings(root string) (Settings, error) {
	const op = "brain.settings"
	data, err := layout.ReadFile(root, layout.Settings)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, nil
	}
	if err != nil {
		return Settings{}, errs.Wrap(op, errs.Other, err, "The settings card cannot be read")
	}
	c, err := card.Parse(layout.Settings, data)
	if err != nil {
		return Settings{}, errs.Wrap(op, errs.Invalid, err, "The settings card cannot be read; fix _config/settings.card")
	}
	n := c.Get("brain")
	if n == nil {
		return Settings{}, nil
	}
	var s Settings
	if err := n.Decode(&s); err != nil {
		return Settings{}, errs.Wrap(op, errs.Invalid, err, "The brain block of _config/settings.card cannot be read; fix it or set the brain again")
	}
	if err := s.check(); err != nil {
		return Settings{}, errs.Wrap(op, errs.Invalid, err, "The brain block of _config/settings.card is not valid; fix it or set the brain again")
	}
	return s, nil
}

// writeSettings replaces the brain block of the settings card inside a write transaction: the block
// is the box's own, rewritten whole (at the end of the frontmatter); every other byte of the card stays.
// An empty Provider removes the block.
func writeSettings(tx *box.Tx, s Settings) error {
	if err := s.check(); err != nil {
		return err
	}
	data, err := tx.Read(layout.Settings)
	if errors.Is(err, fs.ErrNotExist) {
		data = card.Build([]card.Field{{Key: "title", Value: "Settings"}}, "")
	} else if err != nil {
		return err
	}
	if data, err = card.DeleteField(data, []string{"brain"}); err != nil {
		return err
	}
	if s.On() {
		if data, err = card.SetField(data, []string{"brain"}, s.fields()); err != nil {
			return err
		}
	}
	return tx.Write(layout.Settings, data)
}

// fields is the block as card fields, in a fixed order, empty values left out.
func (s Settings) fields() []card.Field {
	out := []card.Field{{Key: "provider", Value: s.Provider}}
	if s.BaseURL != "" {
		out = append(out, card.Field{Key: "baseURL", Value: s.BaseURL})
	}
	out = append(out, card.Field{Key: "model", Value: s.Model})
	if s.FastModel != "" {
		out = append(out, card.Field{Key: "fastModel", Value: s.FastModel})
	}
	if s.Budget > 0 {
		out = append(out, card.Field{Key: "budget", Value: s.Budget})
	}
	if len(s.Prices) > 0 {
		ids := make([]string, 0, len(s.Prices))
		for id := range s.Prices {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		var ps []card.Field
		for _, id := range ids {
			p := s.Prices[id]
			ps = append(ps, card.Field{Key: id, Value: []card.Field{{Key: "in", Value: p.In}, {Key: "out", Value: p.Out}}})
		}
		out = append(out, card.Field{Key: "prices", Value: ps})
	}
	return out
}
