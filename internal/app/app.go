// Package app is the composition root: per process it opens the box's one handle (clock injected,
// validation always on, every commit subscriber registered), one state store, one gate, the memory,
// to-dos, keys, grants, the web UI's passkeys, the vault (on first use) and the brain, wires them
// together and closes them. box serve, box mcp, every CLI verb and the hooks take their services from
// it; no other package constructs a box handle, a gate, a state store or a vault. It holds no rule of its own: it composes (docs/ARCHITECTURE.md).
package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/boxmem/box/internal/backup"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/connectors"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/routine"
	"github.com/boxmem/box/internal/sandbox"
	"github.com/boxmem/box/internal/state"
	"github.com/boxmem/box/internal/todo"
	"github.com/boxmem/box/internal/validate"
)

// Mode is how much of the box a process brings up.
type Mode int

const (
	// CLI is a verb's process: the memory reconciles its index on its first read, in the caller's time.
	CLI Mode = iota
	// Serve is box serve and box mcp: a file watcher and a background reconcile keep the index current,
	// and opening returns at once.
	Serve
	// Hook is the light mode of box hook: the memory reads its index as it stands (no reconcile walk, no
	// watcher); only a missing or unusable index is rebuilt.
	Hook
)

// Options tune Open.
type Options struct {
	Mode Mode
	// Now is the one clock of the process: the box, the memory, the gate, the state store and the web UI
	// all take it from here. nil is the wall clock.
	Now func() time.Time
	// Progress hears a reconcile or reindex that has files to load (a progress bar); may be nil.
	Progress func(done, total int)
	// VaultDir is the vault's folder (docs/VAULT.md); "" is the per-user folder of the box's id.
	VaultDir string
	// BrainHTTP is the client for the brain's provider calls; nil is the provider package's own.
	BrainHTTP *http.Client
	// Logger hears what the services cannot say to anyone else (a job run that failed, a routine not
	// run, records that cannot be read): box serve's stderr. nil: discarded.
	Logger *slog.Logger
	// ConnectorNet replaces the network connectors reach, in tests only: the sandbox refuses it outside
	// a test binary (docs/CONNECTORS.md, "The egress proxy").
	ConnectorNet *sandbox.TestNet
	// ConnectorExe is the binary run as the sandbox child; "" is this process's own (cmd/box answers it).
	ConnectorExe string
}

// App is one process's services over one box. Fields are set by Open and read-only after.
type App struct {
	Root string
	Box  *box.Box
	// Validator is the box's one validator: the write transaction checks every change with it, and box
	// validate runs its modes.
	Validator *validate.Validator
	State     *state.Store
	Gate      *gate.Gate
	Memory    *memory.Memory
	Todos     *todo.Store
	Keys      *keys.Store
	Grants    *grants.Store
	Brain     *brain.Brain
	Builds    *builds.Builds
	// Connectors runs the installed connectors and their tests (docs/CONNECTORS.md).
	Connectors *connectors.Service
	// Routines are the owner's scheduled prompts (docs/ROUTINES.md).
	Routines *routine.Service
	Jobs     *jobs.Runner    // the job runner (docs/JOBS.md); box serve starts it, box jobs run uses it
	Backups  *backup.Backups // the box's backup remotes (docs/BACKUP.md)

	opts    Options
	vault   vaultOnce
	closers []func() error // in opening order; Close runs them backwards
	mcp     mcpOnce
	jobs    jobState
}

// Open opens the box at root (a box already) and composes its services.
func Open(ctx context.Context, root string, opts Options) (*App, error) {
	opts = defaults(opts)
	v := validator(root, opts)
	b, err := box.OpenWith(root, boxOptions(v, opts))
	if err != nil {
		return nil, err
	}
	return compose(ctx, b, v, opts)
}

// Init makes a new box in dir (box init's seed files, with files added or overriding them, and the git
// hooks calling hookBinary, "" for this binary) and composes its services.
func Init(ctx context.Context, dir string, files map[string][]byte, hookBinary string, opts Options) (*App, error) {
	opts = defaults(opts)
	v := validator(dir, opts)
	b, err := box.Init(ctx, dir, box.InitOptions{Files: files, HookBinary: hookBinary, Options: boxOptions(v, opts)})
	if err != nil {
		return nil, err
	}
	return compose(ctx, b, v, opts)
}

func defaults(o Options) Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// validator is the process's one validator of the box at root, on its clock.
func validator(root string, opts Options) *validate.Validator {
	return validate.New(root, validate.Options{Now: opts.Now})
}

// boxOptions are the write transaction's options for every process: the box's validation of every
// card a change writes, the memory's spooled ops and settling, and the clock.
func boxOptions(v *validate.Validator, opts Options) box.Options {
	return memory.BoxOptions(box.Options{Validate: v.Writes, Now: opts.Now})
}

// compose builds every service over the one box handle b; on an error it closes what it opened.
func compose(ctx context.Context, b *box.Box, v *validate.Validator, opts Options) (_ *App, err error) {
	a := &App{Root: b.Root, Box: b, Validator: v, opts: opts}
	a.closers = append(a.closers, b.Close)
	defer func() {
		if err != nil {
			err = errors.Join(err, a.Close())
		}
	}()
	if a.State, err = state.Open(b.Root, state.Options{Now: opts.Now}); err != nil {
		return nil, err
	}
	a.closers = append(a.closers, a.State.Close)
	a.Keys = keys.NewStore(a.State)
	a.closers = append(a.closers, a.Keys.Close)
	a.Grants = grants.NewStore(a.State)
	mode := memory.Reads
	switch opts.Mode {
	case Serve:
		mode = memory.Watch
	case Hook:
		mode = memory.Light
	}
	if a.Memory, err = memory.New(ctx, b, memory.Options{Mode: mode, Progress: opts.Progress}); err != nil {
		return nil, err
	}
	a.closers = append(a.closers, a.Memory.Close)
	a.Todos = todo.New(b)
	a.Gate = gate.New(b)
	a.Gate.Register("forget", a.Memory.ForgetOp())
	a.Gate.Register("remember", a.Memory.RememberOp())
	a.Gate.Register("edit", a.Memory.EditOp())
	a.Gate.Register("key", a.Keys.Op())
	for name, op := range a.Todos.Ops() {
		a.Gate.Register(name, op)
	}
	a.Builds = builds.New(b, a.State, a.Gate)
	for name, op := range a.Builds.Ops() {
		a.Gate.Register(name, op)
	}
	a.Gate.Register(builds.OpPageNotes, a.Builds.NotesOp())
	a.Connectors = connectors.New(connectors.Options{Builds: a.Builds, Vault: a.Vault, StoreRoot: filepath.Join(b.Root, ".box", "connectors"),
		Exe: opts.ConnectorExe, Test: opts.ConnectorNet, Now: opts.Now, Box: b, Gate: a.Gate, State: a.State})
	a.Builds.RunConnectorsWith(a.Connectors)
	a.Gate.Register(connectors.OpLeftovers, a.Connectors.LeftoversOp())
	a.Gate.Register(connectors.OpCall, a.Connectors.CallOp())
	if err = a.composeBrain(); err != nil {
		return nil, err
	}
	a.planTidy()
	if err = a.composeRoutines(); err != nil {
		return nil, err
	}
	a.composeBackups()
	if err = a.composeJobs(); err != nil {
		return nil, err
	}
	return a, nil
}

// Close closes every service, the last opened first, and reports every failure.
func (a *App) Close() error {
	var all []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		all = append(all, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(all...)
}

// Now is the process's clock.
func (a *App) Now() time.Time { return a.opts.Now() }

// Writable is nil when the box takes writes: not frozen, not locked, and its flags readable (a flag it
// cannot read refuses). Every owner's write at the CLI asks it first; its errors are Frozen or Locked.
func (a *App) Writable(ctx context.Context) error {
	if err := a.State.Quiet(ctx); err != nil {
		if errs.Is(err, errs.Frozen) || errs.Is(err, errs.Locked) {
			return err
		}
		return errs.Wrap("app.writable", errs.Locked, err, "The box could not read whether it is frozen or locked, so it takes no write")
	}
	return nil
}

// Protective is nil when the owner's protective acts (freeze, unfreeze, revoking a key) may run: they
// work on a frozen box, which is how one gets out of trouble; a locked box, or one whose flag cannot be
// read, refuses them, as it refuses every write (docs/GATE.md, "Freeze and lock"). Its errors are Locked.
func (a *App) Protective(ctx context.Context) error {
	const op = "app.protective"
	locked, err := a.State.Locked(ctx)
	if err != nil {
		return errs.Wrap(op, errs.Locked, err, "The box could not read whether it is locked, so it takes no write")
	}
	if locked {
		return errs.E(op, errs.Locked, "The box is locked; open it with your passkey first.")
	}
	return nil
}

// Freeze freezes or unfreezes the box for the owner and writes its diary line, the one way every surface
// does it (box freeze, Settings → Safety). It is a protective act (Protective). Unfreezing needs the owner's
// proof, as loosening a switch does (by: a passkey assertion made for it, or the local owner): a signed-in
// session alone must not undo the owner's freeze (docs/GATE.md, "Freeze and lock").
func (a *App) Freeze(ctx context.Context, proof gate.By, on bool) (box.Result, error) {
	const op = "app.freeze"
	if err := a.Protective(ctx); err != nil {
		return box.Result{}, err
	}
	if !on && !proof.Passkey && !proof.Local {
		return box.Result{}, errs.E(op, errs.Forbidden, "Unfreezing the box needs your passkey; it stays frozen.")
	}
	by := proof.Actor()
	if err := a.State.SetFrozen(ctx, on); err != nil {
		return box.Result{}, err
	}
	// Read once the flag is committed: SetFrozen may wait on SQLite's lock, and a read another process
	// made while it waited still says thawed. The other processes' flag caches run on the wall clock.
	set := time.Now()
	verb := "unfroze"
	if on {
		verb = "froze"
	}
	res, err := a.Box.Do(ctx, box.Change{Actor: by, Op: map[bool]string{true: "freeze", false: "unfreeze"}[on], Switch: "change",
		Summary: by.Who + " " + verb + " the box", Permanent: true, Apply: func(*box.Tx) error { return nil }})
	if err == nil && on {
		err = state.SeenEverywhere(ctx, set) // a freeze holds everywhere once it is said
		if err != nil {
			return res, errs.Wrap(op, errs.Other, err, "The box is frozen; another box process may answer for a moment more")
		}
	}
	if err == nil {
		return res, nil
	}
	// Without its diary line the act is not whole: the box is left frozen, the safe side (a freeze holds, an
	// unfreeze is taken back), and the sentence says which.
	if on {
		return box.Result{}, errs.Wrap(op, errs.KindOf(err), err, "The box is frozen, but its diary line could not be written; unfreeze and freeze again to record it")
	}
	if rerr := a.State.SetFrozen(context.WithoutCancel(ctx), true); rerr != nil {
		return box.Result{}, errors.Join(err, rerr)
	}
	return box.Result{}, errs.Wrap(op, errs.KindOf(err), err, "The box stays frozen: its diary line could not be written, so it was not unfrozen; try again")
}
