// Package apptest is test code only: a new box composed by the composition root, in a temporary folder
// and closed when the test ends, and what tests of the brain and the routines do to it from outside
// (spending the budget). It owns no rule; nothing but tests imports it.
package apptest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/providertest"
	"github.com/boxmem/box/internal/usage"
)

// Owner is the owner at the command line, whom the tests' own settings are by.
var Owner = box.Actor{Who: "owner", Via: "cli", Trust: "own"}

// Local is the owner at the command line deciding: what a switch or an unfreeze needs of them.
var Local = gate.By{Via: "cli", Local: true}

// Open makes a new box under a temporary folder with o (its vault in a temporary folder of its own
// unless o names one) and closes it when the test ends.
func Open(tb testing.TB, o app.Options) *app.App {
	tb.Helper()
	if o.VaultDir == "" {
		o.VaultDir = filepath.Join(tb.TempDir(), "vault")
	}
	a, err := app.Init(context.Background(), filepath.Join(tb.TempDir(), "box"), nil, "true", o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := a.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return a
}

// Spend puts an earlier chat turn that cost cost (in the budget's currency, as the provider said) on
// the usage ledger at at, as the brain records a turn.
func Spend(tb testing.TB, a *app.App, at time.Time, cost float64) {
	tb.Helper()
	l := usage.Line{Time: at, Turn: "turn-earlier", Purpose: "chat", Provider: "openai", Model: "model-a", TokensIn: 10, CostFrom: usage.FromProvider, Cost: cost}
	if err := a.Brain.Record(context.Background(), Owner, "an earlier turn", []usage.Line{l}); err != nil {
		tb.Fatal(err)
	}
}

// Brain starts a stand-in OpenAI server that takes key and sets the box's brain on it, main model
// "model-a" and fast model "model-b"; the test scripts the server's replies.
func Brain(tb testing.TB, a *app.App, key string) *providertest.Server {
	tb.Helper()
	srv := providertest.OpenAI(tb, key)
	if _, err := a.Brain.Set(context.Background(), Owner, brain.SetInput{Provider: "openai", BaseURL: srv.URL, Model: "model-a", FastModel: "model-b", Key: key}); err != nil {
		tb.Fatal(err)
	}
	return srv
}
