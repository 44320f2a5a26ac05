package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
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

func (a *App) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "What the box holds: files per area, root strays, reserved names, uncommitted changes, the inbox",
		Long: "What the box holds: files per area, root strays and reserved-name violations (the errors box validate\n" +
			"also reports), uncommitted changes and the inbox lines waiting to be filed. Exit 1 when the layout is broken.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runStatus(cmd.Context())
		},
	}
}

func (a *App) runStatus(ctx context.Context) error {
	return a.withBox(func(b *box.Box) error { return a.reportStatus(ctx, b) })
}

func (a *App) reportStatus(ctx context.Context, b *box.Box) error {
	st, err := b.Status(ctx)
	if err != nil {
		return err
	}
	rep := statusReport{Status: st, InboxWaiting: inboxWaiting(b.Root), Index: "fresh"}
	if rep.Problems, err = memory.Problems(ctx, b.Root); err != nil {
		return err
	}
	if rep.Problems == nil {
		rep.Problems = []memory.Problem{}
	}
	err = a.withMemory(ctx, func(m *memory.Memory) error {
		rep.IndexStale, err = m.Stale(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if rep.IndexStale > 0 {
		rep.Index = "stale"
	}
	if err := a.emit(rep, func(w io.Writer) { printStatus(w, rep) }); err != nil {
		return err
	}
	if len(st.Strays)+len(st.Reserved) > 0 {
		return exitError{ExitFailure}
	}
	return nil
}

// inboxWaiting counts the lines in the inbox day files; a file that does not parse counts nothing.
func inboxWaiting(root string) int {
	files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(layout.InboxDir, "/")), "*.md"))
	n := 0
	for _, f := range files {
		data, err := layout.ReadFile(root, layout.InboxDir+"/"+filepath.Base(f))
		if err != nil {
			continue
		}
		if d, err := inbox.ParseDay(data); err == nil {
			n += len(d.Lines())
		}
	}
	return n
}

func printStatus(w io.Writer, rep statusReport) {
	fmt.Fprintf(w, "box %s\n", rep.Root)
	areas := make([]string, 0, len(rep.Areas))
	for a := range rep.Areas {
		areas = append(areas, a)
	}
	sort.Slice(areas, func(i, j int) bool { return areaOrder(areas[i]) < areaOrder(areas[j]) })
	for _, a := range areas {
		fmt.Fprintf(w, "  %-14s %s\n", a, plural(rep.Areas[a], "file"))
	}
	fmt.Fprintf(w, "inbox: %s waiting\n", plural(rep.InboxWaiting, "line"))
	if rep.IndexStale > 0 {
		fmt.Fprintf(w, "index: stale, %s to index (box reindex, or any search, catches up)\n", plural(rep.IndexStale, "file"))
	} else {
		fmt.Fprintln(w, "index: fresh")
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "broken: %s: %s (still searched; tidy leaves it alone)\n", p.Path, p.Message)
	}
	if len(rep.Uncommitted) == 0 {
		fmt.Fprintln(w, "uncommitted: none")
	} else {
		fmt.Fprintf(w, "uncommitted: %s\n", plural(len(rep.Uncommitted), "change"))
		for _, e := range rep.Uncommitted {
			fmt.Fprintf(w, "  %s %s\n", e.XY, e.Path)
		}
	}
	for _, f := range append(append([]any{}, toAny(rep.Strays)...), toAny(rep.Reserved)...) {
		fmt.Fprintln(w, f)
	}
}

func toAny[T fmt.Stringer](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

func areaOrder(a string) int {
	for i, x := range layout.Areas {
		if x == a {
			return i
		}
	}
	return len(layout.Areas)
}
