// Command merge measures the merge pass (docs/MERGE.md): precision and recall of the duplicate rules on
// the labelled set of note pairs, by group, and the time of `box merge` (dry run and real) on generated
// boxes through the real binary. It prints a Markdown section for BENCHMARKS.md.
//
//	go run ./bench/merge [-set internal/duplicate/testdata/pairs.json] [-sizes 1000,10000] [-runs 3]   ($BOX_BIN or a fresh build)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/boxmem/box/bench/benchkit"
	"github.com/boxmem/box/internal/duplicate"
	"github.com/boxmem/box/internal/duplicatetest"
	"github.com/boxmem/box/internal/note"
)

var (
	set   = flag.String("set", "internal/duplicate/testdata/pairs.json", "the labelled set of pairs")
	sizes = flag.String("sizes", "1000,10000", "notes per generated box")
	runs  = flag.Int("runs", 3, "dry runs timed per box (the median is reported)")
)

func main() { benchkit.Run("merge", run) }

func run(tmp, bin string) error {
	load := loadAverage()
	cases, err := duplicatetest.Load(*set)
	if err != nil {
		return err
	}
	all, byGroup, outcomes, err := duplicatetest.Evaluate(cases)
	if err != nil {
		return err
	}
	type timing struct {
		notes, planted, merged int
		find, dry, real        time.Duration
	}
	var times []timing
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-sizes: %q is not a number", f)
		}
		root := filepath.Join(tmp, "box-"+f)
		planted, subjects, err := generate(root, n)
		if err != nil {
			return err
		}
		tm := timing{notes: n, planted: planted}
		start := time.Now()
		duplicate.Find(subjects)
		tm.find = time.Since(start)
		var dry []time.Duration
		for i := 0; i < *runs; i++ {
			d, _, err := merge(bin, root, true)
			if err != nil {
				return err
			}
			dry = append(dry, d)
		}
		tm.dry = benchkit.Percentile(dry, 50)
		real, merged, err := merge(bin, root, false)
		if err != nil {
			return err
		}
		tm.real, tm.merged = real, len(merged)
		times = append(times, tm)
	}

	fmt.Println("<!-- bench:merge -->")
	defer fmt.Println("<!-- bench:end -->")
	fmt.Printf("## Merge pass (duplicate notes)\n\n")
	fmt.Printf("`go run ./bench/merge` (bench/run.sh merge), %s. Quality: the rules of docs/MERGE.md on the labelled set\n", benchkit.Machine())
	fmt.Printf("`%s` (%d pairs: %d labelled merge, %d keep-apart), each pair in its own box with its other notes, every stub\n", *set, len(cases), all.TP+all.FN, all.TN+all.FP)
	fmt.Println("written as a real note file and read back. Precision: of the pairs merged, the share labelled merge; recall: of the")
	fmt.Println("pairs labelled merge, the share merged. `TestLabelledPairs` pins precision 1.00 and recall ≥ 0.75.")
	fmt.Println()
	fmt.Println("| group | pairs | merged right | merged wrong | missed | kept apart right | precision | recall |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, g := range duplicatetest.Groups(byGroup) {
		q := byGroup[g]
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %s | %s |\n", g, q.TP+q.FP+q.FN+q.TN, q.TP, q.FP, q.FN, q.TN, ratio(q.TP, q.TP+q.FP), ratio(q.TP, q.TP+q.FN))
	}
	fmt.Printf("| **all** | %d | %d | %d | %d | %d | **%.2f** | **%.2f** |\n", len(cases), all.TP, all.FP, all.FN, all.TN, all.Precision(), all.Recall())
	fmt.Println()
	var missed []string
	for _, o := range outcomes {
		if !o.Right() {
			missed = append(missed, "`"+o.Case.ID+"`")
		}
	}
	if len(missed) > 0 {
		fmt.Printf("Wrong: %s (each case's `why` in the set says what a reader sees that the rules do not).\n\n", strings.Join(missed, ", "))
	}
	fmt.Println("Speed: generated boxes of people sharing a hundred given names (so every name has ~100 namesakes to weigh),")
	fmt.Println("with one planted duplicate per 200 notes (the same title under a second file name, linked with the same note).")
	fmt.Printf("\"weigh\" is `duplicate.Find` in process; the dry run is `box merge --dry-run --json` (median of %d, one process each:\n", *runs)
	fmt.Println("read and parse every note, weigh, list); the real run is one `box merge --json` that joins and commits.")
	fmt.Printf("Wall times on a shared machine: the load average was %s when the run began.\n", load)
	fmt.Println()
	fmt.Println("| notes | planted | weigh (Find) | `box merge --dry-run` | `box merge` | merged |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|")
	for _, tm := range times {
		fmt.Printf("| %d | %d | %s | %s | %s | %d |\n", tm.notes, tm.planted, benchkit.Millis(tm.find, 1), benchkit.Millis(tm.dry, 0), benchkit.Millis(tm.real, 0), tm.merged)
	}
	return nil
}

func ratio(a, b int) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// merge runs box merge once and returns its wall time and the pairs it merged (or would merge).
func merge(bin, root string, dry bool) (time.Duration, []any, error) {
	args := []string{"--box", root, "--json", "merge"}
	if dry {
		args = append(args, "--dry-run")
	}
	start := time.Now()
	out, err := exec.Command(bin, args...).Output()
	d := time.Since(start)
	if err != nil {
		return 0, nil, fmt.Errorf("box %s: %v", strings.Join(args, " "), err)
	}
	var res struct {
		Merged []any `json:"merged"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return 0, nil, fmt.Errorf("box merge --json: %v", err)
	}
	return d, res.Merged, nil
}

// generate makes a box of n notes: people "Given Family" over a hundred given names, each linked with one
// of a hundred places, and n/200 planted duplicates. It returns the planted count and the notes as the
// rules see them.
func generate(root string, n int) (int, []duplicate.Subject, error) {
	ctx := context.Background()
	if err := benchkit.NewBox(ctx, root); err != nil {
		return 0, nil, err
	}
	dir := filepath.Join(root, "_content", "memory", "notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, nil, err
	}
	var subjects []duplicate.Subject
	write := func(name, kind, title, fact, link string) error {
		data := note.NewNote(kind, title, nil, []string{"moc-people"})
		data, err := note.AddFact(data, note.Fact{Text: fact})
		if err == nil && link != "" {
			data, err = note.AddLink(data, link)
		}
		if err != nil {
			return err
		}
		parsed, err := note.ParseNote(data)
		if err != nil {
			return err
		}
		subjects = append(subjects, duplicate.FromNote(name, parsed))
		return os.WriteFile(filepath.Join(dir, name+".md"), data, 0o644)
	}
	places := min(100, n/10)
	for i := 0; i < places; i++ {
		if err := write(fmt.Sprintf("entity-place-%s", word(i, 7)), "place", "Place "+word(i, 7), "A place.", ""); err != nil {
			return 0, nil, err
		}
	}
	planted := 0
	for i := places; i < n; i++ {
		given, family := word(i%100, 3), word(i/100, 11)
		title := strings.ToUpper(given[:1]) + given[1:] + " " + strings.ToUpper(family[:1]) + family[1:]
		name := note.Name("person", title)
		link := fmt.Sprintf("entity-place-%s", word(i%places, 7))
		fact := fmt.Sprintf("%s works with %s on %s.", title, word(i*7, 5), word(i*13, 9))
		if err := write(name, "person", title, fact, link); err != nil {
			return 0, nil, err
		}
		if i%200 == 0 && i+1 < n {
			if err := write(name+"-2", "person", title, fmt.Sprintf("%s plays %s.", title, word(i*3, 6)), link); err != nil {
				return 0, nil, err
			}
			planted++
			i++
		}
	}
	return planted, subjects, benchkit.Commit(ctx, root, "generated notes")
}

// word is a made-up word for i, distinct for distinct i below 26^3, salted so lists do not line up.
func word(i, salt int) string {
	const syl = "ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu na"
	s := strings.Fields(syl)
	j := i*31 + salt
	return s[j%26] + s[(j/26)%26] + s[(j/676)%26]
}

// loadAverage is the one-minute load average, or "unknown": wall times mean little without it.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
