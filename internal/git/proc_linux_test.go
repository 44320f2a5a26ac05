package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeGit is a git that starts a helper (sleep 30) holding its output open, as git-remote-http or ssh
// can, writes the helper's pid to the returned file, prints out and then runs tail (exit 0, or waits).
func fakeGit(t *testing.T, tail string) (*Repo, string) {
	t.Helper()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "helper.pid")
	bin := filepath.Join(dir, "git")
	script := fmt.Sprintf("#!/bin/sh\nsleep 30 &\necho $! > %s.tmp && mv %s.tmp %s\necho out\n%s\n", pidFile, pidFile, pidFile, tail)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the helper is never left behind by a failed test
		if pid, err := helperPid(pidFile); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return &Repo{Dir: dir, Bin: bin}, pidFile
}

func helperPid(pidFile string) (int, error) {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// alive reports whether pid runs: it exists and is not a zombie (the container's init may never reap it).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, ok := strings.Cut(string(data), ") ")
	return ok && !strings.HasPrefix(after, "Z") && !strings.HasPrefix(after, "X")
}

// A git that succeeded succeeds with its output, though a helper it left still holds that output open:
// the command ends waitDelay after git, not when the helper does, and not as a failure.
func TestRunSucceedsThoughAHelperHoldsItsOutput(t *testing.T) {
	r, _ := fakeGit(t, "exit 0")
	start := time.Now()
	out, err := r.run(context.Background(), call{noRepo: true}, "status")
	if err != nil || string(out) != "out\n" {
		t.Fatalf("run: %q, %v", out, err)
	}
	if d := time.Since(start); d > 20*time.Second { // waitDelay is 2 s; the helper sleeps 30
		t.Fatalf("run took %s: it waited for the helper", d)
	}
}

// A command whose context ends kills git's whole process group: a helper git started dies with it.
func TestRunCancelKillsGitsHelpers(t *testing.T) {
	r, pidFile := fakeGit(t, "wait")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.run(ctx, call{noRepo: true}, "push")
		done <- err
	}()
	pid := 0
	for deadline := time.Now().Add(20 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the fake git never started its helper")
		}
		pid, _ = helperPid(pidFile)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a command whose context ended succeeded")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the command went on after its context ended")
	}
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("git's helper (pid %d) outlived the cancelled command", pid)
		}
	}
}
