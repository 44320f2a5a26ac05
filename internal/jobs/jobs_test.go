package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	_ "time/tzdata" // the zones a test names, on any machine

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/passkeytest"
)

// set moves a test clock to t.
func newBox(t *testing.T, now func() time.Time) *box.Box {
	t.Helper()
	b, err := box.Init(context.Background(), t.TempDir(), box.InitOptions{HookBinary: "box", Options: box.Options{Now: now}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// writeJob writes one file per run as its change and its record in the same commit.
func writeJob(name string, runs *atomic.Int32) Job {
	return Job{Name: name, About: "writes a file", Run: func(ctx context.Context, r *Run) (Result, error) {
		n := runs.Add(1)
		entry := diary.NewID(r.Now().UTC())
		res := Result{Summary: "wrote a file", Changed: []string{"/_content/x.md"}, Recorded: true, Entry: entry}
		c := box.Change{Actor: r.Actor(), Op: "test", Summary: "the box wrote x", EntryID: entry, Apply: func(tx *box.Tx) error {
			return tx.Write("/_content/x.md", []byte(strings.Repeat("x", int(n))+"\n"))
		}}
		rc := r.RecordChange()
		rc.Apply = func(tx *box.Tx) error { return r.WriteRecord(tx, res) }
		if _, err := r.r.b.DoAll(ctx, c, rc); err != nil {
			return Result{}, err
		}
		return res, nil
	}}
}

func TestRecordIsInTheJobsOwnCommit(t *testing.T) {
	ctx := context.Background()
	b := newBox(t, nil)
	r := New(b, Options{})
	var runs atomic.Int32
	if err := r.Register(writeJob("writer", &runs)); err != nil {
		t.Fatal(err)
	}
	rec, err := r.Run(ctx, "writer", WhyAsked)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := Records(b.Root, 0, nil)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records: %v %v", recs, err)
	}
	got := recs[0]
	if got.ID != rec.ID || got.Job != "writer" || got.Why != WhyAsked || got.Summary != "wrote a file" || got.Seconds < 0 {
		t.Errorf("record: %+v", got)
	}
	// the record and the job's file are in one commit, the newest
	raw, err := b.Git().Run(ctx, nil, "show", "--name-only", "--format=", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	out := string(raw)
	if !strings.Contains(out, "_content/x.md") || !strings.Contains(out, strings.TrimPrefix(got.Path, "/")) {
		t.Errorf("the newest commit holds:\n%s", out)
	}
	// undo of the job's entry takes its change back and leaves the record
	if _, err := b.Undo(ctx, got.Entry, box.Actor{Who: "owner"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.Root, "_content/x.md")); !os.IsNotExist(err) {
		t.Errorf("undo left the job's file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.Root, filepath.FromSlash(got.Path))); err != nil {
		t.Errorf("undo took the record: %v", err)
	}
	if err := WithCommits(ctx, b, recs); err != nil || recs[0].Commit == "" {
		t.Errorf("commit of the record: %q %v", recs[0].Commit, err)
	}
}

func TestAFailedRunIsRecordedAndNothingElseChanges(t *testing.T) {
	ctx := context.Background()
	b := newBox(t, nil)
	r := New(b, Options{})
	if err := r.Register(Job{Name: "broken", Run: func(ctx context.Context, run *Run) (Result, error) {
		return Result{}, errs.E("test", errs.Other, "the remote went away")
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, "broken", WhyAsked); err == nil {
		t.Fatal("a failing job reported no error")
	}
	recs, _ := Records(b.Root, 0, nil)
	if len(recs) != 1 || !strings.Contains(recs[0].Error, "the remote went away") {
		t.Fatalf("records %+v", recs)
	}
	if _, err := r.Run(ctx, "nope", WhyAsked); !errs.Is(err, errs.NotFound) || !strings.Contains(err.Error(), "broken") {
		t.Errorf("an unknown job: %v", err)
	}
}

func TestAJobNeverOverlapsItself(t *testing.T) {
	ctx := context.Background()
	b := newBox(t, nil)
	inside := make(chan struct{})
	release := make(chan struct{})
	r := New(b, Options{})
	if err := r.Register(Job{Name: "slow", Run: func(ctx context.Context, run *Run) (Result, error) {
		close(inside)
		<-release
		return Result{Summary: "done", Nothing: true}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx, "slow", WhyAsked); done <- err }()
	<-inside
	// a second runner stands for another process (box jobs run while box serve runs it)
	other := New(b, Options{})
	if err := other.Register(Job{Name: "slow", Run: func(context.Context, *Run) (Result, error) {
		t.Error("ran while the first run was going on")
		return Result{}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Run(ctx, "slow", WhyAsked); !errs.Is(err, errs.Busy) {
		t.Errorf("a second run at once: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestAKilledRunIsRecordedAtTheNextStartAndRunsAgain(t *testing.T) {
	ctx := context.Background()
	b := newBox(t, nil)
	r := New(b, Options{})
	var runs atomic.Int32
	j := writeJob("writer", &runs)
	if err := r.Register(j); err != nil {
		t.Fatal(err)
	}
	// a run that was killed leaves its marker and no record
	run := &Run{Job: "writer", Why: WhyTrigger, ID: "killed", Start: time.Now(), r: r}
	if err := r.mark(run); err != nil {
		t.Fatal(err)
	}
	next := New(b, Options{Tick: time.Hour})
	if err := next.Register(j); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	next.Start(cctx, 0)
	// Stop once the run again is recorded, not once it began: cancelled mid-run, its commit would
	// rightly fail with "context canceled".
	rerun := func(rec Record) bool { return rec.Why == WhyInterrupted }
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if recs, _ := Records(b.Root, 0, rerun); len(recs) > 0 {
			break
		}
	}
	cancel()
	next.Wait()
	recs, _ := Records(b.Root, 0, nil)
	var interrupted, ran bool
	for _, rec := range recs {
		interrupted = interrupted || rec.ID == "killed" && strings.Contains(rec.Error, "interrupted")
		ran = ran || rec.Why == WhyInterrupted && rec.Error == ""
	}
	if !interrupted || !ran || runs.Load() != 1 {
		t.Fatalf("after a killed run: records %+v, runs %d", recs, runs.Load())
	}
	if _, err := os.Stat(next.markerPath("writer")); !os.IsNotExist(err) {
		t.Errorf("the marker stayed: %v", err)
	}
}

// TestARunStoppedByShutdownIsNoFailure: box serve stopping while a job runs commits no failed record
// ("context canceled" on Today); the next start records the run as stopped, with no error (a quiet job,
// as the backup push, not at all), and runs the job again.
func TestARunStoppedByShutdownIsNoFailure(t *testing.T) {
	for _, c := range []struct {
		quiet  bool
		why    string
		record bool
	}{{false, WhyTrigger, true}, {true, WhyTrigger, false}, {true, WhyAsked, true}} {
		quiet := c.quiet
		t.Run(fmt.Sprintf("quiet=%v,why=%s", quiet, c.why), func(t *testing.T) {
			b := newBox(t, nil)
			r := New(b, Options{Quiet: time.Millisecond})
			started := make(chan struct{})
			var once sync.Once
			if err := r.Register(Job{Name: "slow", Quiet: quiet, Run: func(ctx context.Context, _ *Run) (Result, error) {
				once.Do(func() { close(started) })
				<-ctx.Done()
				return Result{}, ctx.Err()
			}}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			r.Start(ctx, time.Hour)
			r.Trigger("slow", c.why, 0)
			<-started
			cancel()
			r.Wait()
			if recs, err := Records(b.Root, 0, nil); err != nil || len(recs) != 0 {
				t.Fatalf("a run stopped by shutdown was recorded at once: %+v %v", recs, err)
			}
			next := New(b, Options{Tick: time.Hour})
			var again atomic.Int32
			if err := next.Register(Job{Name: "slow", Quiet: quiet, Run: func(context.Context, *Run) (Result, error) {
				again.Add(1)
				return Result{Summary: "done", Nothing: true}, nil
			}}); err != nil {
				t.Fatal(err)
			}
			nctx, ncancel := context.WithCancel(context.Background())
			next.Start(nctx, 0)
			for deadline := time.Now().Add(30 * time.Second); again.Load() == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			}
			ncancel()
			next.Wait()
			recs, err := Records(b.Root, 0, func(rec Record) bool { return rec.Why != WhyInterrupted || rec.Summary != "done" })
			if err != nil || again.Load() != 1 {
				t.Fatalf("the job did not run again at the next start: %d runs, %v", again.Load(), err)
			}
			// A quiet job's own run leaves no news; an asked or scheduled one is always recorded.
			switch {
			case !c.record && len(recs) != 0:
				t.Fatalf("a quiet job stopped with the box left news: %+v", recs)
			case c.record && (len(recs) != 1 || recs[0].Error != "" || !strings.Contains(recs[0].Summary, "stopped before it finished")):
				t.Fatalf("the stopped run's record: %+v", recs)
			}
			if _, err := os.Stat(next.markerPath("slow")); !os.IsNotExist(err) {
				t.Errorf("the marker stayed: %v", err)
			}
		})
	}
}

// On the night the clocks go forward over the nightly time (03:00 in Helsinki on 29 March 2026 is
// 04:00), the run of the night before is not taken for a missed one: the job runs once a night.
func TestNightlyOnTheNightTheClocksGoForward(t *testing.T) {
	helsinki, err := time.LoadLocation("Europe/Helsinki")
	if err != nil {
		t.Fatal(err)
	}
	at := Nightly(3, 0)
	for _, c := range []struct{ now, want time.Time }{
		{time.Date(2026, 3, 29, 0, 10, 0, 0, helsinki), time.Date(2026, 3, 28, 3, 0, 0, 0, helsinki)},
		{time.Date(2026, 3, 29, 4, 30, 0, 0, helsinki), time.Date(2026, 3, 29, 4, 0, 0, 0, helsinki)}, // 03:00 does not exist: 04:00
		{time.Date(2026, 3, 30, 2, 0, 0, 0, helsinki), time.Date(2026, 3, 29, 4, 0, 0, 0, helsinki)},
		{time.Date(2026, 10, 25, 3, 30, 0, 0, helsinki), time.Date(2026, 10, 25, 3, 0, 0, 0, helsinki)}, // the hour twice: once
	} {
		if got := at(c.now); !got.Equal(c.want) {
			t.Errorf("at %v the last nightly time is %v, want %v", c.now, got, c.want)
		}
	}
}

func TestNightlyRunsOnceAndAMissedNightRunsAtStart(t *testing.T) {
	ctx := context.Background()
	loc := time.FixedZone("Lisbon", 0)
	c := passkeytest.ClockAt(time.Date(2026, 2, 28, 12, 0, 0, 0, loc))
	b := newBox(t, c.Now)
	var runs atomic.Int32
	j := writeJob("nightly", &runs)
	j.Due = func(_ context.Context, now time.Time) time.Time { return Nightly(3, 0)(now) }
	r := New(b, Options{Now: c.Now, Tick: time.Hour})
	if err := r.Register(j); err != nil {
		t.Fatal(err)
	}
	// the box was made at noon: last night's 03:00 is before it, so nothing is due
	if why, ok := r.due(context.Background(), j); ok {
		t.Fatalf("due before the box existed (%s)", why)
	}
	// two days later at 10:00 (the server was down at 03:00): a missed run
	c.Set(time.Date(2026, 3, 2, 10, 0, 0, 0, loc))
	if why, ok := r.due(context.Background(), j); !ok || why != WhyMissed {
		t.Fatalf("missed night: %q %v", why, ok)
	}
	if _, err := r.Run(ctx, "nightly", WhyMissed); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.due(context.Background(), j); ok {
		t.Fatal("due again right after it ran")
	}
	// the next night, on time
	c.Set(time.Date(2026, 3, 3, 3, 0, 5, 0, loc))
	if why, ok := r.due(context.Background(), j); !ok || why != WhySchedule {
		t.Fatalf("the next night: %q %v", why, ok)
	}
}

func TestATriggerIsDebouncedAndYieldsToWrites(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	// The runner's clock is the test's: "in quick succession" and "quiet" hold however slowly a loaded
	// machine runs the loop below.
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := passkeytest.ClockAt(t0)
	b := newBox(t, c.Now)
	var runs atomic.Int32
	r := New(b, Options{Now: c.Now, Tick: time.Hour, Quiet: 300 * time.Millisecond})
	if err := r.Register(writeJob("tidy", &runs)); err != nil {
		t.Fatal(err)
	}
	r.Start(ctx, 0)
	defer func() { cancel(); r.Wait() }()
	for range 5 { // five lines in quick succession: one run, after the last
		r.Wrote([]string{"/_content/inbox/x.md"})
		r.Trigger("tidy", WhyTrigger, 200*time.Millisecond)
		c.Advance(50 * time.Millisecond)
	}
	// The last trigger's debounce is over, the quiet after the last write is not: no run yet.
	c.Set(t0.Add(200*time.Millisecond + 250*time.Millisecond))
	time.Sleep(300 * time.Millisecond)
	if n := runs.Load(); n != 0 {
		t.Fatalf("ran %d times before the writes went quiet", n)
	}
	c.Set(t0.Add(200*time.Millisecond + 300*time.Millisecond))
	for deadline := time.Now().Add(30 * time.Second); runs.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("runs: %d", n)
	}
	c.Advance(time.Second)
	time.Sleep(400 * time.Millisecond)
	if runs.Load() != 1 {
		t.Errorf("ran again without a trigger: %d", runs.Load())
	}
}

func TestRecordsSkipWhatIsNotARecord(t *testing.T) {
	b := newBox(t, nil)
	dir := filepath.Join(b.Root, "_bookkeeping", "jobs", "2026-03-01")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	good, _ := json.Marshal(Record{ID: "a", Job: "tidy", Start: time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)})
	for name, data := range map[string][]byte{"030000-tidy-a.json": good, "bad.json": []byte("{"), "notes.txt": []byte("x")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := Records(b.Root, 0, nil)
	if err != nil || len(recs) != 1 || recs[0].Path != "/_bookkeeping/jobs/2026-03-01/030000-tidy-a.json" {
		t.Fatalf("records: %+v %v", recs, err)
	}
}

func TestRegisterRefusesBadNames(t *testing.T) {
	r := New(newBox(t, nil), Options{})
	run := func(context.Context, *Run) (Result, error) { return Result{}, nil }
	for _, name := range []string{"", "Tidy", "a b", "../x", strings.Repeat("a", 41)} {
		if err := r.Register(Job{Name: name, Run: run}); !errs.Is(err, errs.Invalid) {
			t.Errorf("%q: %v", name, err)
		}
	}
	if err := r.Register(Job{Name: "tidy", Run: run}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(Job{Name: "tidy", Run: run}); !errs.Is(err, errs.Exists) {
		t.Errorf("twice: %v", err)
	}
}

// A job whose Due says "now" whatever it did (its run could not clear what made it due) runs at most once
// a tick, never again in the same wake-up: no hot loop of records.
func TestAJobThatStaysDueWaitsATick(t *testing.T) {
	ctx := context.Background()
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	b := newBox(t, c.Now)
	var runs atomic.Int32
	j := writeJob("stuck", &runs)
	j.Due = func(_ context.Context, now time.Time) time.Time { return now }
	r := New(b, Options{Now: c.Now, Tick: 30 * time.Second})
	if err := r.Register(j); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute) // the box's own start is in the past
	r.pass(ctx)
	r.pass(ctx)
	c.Advance(10 * time.Second)
	r.pass(ctx)
	if n := runs.Load(); n != 1 {
		t.Fatalf("runs within one tick: %d, want 1", n)
	}
	c.Advance(30 * time.Second)
	r.pass(ctx)
	if n := runs.Load(); n != 2 {
		t.Fatalf("runs after a tick: %d, want 2", n)
	}
}

// A due check reads only the records since the job's due time: a day folder older than that is never
// opened (here an old folder holds a record that would say the job ran; a check that read the whole
// history would find it and call the job not due).
func TestADueCheckReadsOnlyTheDaysSinceItsTime(t *testing.T) {
	loc := time.UTC
	c := passkeytest.ClockAt(time.Date(2026, 2, 1, 12, 0, 0, 0, loc))
	b := newBox(t, c.Now)
	var runs atomic.Int32
	j := writeJob("nightly", &runs)
	j.Due = func(_ context.Context, now time.Time) time.Time { return Nightly(3, 0)(now) }
	r := New(b, Options{Now: c.Now, Tick: time.Minute})
	if err := r.Register(j); err != nil {
		t.Fatal(err)
	}
	c.Set(time.Date(2026, 3, 2, 3, 0, 10, 0, loc))
	old := filepath.Join(b.Root, "_bookkeeping", "jobs", "2026-02-10")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	misfiled := `{"id":"abcdef","job":"nightly","why":"scheduled","start":"2026-03-02T03:00:05Z","seconds":0,"summary":"","changed":[]}`
	if err := os.WriteFile(filepath.Join(old, "030005-nightly-abcdef.json"), []byte(misfiled), 0o644); err != nil {
		t.Fatal(err)
	}
	if why, ok := r.due(context.Background(), j); !ok || why != WhySchedule {
		t.Fatalf("due: %q %v (an old day folder was read)", why, ok)
	}
	// Find by job reads no other job's record, and the whole history when asked.
	if recs, err := Find(b.Root, Query{Job: "nightly"}); err != nil || len(recs) != 1 {
		t.Fatalf("find all: %+v %v", recs, err)
	}
	if recs, err := Find(b.Root, Query{Job: "other"}); err != nil || len(recs) != 0 {
		t.Fatalf("find another job: %+v %v", recs, err)
	}
}

// A trigger whose run is refused because the job runs in another process (box jobs run) is not lost: it
// waits and runs once that run is over.
func TestATriggerRefusedBusyIsKept(t *testing.T) {
	ctx := context.Background()
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	b := newBox(t, c.Now)
	var runs atomic.Int32
	r := New(b, Options{Now: c.Now, Tick: time.Hour})
	if err := r.Register(writeJob("tidy", &runs)); err != nil {
		t.Fatal(err)
	}
	other := New(b, Options{Now: c.Now}) // another process's runner holds the job's lock
	unlock, err := other.lockJob("tidy")
	if err != nil {
		t.Fatal(err)
	}
	r.Trigger("tidy", WhyTrigger, 0)
	r.pass(ctx)
	if runs.Load() != 0 {
		t.Fatal("ran while another run held the lock")
	}
	unlock()
	c.Advance(r.opts.Quiet)
	r.pass(ctx)
	if runs.Load() != 1 {
		t.Fatalf("the refused trigger was lost: %d runs", runs.Load())
	}
}

// Run returns the record the job committed, not one measured again after the commit.
func TestRunReturnsTheCommittedRecord(t *testing.T) {
	ctx := context.Background()
	c := passkeytest.NewClock()
	b := newBox(t, c.Now)
	var runs atomic.Int32
	j := writeJob("tidy", &runs)
	inner := j.Run
	j.Run = func(ctx context.Context, run *Run) (Result, error) {
		res, err := inner(ctx, run)
		c.Advance(3 * time.Second) // time passes after the commit
		return res, err
	}
	r := New(b, Options{Now: c.Now})
	if err := r.Register(j); err != nil {
		t.Fatal(err)
	}
	rec, err := r.Run(ctx, "tidy", WhyAsked)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(b.Root, filepath.FromSlash(strings.TrimPrefix(rec.Path, "/"))))
	if err != nil {
		t.Fatal(err)
	}
	var stored Record
	if err := json.Unmarshal(data, &stored); err != nil || stored.Seconds != rec.Seconds {
		t.Fatalf("returned %v s, stored %v s (%v)", rec.Seconds, stored.Seconds, err)
	}
}

// A commit someone else made while a run is going on still makes the next run wait (it yields to
// writes); the runner's own commits, which carry a record, do not.
func TestWritesDuringARunAreHeard(t *testing.T) {
	c := passkeytest.NewClock()
	b := newBox(t, c.Now)
	r := New(b, Options{Now: c.Now, Quiet: 2 * time.Second})
	r.Wrote([]string{"/_content/inbox/2026-03-02.md", RecordsDir + "/2026-03-02/100000-tidy-abcdef.json"})
	if r.yielding() {
		t.Fatal("the runner's own commit made it yield")
	}
	unlock, err := r.lockJob("merge") // a run in flight
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	r.Wrote([]string{"/_content/memory/notes/entity-leo.md"})
	if !r.yielding() {
		t.Fatal("an owner's write during a run was not heard")
	}
	c.Advance(3 * time.Second)
	if r.yielding() {
		t.Fatal("still yielding after the quiet time")
	}
}

// A job whose Hold refuses (a frozen or locked box) is not run by a trigger nor asked for, writes no
// record, and its trigger waits without waking the scheduler before the next tick; once the hold is
// lifted, the trigger runs.
func TestAHeldJobWaitsForItsHold(t *testing.T) {
	ctx := context.Background()
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	b := newBox(t, c.Now)
	var runs atomic.Int32
	var frozen atomic.Bool
	frozen.Store(true)
	j := writeJob("tidy", &runs)
	j.Hold = func(context.Context) error {
		if frozen.Load() {
			return errs.E("test", errs.Frozen, "The box is frozen.")
		}
		return nil
	}
	r := New(b, Options{Now: c.Now, Tick: 30 * time.Second})
	if err := r.Register(j); err != nil {
		t.Fatal(err)
	}
	head, _ := b.Git().Head(ctx)
	r.Trigger("tidy", WhyTrigger, 0)
	p := r.pass(ctx)
	if runs.Load() != 0 || !p.held["tidy"] {
		t.Fatalf("a held job ran (%d runs, held %v)", runs.Load(), p.held)
	}
	if _, _, ok := r.Pending("tidy"); !ok {
		t.Fatal("the held job's trigger was dropped")
	}
	if w := r.wait(p); w != 30*time.Second {
		t.Errorf("the scheduler sleeps %v with a held trigger due, want the tick", w)
	}
	if _, err := r.Run(ctx, "tidy", WhyAsked); !errs.Is(err, errs.Frozen) {
		t.Errorf("an asked run of a held job: %v", err)
	}
	if now, _ := b.Git().Head(ctx); now != head || runs.Load() != 0 {
		t.Fatalf("a held job committed (%d runs)", runs.Load())
	}
	frozen.Store(false)
	c.Advance(30 * time.Second)
	r.pass(ctx)
	if runs.Load() != 1 {
		t.Fatalf("the trigger did not run once the hold was lifted: %d runs", runs.Load())
	}
}

// TriggerOnce keeps the earlier of a waiting trigger and the new one: a retry waiting an hour off does
// not hold back a push asked for in 30 s, and a later trigger does not move an earlier one.
func TestTriggerOnceKeepsTheEarlierTime(t *testing.T) {
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	r := New(newBox(t, c.Now), Options{Now: c.Now})
	r.TriggerOnce("backup", "retry", time.Hour)
	r.TriggerOnce("backup", "new commits", 30*time.Second)
	if at, why, ok := r.Pending("backup"); !ok || !at.Equal(c.Now().Add(30*time.Second)) || why != "new commits" {
		t.Fatalf("pending: %v %q %v", at, why, ok)
	}
	r.TriggerOnce("backup", "retry", time.Hour)
	if at, why, _ := r.Pending("backup"); !at.Equal(c.Now().Add(30*time.Second)) || why != "new commits" {
		t.Fatalf("a later trigger moved the earlier one: %v %q", at, why)
	}
}

// While the owner's writes are not yet quiet, the scheduler sleeps until they are (or the trigger's own
// time, if later), never waking every few milliseconds to find it must yield again.
func TestTheSchedulerSleepsUntilTheWritesAreQuiet(t *testing.T) {
	ctx := context.Background()
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	b := newBox(t, c.Now)
	var runs atomic.Int32
	r := New(b, Options{Now: c.Now, Tick: 30 * time.Second, Quiet: 2 * time.Second})
	if err := r.Register(writeJob("tidy", &runs)); err != nil {
		t.Fatal(err)
	}
	r.Wrote([]string{"/_content/inbox/2026-03-02.md"})
	r.Trigger("tidy", WhyTrigger, 0)
	p := r.pass(ctx)
	if runs.Load() != 0 || !p.yielded {
		t.Fatalf("ran while the owner wrote: %d runs, yielded %v", runs.Load(), p.yielded)
	}
	if w := r.wait(p); w != 2*time.Second {
		t.Errorf("sleeps %v with a due trigger and writes quiet in 2 s", w)
	}
	r.Trigger("tidy", WhyTrigger, 5*time.Second) // a trigger later than the quiet: its own time
	if w := r.wait(r.pass(ctx)); w != 5*time.Second {
		t.Errorf("sleeps %v with the trigger in 5 s", w)
	}
	c.Advance(500 * time.Millisecond)
	r.Trigger("tidy", WhyTrigger, 0)
	if w := r.wait(r.pass(ctx)); w != 1500*time.Millisecond {
		t.Errorf("sleeps %v with the writes quiet in 1.5 s", w)
	}
}

// A job that runs apart (a push waiting on a slow remote) holds no other job back: the tidy triggered
// with it runs while the push is still going on, and the push is not started twice meanwhile.
func TestARunApartHoldsNoOtherJobBack(t *testing.T) {
	ctx := context.Background()
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	b := newBox(t, c.Now)
	release := make(chan struct{})
	var pushes, runs atomic.Int32
	r := New(b, Options{Now: c.Now, Tick: time.Hour})
	if err := r.Register(Job{Name: "backup", Apart: true, Quiet: true, Run: func(context.Context, *Run) (Result, error) {
		pushes.Add(1)
		<-release
		return Result{Nothing: true}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(writeJob("tidy", &runs)); err != nil {
		t.Fatal(err)
	}
	r.Trigger("backup", "new commits", 0)
	r.Trigger("tidy", WhyTrigger, 0)
	done := make(chan passed, 1)
	go func() { done <- r.pass(ctx) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // a bound for a pass held by the push, which never ends here
		close(release)
		t.Fatal("the pass waited for the push")
	}
	if runs.Load() != 1 {
		t.Fatalf("the tidy ran %d times beside the push", runs.Load())
	}
	r.Trigger("backup", "new commits", 0) // a commit while the push is going on
	if p := r.pass(ctx); !p.held["backup"] {
		t.Errorf("the push going on was not held: %+v", p)
	}
	close(release)
	r.Wait()
	if pushes.Load() != 1 {
		t.Fatalf("%d pushes at once", pushes.Load())
	}
	if _, _, ok := r.Pending("backup"); !ok {
		t.Fatal("the commit's trigger was lost while the push went on")
	}
	r.pass(ctx)
	r.Wait()
	if pushes.Load() != 2 {
		t.Fatalf("the waiting trigger did not push after the first: %d pushes", pushes.Load())
	}
}

// hookHandler is a logger that runs fn on every line it is given.
type hookHandler struct{ fn func(msg string) }

func (h hookHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h hookHandler) Handle(_ context.Context, rec slog.Record) error {
	h.fn(rec.Message)
	return nil
}
func (h hookHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h hookHandler) WithGroup(string) slog.Handler      { return h }

// The end of a scheduled run apart clears only its own mark: a run of the same job asked for after it
// returned (here, while its failure is logged) is still running once the scheduler's run is over.
func TestARunApartClearsOnlyItsOwnMark(t *testing.T) {
	ctx := context.Background()
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	b := newBox(t, c.Now)
	started, release, asked := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var runs atomic.Int32
	var r *Runner
	r = New(b, Options{Now: c.Now, Tick: time.Hour, Logger: slog.New(hookHandler{func(msg string) {
		if msg == "jobs: a run failed" { // the scheduled run has returned: a newer run starts
			go func() { _, err := r.Run(ctx, "backup", WhyAsked); asked <- err }()
			<-started
		}
	}})})
	if err := r.Register(Job{Name: "backup", Apart: true, Run: func(context.Context, *Run) (Result, error) {
		if runs.Add(1) == 1 {
			return Result{}, errs.E("test", errs.Other, "the remote did not answer")
		}
		close(started)
		<-release
		return Result{Summary: "pushed"}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	r.Trigger("backup", "new commits", 0)
	r.pass(ctx)
	r.Wait() // the scheduled run and its goroutine are over
	if !r.IsRunning("backup") {
		t.Error("the asked run going on is not marked as running")
	}
	close(release)
	if err := <-asked; err != nil {
		t.Fatal(err)
	}
	if r.IsRunning("backup") {
		t.Error("a finished run is still marked")
	}
}
