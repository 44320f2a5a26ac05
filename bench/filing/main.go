// Command filing measures how well tidy files an inbox: the labelled lines of testdata/lines.tsv (facts
// about an owner's life, small talk, greetings, questions, an assistant's chatter, instructions aimed at
// an assistant, secrets) go into a real box's inbox, the real `box tidy` files them, and each line's fate
// (a fact in a note, or a drop with its reason in the trash) is scored against its label.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/boxmem/box/bench/benchkit"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
)

// labels are the classes of testdata/lines.tsv: a fact, or the reason tidy should drop the line for.
var labels = []string{"fact", "secret", "instruction", "chatter", "greeting", "question", "small-talk"}

// kept is the outcome of a line filed as a fact; left, of a line tidy left in the inbox.
const (
	kept = "fact"
	left = "left in the inbox"
)

type line struct{ label, text string }

func main() {
	data := flag.String("lines", "bench/filing/testdata/lines.tsv", "labelled lines, \"label<TAB>text\"")
	verbose := flag.Bool("v", false, "print the lines whose outcome is not their label on stderr")
	benchkit.Run("filing", func(tmp, bin string) error {
		lines, err := readLines(*data)
		if err != nil {
			return err
		}
		r, err := evaluate(context.Background(), bin, filepath.Join(tmp, "memory"), lines)
		if err != nil {
			return err
		}
		r.markdown(os.Stdout, *data)
		if *verbose {
			fmt.Fprintln(os.Stderr, strings.Join(r.misses(), "\n"))
		}
		return nil
	})
}

// readLines reads a labelled file; a line with an unknown label is an error naming it.
func readLines(path string) ([]line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []line
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		t := sc.Text()
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		label, text, ok := strings.Cut(t, "\t")
		if !ok || !known(label) || strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("%s:%d: want \"label<TAB>text\" with a label of %s", path, n, strings.Join(labels, ", "))
		}
		out = append(out, line{label, text})
	}
	return out, sc.Err()
}

func known(label string) bool {
	for _, l := range labels {
		if l == label {
			return true
		}
	}
	return false
}

// result is every line's label and outcome, and how long the tidy took.
type result struct {
	lines    []line
	outcome  []string
	duration time.Duration
}

// evaluate makes a box at root with lines in its inbox (every other one written by an outside assistant),
// runs `bin tidy` on it, and reads back where each line went.
func evaluate(ctx context.Context, bin, root string, lines []line) (result, error) {
	if err := benchkit.NewBox(ctx, root); err != nil {
		return result{}, err
	}
	const day = "2026-11-28"
	var b strings.Builder
	b.WriteString(inbox.Header(day))
	for i, l := range lines {
		who, via, trust := "owner", "cli", inbox.Own
		if i%2 == 1 {
			who, via, trust = "Claude (claude.ai)", "mcp", inbox.Outside
		}
		il := inbox.Line{ID: id(i), Time: fmt.Sprintf("09:%02d:%02d", i/60%60, i%60), Who: who, Via: via, Trust: trust, Text: l.text}
		if err := il.Validate(); err != nil {
			return result{}, fmt.Errorf("line %d: %w", i+1, err)
		}
		b.WriteString(il.String() + "\n")
	}
	if err := write(root, layout.InboxDir+"/"+inbox.FileName(day, 1), b.String()); err != nil {
		return result{}, err
	}
	if err := benchkit.Commit(ctx, root, "the labelled lines"); err != nil {
		return result{}, err
	}
	start := time.Now()
	out, err := exec.CommandContext(ctx, bin, "--box", root, "--json", "tidy").CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("box tidy: %v\n%s", err, out)
	}
	r := result{lines: lines, duration: time.Since(start)}
	dropped, err := trashReasons(root)
	if err != nil {
		return result{}, err
	}
	filed, err := filedIDs(root)
	if err != nil {
		return result{}, err
	}
	for i := range lines {
		switch {
		case filed[id(i)]:
			r.outcome = append(r.outcome, kept)
		case dropped[id(i)] != "":
			r.outcome = append(r.outcome, dropped[id(i)])
		default:
			r.outcome = append(r.outcome, left)
		}
	}
	return r, nil
}

func id(i int) string { return fmt.Sprintf("f%03d", i+1) }

func host(root, p string) string {
	return filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

func write(root, p, s string) error {
	if err := os.MkdirAll(filepath.Dir(host(root, p)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(host(root, p), []byte(s), 0o644)
}

// trashReasons reads the tidy's record in the trash: each dropped line's id and reason.
func trashReasons(root string) (map[string]string, error) {
	out := map[string]string{}
	return out, eachFile(host(root, layout.TrashDir), "*.jsonl", func(f string, data []byte) error {
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var rec struct{ Op, ID, Reason string }
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if rec.Op == "tidy" {
				out[rec.ID] = rec.Reason
			}
		}
		return nil
	})
}

// filedIDs reads every note: the ids of its Key facts and Timeline lines.
func filedIDs(root string) (map[string]bool, error) {
	out := map[string]bool{}
	return out, eachFile(host(root, layout.NotesDir), "*.md", func(f string, data []byte) error {
		n, err := note.ParseNote(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, x := range n.Facts {
			out[x.ID] = true
		}
		for _, e := range n.Timeline {
			out[e.ID] = true
		}
		return nil
	})
}

// eachFile calls fn with each file of dir matching pattern and its bytes.
func eachFile(dir, pattern string, fn func(path string, data []byte) error) error {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := fn(f, data); err != nil {
			return err
		}
	}
	return nil
}

// score is precision and recall of one class: predicted is how often the outcome was the class, actual how
// often the label was, hit how often both.
type score struct{ predicted, actual, hit int }

func (s score) precision() float64 { return ratio(s.hit, s.predicted) }
func (s score) recall() float64    { return ratio(s.hit, s.actual) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// scoreOf scores class c: a line labelled c and an outcome of c ("fact" for kept, else the drop reason).
func (r result) scoreOf(c string) score {
	var s score
	for i, l := range r.lines {
		if r.outcome[i] == c {
			s.predicted++
		}
		if l.label == c {
			s.actual++
			if r.outcome[i] == c {
				s.hit++
			}
		}
	}
	return s
}

// notKept is how many lines labelled c tidy kept out of the notes, whatever the reason it gave.
func (r result) notKept(c string) (n, of int) {
	for i, l := range r.lines {
		if l.label == c {
			of++
			if r.outcome[i] != kept {
				n++
			}
		}
	}
	return n, of
}

// misses lists the lines whose outcome is not their label, for the -v flag and the test's message.
func (r result) misses() []string {
	var out []string
	for i, l := range r.lines {
		if r.outcome[i] != l.label {
			out = append(out, fmt.Sprintf("%s → %s: %q", l.label, r.outcome[i], l.text))
		}
	}
	sort.Strings(out)
	return out
}

func (r result) markdown(w io.Writer, data string) {
	fmt.Fprintln(w, "<!-- bench:filing -->")
	defer fmt.Fprintln(w, "<!-- bench:end -->")
	fmt.Fprintf(w, "## Filing quality (%d labelled lines, the deterministic tidy)\n\n", len(r.lines))
	fmt.Fprintf(w, "%s, %s, `go run ./bench/filing -lines %s`. Each line goes into a real box's inbox (every other one\n",
		time.Now().UTC().Format("2006-01-02"), benchkit.Machine(), data)
	fmt.Fprintf(w, "from an outside assistant); `box tidy` files them in %s. *Kept as a fact*: the line became a note's fact. A\n", benchkit.Millis(r.duration, 0))
	fmt.Fprintln(w, "drop class: the line went to the trash with that reason in the tidy's record.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| class | lines | precision | recall | kept out of the notes |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, c := range labels {
		s := r.scoreOf(c)
		name := "dropped as " + c
		notKept := "—"
		if c == kept {
			name = "**kept as a fact**"
		} else {
			n, of := r.notKept(c)
			notKept = fmt.Sprintf("%d of %d", n, of)
		}
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %s |\n", name, s.actual, s.precision(), s.recall(), notKept)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Where each label went (rows: label, columns: outcome):")
	fmt.Fprintln(w)
	outcomes := append(append([]string{}, labels...), left)
	fmt.Fprintf(w, "| label | %s |\n|---|%s\n", strings.Join(outcomes, " | "), strings.Repeat("---|", len(outcomes)))
	for _, c := range labels {
		var cells []string
		for _, o := range outcomes {
			n := 0
			for i, l := range r.lines {
				if l.label == c && r.outcome[i] == o {
					n++
				}
			}
			cells = append(cells, fmt.Sprint(n))
		}
		fmt.Fprintf(w, "| %s | %s |\n", c, strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}
