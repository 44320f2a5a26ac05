package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
)

// reindexOutput is the --json shape of box reindex.
type reindexOutput struct {
	Files int `json:"files"`
}

func reindexCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the search index from the files",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runReindex(cmd.Context(), g) },
	}
}

func runReindex(ctx context.Context, g *Global) error {
	return g.read(ctx, func(a *app.App) error {
		n, err := a.Memory.Reindex(ctx, g.progress("indexing"))
		if err != nil {
			return err
		}
		return g.emit(reindexOutput{Files: n}, func(w io.Writer) { _, _ = fmt.Fprintf(w, "indexed %d files\n", n) })
	})
}
