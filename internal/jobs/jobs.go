// Package jobs owns the job runner of box serve: a small registry of jobs (a name, when it is due, what it
// does), debounced triggers, the nightly schedule and its missed runs, one run of a job at a time across
// processes, the record of every run under /_bookkeeping/jobs/, and the repair after a run was killed
// (docs/JOBS.md). It knows nothing of what a job does: the composition root registers the memory's
// passes, the backup pushes and, later, routines.
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxmem/box/internal/atomicfile"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
)

// RecordsDir is where the records of runs live, one file per run: /_bookkeeping/jobs/YYYY-MM-DD/HHMMSS-NAME-ID.json
// (the UTC day and time the run started).
const RecordsDir = "/_bookkeeping/jobs"

// runtimeDir holds, per job, its lock file and the marker of a run in progress (never committed).
const runtimeDir = ".box/jobs"

// Actor is who a job's changes are by: the box itself, on the owner's behalf.
var Actor = box.Actor{Who: "the box", Via: "job", Trust: "own"}

// Why a run started.
const (
	WhyAsked       = "asked"       // box jobs run NAME, or the web UI
	WhyTrigger     = "new lines"   // a debounced trigger after commits (the default reason; Trigger names its own)
	WhySchedule    = "scheduled"   // its Due said so
	WhyMissed      = "missed"      // its scheduled time passed while the server was down
	WhyInterrupted = "interrupted" // a record written at start for a run that was killed
)

// Job is one job of the registry. Registering a job is one line: runner.Register(jobs.Job{…}).
type Job struct {
	Name  string // lower-case letters, digits and dashes: tidy, merge, cautions, backup, routine-…
	About string // one line for box jobs: what it does and when
	// Due reports, for a scheduled job, the newest time at or before now when it should have run; the
	// runner runs it when its last run started before that (so a time missed while the server was down
	// runs at the next start). Zero: not due by schedule. nil: the job runs only when asked or triggered.
	// ctx is the scheduler's: a Due that reads the box stops when box serve does.
	Due func(ctx context.Context, now time.Time) time.Time
	// Run does the work. A job that commits writes its record in its own commit (Run.RecordChange and
	// Run.WriteRecord, or memory's Also) and returns Result.Recorded; otherwise the runner commits the
	// record itself. An error is in the record; the job's change is then not committed.
	Run func(ctx context.Context, r *Run) (Result, error)
	// Quiet, when true, writes no record for a triggered run that changed nothing and failed in nothing
	// (a trigger that found the work already done); a scheduled or asked run is always recorded.
	Quiet bool
	// Hold, when set, is asked before every run: an error (a frozen or locked box) means the job may not
	// run now. It is then not due, its trigger and its schedule wait, and Run refuses with that error
	// and writes no record (a record is a commit, itself a write). nil: the job may always run.
	Hold func(ctx context.Context) error
	// Apart, when true, runs the scheduler's runs of the job beside the others: a run that waits on
	// the network (a push to a slow remote) holds no other job back. It still never overlaps itself.
	Apart bool
}

// Result is what one run did.
type Result struct {
	Summary  string   `json:"summary"`           // "The box filed 12 lines into 4 notes."
	Changed  []string `json:"changed,omitempty"` // what changed, a line each
	Entry    string   `json:"entry,omitempty"`   // the diary entry of the job's change; undo reverses it
	Details  any      `json:"details,omitempty"` // the pass's own result, kept in the record
	Recorded bool     `json:"-"`                 // the record went into the job's own commit
	Nothing  bool     `json:"-"`                 // nothing to do, nothing changed
}

// Record is one run, as written under RecordsDir.
type Record struct {
	ID      string          `json:"id"`
	Job     string          `json:"job"`
	Why     string          `json:"why"`
	Start   time.Time       `json:"start"`
	Seconds float64         `json:"seconds"`
	Summary string          `json:"summary"`
	Changed []string        `json:"changed"`
	Entry   string          `json:"entry,omitempty"`
	Error   string          `json:"error,omitempty"`
	Details json.RawMessage `json:"details,omitempty"`
	// Path and Commit are filled when read: a record cannot hold the commit it is written in.
	Path   string `json:"path,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// Options tune a Runner.
type Options struct {
	Now    func() time.Time // the process's clock; nil: the box's
	Logger *slog.Logger     // nil: discard
	// Tick is how often the scheduler looks at the schedules; 0 is 30 s.
	Tick time.Duration
	// Quiet is how long a run waits after the last commit it did not make before it starts (it yields
	// to the owner's writes); 0 is 2 s.
	Quiet time.Duration
}

// Runner runs the registered jobs of one box.
type Runner struct {
	b    *box.Box
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	jobs      []Job
	triggers  map[string]trigger // job → when a debounced trigger fires, and why
	lastWrite time.Time          // the last commit heard that the runner did not make, on its clock
	running   map[string]bool    // runs holding their job's lock in this process (lockJob)
	// apart is the scheduler's runs apart going on, from the pass that starts one to its goroutine's end;
	// only those two touch it, so a run that was refused (Busy) never clears another run's mark.
	apart   map[string]bool
	wake    chan struct{}
	wg      sync.WaitGroup
	started bool
}

type trigger struct {
	at  time.Time
	why string
}

// New is a runner for the box b.
func New(b *box.Box, o Options) *Runner {
	if o.Now == nil {
		o.Now = b.Now
	}
	if o.Tick <= 0 {
		o.Tick = 30 * time.Second
	}
	if o.Quiet <= 0 {
		o.Quiet = 2 * time.Second
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{b: b, opts: o, log: log, triggers: map[string]trigger{}, running: map[string]bool{},
		apart: map[string]bool{}, wake: make(chan struct{}, 1)}
}

var nameRe = lazyregexp.New(`^[a-z0-9][a-z0-9-]{0,39}$`)

// Register adds a job; a bad or taken name is an error.
func (r *Runner) Register(j Job) error {
	if !nameRe.MatchString(j.Name) || j.Run == nil {
		return errs.E("jobs.register", errs.Invalid, "a job needs a name of lower-case letters, digits and dashes and a Run (got %q)", j.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.ContainsFunc(r.jobs, func(o Job) bool { return o.Name == j.Name }) {
		return errs.E("jobs.register", errs.Exists, "a job named %s is registered already", j.Name)
	}
	r.jobs = append(r.jobs, j)
	return nil
}

// Jobs lists the registered jobs in registration order.
func (r *Runner) Jobs() []Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.jobs)
}

func (r *Runner) job(name string) (Job, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, j := range r.jobs {
		if j.Name == name {
			return j, nil
		}
	}
	names := make([]string, 0, len(r.jobs))
	for _, j := range r.jobs {
		names = append(names, j.Name)
	}
	return Job{}, errs.E("jobs.run", errs.NotFound, "There is no job named %q; the jobs are: %s.", name, strings.Join(names, ", "))
}

// Trigger asks for a run of name after delay, with why in its record; a trigger already waiting is
// moved to the new time (a debounce: the run comes delay after the last trigger).
func (r *Runner) Trigger(name, why string, delay time.Duration) {
	r.mu.Lock()
	r.triggers[name] = trigger{at: r.opts.Now().Add(delay), why: why}
	r.mu.Unlock()
	r.poke()
}

// TriggerOnce is Trigger that keeps the earlier of a waiting trigger's time and the new one: the run
// comes at most delay after the first trigger (a batch window, as backups use), and a trigger waiting
// far off (a backup's retry in an hour) never holds back one asked for sooner.
func (r *Runner) TriggerOnce(name, why string, delay time.Duration) {
	at := r.opts.Now().Add(delay)
	r.mu.Lock()
	if t, ok := r.triggers[name]; !ok || at.Before(t.at) {
		r.triggers[name] = trigger{at: at, why: why}
	}
	r.mu.Unlock()
	r.poke()
}

// Pending reports when the waiting trigger of name fires, and why; false when none waits.
func (r *Runner) Pending(name string) (at time.Time, why string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.triggers[name]
	return t.at, t.why, ok
}

// Wrote tells the runner a commit with paths happened: unless it carries a run's record (the runner's
// own commit), someone else wrote (the owner, an assistant), and a run waits Options.Quiet after the
// last such commit, even one that came while another run was going on (docs/JOBS.md, "Yields to writes").
func (r *Runner) Wrote(paths []string) {
	for _, p := range paths {
		if strings.HasPrefix(p, RecordsDir+"/") {
			return
		}
	}
	r.mu.Lock()
	r.lastWrite = r.opts.Now()
	r.mu.Unlock()
}

func (r *Runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Start repairs what a killed run left, then runs the scheduler until ctx ends, looking at the schedules
// every tick (0: Options.Tick); Wait waits for it.
func (r *Runner) Start(ctx context.Context, tick time.Duration) {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return
	}
	r.started = true
	if tick > 0 {
		r.opts.Tick = tick
	}
	r.mu.Unlock()
	r.Recover(ctx)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.loop(ctx)
	}()
}

// Wait waits for the scheduler to stop (its context ended) and any run it started to finish.
func (r *Runner) Wait() { r.wg.Wait() }

func (r *Runner) loop(ctx context.Context) {
	for ctx.Err() == nil {
		t := time.NewTimer(r.wait(r.pass(ctx)))
		select {
		case <-ctx.Done():
		case <-r.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// passed is what a pass left undone: the jobs held (their triggers wait for the next tick) and whether
// it stopped to yield to the owner's writes.
type passed struct {
	held    map[string]bool
	yielded bool
}

// pass runs, in registration order, every job whose trigger fired or whose schedule is due.
func (r *Runner) pass(ctx context.Context) passed {
	var p passed
	for _, j := range r.Jobs() {
		if ctx.Err() != nil {
			return p
		}
		why, ok := r.due(ctx, j)
		if !ok {
			continue
		}
		if j.Hold != nil && j.Hold(ctx) != nil || j.Apart && r.goingApart(j.Name) {
			if p.held == nil {
				p.held = map[string]bool{}
			}
			// frozen or locked: its trigger and schedule wait, looked at every tick; a run apart still
			// going on: its end wakes the scheduler
			p.held[j.Name] = true
			continue
		}
		if r.yielding() {
			p.yielded = true
			return p // the owner is writing: come back when it has been quiet a while
		}
		r.mu.Lock()
		_, triggered := r.triggers[j.Name]
		delete(r.triggers, j.Name)
		if j.Apart {
			r.apart[j.Name] = true // taken before the run starts, so the next pass does not start another
		}
		r.mu.Unlock()
		if !j.Apart {
			r.ran(ctx, j, why, triggered)
			continue
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.ran(ctx, j, why, triggered)
			r.mu.Lock()
			delete(r.apart, j.Name) // also when the run did not start (held, busy)
			r.mu.Unlock()
			r.poke() // its trigger, waiting while it ran, may be due
		}()
	}
	return p
}

// ran runs j for the scheduler, and keeps its trigger when the run could not start.
func (r *Runner) ran(ctx context.Context, j Job, why string, triggered bool) {
	_, err := r.Run(ctx, j.Name, why)
	var held *heldError
	switch {
	case errors.As(err, &held) && triggered:
		r.TriggerOnce(j.Name, why, 0) // held since it was found due: the next pass sees it held
	case errs.Is(err, errs.Busy) && triggered:
		// running in another process (box jobs run): that run may have read its work before the
		// lines that armed this trigger came, so the trigger waits and tries again
		r.TriggerOnce(j.Name, why, r.opts.Quiet)
	case err != nil && !errs.Is(err, errs.Busy) && held == nil:
		r.log.Warn("jobs: a run failed", "job", j.Name, "err", err)
	}
}

// minWait keeps the scheduler from waking at once again when a time has just passed.
const minWait = 10 * time.Millisecond

// wait is how long the scheduler sleeps after a pass: until the next tick, or the first trigger that
// can fire, and never before the owner's writes have been quiet for Quiet (a trigger due while they
// are not would only wake it to yield again). A held job's trigger waits for the tick.
func (r *Runner) wait(p passed) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Now()
	quiet := r.lastWrite.Add(r.opts.Quiet)
	wait := r.opts.Tick
	for name, t := range r.triggers {
		if !p.held[name] {
			wait = min(wait, max(t.at.Sub(now), quiet.Sub(now)))
		}
	}
	if p.yielded {
		wait = min(wait, quiet.Sub(now))
	}
	return max(wait, minWait)
}

// yielding reports whether a commit the runner did not make came less than Quiet ago.
func (r *Runner) yielding() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.lastWrite.IsZero() && r.opts.Now().Sub(r.lastWrite) < r.opts.Quiet
}

// due says whether j should run now, and why.
func (r *Runner) due(ctx context.Context, j Job) (string, bool) {
	now := r.opts.Now()
	r.mu.Lock()
	t, ok := r.triggers[j.Name]
	r.mu.Unlock()
	if ok && !now.Before(t.at) {
		return t.why, true
	}
	if j.Due == nil {
		return "", false
	}
	at := j.Due(ctx, now)
	if at.IsZero() {
		return "", false
	}
	// Only runs since the due time (or the last tick, for the guard below) matter: the read is those days.
	since := at
	if t := now.Add(-r.opts.Tick); t.Before(since) {
		since = t
	}
	var last time.Time
	recs, err := Find(r.b.Root, Query{N: 1, Job: j.Name, Since: since})
	if len(recs) == 1 {
		last = recs[0].Start
	}
	if err != nil {
		r.log.Warn("jobs: the records could not be read", "job", j.Name, "err", err)
		return "", false
	}
	if !last.Before(at) {
		return "", false
	}
	if d := now.Sub(last); d >= 0 && d < r.opts.Tick {
		return "", false // it ran less than a tick ago: a job whose run did not clear its Due waits a tick, never loops
	}
	if created, err := time.Parse(time.RFC3339, r.b.Marker.Created); err == nil && created.After(at) {
		return "", false // the box did not exist then
	}
	if now.Sub(at) > r.opts.Tick+time.Minute {
		return WhyMissed, true
	}
	return WhySchedule, true
}

// Run runs the job name now, unless a run of it is already going on in any process (Busy) or its Hold
// refuses (that error, and no record), and returns its record. The job's own error is in the record and returned too.
func (r *Runner) Run(ctx context.Context, name, why string) (Record, error) {
	j, err := r.job(name)
	if err != nil {
		return Record{}, err
	}
	if j.Hold != nil {
		if err := j.Hold(ctx); err != nil {
			return Record{}, &heldError{err}
		}
	}
	unlock, err := r.lockJob(name)
	if err != nil {
		return Record{}, err
	}
	defer unlock()
	run := &Run{Job: name, Why: why, Start: r.opts.Now(), ID: newID(), r: r}
	if err := r.mark(run); err != nil {
		return Record{}, err
	}
	res, jerr := func() (res Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = errs.E("jobs.run", errs.Other, "the job %s stopped on an internal error: %v", name, p)
			}
		}()
		return j.Run(ctx, run)
	}()
	if jerr != nil && ctx.Err() != nil {
		// Stopped by its caller (box serve stopping, Ctrl-C), not failed: its change is whole or absent as
		// after a kill, and its marker, marked stopped, has the next start run it again with no failure
		// recorded (docs/JOBS.md, "Survives a kill").
		run.stopped = true
		if err := r.mark(run); err != nil {
			r.log.Warn("jobs: a stopped run could not be marked", "job", name, "err", err)
		}
		return run.record(res), jerr
	}
	rec := run.record(res)
	if res.Recorded && jerr == nil && run.written != nil {
		rec = *run.written // the record as committed, not measured again
	}
	if jerr != nil {
		rec.Error = jerr.Error()
		res.Recorded = false
	}
	quiet := j.Quiet && res.Nothing && jerr == nil && why != WhySchedule && why != WhyMissed && why != WhyAsked
	if !res.Recorded && !quiet {
		if err := r.commitRecord(context.WithoutCancel(ctx), run, rec); err != nil {
			return rec, errors.Join(jerr, err)
		}
	}
	r.unmark(name)
	return rec, jerr
}

// heldError is a run its job's Hold refused: the hold's own error (Frozen, Locked), unchanged for errs.
type heldError struct{ err error }

func (e *heldError) Error() string { return e.err.Error() }
func (e *heldError) Unwrap() error { return e.err }

// commitRecord writes a record in a commit of its own: a run that committed nothing, or failed.
func (r *Runner) commitRecord(ctx context.Context, run *Run, rec Record) error {
	c := run.RecordChange()
	if rec.Error != "" {
		c.Summary = fmt.Sprintf("The box's job %s failed: %s", run.Job, rec.Error)
	}
	c.Apply = func(tx *box.Tx) error { return writeRecord(tx, rec) }
	_, err := r.b.Do(ctx, c)
	return err
}

// Run is one run of a job, as its Run function sees it.
type Run struct {
	Job, Why, ID string
	Start        time.Time
	r            *Runner
	written      *Record // the record WriteRecord put in the job's commit: what Run returns
	stopped      bool    // its caller stopped it (the marker says so)
}

// Actor is who the run's changes are by.
func (run *Run) Actor() box.Actor { return Actor }

// Now is the runner's clock.
func (run *Run) Now() time.Time { return run.r.opts.Now() }

// RecordChange is the change that writes this run's record, to commit with the job's own change (its
// Apply is the caller's: call WriteRecord in it). It keeps no undo: a record says what happened.
func (run *Run) RecordChange() box.Change {
	return box.Change{Actor: Actor, Op: "job", Switch: "change", Permanent: true,
		Summary: fmt.Sprintf("The box recorded its %s run (%s).", run.Job, run.Why)}
}

// WriteRecord writes the record of this run, with what it did, inside the job's own change.
func (run *Run) WriteRecord(tx *box.Tx, res Result) error {
	rec := run.record(res)
	run.written = &rec
	return writeRecord(tx, rec)
}

func (run *Run) record(res Result) Record {
	rec := Record{ID: run.ID, Job: run.Job, Why: run.Why, Start: run.Start.UTC(), Summary: res.Summary,
		Changed: res.Changed, Entry: res.Entry, Seconds: run.r.opts.Now().Sub(run.Start).Seconds()}
	if rec.Changed == nil {
		rec.Changed = []string{}
	}
	if res.Details != nil {
		if raw, err := json.Marshal(res.Details); err == nil {
			rec.Details = raw
		}
	}
	rec.Path = recordPath(rec)
	return rec
}

func recordPath(rec Record) string {
	t := rec.Start.UTC()
	return fmt.Sprintf("%s/%s/%s-%s-%s.json", RecordsDir, t.Format("2006-01-02"), t.Format("150405"), rec.Job, rec.ID)
}

func writeRecord(tx *box.Tx, rec Record) error {
	p := rec.Path
	rec.Path = ""
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return errs.Wrap("jobs.record", errs.Other, err, "")
	}
	return tx.Write(p, append(data, '\n'))
}

func newID() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

// lockJob takes name's run lock (an OS file lock shared by every process) without waiting.
func (r *Runner) lockJob(name string) (func(), error) {
	dir := filepath.Join(r.b.Root, runtimeDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errs.Wrap("jobs.run", errs.Other, err, "The jobs' runtime folder could not be made")
	}
	f, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, errs.Wrap("jobs.run", errs.Other, err, "The job's lock file could not be opened")
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, errs.E("jobs.run", errs.Busy, "The job %s is running already; its record will say what it did.", name)
	}
	r.mu.Lock()
	r.running[name] = true
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.running, name)
		r.mu.Unlock()
		_ = f.Close() // releases the lock
	}, nil
}

// goingApart reports whether a scheduled run apart of name, or any run of it in this process, is going on.
func (r *Runner) goingApart(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.apart[name] || r.running[name]
}

// IsRunning reports whether this runner is running the job name now.
func (r *Runner) IsRunning(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[name]
}

// marker is the file that says a run is in progress: a run killed before it recorded leaves it behind.
type marker struct {
	ID    string    `json:"id"`
	Why   string    `json:"why"`
	Start time.Time `json:"start"`
	// Stopped: the run's caller stopped it (box serve stopping), rather than a kill: no failure.
	Stopped bool `json:"stopped,omitempty"`
}

func (r *Runner) markerPath(name string) string {
	return filepath.Join(r.b.Root, runtimeDir, name+".running")
}

func (r *Runner) mark(run *Run) error {
	data, _ := json.Marshal(marker{ID: run.ID, Why: run.Why, Start: run.Start.UTC(), Stopped: run.stopped})
	if err := os.MkdirAll(filepath.Dir(r.markerPath(run.Job)), 0o700); err != nil {
		return errs.Wrap("jobs.run", errs.Other, err, "The jobs' runtime folder could not be made")
	}
	if err := atomicfile.WriteFile(r.markerPath(run.Job), data, 0o600); err != nil {
		return errs.Wrap("jobs.run", errs.Other, err, "The job's run marker could not be written")
	}
	return nil
}

func (r *Runner) unmark(name string) { _ = os.Remove(r.markerPath(name)) }

// Recover finds runs that were killed (a marker with no run going on): the box's own repair has already
// finished or rolled back their change (a change is one commit, or nothing), so each gets a record that
// says so, and the job runs again on the scheduler's first pass.
func (r *Runner) Recover(ctx context.Context) {
	for _, j := range r.Jobs() {
		data, err := os.ReadFile(r.markerPath(j.Name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		unlock, lerr := r.lockJob(j.Name)
		if lerr != nil {
			continue // another process is running it: its marker is live
		}
		var mk marker
		if err != nil || json.Unmarshal(data, &mk) != nil || mk.ID == "" {
			mk = marker{ID: newID(), Why: WhyInterrupted, Start: r.opts.Now().UTC()}
		}
		recs, _ := Records(r.b.Root, 0, func(rec Record) bool { return rec.ID == mk.ID })
		switch {
		case len(recs) == 0 && mk.Stopped && j.Quiet && mk.Why != WhySchedule && mk.Why != WhyMissed && mk.Why != WhyAsked:
			// As Run's own rule: a quiet job's scheduled or asked run is always recorded.
			r.Trigger(j.Name, WhyInterrupted, 0) // a quiet job stopped with the box: no news, its work again
		case len(recs) == 0:
			run := &Run{Job: j.Name, Why: mk.Why, Start: mk.Start, ID: mk.ID, r: r}
			rec := run.record(Result{Summary: fmt.Sprintf("The %s run was stopped before it finished; the box kept its change whole or took it back, and the job runs again when due.", j.Name)})
			if !mk.Stopped { // a kill is news; the box stopping on purpose is not
				rec.Error = "interrupted: the box stopped during the run"
			}
			if err := r.commitRecord(ctx, run, rec); err != nil {
				r.log.Warn("jobs: an interrupted run could not be recorded", "job", j.Name, "err", err)
				unlock()
				continue
			}
			r.Trigger(j.Name, WhyInterrupted, 0) // its work is still to do: run it again at once
		}
		r.unmark(j.Name)
		unlock()
	}
}

// Records reads the newest n records (0: all) that keep accepts (nil: every one), newest first, each
// with its path and the commit that carries it (from the diary, when the run committed).
func Records(root string, n int, keep func(Record) bool) ([]Record, error) {
	return Find(root, Query{N: n, Keep: keep})
}

// Query bounds a read of the records: the newest N (0: all), of one Job (by the file name, so no other
// job's record is decoded), started at or after Since (only the day folders from its UTC day on are
// read), and that Keep accepts.
type Query struct {
	N     int
	Job   string
	Since time.Time
	Keep  func(Record) bool
}

// Find reads the records q asks for, newest first. Its work is bounded by q: a due check asks for one
// job's runs since its due time and reads those days only, never the whole history.
func Find(root string, q Query) ([]Record, error) {
	base := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(RecordsDir, "/")))
	days, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return []Record{}, nil
	}
	if err != nil {
		return nil, errs.Wrap("jobs.records", errs.Other, err, "The jobs' records could not be read")
	}
	first := ""
	if !q.Since.IsZero() {
		first = q.Since.UTC().Format("2006-01-02")
	}
	out := []Record{}
	for i := len(days) - 1; i >= 0 && days[i].Name() >= first; i-- {
		if !days[i].IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(base, days[i].Name()))
		if err != nil {
			return nil, errs.Wrap("jobs.records", errs.Other, err, "The jobs' records could not be read")
		}
		for k := len(files) - 1; k >= 0; k-- {
			f := files[k]
			if !strings.HasSuffix(f.Name(), ".json") || (q.Job != "" && recordJob(f.Name()) != q.Job) {
				continue
			}
			data, err := os.ReadFile(filepath.Join(base, days[i].Name(), f.Name()))
			if err != nil {
				continue
			}
			var rec Record
			if json.Unmarshal(data, &rec) != nil || rec.Job == "" {
				continue // not a record: box validate has no say on JSON, the listing skips it
			}
			if (q.Job != "" && rec.Job != q.Job) || rec.Start.Before(q.Since) {
				continue
			}
			rec.Path = RecordsDir + "/" + days[i].Name() + "/" + f.Name()
			if q.Keep == nil || q.Keep(rec) {
				out = append(out, rec)
			}
		}
		if q.N > 0 && len(out) >= q.N {
			break // every older day holds older runs
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.After(out[j].Start) })
	if q.N > 0 && len(out) > q.N {
		out = out[:q.N]
	}
	return out, nil
}

// recordJob is the job a record's file name names (HHMMSS-NAME-ID.json, recordPath); "" when it does not
// have that shape.
func recordJob(file string) string {
	const head, tail = len("150405-"), len("-abcdef.json")
	if len(file) <= head+tail || file[head-1] != '-' || file[len(file)-tail] != '-' {
		return ""
	}
	return file[head : len(file)-tail]
}

// WithCommits fills each record's Commit from the box's diary (the entry of the job's change).
func WithCommits(ctx context.Context, b *box.Box, recs []Record) error {
	want := map[string]bool{}
	for _, r := range recs {
		if r.Entry != "" {
			want[r.Entry] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	es, err := b.Diary(ctx, len(want), func(e diary.Entry) bool { return want[e.ID] })
	if err != nil {
		return err
	}
	by := map[string]string{}
	for _, e := range es {
		by[e.ID] = e.Commit
	}
	for i := range recs {
		recs[i].Commit = by[recs[i].Entry]
	}
	return nil
}

// Nightly is a Due for a run every day at hh:mm local time (of the clock's location).
func Nightly(hh, mm int) func(now time.Time) time.Time {
	return func(now time.Time) time.Time {
		at := time.Date(now.Year(), now.Month(), now.Day(), hh, mm, 0, 0, now.Location())
		if at.After(now) {
			// Yesterday's hh:mm made afresh: AddDate would keep today's wall time, which on a night the
			// clocks go forward past hh:mm is an hour later than yesterday's run, and that run looked missed.
			at = time.Date(now.Year(), now.Month(), now.Day()-1, hh, mm, 0, 0, now.Location())
		}
		return at
	}
}

// ParseClock reads "HH:MM" (24-hour) for Nightly.
func ParseClock(s string) (hh, mm int, err error) {
	t, perr := time.Parse("15:04", s)
	if perr != nil {
		return 0, 0, errs.E("jobs.clock", errs.Usage, "a time of day is HH:MM on a 24-hour clock, like 03:00 (got %q)", s)
	}
	return t.Hour(), t.Minute(), nil
}
