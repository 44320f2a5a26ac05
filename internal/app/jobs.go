package app

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/say"
)

// JobOptions are the job runner's settings (box serve's flags).
type JobOptions struct {
	TidyAfter   time.Duration // how long after new inbox lines the tidy runs; 0 is DefaultTidyAfter
	BackupAfter time.Duration // how long after a commit batch the backups push; 0 is DefaultBackupAfter
	NightlyAt   string        // HH:MM local time of the nightly jobs; "" is DefaultNightlyAt
	Tick        time.Duration // how often the schedules are looked at; 0 is the runner's default
}

// The job runner's defaults (docs/JOBS.md).
const (
	DefaultTidyAfter   = 5 * time.Minute
	DefaultBackupAfter = 30 * time.Second
	DefaultNightlyAt   = "03:00"
)

// jobState is what the composition root keeps of the runner between composing it and serving.
type jobState struct {
	opts    JobOptions
	nightly atomic.Pointer[func(time.Time) time.Time]
	serving atomic.Bool
	wg      sync.WaitGroup // the inbox watch
}

// composeJobs builds the process's job runner and registers the box's own jobs: tidy, merge, cautions
// and backup. Every mode has it (box jobs run NAME runs one in the CLI's process); only Run starts it.
func (a *App) composeJobs() error {
	a.Jobs = jobs.New(a.Box, jobs.Options{Now: a.opts.Now, Logger: a.opts.Logger})
	a.Box.Subscribe(a.afterCommitJobs)
	def := jobs.Nightly(3, 0)
	a.jobs.nightly.Store(&def)
	nightly := func(_ context.Context, now time.Time) time.Time { return (*a.jobs.nightly.Load())(now) }
	// The passes that change the memory wait while the box is frozen or locked, as the owner's own
	// writes do (docs/GATE.md); the backup push changes nothing and goes on, beside the other jobs, so a
	// remote that is slow or silent never holds the tidy back.
	for _, j := range []jobs.Job{
		{Name: "tidy", About: "files the inbox into notes, a few minutes after new lines and nightly", Due: nightly, Quiet: true, Run: a.tidyJob, Hold: a.Writable},
		{Name: "merge", About: "joins likely duplicate notes, nightly after the tidy (docs/MERGE.md)", Due: nightly, Run: a.mergeJob, Hold: a.Writable},
		{Name: "cautions", About: "moves cautions whose last day has passed to their note's timeline, nightly", Due: nightly, Run: a.cautionsJob, Hold: a.Writable},
		{Name: "backup", About: "pushes the box to its backups after each batch of commits (--backup-after)", Quiet: true, Apart: true, Run: a.backupJob},
		a.routinesJob(),
	} {
		if err := a.Jobs.Register(j); err != nil {
			return err
		}
	}
	return nil
}

// afterCommitJobs hears every commit of the process's box handle: new inbox lines arm the debounced
// tidy, and any commit the runner did not make makes its runs wait a little (they yield to writes).
func (a *App) afterCommitJobs(_ context.Context, paths []string) {
	if !a.jobs.serving.Load() {
		return
	}
	inbox := false
	for _, p := range paths {
		if strings.HasPrefix(p, layout.InboxDir+"/") {
			inbox = true
		}
	}
	a.Jobs.Wrote(paths)
	if inbox && !a.Jobs.IsRunning("tidy") {
		a.Jobs.Trigger("tidy", jobs.WhyTrigger, a.jobs.opts.TidyAfter)
	}
	a.Jobs.TriggerOnce("backup", "new commits", a.jobs.opts.BackupAfter)
}

// startJobs starts the runner for box serve, and a watch for inbox lines other processes commit.
func (a *App) startJobs(ctx context.Context, o JobOptions) error {
	if o.TidyAfter <= 0 {
		o.TidyAfter = DefaultTidyAfter
	}
	if o.BackupAfter <= 0 {
		o.BackupAfter = DefaultBackupAfter
	}
	if o.NightlyAt == "" {
		o.NightlyAt = DefaultNightlyAt
	}
	a.jobs.opts = o
	hh, mm, err := jobs.ParseClock(o.NightlyAt)
	if err != nil {
		return err
	}
	nightly := jobs.Nightly(hh, mm)
	a.jobs.nightly.Store(&nightly)
	a.jobs.serving.Store(true)
	a.armBackups(ctx, o)
	a.Jobs.Start(ctx, o.Tick)
	a.jobs.wg.Add(1)
	go func() {
		defer a.jobs.wg.Done()
		a.watchInbox(ctx, o)
	}()
	return nil
}

// armBackups arms, at start, the pushes box serve would have made had it been running: commits made
// while it was down (a backup behind that is not waiting for the owner) are pushed after BackupAfter, and
// a retry that came due meanwhile, or comes later, is armed for its time.
func (a *App) armBackups(ctx context.Context, o JobOptions) {
	st, err := a.Backups.Status(ctx)
	for _, s := range st {
		if s.Behind > 0 && !s.Stopped {
			a.Jobs.TriggerOnce("backup", "new commits", o.BackupAfter)
		}
	}
	if err != nil {
		a.Jobs.TriggerOnce("backup", "new commits", o.BackupAfter) // the run says what could not be read
	}
	a.armRetry(ctx)
}

// watchInbox arms the tidy for lines another process committed (a `box remember` at the CLI), and the
// backup push for any commit another process made (CLI verbs, box mcp, hooks: HEAD moved): the runner
// hears only its own process's commits (docs/BACKUP.md).
func (a *App) watchInbox(ctx context.Context, o JobOptions) {
	every := min(o.TidyAfter, 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	seen, _ := a.Box.Git().Head(ctx)
	var w waitWatch
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		head, herr := a.Box.Git().Head(ctx)
		moved := herr == nil && head != seen
		w.saw(moved) // kept until a look arms or not: a commit during a tidy still counts after it
		if n, err := a.Memory.Waiting(ctx); err == nil && !a.Jobs.IsRunning("tidy") && w.arm(n) {
			a.Jobs.TriggerOnce("tidy", jobs.WhyTrigger, o.TidyAfter)
		}
		if moved {
			seen = head
			a.Jobs.TriggerOnce("backup", "new commits", o.BackupAfter)
		}
	}
}

// waitWatch decides when lines waiting in the inbox arm a tidy: at the first look, and again only when
// their count or the box moved since the last look. Lines tidy leaves where they are (two of a day with
// one id) would otherwise arm a run that files nothing every few minutes, for as long as they wait.
type waitWatch struct {
	looked bool
	last   int
	moved  bool // the box moved since the last look
}

// saw notes whether the box moved since the previous tick.
func (w *waitWatch) saw(moved bool) { w.moved = w.moved || moved }

// arm looks at n lines waiting and reports whether they arm a tidy.
func (w *waitWatch) arm(n int) bool {
	arm := n > 0 && (!w.looked || n != w.last || w.moved)
	w.looked, w.last, w.moved = true, n, false
	return arm
}

// passJob runs a memory pass whose record is committed with it (memory.Also): describe says what the
// pass did, for the record and for Today. A pass that committed nothing (Entry "") did nothing.
func passJob[T any](run *jobs.Run, describe func(T) jobs.Result, pass func(*memory.Also[T]) (T, error)) (jobs.Result, error) {
	var out jobs.Result
	res, err := pass(&memory.Also[T]{Change: run.RecordChange(), Write: func(tx *box.Tx, res T) error {
		out = describe(res)
		return run.WriteRecord(tx, out)
	}})
	if err != nil {
		return jobs.Result{}, err
	}
	if r := describe(res); r.Entry == "" {
		r.Nothing = true
		return r, nil
	}
	out.Recorded = true
	return out, nil
}

// tidyJob files the inbox; the record goes in the tidy's own commit.
func (a *App) tidyJob(ctx context.Context, run *jobs.Run) (jobs.Result, error) {
	return passJob(run, tidyResult, func(also *memory.Also[memory.TidyResult]) (memory.TidyResult, error) {
		return a.Memory.TidyWith(ctx, run.Actor(), also)
	})
}

// tidyResult says what a tidy did, as Today shows it: "The box filed 12 lines into 4 notes."
func tidyResult(res memory.TidyResult) jobs.Result {
	r := jobs.Result{Entry: res.Entry, Details: res, Changed: []string{}}
	if res.Entry == "" {
		r.Summary = "Nothing to tidy: the inbox is empty."
		return r
	}
	r.Summary = fmt.Sprintf("The box filed %d %s into %d %s", res.Filed, say.Plural(res.Filed, "line", "lines"), len(res.Into), say.Plural(len(res.Into), "note", "notes"))
	if res.Dropped > 0 {
		r.Summary += fmt.Sprintf(" and dropped %d to the trash", res.Dropped)
	}
	r.Summary += "."
	for _, n := range res.Into {
		r.Changed = append(r.Changed, "filed into "+n)
	}
	for _, n := range res.Created {
		r.Changed = append(r.Changed, "new note "+n)
	}
	if res.Dropped > 0 {
		r.Changed = append(r.Changed, fmt.Sprintf("%d dropped to the trash", res.Dropped))
	}
	return r
}

// mergeJob runs the merge pass (docs/MERGE.md); the record goes in the pass's own commit.
func (a *App) mergeJob(ctx context.Context, run *jobs.Run) (jobs.Result, error) {
	return passJob(run, func(res memory.MergeResult) jobs.Result {
		r := jobs.Result{Entry: res.Entry, Details: res, Changed: []string{}, Summary: res.Text}
		for _, p := range res.Merged {
			r.Changed = append(r.Changed, fmt.Sprintf("merged %s into %s (%.2f)", p.Archived, p.Kept, p.Score))
		}
		if n := len(res.Merged); n > 0 {
			r.Summary = fmt.Sprintf("The box merged %d duplicate %s.", n, say.Plural(n, "note", "notes"))
		}
		return r
	}, func(also *memory.Also[memory.MergeResult]) (memory.MergeResult, error) {
		return a.Memory.MergeWith(ctx, run.Actor(), memory.MergeOptions{}, also)
	})
}

// cautionsJob moves the cautions that ended to their notes' timelines; the record goes in its commit.
func (a *App) cautionsJob(ctx context.Context, run *jobs.Run) (jobs.Result, error) {
	return passJob(run, func(res memory.CautionsResult) jobs.Result {
		r := jobs.Result{Entry: res.Entry, Details: res, Changed: []string{}, Summary: "No caution has ended."}
		for _, e := range res.Ended {
			r.Changed = append(r.Changed, fmt.Sprintf("caution %q (until %s) moved to %s", e.Text, e.Until, e.Note))
		}
		if n := len(res.Ended); n > 0 {
			r.Summary = fmt.Sprintf("The box moved %d ended %s to the timeline.", n, say.Plural(n, "caution", "cautions"))
		}
		return r
	}, func(also *memory.Also[memory.CautionsResult]) (memory.CautionsResult, error) {
		return a.Memory.ExpireCautions(ctx, run.Actor(), also)
	})
}
