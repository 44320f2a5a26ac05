package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/diary"
)

// diaryItem is one line of `box diary --json` (fields are only ever added).
type diaryItem struct {
	ID      string   `json:"id"`
	Time    string   `json:"time"`
	Actor   string   `json:"actor"`
	Via     string   `json:"via,omitempty"`
	Host    string   `json:"host,omitempty"`
	Trust   string   `json:"trust,omitempty"`
	Op      string   `json:"op"`
	Summary string   `json:"summary"`
	Reason  string   `json:"reason,omitempty"`
	Switch  string   `json:"switch,omitempty"`
	Paths   []string `json:"paths,omitempty"`
	UndoOf  string   `json:"undoOf,omitempty"`
	Commit  string   `json:"commit,omitempty"`
}

func (a *App) diaryCmd() *cobra.Command {
	var n int
	c := &cobra.Command{
		Use:   "diary",
		Short: "Everything the box did, by whom and why, newest first (ids for box undo --entry)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n <= 0 {
				return usageErr("--n must be at least 1")
			}
			var es []diary.Entry
			err := a.withBox(func(b *box.Box) (err error) {
				es, err = b.Diary(cmd.Context(), n, nil)
				return err
			})
			if err != nil {
				return err
			}
			items := make([]diaryItem, 0, len(es))
			for _, e := range es {
				items = append(items, diaryItem{ID: e.ID, Time: e.Time, Actor: e.Actor, Via: e.Via, Host: e.Host, Trust: e.Trust,
					Op: e.Op, Summary: e.Summary, Reason: e.Reason, Switch: e.Switch, Paths: e.Paths, UndoOf: e.UndoOf, Commit: e.Commit})
			}
			return a.emit(map[string]any{"entries": items}, func(w io.Writer) {
				for _, it := range items {
					when := it.Time
					if t, err := time.Parse(time.RFC3339Nano, it.Time); err == nil {
						when = t.Local().Format("2006-01-02 15:04")
					}
					fmt.Fprintf(w, "%s  %s  %-8s %s\n", when, it.ID, it.Op, it.Summary)
				}
			})
		},
	}
	c.Flags().IntVar(&n, "n", 20, "how many entries")
	return c
}
