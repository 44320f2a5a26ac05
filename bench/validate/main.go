// Command validate benchmarks `box validate` through the real binary: --all on generated boxes of 1k
// and 10k cards, and --pre-commit with 10 staged cards on the 10k box. It prints a Markdown section.
//
//	go run ./bench/validate [-sizes 1000,10000] [-runs 11]   (bench/run.sh validate; $BOX_BIN or a fresh build)
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/boxmem/box/bench/benchkit"
)

var (
	sizes = flag.String("sizes", "1000,10000", "cards per generated box")
	runs  = flag.Int("runs", 11, "runs per measurement (one process each); the median is reported")
)

func main() { benchkit.Run("validate", run) }

func run(tmp, bin string) error {
	type row struct {
		cards               int
		all, pre, preRename time.Duration
		files               int
	}
	var rows []row
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 20 {
			return fmt.Errorf("bad size %q", s)
		}
		root := filepath.Join(tmp, fmt.Sprintf("box%d", n))
		fmt.Fprintf(os.Stderr, "bench/validate: generating %d cards\n", n)
		if err := generate(bin, root, n); err != nil {
			return err
		}
		r := row{cards: n}
		if r.all, err = median(*runs, bin, root, 1, "validate", "--all"); err != nil {
			return err
		}
		// Ten staged cards: edit them and stage them, then time the hook's command as git runs it.
		for i := range 10 {
			p := filepath.Join(root, "_content", "memory", "notes", noteName(i*7)+".md")
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			fmt.Fprintf(f, "- 2026-02-0%d: edited for the benchmark, see [[%s]].\n", i%9+1, noteName(i*7+1))
			f.Close()
		}
		if err := git(root, "add", "-A"); err != nil {
			return err
		}
		if r.pre, err = median(*runs, bin, root, 0, "validate", "--pre-commit"); err != nil {
			return err
		}
		// A staged rename adds the box-wide scan for refs it leaves dangling.
		if err := git(root, "mv", "_content/docs/doc-00001.md", "_content/docs/doc-00001-renamed.md"); err != nil {
			return err
		}
		if r.preRename, err = median(*runs, bin, root, 0, "validate", "--pre-commit"); err != nil {
			return err
		}
		rows = append(rows, r)
	}
	fmt.Println("<!-- bench:validate -->")
	fmt.Println("## Validation")
	fmt.Println()
	fmt.Printf("`go run ./bench/validate` (bench/run.sh validate): generated boxes (notes with sections, wikilinks and\n"+
		"aliases, a map per 100 notes, documents with box-root and relative links, to-do cards), committed; each\n"+
		"figure is the median wall time of %d runs of the real binary, one process each, on %s.\n"+
		"Pre-commit has 10 staged edited notes (target: under 100 ms on the 10k box); \"+ rename\" also stages a\n"+
		"rename, which adds the box-wide scan for refs it leaves dangling.\n\n", *runs, benchkit.Machine())
	fmt.Println("| cards | `validate --all` | cards/s (parse + schema + Markdoc + refs) | `--pre-commit`, 10 staged | `--pre-commit`, 10 staged + rename |")
	fmt.Println("|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Printf("| %d | %s | %.0f | %s | %s |\n", r.cards, benchkit.Millis(r.all, 1), float64(r.cards)/r.all.Seconds(), benchkit.Millis(r.pre, 1), benchkit.Millis(r.preRename, 1))
	}
	fmt.Println()
	fmt.Println("<!-- bench:end -->")
	return nil
}

// median runs the binary n times in root and returns the median wall time; wantExit is the exit code
// the command must give (validate --all on a clean generated box exits 0; 1 would be a generator bug).
func median(n int, bin, root string, _ int, args ...string) (time.Duration, error) {
	var ds []time.Duration
	for range n {
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			return 0, fmt.Errorf("box %s: %v\n%s", strings.Join(args, " "), err, tail(out))
		}
		ds = append(ds, d)
	}
	return benchkit.Percentile(ds, 50), nil
}

func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.Join(lines, "\n")
}

func git(root string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Bench", "GIT_AUTHOR_EMAIL=bench@localhost", "GIT_COMMITTER_NAME=Bench", "GIT_COMMITTER_EMAIL=bench@localhost")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
