package cli

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/say"
)

// statusReport is the --json shape of box status (fields are only ever added).
type statusReport struct {
	box.Status
	// InboxWaiting counts the inbox lines not yet filed, over /_content/inbox/*.md.
	InboxWaiting int `json:"inboxWaiting"`
	// Index is the search index's freshness: "fresh", or "stale" with IndexStale files and lines to index.
	Index      string `json:"index"`
	IndexStale int    `json:"indexStale"`
	// Problems are memory files whose frontmatter is broken: still searched, left alone by tidy.
	Problems []memory.Problem `json:"problems"`
}

func statusCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "What the box holds: files per area, root strays, reserved names, uncommitted changes, the inbox",
		Long: "What the box holds: files per area, root strays and reserved-name violations (the errors box validate\n" +
			"also reports), uncommitted changes and the inbox lines waiting to be filed. Exit 1 when the layout is broken.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runStatus(cmd.Context(), g) },
	}
}

func runStatus(ctx context.Context, g *Global) error {
	return g.read(ctx, func(a *app.App) error {
		st, err := a.Box.Status(ctx)
		if err != nil {
			return err
		}
		rep := statusReport{Status: st, Index: "fresh"}
		if rep.InboxWaiting, err = a.Memory.Waiting(ctx); err != nil {
			return err
		}
		if rep.Problems, err = a.Memory.Problems(ctx); err != nil {
			return err
		}
		if rep.Problems == nil {
			rep.Problems = []memory.Problem{}
		}
		if rep.IndexStale, err = a.Memory.Stale(ctx); err != nil {
			return err
		}
		if rep.IndexStale > 0 {
			rep.Index = "stale"
		}
		if err := g.emit(rep, func(w io.Writer) { printStatus(w, rep) }); err != nil {
			return err
		}
		if len(st.Strays)+len(st.Reserved) > 0 {
			return exitError{ExitFailure}
		}
		return nil
	})
}

func printStatus(w io.Writer, rep statusReport) {
	p := func(format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }
	p("box %s\n", rep.Root)
	areas := make([]string, 0, len(rep.Areas))
	for a := range rep.Areas {
		areas = append(areas, a)
	}
	sort.Slice(areas, func(i, j int) bool { return areaOrder(areas[i]) < areaOrder(areas[j]) })
	for _, a := range areas {
		p("  %-14s %s\n", a, say.Count(rep.Areas[a], "file"))
	}
	p("inbox: %s waiting\n", say.Count(rep.InboxWaiting, "line"))
	if rep.IndexStale > 0 {
		p("index: stale, %s to index (box reindex, or any search, catches up)\n", say.Count(rep.IndexStale, "file"))
	} else {
		p("index: fresh\n")
	}
	for _, pr := range rep.Problems {
		p("broken: %s: %s (still searched; tidy leaves it alone)\n", pr.Path, pr.Message)
	}
	if len(rep.Uncommitted) == 0 {
		p("uncommitted: none\n")
	} else {
		p("uncommitted: %s\n", say.Count(len(rep.Uncommitted), "change"))
		for _, e := range rep.Uncommitted {
			p("  %s %s\n", e.XY, e.Path)
		}
	}
	for _, f := range rep.Strays {
		p("%s\n", f.String())
	}
	for _, f := range rep.Reserved {
		p("%s\n", f.String())
	}
	for _, f := range rep.Linked {
		p("%s\n", f.String())
	}
}

func areaOrder(a string) int {
	for i, x := range layout.Areas {
		if x == a {
			return i
		}
	}
	return len(layout.Areas)
}
