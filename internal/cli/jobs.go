package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/jobs"
)

// jobView is one registered job in box jobs --json.
type jobView struct {
	Name    string       `json:"name"`
	About   string       `json:"about"`
	LastRun *jobs.Record `json:"lastRun,omitempty"`
}

// jobsOutput is the --json shape of box jobs.
type jobsOutput struct {
	Jobs []jobView     `json:"jobs"`
	Runs []jobs.Record `json:"runs"` // the newest records, newest first
}

func jobsCmd(g *Global) *cobra.Command {
	var n int
	c := &cobra.Command{
		Use:   "jobs",
		Short: "List the box's jobs and their newest runs (box serve runs them on its own)",
		Long: "List the jobs box serve runs on its own (tidy after new lines and nightly, the merge pass, cautions that\n" +
			"ended, backups) and the records of their newest runs (docs/JOBS.md). `box jobs run NAME` runs one now.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runJobs(cmd.Context(), g, n) },
	}
	c.Flags().IntVarP(&n, "limit", "n", 20, "how many runs to list")
	c.AddCommand(jobsRunCmd(g))
	return c
}

func runJobs(ctx context.Context, g *Global, n int) error {
	if err := countFlag("limit", n, 10000); err != nil {
		return err
	}
	return g.read(ctx, func(a *app.App) error {
		runs, err := jobs.Records(a.Root, n, nil)
		if err != nil {
			return err
		}
		if err := jobs.WithCommits(ctx, a.Box, runs); err != nil {
			return err
		}
		out := jobsOutput{Jobs: []jobView{}, Runs: runs}
		for _, j := range a.Jobs.Jobs() {
			v := jobView{Name: j.Name, About: j.About}
			if last, err := jobs.Find(a.Root, jobs.Query{N: 1, Job: j.Name}); err == nil && len(last) == 1 {
				if err := jobs.WithCommits(ctx, a.Box, last); err != nil {
					return err
				}
				v.LastRun = &last[0]
			}
			out.Jobs = append(out.Jobs, v)
		}
		return g.emit(out, func(w io.Writer) {
			for _, j := range out.Jobs {
				last := "never ran"
				if j.LastRun != nil {
					last = "last ran " + j.LastRun.Start.Local().Format("2 Jan 15:04")
				}
				_, _ = fmt.Fprintf(w, "%-9s %s (%s)\n", j.Name, j.About, last)
			}
			if len(runs) > 0 {
				_, _ = fmt.Fprintln(w)
			}
			for _, r := range runs {
				_, _ = fmt.Fprintln(w, runLine(r))
			}
		})
	})
}

// runLine is one run as a person reads it.
func runLine(r jobs.Record) string {
	s := fmt.Sprintf("%s  %-9s %-11s %s", r.Start.Local().Format("2 Jan 15:04:05"), r.Job, "("+r.Why+")", r.Summary)
	if r.Error != "" {
		s += " — failed: " + r.Error
	}
	if r.Entry != "" {
		s += " [undo: box undo --entry " + r.Entry + "]"
	}
	return s + fmt.Sprintf(" %s", (time.Duration(r.Seconds*float64(time.Second))).Round(time.Millisecond))
}

func jobsRunCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "run NAME",
		Short: "Run one job now (tidy, merge, cautions, backup, routines); its record says what it did",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runJobsRun(cmd.Context(), g, args[0]) },
	}
}

func runJobsRun(ctx context.Context, g *Global, name string) error {
	return g.write(ctx, func(a *app.App) error {
		rec, err := a.Jobs.Run(ctx, name, jobs.WhyAsked)
		if err != nil && (rec.ID == "" || rec.Error == "") {
			return err // not run (no such job, running already), or its record not written
		}
		if perr := g.emit(rec, func(w io.Writer) { _, _ = fmt.Fprintln(w, runLine(rec)) }); perr != nil {
			return perr
		}
		if err != nil {
			return exitError{ExitFailure} // the job failed: its record, printed, says why (docs/CLI.md)
		}
		return nil
	})
}
