package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/memory"
)

// mergeOpts are the flags of box merge.
type mergeOpts struct {
	dryRun bool
}

func mergeCmd(g *Global) *cobra.Command {
	var o mergeOpts
	c := &cobra.Command{
		Use:   "merge",
		Short: "Join likely duplicate notes now (the nightly merge pass; one commit, undo reverses it)",
		Long: "Join likely duplicate notes: the same person, place or topic under two names (docs/MERGE.md has the rules).\n" +
			"The other note is archived under _bookkeeping/archive/notes/ and every link and map line is pointed at the note kept.\n" +
			"One commit; box undo reverses it, and a pair whose merge was undone is never merged again.\n" +
			"--dry-run lists what would merge, and the near misses with why they stay apart, and writes nothing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(cmd.Context(), g, o, args)
		},
	}
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would merge and why; write nothing")
	return c
}

func runMerge(ctx context.Context, g *Global, o mergeOpts, _ []string) error {
	run := g.write
	if o.dryRun {
		run = g.read
	}
	return run(ctx, func(a *app.App) error {
		res, err := a.Memory.Merge(ctx, owner(""), memory.MergeOptions{DryRun: o.dryRun})
		if err != nil {
			return err
		}
		return g.emit(res, func(w io.Writer) {
			for _, p := range res.Merged {
				_, _ = fmt.Fprintf(w, "%s → %s  %.2f  %s\n", p.Archived, p.Kept, p.Score, strings.Join(p.Reasons, "; "))
			}
			if o.dryRun {
				for _, p := range res.Held {
					_, _ = fmt.Fprintf(w, "held apart: %s / %s  %.2f  %s\n", p.Archived, p.Kept, p.Score, p.Held)
				}
			}
			_, _ = fmt.Fprintln(w, res.Text)
			for _, s := range res.Skipped {
				g.note("box: left alone: %s", s)
			}
		})
	})
}
