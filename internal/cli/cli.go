// Package cli owns the box command line: one cobra command per verb, the --json shapes, box discovery
// and the mapping from errors to exit codes. It composes the lower packages and holds no rules itself.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

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
	cwd, _ := os.Getwd()
	return IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, ErrTTY: term.IsTerminal(int(os.Stderr.Fd())), Getenv: os.Getenv, Cwd: cwd}
}

// App is the state every verb shares: the streams and the global flags.
type App struct {
	IO      IO
	BoxFlag string
	JSON    bool
}

// Main runs the CLI and returns the exit code.
func Main(args []string, streams IO) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := &App{IO: streams}
	root := app.rootCmd()
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
	app.reportError(err)
	return exitCode(err)
}

func (a *App) reportError(err error) {
	fmt.Fprintln(a.IO.Err, "box:", err.Error())
	if a.JSON {
		a.writeJSON(map[string]any{"error": map[string]string{"kind": errs.KindOf(err).String(), "message": err.Error()}})
	}
}

func (a *App) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "box",
		Short:         "The owner's memory, for every assistant they use",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.PersistentFlags().StringVar(&a.BoxFlag, "box", "", "the box directory (default: $BOX_DIR, else the nearest box above the working directory)")
	root.PersistentFlags().BoolVar(&a.JSON, "json", false, "print the result as JSON on stdout")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return errs.Wrap("cli", errs.Usage, err, "")
	})
	for _, c := range a.verbs() {
		root.AddCommand(c)
	}
	return root
}

// Version is set at build time with -ldflags "-X github.com/boxmem/box/internal/cli.Version=…".
var Version = "dev"

// writeJSON prints v as one indented JSON document on stdout.
func (a *App) writeJSON(v any) error {
	enc := json.NewEncoder(a.IO.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// emit prints v as JSON with --json, else calls human to print for a person.
func (a *App) emit(v any, human func(w io.Writer)) error {
	if a.JSON {
		return a.writeJSON(v)
	}
	human(a.IO.Out)
	return nil
}

// note prints a diagnostic line on stderr.
func (a *App) note(format string, args ...any) {
	fmt.Fprintf(a.IO.Err, format+"\n", args...)
}

// usageErr is a bad-arguments error.
func usageErr(format string, args ...any) error {
	return errs.E("cli", errs.Usage, format, args...)
}
