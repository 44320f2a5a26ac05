package app

import (
	"context"
	"fmt"
	"time"

	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/routine"
)

// composeRoutines builds the routines over the brain (docs/ROUTINES.md); the job runner of box serve
// runs what is due (routinesJob).
func (a *App) composeRoutines() error {
	var err error
	a.Routines, err = routine.New(routine.Config{Box: a.Box, Brain: a.Brain, State: a.State, Now: a.opts.Now, Logger: a.opts.Logger})
	return err
}

// routinesJob is the runner's job for the owner's routines: due when a routine's slot has come and the
// box could run it (a brain on, the box neither frozen nor locked), so a box that cannot run them does
// not record a run every tick; a routine's slot is marked run by RunDue, never twice.
func (a *App) routinesJob() jobs.Job {
	return jobs.Job{
		Name: "routines", About: "runs the owner's routines at their times, with read-only tools (docs/ROUTINES.md)",
		Due: func(ctx context.Context, now time.Time) time.Time {
			// Not ready: the run would do nothing, so no record every tick. A setting that cannot be read
			// lets the run go on, so its error is in a record.
			if ok, err := a.Routines.Ready(ctx); !ok && err == nil {
				return time.Time{}
			}
			if due, err := a.Routines.Due(ctx, now); err != nil || len(due) == 0 {
				return time.Time{}
			}
			return now
		},
		Run: func(ctx context.Context, r *jobs.Run) (jobs.Result, error) {
			reps, err := a.Routines.RunDue(ctx, r.Now())
			res := jobs.Result{Nothing: len(reps) == 0, Details: reps}
			for _, rep := range reps {
				res.Changed = append(res.Changed, rep.Routine+": "+rep.Path)
			}
			switch len(reps) {
			case 0:
				res.Summary = "No routine ran."
			case 1:
				res.Summary = "Ran the routine " + reps[0].Routine + "."
			default:
				res.Summary = fmt.Sprintf("Ran %d routines.", len(reps))
			}
			return res, err
		},
	}
}
