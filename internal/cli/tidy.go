package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
)

func tidyCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "tidy",
		Short: "File the inbox into notes now (one commit; undo reverses it)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runTidy(cmd.Context(), g) },
	}
}

func runTidy(ctx context.Context, g *Global) error {
	return g.write(ctx, func(a *app.App) error {
		res, err := a.Memory.Tidy(ctx, owner(""))
		if err != nil {
			return err
		}
		return g.emit(res, func(w io.Writer) {
			_, _ = fmt.Fprintln(w, res.Text)
			for _, s := range res.Skipped {
				g.note("box: left alone: %s", s)
			}
			for _, r := range res.Refused {
				g.note("box: the brain's filing of line %s was refused (%s); the rules filed it", r.Line, r.Reason)
			}
			if len(res.Planned) == 0 && res.Brain != "" {
				g.note("box: the rules filed the inbox: %s", res.Brain)
			}
		})
	})
}
