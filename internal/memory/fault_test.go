package memory

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/index"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/testbin"
)

// boxBin is the real binary, built once: the fault tests run separate processes.
var boxBin string

func TestMain(m *testing.M) { testbin.Main(m, &boxBin) }

func newBoxDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := box.Init(context.Background(), dir, box.InitOptions{HookBinary: boxBin,
		Files: map[string][]byte{layout.Router: []byte(note.RouterSkeleton)}})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	return dir
}

func boxCmd(ctx context.Context, dir string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, boxBin, append([]string{"--box", dir}, args...)...)
	c.Env = append(os.Environ(), "BOX_DIR="+dir)
	return c
}

// hangGuard stops the many-process tests' writers if they hang. It is no speed bound (the benchmarks
// measure that): the 400 remembers took 45 s on a loaded 2-core machine, so a tighter one fails
// there while nothing is wrong.
const hangGuard = 5 * time.Minute

// TestManyProcessesRemember: 8 processes × 50 `box remember` at once; every line is in the inbox and in
// the index the commit hook keeps (read without reconciling, so a missed update would show).
func TestManyProcessesRemember(t *testing.T) {
	if testing.Short() {
		t.Skip("separate processes")
	}
	dir := newBoxDir(t)
	const workers, each = 8, 50
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errc := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				out, err := boxCmd(ctx, dir, "remember", fmt.Sprintf("Marker tok%dx%d was saved by worker %d.", w, i, w)).CombinedOutput()
				if err != nil {
					errc <- fmt.Errorf("worker %d line %d: %v\n%s", w, i, err, out)
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	t.Logf("%d remembers in %v", workers*each, time.Since(start))
	// Every day file: the processes run on the wall clock, which may pass a local midnight meanwhile.
	lines := 0
	days, _ := filepath.Glob(filepath.Join(dir, "_content/inbox/*.md"))
	for _, p := range days {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := inbox.ParseDay(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		lines += len(d.Lines())
	}
	if lines != workers*each {
		t.Fatalf("the inbox holds %d lines in %d day files, want %d", lines, len(days), workers*each)
	}
	ix, err := index.Open(filepath.Join(dir, ".box/index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for w := 0; w < workers; w++ {
		for i := 0; i < each; i++ {
			hs, err := ix.Search(ctx, index.Query{Text: fmt.Sprintf("tok%dx%d", w, i)})
			if err != nil || len(hs) != 1 {
				t.Errorf("tok%dx%d: %d hits %v", w, i, len(hs), err)
			}
		}
	}
	out, err := boxCmd(ctx, dir, "search", "tok3x17").Output()
	if err != nil || !strings.Contains(string(out), "tok3x17") {
		t.Errorf("box search: %v %s", err, out)
	}
}

// TestKilledWriters kills one of three concurrent writers at a random point, 20 times: every
// acknowledged line is there, no file is half-written, and box validate --all is clean.
func TestKilledWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("separate processes")
	}
	dir := newBoxDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	rng := rand.New(rand.NewPCG(1, 2))
	var acked []string
	killed := 0
	for round := 0; round < 20; round++ {
		var wg sync.WaitGroup
		var mu sync.Mutex
		cmds := make([]*exec.Cmd, 3)
		for i := range cmds {
			text := fmt.Sprintf("Round %d writer %d saved kill%dw%d.", round, i, round, i)
			cmds[i] = boxCmd(ctx, dir, "remember", text)
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if cmds[i].Wait() == nil {
					mu.Lock()
					acked = append(acked, text)
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(rng.IntN(60_000)) * time.Microsecond)
		if cmds[0].Process.Kill() == nil {
			killed++
		}
		wg.Wait()
	}
	// One more writer: it recovers whatever a killed leader left before it commits.
	if out, err := boxCmd(ctx, dir, "remember", "The last line after the kills.").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	acked = append(acked, "The last line after the kills.")
	t.Logf("%d acknowledged, %d kill signals delivered", len(acked), killed)
	var all bytes.Buffer
	days, _ := filepath.Glob(filepath.Join(dir, "_content/inbox/*.md"))
	for _, p := range days {
		data, _ := os.ReadFile(p)
		d, err := inbox.ParseDay(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, e := range d.Entries {
			if e.Line == nil && strings.HasPrefix(e.Raw, "- ") {
				t.Errorf("%s: a half-written line: %q", p, e.Raw)
			}
		}
		all.Write(data)
	}
	for _, text := range acked {
		if !strings.Contains(all.String(), " · "+text+" ^") {
			t.Errorf("an acknowledged line is missing: %s", text)
		}
	}
	if out, err := boxCmd(ctx, dir, "validate", "--all").CombinedOutput(); err != nil {
		t.Errorf("box validate --all: %v\n%s", err, out)
	}
	out, _ := exec.Command("git", "-C", dir, "status", "--porcelain").Output()
	if s := strings.TrimSpace(string(out)); s != "" {
		t.Errorf("uncommitted files after recovery:\n%s", s)
	}
	res, err := boxCmd(ctx, dir, "search", "kill19w1").Output()
	if err == nil && strings.Contains(string(res), "kill19w1") == !strings.Contains(all.String(), "kill19w1") {
		t.Errorf("search and the inbox disagree about kill19w1: %s", res)
	}
}
