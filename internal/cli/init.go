package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/validate"
)

// initReport is the --json shape of box init.
type initReport struct {
	Root  string   `json:"root"`
	ID    string   `json:"id"`
	Notes []string `json:"notes"`
}

func (a *App) initCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "init [DIR]",
		Short: "Make a new box in DIR (default: the working directory)",
		Long: "Make a new box: a git repository with the marker, the five areas, the router, the switches, the interface\n" +
			"cards, the agent guide, the git hooks and a first commit. An existing box is left alone (exit 6); a non-empty\n" +
			"folder that is not a box is refused.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := a.IO.Cwd
			if len(args) == 1 {
				dir = a.abs(args[0])
			}
			return a.runInit(cmd.Context(), dir)
		},
	}
}

// makeBox makes a box in dir with the seed files and validation every verb shares (init, serve).
func makeBox(ctx context.Context, dir string) (*box.Box, error) {
	return box.Init(ctx, dir, box.InitOptions{
		Files:   seedOverrides(),
		Options: box.Options{Validate: validate.Writes},
	})
}

func (a *App) runInit(ctx context.Context, dir string) error {
	b, err := makeBox(ctx, dir)
	if err != nil {
		return err
	}
	defer b.Close()
	rep := initReport{Root: b.Root, ID: b.Marker.ID, Notes: b.Notes}
	if rep.Notes == nil {
		rep.Notes = []string{}
	}
	for _, n := range rep.Notes {
		a.note("box: %s", n)
	}
	return a.emit(rep, func(w io.Writer) {
		fmt.Fprintf(w, "Made a box in %s\n", b.Root)
	})
}

// seedOverrides are the seed files the CLI sets: the router skeleton comes from the note package,
// which box may not import.
func seedOverrides() map[string][]byte {
	return map[string][]byte{layout.Router: []byte(note.RouterSkeleton)}
}
