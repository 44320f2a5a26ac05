package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadOfAPipeNeverWaits: the Read hook measures only regular files, so a named pipe in the project
// is never opened (an open would wait for a writer that never comes). A writer is waiting here, so an
// open would return and the read succeed: the measure must refuse the pipe without opening it.
func TestReadOfAPipeNeverWaits(t *testing.T) {
	f := newFixture(t)
	fifo := filepath.Join(f.project, "logs.pipe")
	var err error
	withWriter(t, fifo, func() { _, _, err = measure(fifo) })
	if err == nil {
		t.Fatal("measure opened and read a named pipe")
	}

	p, _ := json.Marshal(map[string]any{"session_id": "pipe", "cwd": f.project, "hook_event_name": PreToolUse, "tool_name": "Read",
		"tool_input": map[string]any{"file_path": fifo}})
	if res := Run(context.Background(), PreToolUse, p, f.env); res.Out != nil {
		t.Errorf("a Read of a pipe was answered: %+v", res.Out)
	}
	if log, _ := os.ReadFile(filepath.Join(f.box, ".box", "logs", "hooks.log")); strings.Contains(string(log), "over its budget") {
		t.Errorf("the hook ran over its budget:\n%s", log)
	}
}

// TestNoWalkOfTheHomeFolder: a session in the home folder (or at the file system's root) has no project
// to index: no declaration of the owner's files reaches the brief or a search answer, and no cache is written.
func TestNoWalkOfTheHomeFolder(t *testing.T) {
	f := newFixture(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	mustWrite(t, filepath.Join(home, "tools", "h.go"), "package tools\n\nfunc ParseHomeThing() {}\n")
	run := texts(f.session("home", home))
	if got := run(UserPromptSubmit, map[string]any{"prompt": "Rename ParseHomeThing everywhere"}); strings.Contains(got, "h.go") {
		t.Errorf("the brief walked the home folder:\n%s", got)
	}
	if got := run(PreToolUse, map[string]any{"tool_name": "Grep", "tool_input": map[string]any{"pattern": "func ParseHomeThing"}}); got != "" {
		t.Errorf("a search in the home folder was answered from a walk of it:\n%s", got)
	}
	if caches, _ := filepath.Glob(filepath.Join(f.box, ".box", "cache", "names-*.json")); len(caches) > 0 {
		t.Errorf("a name index of the home folder was cached: %v", caches)
	}
	for _, dir := range []string{"/", home, filepath.Dir(home)} {
		if walkable(dir) {
			t.Errorf("%s would be walked as a project", dir)
		}
	}
	if !walkable(f.project) {
		t.Errorf("the project %s would not be walked", f.project)
	}
}

// TestReadsOfProjectFilesNeverWait: what a hook reads from a project (the name index's source files, the
// agent guide) is read only from a regular file and only up to its cap: a pipe named pipe.go and a link
// x.go to /dev/zero end the read at once instead of holding the agent.
func TestReadsOfProjectFilesNeverWait(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.go")
	var err error
	withWriter(t, fifo, func() { _, err = readRegular(fifo, maxCodeSize) })
	if err == nil {
		t.Error("a named pipe was read")
	}
	zero := filepath.Join(dir, "x.go")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if _, err := readRegular(zero, maxCodeSize); err == nil {
		t.Error("a link to /dev/zero was read")
	}
	big := filepath.Join(dir, "big.go")
	mustWrite(t, big, strings.Repeat("x", 11))
	if _, err := readRegular(big, 10); err == nil {
		t.Error("a file over the cap was read")
	}
	if data, err := readRegular(big, 11); err != nil || len(data) != 11 {
		t.Errorf("a file at the cap: %d bytes, %v", len(data), err)
	}
}

// withWriter makes a named pipe at fifo and runs read while a writer waits on it: a read that opens the
// pipe gets a line at once (so it never hangs the test), and one that refuses it leaves the writer
// waiting, released here.
func withWriter(t *testing.T, fifo string, read func()) {
	t.Helper()
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // the writer: its open waits for a reader
		defer close(done)
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			_, _ = w.WriteString("a line\n")
			_ = w.Close()
		}
	}()
	read()
	r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0) // a reader that does not wait lets the writer's open return
	if err != nil {
		t.Fatal(err)
	}
	<-done
	_ = r.Close()
}
