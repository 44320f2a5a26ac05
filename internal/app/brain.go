package app

import (
	"context"
	"sync"

	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcp"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/vault"
)

// vaultOnce holds the process's one vault, opened on first use: a box that never sets a brain never
// makes a vault folder.
type vaultOnce struct {
	once sync.Once
	v    *vault.Vault
	err  error
}

// Vault is the process's vault (docs/VAULT.md): Options.VaultDir, else the per-user folder of this box's
// id, always with the box's folder so it refuses to live inside it.
func (a *App) Vault() (*vault.Vault, error) {
	a.vault.once.Do(func() {
		a.vault.v, a.vault.err = vault.Open(vault.Options{Dir: a.opts.VaultDir, BoxID: a.Box.Marker.ID, BoxRoot: a.Root})
	})
	return a.vault.v, a.vault.err
}

// composeBrain builds the brain over the process's services; its tools are the MCP catalogue's memory
// tools, read from a real tools/list (docs/BRAIN.md, "The chat").
func (a *App) composeBrain() error {
	listing := mcp.New(mcp.Config{Memory: a.Memory, Todos: a.Todos, State: a.State, Gate: a.Gate})
	tools := func(ctx context.Context) ([]provider.Tool, error) {
		defs, err := listing.Definitions(ctx, keys.Caps{Memory: true})
		if err != nil {
			return nil, err
		}
		out := make([]provider.Tool, 0, len(defs))
		for _, d := range defs {
			out = append(out, provider.Tool{Name: d.Name, Description: d.Description, Schema: d.InputSchema})
		}
		return out, nil
	}
	var err error
	a.Brain, err = brain.New(brain.Config{Box: a.Box, Memory: a.Memory, Todos: a.Todos, Gate: a.Gate, State: a.State,
		Vault: a.Vault, Tools: tools, Connectors: a.Connectors, HTTP: a.opts.BrainHTTP, Now: a.opts.Now})
	return err
}

// planTidy makes every tidy of this process ask the brain for a plan first; without a brain set, the
// planner proposes nothing and the rules file as they always did (docs/BRAIN.md, "Tidy with a model").
func (a *App) planTidy() { a.Memory.SetPlanner(a.Brain.TidyPlanner()) }
