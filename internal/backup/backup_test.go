package backup_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxmem/box/internal/backup"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/passkeytest"
)

// repo is a repository with one commit on main, made through the box's own git calls.
func repo(t *testing.T) *git.Repo {
	t.Helper()
	ctx := context.Background()
	r := git.Open(t.TempDir())
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "a.md"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(ctx, "a.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(ctx, "one", nil); err != nil {
		t.Fatal(err)
	}
	return r
}

// backups are r's, with their health in a file of the test's and no vault.
func backups(t *testing.T, r *git.Repo, cfg backup.Config) (*backup.Backups, string) {
	t.Helper()
	health := filepath.Join(t.TempDir(), "backups.json")
	cfg.Repo, cfg.HealthFile, cfg.HasVault = r, health, func() bool { return false }
	return backup.New(cfg), health
}

// pushAll is PushAll with a bound far beyond any push here, so a push that never ends fails the test.
func pushAll(t *testing.T, b *backup.Backups, asked bool) backup.Round {
	t.Helper()
	type result struct {
		round backup.Round
		err   error
	}
	done := make(chan result, 1)
	go func() {
		round, err := b.PushAll(context.Background(), false, asked)
		done <- result{round, err}
	}()
	select {
	case res := <-done:
		if res.err != nil || len(res.round.Pushed) != 1 {
			t.Fatalf("push: %+v %v", res.round, res.err)
		}
		return res.round
	case <-time.After(2 * time.Minute):
		t.Fatal("the push never ended")
	}
	return backup.Round{}
}

func status(t *testing.T, b *backup.Backups) backup.Status {
	t.Helper()
	st, err := b.Status(context.Background())
	if err != nil || len(st) != 1 {
		t.Fatalf("status: %+v %v", st, err)
	}
	return st[0]
}

// A push that neither ends nor fails (here an ssh whose server never answers, and which keeps no
// output of git's open) is stopped at PushTimeout, and the failure is retried later.
func TestAPushThatHangsIsStopped(t *testing.T) {
	silentSSH(t)
	r := repo(t)
	if err := r.AddRemote(context.Background(), "far", "ssh://backup.example/srv/box.git"); err != nil {
		t.Fatal(err)
	}
	b, _ := backups(t, r, backup.Config{PushTimeout: 300 * time.Millisecond})
	p := pushAll(t, b, false).Pushed[0]
	if !strings.Contains(p.Error, "did not finish within 300ms") || !p.New {
		t.Fatalf("a push that hangs: %+v", p)
	}
	if s := status(t, b); !s.Failing || s.Stopped || s.NextRetry.IsZero() {
		t.Fatalf("status after a push that hung: %+v", s)
	}
}

// A push stopped by its caller (box serve stopping) is no failure of the remote: no news for Today or the
// diary, no backoff, and the next remote is not tried with the ended context.
func TestAPushStoppedByItsCallerIsNoFailure(t *testing.T) {
	silentSSH(t)
	r := repo(t)
	for _, name := range []string{"far", "farther"} {
		if err := r.AddRemote(context.Background(), name, "ssh://backup.example/srv/"+name+".git"); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := backups(t, r, backup.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	round, err := b.PushAll(ctx, false, false)
	if !errors.Is(err, context.Canceled) || round.Worth() || len(round.Pushed) != 0 {
		t.Fatalf("a push stopped by its caller: %+v %v", round, err)
	}
	st, err := b.Status(context.Background())
	if err != nil || len(st) != 2 || st[0].Failing || st[1].Failing {
		t.Fatalf("status after a stopped push: %+v %v", st, err)
	}
}

// silentSSH puts first on PATH an ssh that reads what git sends until git is gone and answers nothing: a
// push to an ssh:// remote that neither ends nor fails.
func silentSSH(t *testing.T) {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte("#!/bin/sh\nexec 2>&-\nexec cat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// failing is a git server over http that answers every request with the status code and text next
// gives, after calling during (a push that takes time).
func failing(t *testing.T, r *git.Repo, next func() (int, string), during func()) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		during()
		code, text := next()
		http.Error(w, text, code)
	}))
	t.Cleanup(srv.Close)
	if err := r.AddRemote(context.Background(), "web", srv.URL+"/box.git"); err != nil {
		t.Fatal(err)
	}
}

// The backoff after a failed push counts from the end of the attempt: a push that took ten minutes to
// fail is not tried again the moment it ends.
func TestBackoffCountsFromTheEndOfThePush(t *testing.T) {
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	r := repo(t)
	failing(t, r, func() (int, string) { return http.StatusServiceUnavailable, "Down for maintenance" }, func() { c.Advance(10 * time.Minute) })
	b, _ := backups(t, r, backup.Config{Now: c.Now})
	if p := pushAll(t, b, false).Pushed[0]; p.Error == "" {
		t.Fatalf("the push went through: %+v", p)
	}
	if s := status(t, b); !s.NextRetry.Equal(c.Now().Add(backup.Backoff(1))) {
		t.Fatalf("retry at %v, want %v (the push ended at %v)", s.NextRetry, c.Now().Add(backup.Backoff(1)), c.Now())
	}
}

// One outage is news once: a failure whose sentence differs from the last only in its timings (a time
// the server gives, curl's "after 0 ms") is the same failure; another reason, or another status, is news
// again.
func TestTheSameFailureIsNewsOnce(t *testing.T) {
	r := repo(t)
	var round atomic.Int32
	failing(t, r, func() (int, string) {
		switch n := round.Load(); {
		case n < 3:
			return http.StatusServiceUnavailable, fmt.Sprintf("Down for maintenance, back in %d minutes", 30-10*n)
		case n < 5:
			return http.StatusBadGateway, fmt.Sprintf("Upstream answered HTTP %d", 502+n-3) // 502, then 503
		}
		return http.StatusUnauthorized, "Unauthorized"
	}, func() {})
	b, _ := backups(t, r, backup.Config{})
	var news []bool
	for i := range 6 {
		round.Store(int32(i))
		p := pushAll(t, b, true).Pushed[0]
		if p.Error == "" {
			t.Fatalf("the push went through: %+v", p)
		}
		news = append(news, p.New)
	}
	if fmt.Sprint(news) != "[true false false true true true]" {
		t.Fatalf("news at each failure: %v, want [true false false true true true]", news)
	}
}

// What is kept of a remote no longer listed (removed by git remote remove) arms no retry, and is dropped:
// its retry time, long past, would otherwise re-arm the backup job at once, again and again.
func TestARemovedRemoteArmsNoRetry(t *testing.T) {
	ctx := context.Background()
	c := passkeytest.ClockAt(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	r := repo(t)
	bare := filepath.Join(t.TempDir(), "box.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if err := r.AddRemote(ctx, "usb", bare); err != nil {
		t.Fatal(err)
	}
	b, health := backups(t, r, backup.Config{Now: c.Now})
	stale := fmt.Sprintf(`{"gone": {"failures": 3, "lastErr": "The push to gone failed", "notUntil": %q}}`, c.Now().Add(-time.Hour).Format(time.RFC3339))
	if err := os.WriteFile(health, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	if at := b.NextRetry(ctx); !at.IsZero() {
		t.Fatalf("a removed remote arms a retry at %v", at)
	}
	if data, _ := os.ReadFile(health); strings.Contains(string(data), "gone") {
		t.Fatalf("the removed remote's health is kept: %s", data)
	}
	if err := os.WriteFile(health, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	if p := pushAll(t, b, false).Pushed[0]; p.Remote != "usb" || p.Error != "" {
		t.Fatalf("push: %+v", p)
	}
	if data, _ := os.ReadFile(health); strings.Contains(string(data), "gone") {
		t.Fatalf("a round of pushes kept the removed remote's health: %s", data)
	}
}
