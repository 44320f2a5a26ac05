package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
)

// initReport is the --json shape of box init.
type initReport struct {
	Root  string   `json:"root"`
	ID    string   `json:"id"`
	Notes []string `json:"notes"`
}

func initCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "init [DIR]",
		Short: "Make a new box in DIR (default: the working directory)",
		Long: "Make a new box: a git repository with the marker, the five areas, the router, the switches, the interface\n" +
			"cards, the agent guide, the git hooks and a first commit. An existing box is left alone (exit 6); a non-empty\n" +
			"folder that is not a box is refused.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runInit(cmd.Context(), g, args) },
	}
}

func runInit(ctx context.Context, g *Global, args []string) (err error) {
	dir := g.IO.Cwd
	if len(args) == 1 {
		dir = g.abs(args[0])
	}
	a, err := makeBox(ctx, dir, app.Options{Mode: app.CLI, Now: g.clock()})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, a.Close()) }()
	rep := initReport{Root: a.Root, ID: a.Box.Marker.ID, Notes: append([]string{}, a.Box.Notes...)}
	for _, n := range rep.Notes {
		g.note("box: %s", n)
	}
	return g.emit(rep, func(w io.Writer) { _, _ = fmt.Fprintf(w, "Made a box in %s\n", a.Root) })
}

// makeBox makes a box in dir with the seed files every verb shares (init, serve): the router skeleton
// comes from the note package, which box may not import.
func makeBox(ctx context.Context, dir string, opts app.Options) (*app.App, error) {
	return app.Init(ctx, dir, map[string][]byte{layout.Router: []byte(note.RouterSkeleton)}, "", opts)
}
