package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/memory"
)

type recentOptions struct{ n int }

// recentOutput is the --json shape of box recent.
type recentOutput struct {
	Items []memory.RecentItem `json:"items"`
}

func recentCmd(g *Global) *cobra.Command {
	var o recentOptions
	c := &cobra.Command{
		Use:   "recent",
		Short: "Who wrote or forgot what lately, newest first",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runRecent(cmd.Context(), g, o) },
	}
	c.Flags().IntVar(&o.n, "n", 20, "how many")
	return c
}

func runRecent(ctx context.Context, g *Global, o recentOptions) error {
	if err := countFlag("n", o.n, 10000); err != nil {
		return err
	}
	return g.read(ctx, func(a *app.App) error {
		items, err := a.Memory.Recent(ctx, o.n)
		if err != nil {
			return err
		}
		out := recentOutput{Items: append([]memory.RecentItem{}, items...)}
		return g.emit(out, func(w io.Writer) {
			for _, it := range out.Items {
				_, _ = fmt.Fprintf(w, "%s  %s  %s\n", it.Time.In(a.Now().Location()).Format("2006-01-02 15:04"), it.Entry, it.Summary)
			}
		})
	})
}
