// Package brain owns the box's own thinking: the brain the owner set (settings, the sealed key, the
// provider built for a call), one model turn with a tool set, budget-checked and ledgered, the chat
// (its prompt, its tools over the memory's operations, its history) and the chat without a brain. It
// must not touch HTTP, the vault's format or the wire protocols: provider, vault, usage and route own
// those (docs/BRAIN.md).
package brain

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/route"
	"github.com/boxmem/box/internal/state"
	"github.com/boxmem/box/internal/todo"
	"github.com/boxmem/box/internal/usage"
	"github.com/boxmem/box/internal/vault"
)

// Config is what the brain is built on: the process's services, from the composition root.
type Config struct {
	Box    *box.Box
	Memory *memory.Memory
	Todos  *todo.Store
	Gate   *gate.Gate
	State  *state.Store
	// Vault opens the process's one vault (on first use: a box without a brain never makes one).
	Vault func() (*vault.Vault, error)
	// Tools lists the MCP catalogue's memory tools (names, descriptions, schemas), which the chat offers
	// its model as they are (docs/BRAIN.md, "The chat").
	Tools func(ctx context.Context) ([]provider.Tool, error)
	// Connectors run the installed connectors' tools, which the chat offers as c_<id>__<tool> while they
	// are on (docs/CONNECTORS.md, "Calls"); nil offers none.
	Connectors *connectors.Service
	// HTTP is the client for provider calls; nil is the provider package's own.
	HTTP *http.Client
	// FirstByte and Idle bound a provider call (provider.Config's); zero is the provider's default.
	FirstByte, Idle time.Duration
	Now             func() time.Time
	Logger          *slog.Logger
}

// Brain is the box's brain service over one box.
type Brain struct {
	cfg   Config
	log   *slog.Logger
	tools struct {
		once sync.Once
		defs []provider.Tool
		err  error
	}
}

// New returns the brain service; it calls nothing yet.
func New(cfg Config) (*Brain, error) {
	if cfg.Box == nil || cfg.Memory == nil || cfg.Todos == nil || cfg.Gate == nil || cfg.State == nil || cfg.Vault == nil || cfg.Tools == nil {
		return nil, errs.E("brain.new", errs.Invalid, "the brain needs the box, memory, to-dos, gate, state, vault and tool list")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Brain{cfg: cfg, log: log}, nil
}

// Settings reads the brain block of the settings card.
func (b *Brain) Settings() (Settings, error) { return readSettings(b.cfg.Box.Root) }

// keyName is the vault entry of a provider's key.
func keyName(p string) string { return "brain/" + p }

// providerName is how the owner knows a provider before one is built.
func providerName(p string) string {
	switch p {
	case OpenAI:
		return "OpenAI-compatible server"
	case Anthropic:
		return "Anthropic"
	case ClaudeCode:
		return "Claude Code"
	case Codex:
		return "Codex"
	}
	return p
}

// open builds the provider the settings name, with the key from the vault (or the one given, for a
// check before it is saved). The key goes from the vault into the provider's Config and nowhere else.
func (b *Brain) open(s Settings, key *string) (provider.Provider, error) {
	const op = "brain.provider"
	if !s.On() {
		return nil, errs.E(op, errs.NotFound, "No brain is set up; set one in Settings → Brain or with box brain set.")
	}
	v, err := b.cfg.Vault()
	if err != nil {
		return nil, err
	}
	if s.Subscription() {
		return provider.NewSubscription(provider.SubscriptionConfig{CLI: provider.CLI(s.Provider),
			Dir: filepath.Join(v.Dir(), "subscription"), FirstByte: b.cfg.FirstByte, Idle: b.cfg.Idle, Now: b.cfg.Now})
	}
	k := ""
	switch {
	case key != nil:
		k = *key
	default:
		sealed, err := b.sealedKey(v, s.Provider)
		switch {
		case errs.Is(err, errs.NotFound):
			// a local model server may need no key
		case err != nil:
			return nil, err
		case sealed.addr != s.BaseURL:
			return nil, errs.E(op, errs.Refused, "The brain's key was checked with %s, but the settings now name %s, so the box does not send it there. Set the brain again with its key (Settings → Brain, or box brain set).",
				address(sealed.addr), address(s.BaseURL))
		default:
			k = sealed.key
		}
	}
	return provider.New(provider.Config{Kind: provider.Kind(s.Provider), BaseURL: s.BaseURL, Key: k, HTTP: b.cfg.HTTP,
		FirstByte: b.cfg.FirstByte, Idle: b.cfg.Idle, Now: b.cfg.Now})
}

// boundKey is a provider key as the vault keeps it: sealed with the base URL it was checked against
// ("" for the provider's own address). A key is sent only to that address (docs/BRAIN.md).
type boundKey struct{ addr, key string }

// sealedKey reads the provider's key; one sealed before keys carried their address counts as checked
// with the provider's own address.
func (b *Brain) sealedKey(v *vault.Vault, provider string) (boundKey, error) {
	sec, err := v.Get(keyName(provider))
	if err != nil {
		return boundKey{}, err
	}
	addr, key, _ := vault.Unbind(sec.Reveal())
	return boundKey{addr, key}, nil
}

// address names a base URL for a sentence.
func address(base string) string {
	if base == "" {
		return "the provider's own address"
	}
	return base
}

// SetInput is what the owner picks in Settings → Brain or with box brain set.
type SetInput struct {
	Provider  string
	BaseURL   string
	Model     string
	FastModel string
	// Key is the owner's key; "" keeps the one already sealed for this provider (or none, for a local
	// server that needs none).
	Key string
}

// Set checks the key with the provider (and the models against its own list) before anything is saved,
// then seals the key in the vault and writes the settings. The key is never written anywhere else and
// never shown again.
func (b *Brain) Set(ctx context.Context, who box.Actor, in SetInput) (Status, error) {
	const op = "brain.set"
	old, err := b.Settings()
	if err != nil && !errs.Is(err, errs.Invalid) {
		return Status{}, err
	}
	s := Settings{Provider: strings.TrimSpace(in.Provider), BaseURL: strings.TrimRight(strings.TrimSpace(in.BaseURL), "/"),
		Model: strings.TrimSpace(in.Model), FastModel: strings.TrimSpace(in.FastModel), Budget: old.Budget, Prices: old.Prices}
	if s.FastModel == s.Model {
		s.FastModel = ""
	}
	if s.Provider == "" {
		return Status{}, errs.E(op, errs.Invalid, "Pick a provider: openai (any OpenAI-compatible server), anthropic, claude-code or codex.")
	}
	if err := s.check(); err != nil {
		return Status{}, err
	}
	key := strings.TrimSpace(in.Key)
	if s.Subscription() && key != "" {
		return Status{}, errs.E(op, errs.Invalid, "A subscription brain takes no key: it thinks on your own plan once Claude Code or Codex is signed in.")
	}
	v, err := b.cfg.Vault()
	if err != nil {
		return Status{}, err
	}
	var given *string
	if key != "" {
		given = &key
	}
	// With no key given, the sealed one is kept only for the address it was checked with: for another
	// address the check goes out with no key at all (a local server may need none), and the old key is
	// never sent there.
	away, from := false, ""
	if sealed, err := b.sealedKey(v, s.Provider); key == "" && err == nil && sealed.addr != s.BaseURL {
		given, away, from = &key, true, sealed.addr
	}
	p, err := b.open(s, given)
	if err != nil {
		return Status{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.CheckKey(cctx); err != nil {
		if away {
			return Status{}, errs.Wrap(op, errs.KindOf(err), err, fmt.Sprintf("Your key was checked with %s and is not sent to %s: give the key again with the new address", address(from), address(s.BaseURL)))
		}
		return Status{}, err
	}
	models, err := p.Models(cctx)
	if err != nil {
		return Status{}, err
	}
	if err := pickable(p.Name(), models, s.Model, s.FastModel); err != nil {
		return Status{}, err
	}
	s.Prices = withListPrices(s.Prices, models)
	// The new key is sealed before the settings are committed (a brain never names a key not yet there);
	// a commit the box refuses puts the vault back, and the other keys go only once the change is in, so
	// a refused change leaves the working brain as it was.
	undo := func() error { return nil }
	if key != "" {
		if undo, err = b.sealUndoably(v, s.Provider); err != nil {
			return Status{}, err
		}
		if err := v.Put(keyName(s.Provider), vault.Bind(s.BaseURL, key)); err != nil {
			return Status{}, errors.Join(err, undo())
		}
	}
	summary := fmt.Sprintf("%s set the brain: %s, %s", who.Who, p.Name(), s.Model)
	if s.FastModel != "" {
		summary += " (fast: " + s.FastModel + ")"
	}
	if err := b.saveSettings(ctx, who, summary, s); err != nil {
		return Status{}, errors.Join(err, undo())
	}
	if away {
		// the brain now works with no key at its new address; the old one was for another
		if err := v.Delete(keyName(s.Provider)); err != nil && !errs.Is(err, errs.NotFound) {
			return Status{}, err
		}
	}
	if err := b.dropKeys(v, s.Provider); err != nil {
		return Status{}, err
	}
	return b.Status(ctx)
}

// sealUndoably returns what puts the provider's vault entry back as it is now (sealed again, or gone).
func (b *Brain) sealUndoably(v *vault.Vault, provider string) (func() error, error) {
	name := keyName(provider)
	sec, err := v.Get(name)
	switch {
	case errs.Is(err, errs.NotFound):
		return func() error { return v.Delete(name) }, nil
	case err != nil:
		return nil, err
	}
	return func() error { return v.Put(name, sec.Reveal()) }, nil
}

// pickable checks the models are on the provider's own list (when it has one).
func pickable(name string, models []provider.Model, picks ...string) error {
	if len(models) == 0 {
		return nil
	}
	have := map[string]bool{}
	for _, m := range models {
		have[m.ID] = true
	}
	for _, p := range picks {
		if p != "" && !have[p] {
			ids := make([]string, 0, 8)
			for i, m := range models {
				if i == 8 {
					ids = append(ids, "…")
					break
				}
				ids = append(ids, m.ID)
			}
			return errs.E("brain.set", errs.Invalid, "%s does not list the model %q; pick one it lists (box brain models): %s.", name, p, strings.Join(ids, ", "))
		}
	}
	return nil
}

// withListPrices fills the price table from a model list that carries prices, never over the owner's own.
func withListPrices(prices usage.Prices, models []provider.Model) usage.Prices {
	out := usage.Prices{}
	for k, v := range prices {
		out[k] = v
	}
	for _, m := range models {
		if _, set := out[m.ID]; !set && m.Price != nil {
			out[m.ID] = *m.Price
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// dropKeys removes every brain key but keep's: the vault holds the key of the brain in use only.
func (b *Brain) dropKeys(v *vault.Vault, keep string) error {
	entries, err := v.List()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name, "brain/") && e.Name != keyName(keep) {
			if err := v.Delete(e.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *Brain) saveSettings(ctx context.Context, who box.Actor, summary string, s Settings) error {
	_, err := b.cfg.Box.Do(ctx, box.Change{Actor: who, Op: "brain", Switch: gate.Change, Summary: summary,
		Apply: func(tx *box.Tx) error { return writeSettings(tx, s) }})
	return err
}

// Off forgets the brain: the settings block goes and every brain key is removed from the vault. The
// chat answers from memory by search again.
func (b *Brain) Off(ctx context.Context, who box.Actor) error {
	v, err := b.cfg.Vault()
	if err != nil {
		return err
	}
	// The settings go first: a refused change keeps the working brain and its key.
	s, err := b.Settings()
	if err != nil && !errs.Is(err, errs.Invalid) {
		return err
	}
	if s.On() || err != nil {
		if _, err := b.cfg.Box.Do(ctx, box.Change{Actor: who, Op: "brain", Switch: gate.Change, Summary: who.Who + " turned the brain off",
			Apply: func(tx *box.Tx) error { return writeSettings(tx, Settings{}) }}); err != nil {
			return err
		}
	}
	return b.dropKeys(v, "")
}

// SetBudget sets the monthly budget in US dollars (0: none). Raising it opens a stopped brain at once.
func (b *Brain) SetBudget(ctx context.Context, who box.Actor, dollars float64) (Status, error) {
	s, err := b.Settings()
	if err != nil {
		return Status{}, err
	}
	if !s.On() {
		return Status{}, errs.E("brain.budget", errs.NotFound, "No brain is set up, so there is nothing to budget; set one first (box brain set).")
	}
	s.Budget = dollars
	if err := b.saveSettings(ctx, who, fmt.Sprintf("%s set the brain's monthly budget to %s", who.Who, usage.Dollars(dollars)), s); err != nil {
		return Status{}, err
	}
	return b.Status(ctx)
}

// Models lists the models of the brain in use, from the provider's own list.
func (b *Brain) Models(ctx context.Context) ([]provider.Model, error) {
	if err := b.cfg.State.Quiet(ctx); err != nil { // a frozen box talks to no provider (Think)
		return nil, err
	}
	s, err := b.Settings()
	if err != nil {
		return nil, err
	}
	p, err := b.open(s, nil)
	if err != nil {
		return nil, err
	}
	return p.Models(ctx)
}

// Status is the brain as Settings → Brain and box brain status show it. It never holds the key: only
// its last four characters, in Key's sentence.
type Status struct {
	On       bool     `json:"on"`
	Settings Settings `json:"settings"`
	Name     string   `json:"name,omitempty"`  // the provider as the owner knows it
	Key      string   `json:"key,omitempty"`   // "your own Anthropic key (…abcd)"
	Where    string   `json:"where,omitempty"` // "Your messages go to Anthropic to be answered."
	Month    Month    `json:"month"`
	Standing string   `json:"standing"` // open, fast-only, stopped
	Sentence string   `json:"sentence,omitempty"`
}

// Month is this month's usage, totalled from the ledger.
type Month struct {
	Month     string  `json:"month"`               // 2026-03
	Cost      float64 `json:"cost"`                // billed: what the budget counts
	Estimated float64 `json:"estimated,omitempty"` // a subscription's own estimate of the API price, not billed
	AtLeast   bool    `json:"atLeast,omitempty"`   // some calls had no price: the cost is at least this
	Calls     int     `json:"calls"`
	TokensIn  int     `json:"tokensIn"`
	TokensOut int     `json:"tokensOut"`
	Turns     []Turn  `json:"turns"` // the latest turns, newest first (at most 10)
}

// Turn is one turn's calls added up.
type Turn struct {
	Turn      string    `json:"turn"`
	Time      time.Time `json:"time"`
	Purpose   string    `json:"purpose,omitempty"`
	Model     string    `json:"model"`
	Calls     int       `json:"calls"`
	TokensIn  int       `json:"tokensIn"`
	TokensOut int       `json:"tokensOut"`
	Cost      float64   `json:"cost"`
}

// Status reports the brain, its key (last four only), this month's usage and where the budget stands.
func (b *Brain) Status(ctx context.Context) (Status, error) {
	s, err := b.Settings()
	if err != nil {
		return Status{}, err
	}
	now := b.cfg.Now()
	lines, err := b.ledger(now)
	if err != nil {
		return Status{}, err
	}
	st := Status{On: s.On(), Settings: s, Month: month(lines, now), Standing: usage.Open.String()}
	if !s.On() {
		return st, nil
	}
	st.Name = providerName(s.Provider)
	if p, err := b.open(s, new(string)); err == nil { // a provider built without the key, for its name only
		st.Name = p.Name()
	}
	st.Where = where(st.Name)
	if !s.Subscription() {
		v, err := b.cfg.Vault()
		if err != nil {
			return Status{}, err
		}
		entries, err := v.List()
		if err != nil {
			return Status{}, err
		}
		for _, e := range entries {
			if e.Name == keyName(s.Provider) {
				st.Key = keySentence(st.Name, e)
			}
		}
		v2 := b.verdict(s, st.Month.Cost, now)
		st.Standing, st.Sentence = v2.Standing.String(), v2.Sentence
	}
	return st, nil
}

func keySentence(name string, e vault.Entry) string {
	s := "your own " + name + " key"
	if rest, ok := strings.CutPrefix(name, "The "); ok {
		s = "your own key for the " + rest // "The model server at 127.0.0.1:8080"
	}
	switch {
	case e.Broken:
		return s + ", which no longer opens: set it again"
	case e.Last4 == "":
		return s
	}
	return s + " (…" + strings.TrimPrefix(e.Last4, "…") + ")"
}

// where is the one line the chat's prompt and Settings say about where messages go.
func where(name string) string {
	if rest, ok := strings.CutPrefix(name, "The "); ok {
		name = "the " + rest
	}
	return "Your messages go to " + name + " to be answered."
}

// verdict is the budget's answer for a turn now, given what this month spent.
func (b *Brain) verdict(s Settings, spent float64, now time.Time) usage.Verdict {
	if s.Subscription() {
		return usage.Verdict{Standing: usage.Open} // the owner's own plan: the budget does not cap it
	}
	return usage.Budget{Monthly: s.Budget}.Check(now, spent, route.Models{Main: s.Model, Fast: s.FastModel}.HasFast())
}

// ledger reads this month's usage lines.
func (b *Brain) ledger(now time.Time) ([]usage.Line, error) {
	data, err := layout.ReadFile(b.cfg.Box.Root, usage.Path(now))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errs.Wrap("brain.ledger", errs.Other, err, "The usage ledger cannot be read")
	}
	return usage.Parse(data)
}

// month totals the ledger's lines of now's month, with the latest turns.
func month(lines []usage.Line, now time.Time) Month {
	t, paid := usage.Total(lines, now), usage.Total(billed(lines), now)
	m := Month{Month: now.Format("2006-01"), Cost: paid.Cost, Estimated: t.Cost - paid.Cost, AtLeast: paid.Unpriced > 0, Calls: t.Calls, TokensIn: t.TokensIn, TokensOut: t.TokensOut}
	from, to := usage.MonthOf(now)
	byTurn := map[string]*Turn{}
	for _, l := range lines {
		if l.Time.Before(from) || !l.Time.Before(to) {
			continue
		}
		tt := byTurn[l.Turn]
		if tt == nil {
			tt = &Turn{Turn: l.Turn, Time: l.Time, Purpose: l.Purpose}
			byTurn[l.Turn] = tt
		}
		tt.Model, tt.Calls = l.Model, tt.Calls+1
		tt.TokensIn, tt.TokensOut, tt.Cost = tt.TokensIn+l.TokensIn, tt.TokensOut+l.TokensOut, tt.Cost+l.Cost
	}
	for _, tt := range byTurn {
		m.Turns = append(m.Turns, *tt)
	}
	sort.Slice(m.Turns, func(i, j int) bool { return m.Turns[i].Time.After(m.Turns[j].Time) })
	if len(m.Turns) > 10 {
		m.Turns = m.Turns[:10]
	}
	if m.Turns == nil {
		m.Turns = []Turn{}
	}
	return m
}

// WriteLedger appends lines to their months' ledgers inside a write transaction: a job that records its
// calls with its own result (a routine's report) writes them in the same commit.
func WriteLedger(tx *box.Tx, lines []usage.Line) error {
	byPath := map[string][]byte{}
	var order []string
	for _, l := range lines {
		data, err := l.Marshal()
		if err != nil {
			return err
		}
		p := usage.Path(l.Time)
		if _, ok := byPath[p]; !ok {
			order = append(order, p)
		}
		byPath[p] = append(byPath[p], data...)
	}
	for _, p := range order {
		old, err := tx.Read(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := tx.Write(p, append(old, byPath[p]...)); err != nil {
			return err
		}
	}
	return nil
}

// Record writes a job's usage lines (a tidy's, a routine's) in one change of their own, so a job that
// calls the model is on the ledger like a chat turn.
func (b *Brain) Record(ctx context.Context, who box.Actor, summary string, lines []usage.Line) error {
	if len(lines) == 0 {
		return nil
	}
	_, err := b.cfg.Box.Do(ctx, box.Change{Actor: who, Op: "usage", Summary: summary, Permanent: true,
		Apply: func(tx *box.Tx) error { return WriteLedger(tx, lines) }})
	return err
}

// Subscription is the Claude Code or Codex CLI of a subscription brain, in the vault's folder, for
// what only a terminal or Settings can do with it: install the pinned version, sign in.
func (b *Brain) Subscription(kind string) (*provider.Subscription, error) {
	if kind != ClaudeCode && kind != Codex {
		return nil, errs.E("brain.subscription", errs.Invalid, "%q is not a subscription: use claude-code or codex.", kind)
	}
	p, err := b.open(Settings{Provider: kind, Model: "default"}, nil)
	if err != nil {
		return nil, err
	}
	return p.(*provider.Subscription), nil
}
