// Command jobs measures the job runner's filing (docs/JOBS.md): a box served in process (app.Run, the
// runner started with the server), a burst of lines remembered as an assistant would, and the debounced
// tidy the runner runs on its own. It reports, per burst size, the latency from the last line to the
// acknowledged filing (and what is left once the debounce and the runner's quiet wait are taken off), and
// the tidy's own time and throughput from its record. It prints a Markdown section for BENCHMARKS.md.
//
//	go run ./bench/jobs [-sizes 10,100,1000] [-runs 3] [-debounce 300ms]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/boxmem/box/bench/benchkit"
	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
)

var (
	sizes    = flag.String("sizes", "10,100,1000", "lines per burst")
	runs     = flag.Int("runs", 3, "bursts per size (the median is reported)")
	debounce = flag.Duration("debounce", 300*time.Millisecond, "box serve --tidy-after")
)

// quiet is the runner's wait after the last write it did not make (jobs.Options.Quiet's default).
const quiet = 2 * time.Second

func main() { benchkit.Run("jobs", run) }

type row struct {
	lines                int
	latency, beyond, run time.Duration
	perSec               float64
}

func run(tmp, _ string) error {
	load, _ := os.ReadFile("/proc/loadavg")
	var rows []row
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-sizes: %q is not a number", f)
		}
		var lat, beyond, took []time.Duration
		for i := 0; i < *runs; i++ {
			l, t, err := burst(filepath.Join(tmp, fmt.Sprintf("box-%d-%d", n, i)), n)
			if err != nil {
				return err
			}
			lat, took = append(lat, l), append(took, t)
			beyond = append(beyond, l-max(*debounce, quiet)) // the two waits run side by side
		}
		r := row{lines: n, latency: benchkit.Percentile(lat, 50), beyond: benchkit.Percentile(beyond, 50), run: benchkit.Percentile(took, 50)}
		r.perSec = float64(n) / r.run.Seconds()
		rows = append(rows, r)
	}
	fmt.Println("<!-- bench:jobs -->")
	defer fmt.Println("<!-- bench:end -->")
	fmt.Printf("## The job runner: filing on its own\n\n")
	fmt.Printf("`go run ./bench/jobs` (bench/run.sh jobs), %s. A box served in process (`app.Run`, the runner started with\n", benchkit.Machine())
	fmt.Printf("the server, `--tidy-after %s`); a burst of lines remembered as an assistant (trust outside), about a hundred\n", *debounce)
	fmt.Println("people; then nothing is typed: the runner's debounced tidy files them. Latency is from the last line acknowledged")
	fmt.Printf("to the tidy's commit acknowledged; \"beyond the waits\" takes off the longer of the debounce and the runner's %s quiet\n", quiet)
	fmt.Println("wait after the last write (it yields to writers; the two run side by side). The tidy's own time and throughput come")
	fmt.Println("from its record (`seconds`).")
	fmt.Printf("Median of %d bursts per size, each in a fresh box. Wall times on a shared machine: load average %s when it began.\n\n", *runs, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Println("| lines | last line → filed | beyond the waits | tidy run | lines/s filed |")
	fmt.Println("|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Printf("| %d | %s | %s | %s | %.0f |\n", r.lines, benchkit.Millis(r.latency, 0), benchkit.Millis(r.beyond, 0), benchkit.Millis(r.run, 0), r.perSec)
	}
	return nil
}

var (
	given = []string{"Leo", "Mia", "Ana", "Tomas", "Ines", "Rui", "Sara", "Joao", "Marta", "Pedro"}
	last  = []string{"Silva", "Costa", "Pereira", "Santos", "Ferreira", "Oliveira", "Rodrigues", "Martins", "Sousa", "Gomes"}
	facts = []string{"plays the cello on Saturdays", "works at the harbour office", "moved to Porto last spring", "likes green tea", "runs on Sunday mornings"}
)

// burst remembers n lines in a fresh served box and waits for the runner to file them: the latency from
// the last line to the filing, and the tidy run's own time.
func burst(root string, n int) (time.Duration, time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := benchkit.NewBox(ctx, root); err != nil {
		return 0, 0, err
	}
	a, err := app.Open(ctx, root, app.Options{Mode: app.Serve})
	if err != nil {
		return 0, 0, err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	served := make(chan error, 1)
	go func() {
		served <- a.Run(ctx, app.ServeOptions{Listener: ln, Jobs: app.JobOptions{TidyAfter: *debounce, BackupAfter: time.Hour}})
	}()
	claude := memory.Actor{Who: "Claude", Via: "mcp", Trust: "outside"}
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("%s %s %s", given[i%len(given)], last[(i/len(given))%len(last)], facts[i%len(facts)])
		if _, err := a.Memory.Remember(ctx, claude, memory.RememberInput{Text: text}); err != nil {
			return 0, 0, err
		}
	}
	lastLine := time.Now()
	inbox := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(layout.InboxDir, "/")))
	deadline := lastLine.Add(2 * time.Minute)
	for {
		recs, err := jobs.Records(root, 1, func(r jobs.Record) bool { return r.Job == "tidy" })
		if err != nil {
			return 0, 0, err
		}
		ents, _ := os.ReadDir(inbox)
		left := 0
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".md") {
				left++
			}
		}
		if len(recs) == 1 && left == 0 {
			if recs[0].Error != "" {
				return 0, 0, fmt.Errorf("the tidy failed: %s", recs[0].Error)
			}
			// the commit is acknowledged once the runner is done with the run
			for a.Jobs.IsRunning("tidy") {
				time.Sleep(time.Millisecond)
			}
			took := time.Since(lastLine)
			cancel()
			if err := <-served; err != nil {
				return 0, 0, err
			}
			return took, time.Duration(recs[0].Seconds * float64(time.Second)), nil
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%d lines were not filed within 2 minutes", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
