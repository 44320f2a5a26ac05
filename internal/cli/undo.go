package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
)

type undoOptions struct{ entry string }

func undoCmd(g *Global) *cobra.Command {
	var o undoOptions
	c := &cobra.Command{
		Use:   "undo",
		Short: "Reverse the newest change, or one diary entry with --entry",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runUndo(cmd.Context(), g, o) },
	}
	c.Flags().StringVar(&o.entry, "entry", "", "the diary entry to undo (see box diary)")
	return c
}

func runUndo(ctx context.Context, g *Global, o undoOptions) error {
	return g.write(ctx, func(a *app.App) error {
		res, err := a.Memory.Undo(ctx, owner(""), o.entry)
		if err != nil {
			return err
		}
		return g.emit(res, func(w io.Writer) { _, _ = fmt.Fprintln(w, res.Summary) })
	})
}
