package cli

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/gate"
)

// boxRoot finds the box, the one way every verb does: --box, else $BOX_DIR, else the nearest box above
// the working directory. Relative folders are read against the command's working directory.
func (g *Global) boxRoot() (string, error) {
	return box.Discover(g.abs(g.BoxFlag), g.abs(g.IO.Getenv("BOX_DIR")), g.IO.Cwd)
}

// open opens the discovered box's services (the composition root) in mode.
func (g *Global) open(ctx context.Context, mode app.Mode) (*app.App, error) {
	root, err := g.boxRoot()
	if err != nil {
		return nil, err
	}
	o := g.base
	o.Mode, o.Progress, o.Now = mode, g.progress("indexing"), g.clock()
	return app.Open(ctx, root, o)
}

// clock is the process's clock: the wall clock, or from $BOX_TEST_CLOCK (an RFC 3339 time the clock
// starts at and runs on from), moved by $BOX_TEST_CLOCK_OFFSET (a Go duration such as 48h) when set. It
// exists for tests of the real binary that need a day of their own (a nightly job, a caution that ends)
// whatever today is; a process of the owner's own user may set its clock anyway (docs/JOBS.md, "Testing").
func (g *Global) clock() func() time.Time {
	d, _ := time.ParseDuration(g.IO.Getenv("BOX_TEST_CLOCK_OFFSET"))
	base, err := time.Parse(time.RFC3339, g.IO.Getenv("BOX_TEST_CLOCK"))
	if err != nil && d == 0 {
		return nil
	}
	start := time.Now()
	if err != nil {
		base = start
	}
	base = base.In(time.Local)
	return func() time.Time { return base.Add(time.Since(start) + d) }
}

// read runs fn with the discovered box's services, then closes them.
func (g *Global) read(ctx context.Context, fn func(a *app.App) error) error {
	return g.readMode(ctx, app.CLI, fn)
}

// readMode is read with the services brought up in mode.
func (g *Global) readMode(ctx context.Context, mode app.Mode, fn func(a *app.App) error) (err error) {
	a, err := g.open(ctx, mode)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, a.Close()) }()
	return fn(a)
}

// write is read for a verb that changes the box: a frozen or locked box refuses it first (exit 7).
func (g *Global) write(ctx context.Context, fn func(a *app.App) error) error {
	return g.read(ctx, func(a *app.App) error {
		if err := a.Writable(ctx); err != nil {
			return err
		}
		return fn(a)
	})
}

// change is write for the owner's changes to memory and to-dos, which "Change my box" covers: at Never it
// refuses (exit 4) with a diary line, the gate's one check as MCP's (gate.Check).
func (g *Global) change(ctx context.Context, what string, fn func(a *app.App) error) error {
	return g.write(ctx, func(a *app.App) error {
		if err := a.Gate.Check(ctx, gate.Change, gate.Asker{Owner: true, Via: "cli"}, what); err != nil {
			return err
		}
		return fn(a)
	})
}

// protect is read for the owner's protective acts (App.Protective): a locked box refuses them (exit 7).
func (g *Global) protect(ctx context.Context, fn func(a *app.App) error) error {
	return g.read(ctx, func(a *app.App) error {
		if err := a.Protective(ctx); err != nil {
			return err
		}
		return fn(a)
	})
}

// abs makes a folder named on the command line absolute against the command's working directory.
func (g *Global) abs(dir string) string {
	if dir == "" || filepath.IsAbs(dir) || g.IO.Cwd == "" {
		return dir
	}
	return filepath.Join(g.IO.Cwd, dir)
}
