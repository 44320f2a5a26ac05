package app_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/apptest"
	"github.com/boxmem/box/internal/backup"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/passkeytest"
)

// The jobs that change the memory (tidy, merge, cautions) do nothing while the box is frozen: a run the
// scheduler or the owner asks for is refused with Frozen and commits nothing, not even a record; the
// backup push is not held. Once unfrozen, the tidy files the line.
func TestFrozenBoxRunsNoMemoryJob(t *testing.T) {
	ctx := context.Background()
	a := apptest.Open(t, app.Options{})
	if _, err := a.Memory.Remember(ctx, apptest.Owner, memory.RememberInput{Text: "Leo plays chess on Thursdays"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Freeze(ctx, apptest.Local, true); err != nil {
		t.Fatal(err)
	}
	head, _ := a.Box.Git().Head(ctx)
	for _, j := range a.Jobs.Jobs() {
		switch j.Name {
		case "tidy", "merge", "cautions":
			if _, err := a.Jobs.Run(ctx, j.Name, jobs.WhyTrigger); !errs.Is(err, errs.Frozen) {
				t.Errorf("%s on a frozen box: %v", j.Name, err)
			}
		case "backup":
			if j.Hold != nil {
				t.Error("the backup push is held on a frozen box")
			}
		}
	}
	if now, _ := a.Box.Git().Head(ctx); now != head {
		t.Fatal("a job committed on a frozen box")
	}
	if n, err := a.Memory.Waiting(ctx); err != nil || n != 1 {
		t.Fatalf("the inbox holds %d lines on a frozen box (%v)", n, err)
	}
	if _, err := a.Freeze(ctx, apptest.Local, false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Jobs.Run(ctx, "tidy", jobs.WhyTrigger); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.Memory.Waiting(ctx); n != 0 {
		t.Fatalf("the tidy left %d lines after the unfreeze", n)
	}
}

// runJobs runs a as box serve does, with the job runner, until the test ends; it returns once the
// runner has started.
func runJobs(t *testing.T, a *app.App, o app.JobOptions) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- a.Run(ctx, app.ServeOptions{Listener: ln, Rate: -1, Jobs: o, Ready: func(app.Ready) { close(ready) }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
}

// servedBox is a box with the clock c and the backup usb at url (a bare repository made when "").
func servedBox(t *testing.T, c *passkeytest.Clock, url string) *app.App {
	t.Helper()
	ctx := context.Background()
	a, err := app.Init(ctx, t.TempDir(), nil, "true", app.Options{Mode: app.Serve, Now: c.Now, VaultDir: filepath.Join(t.TempDir(), "vault")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if url == "" {
		url = filepath.Join(t.TempDir(), "backup.git")
		gitIn(t, filepath.Dir(url), "init", "-q", "--bare", url)
	}
	if err := a.Backups.Add(ctx, "usb", url, ""); err != nil {
		t.Fatal(err)
	}
	return a
}

func writeHealth(t *testing.T, a *app.App, failures int, notUntil time.Time) {
	t.Helper()
	health := fmt.Sprintf(`{"usb": {"failures": %d, "lastErr": "The push to usb failed", "notUntil": %q}}`, failures, notUntil.Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(a.Root, ".box", "backups.json"), []byte(health), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Commits made while box serve was down are pushed after --backup-after once it starts.
func TestServePushesAtStartWhatWasCommittedWhileItWasDown(t *testing.T) {
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	a := servedBox(t, c, "")
	if _, err := a.Memory.Remember(context.Background(), apptest.Owner, memory.RememberInput{Text: "Leo plays chess on Thursdays"}); err != nil {
		t.Fatal(err)
	}
	runJobs(t, a, app.JobOptions{BackupAfter: time.Hour, Tick: time.Hour})
	if at, why, ok := a.Jobs.Pending("backup"); !ok || !at.Equal(c.Now().Add(time.Hour)) || why != "new commits" {
		t.Fatalf("the backup at start: %v %q %v", at, why, ok)
	}
}

// A retry that came due while box serve was down is armed at start, and a retry time already past
// arms it a little later (the least backoff), never at once and again in a loop.
func TestServeArmsAPastRetryAtStartWithAFloor(t *testing.T) {
	ctx := context.Background()
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	a := servedBox(t, c, "")
	if round, err := a.Backups.PushAll(ctx, false, true); err != nil || round.Failed() > 0 {
		t.Fatalf("push: %+v %v", round, err)
	}
	writeHealth(t, a, 1, c.Now().Add(-time.Minute))
	runJobs(t, a, app.JobOptions{BackupAfter: time.Hour, Tick: time.Hour})
	if at, why, ok := a.Jobs.Pending("backup"); !ok || !at.Equal(c.Now().Add(backup.MinBackoff)) || why != "retry" {
		t.Fatalf("the retry at start: %v %q %v", at, why, ok)
	}
}

// A failing backup's retry, armed after its push, never holds back a push already waiting sooner (the
// commits that came during the run).
func TestARetryKeepsAnEarlierPushWaiting(t *testing.T) {
	ctx := context.Background()
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Down for maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	a := servedBox(t, c, srv.URL+"/box.git")
	writeHealth(t, a, 5, c.Now().Add(10*time.Minute))
	runJobs(t, a, app.JobOptions{BackupAfter: time.Hour, Tick: time.Hour})
	a.Jobs.TriggerOnce("backup", "new commits", time.Minute) // a commit during the run below
	if rec, err := a.Jobs.Run(ctx, "backup", jobs.WhyAsked); err == nil || rec.Error == "" {
		t.Fatalf("the push to a server that is down: %+v %v", rec, err)
	}
	if at, why, ok := a.Jobs.Pending("backup"); !ok || !at.Equal(c.Now().Add(time.Minute)) || why != "new commits" {
		t.Fatalf("after a failed push the next push is at %v (%q %v), want in a minute", at, why, ok)
	}
}
