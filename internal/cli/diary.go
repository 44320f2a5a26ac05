package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
)

type diaryOptions struct{ n int }

// diaryItem is one line of `box diary --json` (fields are only ever added).
type diaryItem struct {
	ID      string   `json:"id"`
	Time    string   `json:"time"`
	Actor   string   `json:"actor"`
	Via     string   `json:"via,omitempty"`
	Host    string   `json:"host,omitempty"`
	Conn    string   `json:"conn,omitempty"`
	Trust   string   `json:"trust,omitempty"`
	Op      string   `json:"op"`
	Summary string   `json:"summary"`
	Reason  string   `json:"reason,omitempty"`
	Switch  string   `json:"switch,omitempty"`
	Paths   []string `json:"paths,omitempty"`
	UndoOf  string   `json:"undoOf,omitempty"`
	Commit  string   `json:"commit,omitempty"`
}

// diaryOutput is the --json shape of box diary.
type diaryOutput struct {
	Entries []diaryItem `json:"entries"`
}

func diaryCmd(g *Global) *cobra.Command {
	var o diaryOptions
	c := &cobra.Command{
		Use:   "diary",
		Short: "Everything the box did, by whom and why, newest first (ids for box undo --entry)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runDiary(cmd.Context(), g, o) },
	}
	c.Flags().IntVar(&o.n, "n", 20, "how many entries")
	return c
}

func runDiary(ctx context.Context, g *Global, o diaryOptions) error {
	if err := countFlag("n", o.n, 10000); err != nil {
		return err
	}
	return g.read(ctx, func(a *app.App) error {
		es, err := a.Box.Diary(ctx, o.n, nil)
		if err != nil {
			return err
		}
		out := diaryOutput{Entries: make([]diaryItem, 0, len(es))}
		for _, e := range es {
			out.Entries = append(out.Entries, diaryItem{ID: e.ID, Time: e.Time, Actor: e.Actor, Via: e.Via, Host: e.Host, Conn: e.Conn,
				Trust: e.Trust, Op: e.Op, Summary: e.Summary, Reason: e.Reason, Switch: e.Switch, Paths: e.Paths, UndoOf: e.UndoOf, Commit: e.Commit})
		}
		return g.emit(out, func(w io.Writer) {
			for _, it := range out.Entries {
				when := it.Time
				if t, err := time.Parse(time.RFC3339Nano, it.Time); err == nil {
					when = t.In(a.Now().Location()).Format("2006-01-02 15:04")
				}
				_, _ = fmt.Fprintf(w, "%s  %s  %-8s %s\n", when, it.ID, it.Op, it.Summary)
			}
		})
	})
}
