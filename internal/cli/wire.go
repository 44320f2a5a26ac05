package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/wire"
)

func wireCmd(g *Global) *cobra.Command {
	var apply bool
	c := &cobra.Command{
		Use:   "wire [--apply] [DIR]",
		Short: "Wire Claude Code and Codex in DIR to the box: hooks, MCP, the instruction block, git hooks",
		Long: "Without --apply, print what would change as a unified diff; with it, write: .claude/settings.json hooks,\n" +
			".codex/hooks.json, .codex/config.toml and .mcp.json entries for `box mcp`, the block between <!-- box:begin -->\n" +
			"and <!-- box:end --> in CLAUDE.md and AGENTS.md, and (when DIR is a box) the git hooks. DIR defaults to the\n" +
			"working directory. In a folder that is not a box, the owner's box (--box, else $BOX_DIR) is baked into every\n" +
			"command as --box; with neither, the hooks read $BOX_DIR when they run. A second run changes nothing; a file\n" +
			"that is not valid JSON is left alone with a warning. See docs/HOOKS.md.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWire(cmd.Context(), g, wireOptions{on: true, apply: apply}, args)
		},
	}
	c.Flags().BoolVar(&apply, "apply", false, "write the changes (default: print them)")
	return c
}

func unwireCmd(g *Global) *cobra.Command {
	var apply bool
	c := &cobra.Command{
		Use:   "unwire [--apply] [DIR]",
		Short: "Remove what box wire wrote in DIR, and only that",
		Long: "Without --apply, print what would change; with it, remove the box's hooks, MCP entries and instruction\n" +
			"blocks, keeping every other hook, server and line. A file left empty is removed. The git hooks stay: they\n" +
			"belong to the box (box init installs them).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWire(cmd.Context(), g, wireOptions{on: false, apply: apply}, args)
		},
	}
	c.Flags().BoolVar(&apply, "apply", false, "write the changes (default: print them)")
	return c
}

// wireJSON is the --json shape of wire and unwire.
type wireJSON struct {
	Dir      string       `json:"dir"`
	Applied  bool         `json:"applied"`
	Changes  []wireChange `json:"changes"`
	Warnings []string     `json:"warnings,omitempty"`
	GitHooks string       `json:"gitHooks,omitempty"`
}

type wireChange struct {
	Path   string `json:"path"`
	Action string `json:"action"` // create, update, remove
	Diff   string `json:"diff"`
}

// wireOptions: on is wire (off is unwire); apply writes instead of printing the diff.
type wireOptions struct{ on, apply bool }

func runWire(ctx context.Context, g *Global, o wireOptions, args []string) error {
	on, apply := o.on, o.apply
	named := g.IO.Cwd
	if len(args) == 1 {
		named = g.abs(args[0])
	}
	dir, err := filepath.Abs(named)
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if fi, serr := os.Stat(dir); err != nil || serr != nil || !fi.IsDir() {
		return usageErr("%s is not a folder: name the project or box to wire", named)
	}
	bin, binNote := box.HookBinary()
	if binNote != "" {
		g.note("box: %s", binNote)
	}
	wo := wire.Options{Dir: dir, Bin: bin}
	if root, err := box.Find(dir); err == nil && root == dir {
		wo.InBox = true
	} else if owner, err := box.Discover(g.abs(g.BoxFlag), g.abs(g.IO.Getenv("BOX_DIR")), dir); err == nil {
		wo.Box = owner
	} else if on {
		g.note("box: no box named (--box or $BOX_DIR): the hooks will read $BOX_DIR when they run")
	}
	var plan wire.Plan
	if on {
		plan, err = wire.Wire(wo)
	} else {
		plan, err = wire.Unwire(wo)
	}
	if err != nil {
		return err
	}
	out := wireJSON{Dir: dir, Applied: apply, Changes: []wireChange{}, Warnings: plan.Warnings}
	for _, c := range plan.Changes {
		action := "update"
		switch {
		case c.Old == nil:
			action = "create"
		case c.New == nil:
			action = "remove"
		}
		out.Changes = append(out.Changes, wireChange{Path: c.Path, Action: action, Diff: wire.Diff(c)})
	}
	if wo.InBox {
		// Inside a box the change is the box's like any other: one commit, a diary line, an undo.
		write := g.read
		if apply {
			write = g.write
		}
		err = write(ctx, func(a *app.App) error {
			if apply && len(plan.Changes) > 0 {
				if err := commitWire(ctx, a, plan, map[bool]string{true: "wire", false: "unwire"}[on]); err != nil {
					return err
				}
			}
			if on {
				out.GitHooks, err = gitHooks(a, bin, apply)
			}
			return err
		})
	} else if apply {
		err = plan.Apply(dir)
	}
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		g.note("box: %s", w)
	}
	return g.emit(out, func(w io.Writer) {
		for _, c := range out.Changes {
			if apply {
				_, _ = fmt.Fprintf(w, "%sd %s\n", c.Action, c.Path) // created, updated, removed
			} else {
				_, _ = fmt.Fprint(w, c.Diff)
			}
		}
		if out.GitHooks != "" {
			_, _ = fmt.Fprintln(w, out.GitHooks)
		}
		verb := map[bool]string{true: "wire", false: "unwire"}[on]
		switch {
		case len(out.Changes) == 0:
			g.note("box: nothing to change in %s", dir)
		case apply:
			g.note("box: %s: %d files written in %s", verb, len(out.Changes), dir)
		default:
			g.note("box: dry run: %d files would change; run `box %s --apply` to write them", len(out.Changes), verb)
		}
	})
}

// gitHooks installs the box's git hooks (with apply) or says whether they would change.
func gitHooks(a *app.App, bin string, apply bool) (string, error) {
	b := a.Box
	var stale []string
	for _, name := range []string{"pre-commit", "post-commit"} {
		data, err := os.ReadFile(filepath.Join(b.Git().GitDir(), "hooks", name))
		if err != nil || strings.Contains(string(data), "# Installed by box") && !strings.Contains(string(data), bin) {
			stale = append(stale, name)
		}
	}
	if len(stale) == 0 {
		return "", nil
	}
	if apply {
		note, err := b.InstallHooks(bin)
		if err != nil {
			return "", err
		}
		if note != "" {
			return "git hooks: " + note, nil
		}
		return "git hooks: installed " + strings.Join(stale, " and ") + " calling " + bin, nil
	}
	return "git hooks: would install " + strings.Join(stale, " and ") + " calling " + bin, nil
}

// commitWire applies a wire plan in the box through the write transaction.
func commitWire(ctx context.Context, a *app.App, plan wire.Plan, op string) error {
	_, err := a.Box.Do(ctx, box.Change{
		Actor:   box.Actor{Who: "owner", Via: "cli", Trust: "own"},
		Op:      op,
		Summary: fmt.Sprintf("owner ran box %s: %d agent configuration files", op, len(plan.Changes)),
		Switch:  "change",
		Apply: func(tx *box.Tx) error {
			for _, c := range plan.Changes {
				p := "/" + c.Path
				if c.New == nil {
					if err := tx.Remove(p); err != nil {
						return err
					}
					continue
				}
				if err := tx.Write(p, c.New); err != nil {
					return err
				}
			}
			return nil
		},
	})
	return err
}
