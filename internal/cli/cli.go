// Package cli owns the box command line: one cobra command per verb (a constructor and a runX function
// each, one file per verb or noun), the --json shapes, box discovery and the mapping from errors to exit
// codes. Its services come from the composition root (app); it holds no rule itself.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/errs"
)

// IO is where a command reads and writes; tests inject buffers.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	// ErrTTY reports whether Err is a terminal (progress bars only then).
	ErrTTY bool
	Getenv func(string) string
	Cwd    string
}

// StdIO is the process's own streams.
func StdIO() IO {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "" // no working directory: --box or $BOX_DIR must name the box
	}
	return IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, ErrTTY: term.IsTerminal(int(os.Stderr.Fd())), Getenv: os.Getenv, Cwd: cwd}
}

// Global is what every verb shares: the streams and the global flags.
type Global struct {
	IO      IO
	BoxFlag string
	JSON    bool
	// base are the options every open of the box starts from: none in the box; tests give the
	// connectors their test network (which the sandbox refuses outside a test binary).
	base app.Options
}

// Main runs the CLI and returns the exit code.
func Main(args []string, streams IO) int { return mainWith(args, streams, app.Options{}) }

// mainWith is Main with the composition root's options to start from.
func mainWith(args []string, streams IO, base app.Options) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if streams.Getenv == nil {
		streams.Getenv = func(string) string { return "" }
	}
	g := &Global{IO: streams, base: base}
	root := g.rootCmd()
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if !g.JSON { // a flag refused before --json was read: the error is still JSON when it was asked for
		g.JSON = asksJSON(args)
	}
	g.reportError(err)
	return exitCode(err)
}

// asksJSON reports whether args hold --json (not --json=false) before any "--".
func asksJSON(args []string) bool {
	asked := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--json"); ok && (v == "" || v[0] == '=') {
			b, err := strconv.ParseBool(strings.TrimPrefix(v, "="))
			asked = v == "" || err == nil && b
		}
	}
	return asked
}

// errorOutput is the --json shape of a failure.
type errorOutput struct {
	Error struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

func (g *Global) reportError(err error) {
	g.note("box: %s", err.Error())
	if g.JSON {
		var out errorOutput
		out.Error.Kind, out.Error.Message = errs.KindOf(err).String(), err.Error()
		if werr := g.writeJSON(out); werr != nil {
			g.note("box: %v", werr)
		}
	}
}

func (g *Global) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "box",
		Short:         "The owner's memory, for every assistant they use",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.PersistentFlags().StringVar(&g.BoxFlag, "box", "", "the box directory (default: $BOX_DIR, else the nearest box above the working directory)")
	root.PersistentFlags().BoolVar(&g.JSON, "json", false, "print the result as JSON on stdout")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return errs.Wrap("cli", errs.Usage, err, "")
	})
	for _, c := range g.verbs() {
		root.AddCommand(c)
	}
	usageArgs(root)
	return root
}

// groupOnly marks a verb group whose only action is its help (box backup, box todo): not a verb of its own.
const groupOnly = "box-group-only"

// usageArgs makes every wrong argument an exit 2 (docs/CLI.md), as cobra's flag errors are: a verb's
// argument count, an unknown verb, a group's unknown sub-verb. A group with no action of its own prints
// its help when given nothing.
func usageArgs(c *cobra.Command) {
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = cobra.NoArgs
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[groupOnly] = "true"
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return errs.Wrap("cli", errs.Usage, err, "")
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// verbs lists every verb, one constructor each.
func (g *Global) verbs() []*cobra.Command {
	return []*cobra.Command{
		rememberCmd(g), forgetCmd(g), searchCmd(g), readCmd(g), overviewCmd(g), recentCmd(g), tidyCmd(g),
		mergeCmd(g), importCmd(g), exportCmd(g), undoCmd(g), reindexCmd(g), diaryCmd(g),
		cardsCmd(g), switchesCmd(g), freezeCmd(g), unfreezeCmd(g), todoCmd(g),
		serveCmd(g), mcpCmd(g), keysCmd(g), jobsCmd(g), backupCmd(g), restoreCmd(g),
		brainCmd(g), chatCmd(g), buildsCmd(g), safeModeCmd(g), connectorsCmd(g), routinesCmd(g),
		versionCmd(g), initCmd(g), statusCmd(g), validateCmd(g), wireCmd(g), unwireCmd(g), hookCmd(g),
	}
}

// Version is set at build time with -ldflags "-X github.com/boxmem/box/internal/cli.Version=…".
var Version = "dev"

// writeJSON prints v as one indented JSON document on stdout.
func (g *Global) writeJSON(v any) error {
	enc := json.NewEncoder(g.IO.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return errs.Wrap("cli", errs.Other, err, "The answer could not be written to stdout")
	}
	return nil
}

// emit prints v as JSON with --json, else calls human to print it for a person.
func (g *Global) emit(v any, human func(w io.Writer)) error {
	if g.JSON {
		return g.writeJSON(v)
	}
	human(g.IO.Out)
	return nil
}

// note prints a diagnostic line on stderr; a terminal that is gone cannot be told anything more.
func (g *Global) note(format string, args ...any) {
	_, _ = fmt.Fprintf(g.IO.Err, format+"\n", args...)
}

// usageErr is a bad-arguments error.
func usageErr(format string, args ...any) error {
	return errs.E("cli", errs.Usage, format, args...)
}

// countFlag refuses a count flag outside 1..most as bad arguments (exit 2), never taking it silently.
func countFlag(name string, v, most int) error {
	if v < 1 || v > most {
		return usageErr("--%s must be between 1 and %d, not %d", name, most, v)
	}
	return nil
}

// progress returns a progress callback that draws a bar on stderr when it is a terminal.
func (g *Global) progress(label string) func(done, total int) {
	if !g.IO.ErrTTY {
		return nil
	}
	last := -1
	return func(done, total int) {
		if total <= 0 {
			return
		}
		pct := done * 100 / total
		if pct == last && done != total {
			return
		}
		last = pct
		const width = 30
		fill := width * done / total
		end := ""
		if done == total {
			end = "\n"
		}
		_, _ = fmt.Fprintf(g.IO.Err, "\r%s [%s%s] %3d%% %d/%d%s", label, strings.Repeat("#", fill), strings.Repeat(" ", width-fill), pct, done, total, end)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
