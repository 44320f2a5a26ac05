package box

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// The cross-process tests re-run this test binary as a child writer (TestMain sees BOX_TEST_CHILD).
func TestMain(m *testing.M) {
	if os.Getenv("BOX_TEST_CHILD") == "writer" {
		os.Exit(childWriter(os.Args[len(os.Args)-3], os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

// childContent is what a child writes to path: big enough that a torn write would show.
func childContent(path string) string {
	return strings.Repeat(path+" — the whole line, every byte of it\n", 64)
}

// childWriter writes count files (count 0 = until killed) named prefix-i and prints "ack PATH" after
// each Do returns.
func childWriter(root, prefix, count string) int {
	n, _ := strconv.Atoi(count)
	b, err := OpenWith(root, spoolOptions())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer b.Close()
	out := bufio.NewWriter(os.Stdout)
	for i := 0; n == 0 || i < n; i++ {
		p := fmt.Sprintf("/_content/p/%s-%04d.md", prefix, i)
		args, _ := json.Marshal(writeArgs{Path: p, Data: childContent(p)})
		if _, err := b.Do(context.Background(), Change{Actor: Actor{Who: "child " + prefix, Via: "test"}, Op: "remember",
			Summary: "wrote " + p, Spool: &SpoolOp{Name: "write", Args: args}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(out, "ack %s\n", p)
		out.Flush()
	}
	return 0
}

type writeArgs struct{ Path, Data string }

// spoolOptions registers the one spoolable op the tests use: write a file.
func spoolOptions() Options {
	return Options{Spool: map[string]SpoolFunc{"write": func(raw json.RawMessage) (func(*Tx) error, error) {
		var a writeArgs
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		return write(a.Path, a.Data), nil
	}}}
}

func child(_ testing.TB, root, prefix string, count int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$", root, prefix, strconv.Itoa(count))
	cmd.Env = append(os.Environ(), "BOX_TEST_CHILD=writer")
	return cmd
}

func TestCrossProcessWriters(t *testing.T) {
	b := mustInit(t, Options{})
	const procs, each = 8, 50
	var wg sync.WaitGroup
	start := time.Now()
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := child(t, b.Root, fmt.Sprintf("w%d", i), each).CombinedOutput()
			if err != nil {
				t.Errorf("child %d: %v\n%s", i, err, out)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d processes × %d writes: %v (%.0f writes/s), %d commits", procs, each, time.Since(start), procs*each/time.Since(start).Seconds(), commits(t, b))
	tracked := gitOut(t, b, "ls-files", "_content/p")
	for i := range procs {
		for j := range each {
			p := fmt.Sprintf("/_content/p/w%d-%04d.md", i, j)
			if got, _ := readFile(t, b, p); got != childContent(p) {
				t.Errorf("%s missing or wrong", p)
			}
			if !strings.Contains(tracked, p[1:]) {
				t.Errorf("%s not committed", p)
			}
		}
	}
	if st := gitOut(t, b, "status", "--porcelain"); st != "" {
		t.Errorf("tree not clean:\n%s", st)
	}
}

func TestKilledWriterLosesNothing(t *testing.T) {
	b := mustInit(t, Options{})
	b.Close()
	// A steady writer runs beside the killed ones, so a killed process is sometimes the one holding
	// the lock with the steady writer's spooled change claimed.
	const steadyN = 60
	steady := child(t, b.Root, "steady", steadyN)
	var steadyOut strings.Builder
	steady.Stdout, steady.Stderr = &steadyOut, &steadyOut
	if err := steady.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	for round := range 20 {
		cmd := child(t, b.Root, fmt.Sprintf("k%02d", round), 0)
		stdout, _ := cmd.StdoutPipe()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if p, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
					acked[p] = true
				}
			}
		}()
		time.Sleep(time.Duration(30+rand.IntN(250)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		if err := cmd.Wait(); stderr.Len() > 0 {
			t.Errorf("round %d: child failed (%v): %s", round, err, stderr.String())
		}
	}
	if err := steady.Wait(); err != nil {
		t.Errorf("the steady writer failed: %v\n%s", err, steadyOut.String())
	}
	for i := range steadyN {
		acked[fmt.Sprintf("/_content/p/steady-%04d.md", i)] = true
	}
	t.Logf("%d acknowledged writes across 20 kills", len(acked))
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged: the kill test tested nothing")
	}
	b2, err := OpenWith(b.Root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	tracked := gitOut(t, b2, "ls-files", "_content/p")
	for p := range acked {
		if got, _ := readFile(t, b2, p); got != childContent(p) {
			t.Errorf("acknowledged %s lost or torn", p)
		}
		if !strings.Contains(tracked, p[1:]) {
			t.Errorf("acknowledged %s not committed", p)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(b2.Root, "_content", "p"))
	for _, e := range ents {
		p := "/_content/p/" + e.Name()
		if got, _ := readFile(t, b2, p); got != childContent(p) {
			t.Errorf("partial file %s", p)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(b2.Root, ".box", "tmp")); len(left) > 0 {
		t.Errorf("temp files left after Open: %v", left)
	}
	if _, err := os.Stat(filepath.Join(b2.Root, journalPath)); err == nil {
		t.Error("journal left after Open")
	}
	if st := gitOut(t, b2, "status", "--porcelain"); st != "" {
		t.Errorf("an interrupted write left the tree dirty:\n%s", st)
	}
	if _, err := b2.Do(context.Background(), Change{Actor: owner, Op: "edit", Apply: write("/_content/after.md", "ok\n")}); err != nil {
		t.Errorf("write after the kills: %v", err)
	}
}

func TestSpooledInProcess(t *testing.T) {
	ctx := context.Background()
	opts := spoolOptions()
	opts.Spool["fail"] = func(json.RawMessage) (func(*Tx) error, error) {
		return func(*Tx) error { return fmt.Errorf("this op always fails") }, nil
	}
	b := mustInit(t, opts)
	args, _ := json.Marshal(writeArgs{Path: "/_content/s.md", Data: "spooled\n"})
	r, err := b.Do(ctx, Change{Actor: owner, Op: "remember", Spool: &SpoolOp{Name: "write", Args: args}})
	if err != nil || r.Commit == "" {
		t.Fatalf("spooled do: %+v %v", r, err)
	}
	if got, _ := readFile(t, b, "/_content/s.md"); got != "spooled\n" {
		t.Errorf("file %q", got)
	}
	if _, err := b.Do(ctx, Change{Actor: owner, Op: "x", Spool: &SpoolOp{Name: "fail"}}); err == nil || !strings.Contains(err.Error(), "always fails") {
		t.Errorf("failing spooled op: %v", err)
	}
	if _, err := b.Do(ctx, Change{Actor: owner, Op: "x", Spool: &SpoolOp{Name: "nope"}}); !errs.Is(err, errs.Invalid) {
		t.Errorf("unknown op: %v", err)
	}
	if left, _ := os.ReadDir(filepath.Join(b.Root, spoolDir)); len(left) != 0 {
		t.Errorf("spool not empty: %v", left)
	}
}
