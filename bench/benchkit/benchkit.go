// Package benchkit holds what the bench harnesses share: the box binary they time, a generated box,
// percentiles and millisecond cells, and the machine line. It owns no measurement and no table: each
// harness keeps its own section of BENCHMARKS.md.
package benchkit

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
)

// Run is a harness's main: it parses the flags, makes a temp folder (removed after) and finds the box
// binary, then runs the harness in it; a failure is printed as "bench/NAME: error" and exits 1.
func Run(name string, run func(tmp, bin string) error) {
	flag.Parse()
	if err := inTemp(name, run); err != nil {
		fmt.Fprintf(os.Stderr, "bench/%s: %v\n", name, err)
		os.Exit(1)
	}
}

func inTemp(name string, run func(tmp, bin string) error) error {
	tmp, err := os.MkdirTemp("", "bench-"+name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := Binary(tmp)
	if err != nil {
		return err
	}
	return run(tmp, bin)
}

// Binary returns the box binary to time: $BOX_BIN (bench/run.sh builds one for every harness), or a
// fresh build of ./cmd/box in dir, so a harness run on its own times the tree it stands in.
func Binary(dir string) (string, error) {
	if bin := os.Getenv("BOX_BIN"); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, "box")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/box").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// Percentile returns the p-th percentile of d (p 50 is the median, 100 the maximum), 0 for no samples.
// d is left as it is.
func Percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// Millis is a table cell in milliseconds with prec decimals: "12.3 ms".
func Millis(d time.Duration, prec int) string {
	return fmt.Sprintf("%.*f ms", prec, float64(d.Microseconds())/1000)
}

// Machine is the machine as a section names it: "8 cores (CPU model)".
func Machine() string { return fmt.Sprintf("%d cores (%s)", runtime.NumCPU(), CPUModel()) }

// CPUModel is the first "model name" of /proc/cpuinfo, or the architecture where there is none.
func CPUModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// NewBox makes an empty box at root with the router skeleton, as `box init` does for an owner. Its git
// hooks call `box` on the PATH rather than the harness's own executable; Commit skips them anyway.
func NewBox(ctx context.Context, root string) error {
	a, err := app.Init(ctx, root, map[string][]byte{layout.Router: []byte(note.RouterSkeleton)}, "box", app.Options{})
	if err != nil {
		return err
	}
	return a.Close()
}

// Open opens the memory of the box at root as a CLI verb does (the composition root); close the App.
func Open(ctx context.Context, root string) (*app.App, error) {
	return app.Open(ctx, root, app.Options{})
}

// Commit stages everything under root's _content and commits it once, as a fixed bench identity and
// without the box's hooks: a generated box is valid by construction, and checking it is not what is timed.
func Commit(ctx context.Context, root, msg string) error {
	for _, args := range [][]string{{"add", "_content"}, {"-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "--no-verify", "-m", msg}} {
		if out, err := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", args[0], err, out)
		}
	}
	return nil
}
