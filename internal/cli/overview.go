package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
)

func overviewCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "overview",
		Short: "Print the router and the note index with one-line hooks",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runOverview(cmd.Context(), g) },
	}
}

func runOverview(ctx context.Context, g *Global) error {
	return g.read(ctx, func(a *app.App) error {
		o, err := a.Memory.Overview(ctx)
		if err != nil {
			return err
		}
		return g.emit(o, func(w io.Writer) {
			_, _ = io.WriteString(w, o.Router)
			if len(o.Notes) > 0 {
				_, _ = fmt.Fprintln(w, "\n## Notes")
			}
			for _, n := range o.Notes {
				_, _ = fmt.Fprintf(w, "- %s — %s\n", n.Name, n.Hook)
			}
			if o.MoreNotes > 0 {
				_, _ = fmt.Fprintf(w, "… and %d more (box search finds them)\n", o.MoreNotes)
			}
		})
	})
}
