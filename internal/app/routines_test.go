package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/apptest"
	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/passkeytest"
	"github.com/boxmem/box/internal/providertest"
	"github.com/boxmem/box/internal/routine"
)

// The runner's routines job, as the composition root registers it: not due before a routine's slot nor
// while no brain is on; due once the slot has come; the runner's scheduled run runs the routine (its
// report under the day's folder, named in the job's record) and then the slot is not due again.
func TestTheRunnerRunsARoutineThatIsDue(t *testing.T) {
	ctx := context.Background()
	loc := time.FixedZone("owner", -5*3600) // the owner's zone: not UTC, not the machine's
	c := passkeytest.ClockAt(time.Date(2026, 3, 5, 6, 0, 0, 0, loc))
	a := apptest.Open(t, app.Options{Now: c.Now})
	var job jobs.Job
	for _, j := range a.Jobs.Jobs() {
		if j.Name == "routines" {
			job = j
		}
	}
	if job.Due == nil || job.Run == nil {
		t.Fatalf("no scheduled routines job among %d jobs", len(a.Jobs.Jobs()))
	}
	if _, err := a.Routines.Add(ctx, apptest.Owner, routine.Routine{Name: "paper", At: "07:00", Prompt: "Today's paper.", On: true}); err != nil {
		t.Fatal(err)
	}
	if at := job.Due(context.Background(), c.Now()); !at.IsZero() {
		t.Fatalf("due at 06:00 for a 07:00 routine: %v", at)
	}
	c.Set(time.Date(2026, 3, 5, 7, 10, 0, 0, loc))
	if at := job.Due(context.Background(), c.Now()); !at.IsZero() {
		t.Fatalf("due with no brain to run it: %v", at)
	}
	srv := apptest.Brain(t, a, "sk-test-ROUTINE-JOB-7d1e")
	if at := job.Due(context.Background(), c.Now()); !at.Equal(c.Now()) {
		t.Fatalf("not due at its slot with a brain on: %v", at)
	}
	srv.Push(providertest.Reply{Model: "model-b", Text: []string{"Nothing waits today. Kingfisher."}, InputTokens: 100, OutputTokens: 8})

	runCtx, cancel := context.WithCancel(ctx)
	a.Jobs.Start(runCtx, 20*time.Millisecond)
	defer func() { cancel(); a.Jobs.Wait() }()
	routines := func(rec jobs.Record) bool { return rec.Job == "routines" }
	var (
		recs []jobs.Record
		err  error
	)
	for deadline := time.Now().Add(10 * time.Second); len(recs) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if recs, err = jobs.Records(a.Root, 5, routines); err != nil {
			t.Fatal(err)
		}
	}
	if len(recs) != 1 {
		t.Fatalf("the runner recorded %d runs of the routines job", len(recs))
	}
	rec := recs[0]
	report := routine.ReportsDir + "/2026-03-05/paper.md"
	if rec.Why != jobs.WhySchedule || rec.Summary != "Ran the routine paper." || rec.Error != "" || len(rec.Changed) != 1 || rec.Changed[0] != "paper: "+report {
		t.Fatalf("record: %+v", rec)
	}
	if data, err := layout.ReadFile(a.Root, report); err != nil || !strings.Contains(string(data), "Kingfisher") {
		t.Fatalf("the report: %q %v", data, err)
	}
	if at := job.Due(context.Background(), c.Now()); !at.IsZero() {
		t.Fatalf("the slot that ran is due again: %v", at)
	}
	// A few more passes of the scheduler run it no more: one model call, one record.
	time.Sleep(100 * time.Millisecond)
	if recs, _ := jobs.Records(a.Root, 5, routines); len(recs) != 1 || len(srv.Requests()) != 1 {
		t.Fatalf("ran again: %d records, %d model calls", len(recs), len(srv.Requests()))
	}
}
