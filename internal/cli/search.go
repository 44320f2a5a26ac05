package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/memory"
)

type searchOptions struct {
	in           memory.SearchInput
	since, until string
}

func searchCmd(g *Global) *cobra.Command {
	var o searchOptions
	c := &cobra.Command{
		Use:   "search WORDS",
		Short: "Search notes, core facts, the inbox and every document under _content/",
		Long: "Search the memory. One or two words must all match; with more than two, at least half must.\n" +
			"When fewer than --limit match, partial matches follow under their own heading.\n" +
			"\"quoted phrases\" and prefix* work. Filters narrow by kind, map, who, trust and date.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSearch(cmd.Context(), g, o, args) },
	}
	c.Flags().IntVar(&o.in.Limit, "limit", 10, "at most this many results")
	c.Flags().StringVar(&o.in.Kind, "kind", "", "only this kind: note, entity, topic, map, router, core, inbox, doc")
	c.Flags().StringVar(&o.in.Map, "map", "", "only notes in this map (moc-people)")
	c.Flags().StringVar(&o.in.Who, "who", "", "only lines written by")
	c.Flags().StringVar(&o.in.Trust, "trust", "", "only own or outside")
	c.Flags().StringVar(&o.since, "since", "", "only from this day on (YYYY-MM-DD)")
	c.Flags().StringVar(&o.until, "until", "", "only up to this day (YYYY-MM-DD)")
	return c
}

func runSearch(ctx context.Context, g *Global, o searchOptions, args []string) error {
	in := o.in
	in.Words = strings.Join(args, " ")
	if err := countFlag("limit", in.Limit, 1000); err != nil { // the index's most (index.MaxLimit)
		return err
	}
	if in.Trust != "" && in.Trust != "own" && in.Trust != "outside" {
		return usageErr("--trust is own or outside, not %q", in.Trust)
	}
	return g.read(ctx, func(a *app.App) error {
		var err error
		loc := a.Now().Location()
		if in.Since, err = parseDay("--since", o.since, loc); err != nil {
			return err
		}
		if in.Until, err = parseDay("--until", o.until, loc); err != nil {
			return err
		}
		res, err := a.Memory.Search(ctx, in)
		if err != nil {
			return err
		}
		return g.emit(res, func(w io.Writer) {
			if res.Indexing {
				g.note("box: the index is still catching up; results may be incomplete")
			}
			if len(res.Hits) == 0 {
				g.note("box: nothing found")
			}
			partial := false
			for _, h := range res.Hits {
				if h.Partial && !partial {
					partial = true
					_, _ = fmt.Fprintln(w, "\nPartial matches (some of the words):")
				}
				_, _ = fmt.Fprintf(w, "%s  [%s]  %s\n", h.Path, h.Kind, oneLine(h.Snippet))
			}
		})
	})
}

// parseDay reads a day flag in the box's time zone.
func parseDay(flag, s string, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.ParseInLocation("2006-01-02", s, loc)
	if err != nil {
		return time.Time{}, usageErr("%s %q is not a day: write it as YYYY-MM-DD", flag, s)
	}
	return t, nil
}
