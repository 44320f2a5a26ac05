package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/validate"
	"github.com/boxmem/box/internal/wire"
)

func (a *App) wireCmd() *cobra.Command {
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
			return a.runWire(cmd.Context(), true, apply, args)
		},
	}
	c.Flags().BoolVar(&apply, "apply", false, "write the changes (default: print them)")
	return c
}

func (a *App) unwireCmd() *cobra.Command {
	var apply bool
	c := &cobra.Command{
		Use:   "unwire [--apply] [DIR]",
		Short: "Remove what box wire wrote in DIR, and only that",
		Long: "Without --apply, print what would change; with it, remove the box's hooks, MCP entries and instruction\n" +
			"blocks, keeping every other hook, server and line. A file left empty is removed. The git hooks stay: they\n" +
			"belong to the box (box init installs them).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runWire(cmd.Context(), false, apply, args)
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

func (a *App) runWire(ctx context.Context, on, apply bool, args []string) error {
	dir := a.IO.Cwd
	if len(args) == 1 {
		dir = a.abs(args[0])
	}
	dir, err := filepath.Abs(dir)
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if fi, serr := os.Stat(dir); err != nil || serr != nil || !fi.IsDir() {
		return usageErr("%s is not a folder: name the project or box to wire", dir)
	}
	bin, binNote := box.HookBinary()
	if binNote != "" {
		a.note("box: %s", binNote)
	}
	o := wire.Options{Dir: dir, Bin: bin}
	if root, err := box.Find(dir); err == nil && root == dir {
		o.InBox = true
	} else {
		getenv := a.IO.Getenv
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		if owner, err := box.Discover(a.abs(a.BoxFlag), a.abs(getenv("BOX_DIR")), dir); err == nil {
			o.Box = owner
		} else if on {
			a.note("box: no box named (--box or $BOX_DIR): the hooks will read $BOX_DIR when they run")
		}
	}
	var plan wire.Plan
	if on {
		plan, err = wire.Wire(o)
	} else {
		plan, err = wire.Unwire(o)
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
	if apply && o.InBox && len(plan.Changes) > 0 {
		// Inside a box the change is the box's like any other: one commit, a diary line, an undo.
		if err := a.commitWire(ctx, dir, plan, map[bool]string{true: "wire", false: "unwire"}[on]); err != nil {
			return err
		}
	} else if apply {
		if err := plan.Apply(dir); err != nil {
			return err
		}
	}
	if on && o.InBox {
		out.GitHooks, err = a.gitHooks(dir, bin, apply)
		if err != nil {
			return err
		}
	}
	for _, w := range plan.Warnings {
		a.note("box: %s", w)
	}
	return a.emit(out, func(w io.Writer) {
		for _, c := range out.Changes {
			if apply {
				fmt.Fprintf(w, "%sd %s\n", c.Action, c.Path) // created, updated, removed
			} else {
				fmt.Fprint(w, c.Diff)
			}
		}
		if out.GitHooks != "" {
			fmt.Fprintln(w, out.GitHooks)
		}
		verb := map[bool]string{true: "wire", false: "unwire"}[on]
		switch {
		case len(out.Changes) == 0:
			a.note("box: nothing to change in %s", dir)
		case apply:
			a.note("box: %s: %d files written in %s", verb, len(out.Changes), dir)
		default:
			a.note("box: dry run: %d files would change; run `box %s --apply` to write them", len(out.Changes), verb)
		}
	})
}

// gitHooks installs the box's git hooks (with apply) or says whether they would change.
func (a *App) gitHooks(dir, bin string, apply bool) (string, error) {
	b, err := box.Open(dir)
	if err != nil {
		return "", err
	}
	defer b.Close()
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

// commitWire applies a wire plan in the box at dir through the write transaction.
func (a *App) commitWire(ctx context.Context, dir string, plan wire.Plan, op string) error {
	b, err := box.OpenWith(dir, box.Options{Validate: validate.Writes})
	if err != nil {
		return err
	}
	defer b.Close()
	_, err = b.Do(ctx, box.Change{
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
