// Command locomo measures retrieval quality of the box index on LoCoMo with the peer method of
// ../shared/datasets/README.md: one note per session, every question a search, recall@5/@10 and MRR.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/boxmem/box/bench/benchkit"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/index"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
)

type turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
}

type qa struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

type sample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []qa                       `json:"qa"`
}

// session is one note: its path is the document key; title, when and turns make the note's text.
type session struct {
	path, title, when, turns string
	date                     time.Time
}

func (s session) text() string { return s.when + "\n\n" + s.turns }

type question struct {
	text     string
	category int
	want     map[string]bool
}

func main() {
	data := flag.String("data", "../shared/datasets/locomo-dev.json", "LoCoMo JSON file")
	verbose := flag.Bool("v", false, "print the questions the box search misses at 10")
	flag.Parse()
	if err := run(*data, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "locomo:", err)
		os.Exit(1)
	}
}

func run(data string, verbose bool) error {
	raw, err := os.ReadFile(data)
	if err != nil {
		return err
	}
	var samples []sample
	if err := json.Unmarshal(raw, &samples); err != nil {
		return err
	}
	sessions, questions, skipped, err := build(samples)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d conversations, %d sessions, %d questions (%d without usable evidence skipped)\n",
		len(samples), len(sessions), len(questions), skipped)

	dir, err := os.MkdirTemp("", "locomo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	mem, err := boxWithSessions(filepath.Join(dir, "box"), sessions)
	if err != nil {
		return err
	}
	defer mem.Close()
	ix, err := index.Open(filepath.Join(dir, "index.db"))
	if err != nil {
		return err
	}
	defer ix.Close()
	var files []index.FileDocs
	for _, s := range sessions {
		files = append(files, index.FileDocs{Path: s.path, Docs: []index.Doc{{
			Path: s.path, Kind: "doc", Title: s.title, Body: s.text(), Date: s.date, Who: "import", Trust: "own",
		}}})
	}
	if err := ix.ReplaceFiles(files); err != nil {
		return err
	}

	bm, bmTurns := newBM25(sessions, true), newBM25(sessions, false)
	methods := []struct {
		name   string
		search func(q string) ([]string, error)
	}{
		{"plain BM25 (k1 1.2, b 0.75), whole note", func(q string) ([]string, error) { return bm.search(q, 10), nil }},
		{"plain BM25, turn lines only (no title, no date)", func(q string) ([]string, error) { return bmTurns.search(q, 10), nil }},
		{"**box search** (memory.Search on a real box: the DESIGN §5 rule)", memorySearch(mem)},
		{"index only: any-term results when the rule finds nothing", boxSearch(ix, fallback)},
		{"index only: Query.Relaxed (rule hits first, then any-term fill)", boxSearch(ix, relaxed)},
	}
	fmt.Println("<!-- bench:locomo -->")
	defer fmt.Println("<!-- bench:end -->")
	fmt.Printf("## LoCoMo retrieval (%s, %d sessions, %d questions)\n\n", filepath.Base(data), len(sessions), len(questions))
	fmt.Printf("%s, %s, index schema %d, `go run ./bench/locomo -data %s`\n\n",
		time.Now().UTC().Format("2006-01-02"), benchkit.Machine(), index.Version, data)
	fmt.Println("| method | questions | R@5 | R@10 | MRR | empty |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, m := range methods {
		var head, adv score
		for _, q := range questions {
			got, err := m.search(q.text)
			if err != nil {
				return fmt.Errorf("%s: %q: %w", m.name, q.text, err)
			}
			s := &head
			if q.category == 5 {
				s = &adv
			}
			hit := s.add(got, q.want)
			if verbose && !hit && q.category != 5 && strings.Contains(m.name, "box search") {
				fmt.Fprintf(os.Stderr, "miss cat%d %q want %v got %v\n", q.category, q.text, keys(q.want), first(got, 3))
			}
		}
		fmt.Printf("| %s — categories 1–4 | %d | %.3f | %.3f | %.3f | %d |\n", m.name, head.n, head.r5(), head.r10(), head.mrr(), head.empty)
		fmt.Printf("| %s — category 5 | %d | %.3f | %.3f | %.3f | %d |\n", m.name, adv.n, adv.r5(), adv.r10(), adv.mrr(), adv.empty)
	}
	fmt.Println("\nR@k: share of a question's evidence sessions found in the first k results, averaged; MRR: 1/rank of the first evidence session. \"empty\": questions with no result at all.")
	return nil
}

// boxWithSessions makes a real box, writes one Markdown note per session under /_content/locomo/, commits
// them once and opens the memory over it: the same engine `box search` uses.
func boxWithSessions(root string, sessions []session) (*memory.Memory, error) {
	ctx := context.Background()
	if err := benchkit.NewBox(ctx, root); err != nil {
		return nil, err
	}
	for _, s := range sessions {
		host, err := layout.Host(root, s.path)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			return nil, err
		}
		text := "# " + s.title + "\n\n" + s.text()
		if err := os.WriteFile(host, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	var paths []string
	for _, s := range sessions {
		paths = append(paths, strings.TrimPrefix(s.path, "/"))
	}
	repo := git.Open(root)
	if err := repo.Add(ctx, paths...); err != nil {
		return nil, err
	}
	if _, err := repo.Commit(ctx, "Import LoCoMo sessions", nil); err != nil {
		return nil, err
	}
	return memory.Open(ctx, root, memory.Options{})
}

// memorySearch asks the memory exactly as `box search WORDS --limit 10` does.
func memorySearch(m *memory.Memory) func(string) ([]string, error) {
	return func(q string) ([]string, error) {
		res, err := m.Search(context.Background(), memory.SearchInput{Words: q, Limit: 10})
		var out []string
		for _, h := range res.Hits {
			out = append(out, h.Path)
		}
		return out, err
	}
}

type mode int

const (
	strict   mode = iota // the DESIGN §5 rule alone
	fallback             // any-term results only when the rule finds nothing
	relaxed              // Query.Relaxed as it is
)

func boxSearch(ix *index.Index, m mode) func(string) ([]string, error) {
	return func(q string) ([]string, error) {
		hits, err := ix.Search(context.Background(), index.Query{Text: q, Limit: 10, Partial: m != strict})
		ruled := 0
		for _, h := range hits {
			if !h.Partial {
				ruled++
			}
		}
		var out []string
		for _, h := range hits {
			if m == fallback && h.Partial && ruled > 0 {
				continue
			}
			out = append(out, h.Path)
		}
		return out, err
	}
}

var evidenceID = regexp.MustCompile(`^D(\d+):`)

func build(samples []sample) ([]session, []question, int, error) {
	var sessions []session
	var questions []question
	skipped := 0
	for _, smp := range samples {
		conv := smp.Conversation
		var nums []int
		for k := range conv {
			if n, err := strconv.Atoi(strings.TrimPrefix(k, "session_")); err == nil && strings.HasPrefix(k, "session_") {
				nums = append(nums, n)
			}
		}
		sort.Ints(nums)
		exists := map[int]bool{}
		for _, n := range nums {
			var turns []turn
			if err := json.Unmarshal(conv[fmt.Sprintf("session_%d", n)], &turns); err != nil {
				return nil, nil, 0, fmt.Errorf("%s session %d: %w", smp.SampleID, n, err)
			}
			var when string
			json.Unmarshal(conv[fmt.Sprintf("session_%d_date_time", n)], &when)
			title := fmt.Sprintf("%s session %d", smp.SampleID, n)
			var b strings.Builder
			for _, t := range turns {
				fmt.Fprintf(&b, "- **%s:** %s\n", t.Speaker, t.Text)
			}
			date, _ := time.Parse("3:04 pm on 2 January, 2006", when)
			sessions = append(sessions, session{path: sessionPath(smp.SampleID, n), title: title, when: when, turns: b.String(), date: date})
			exists[n] = true
		}
		for _, q := range smp.QA {
			want := map[string]bool{}
			for _, ev := range q.Evidence {
				for _, id := range strings.Fields(strings.ReplaceAll(ev, ";", " ")) {
					if m := evidenceID.FindStringSubmatch(id); m != nil {
						if n, _ := strconv.Atoi(m[1]); exists[n] {
							want[sessionPath(smp.SampleID, n)] = true
						}
					}
				}
			}
			if len(want) == 0 {
				skipped++
				continue
			}
			questions = append(questions, question{text: q.Question, category: q.Category, want: want})
		}
	}
	return sessions, questions, skipped, nil
}

func sessionPath(id string, n int) string {
	return fmt.Sprintf("/_content/locomo/%s/session-%d.md", id, n)
}

type score struct {
	n, empty           int
	sum5, sum10, sumRR float64
}

// add scores one ranked list and reports whether any wanted session is in it.
func (s *score) add(got []string, want map[string]bool) bool {
	s.n++
	if len(got) == 0 {
		s.empty++
	}
	found5, found10, rr := 0, 0, 0.0
	for i, p := range first(got, 10) {
		if !want[p] {
			continue
		}
		if i < 5 {
			found5++
		}
		found10++
		if rr == 0 {
			rr = 1 / float64(i+1)
		}
	}
	s.sum5 += float64(found5) / float64(len(want))
	s.sum10 += float64(found10) / float64(len(want))
	s.sumRR += rr
	return found10 > 0
}

func (s score) r5() float64  { return s.sum5 / math.Max(1, float64(s.n)) }
func (s score) r10() float64 { return s.sum10 / math.Max(1, float64(s.n)) }
func (s score) mrr() float64 { return s.sumRR / math.Max(1, float64(s.n)) }

func first[T any](xs []T, n int) []T { return xs[:min(n, len(xs))] }

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// bm25 is the README's baseline: lowercase alphanumeric tokens, k1 1.2, b 0.75, over the whole note
// (title, date, turns) or over the turn lines only.
type bm25 struct {
	paths []string
	tf    []map[string]int
	lens  []float64
	df    map[string]int
	avg   float64
}

var alnum = regexp.MustCompile(`[a-z0-9]+`)

func tokens(s string) []string { return alnum.FindAllString(strings.ToLower(s), -1) }

func newBM25(sessions []session, whole bool) *bm25 {
	b := &bm25{df: map[string]int{}}
	total := 0.0
	for _, s := range sessions {
		tf := map[string]int{}
		text := s.turns
		if whole {
			text = s.title + "\n" + s.text()
		}
		toks := tokens(text)
		for _, t := range toks {
			tf[t]++
		}
		for t := range tf {
			b.df[t]++
		}
		b.paths = append(b.paths, s.path)
		b.tf = append(b.tf, tf)
		b.lens = append(b.lens, float64(len(toks)))
		total += float64(len(toks))
	}
	b.avg = total / float64(len(sessions))
	return b
}

func (b *bm25) search(q string, k int) []string {
	const k1, bb = 1.2, 0.75
	n := float64(len(b.paths))
	type scored struct {
		i int
		s float64
	}
	var res []scored
	qt := tokens(q)
	for i, tf := range b.tf {
		s := 0.0
		for _, t := range qt {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(b.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-bb+bb*b.lens[i]/b.avg))
		}
		if s > 0 {
			res = append(res, scored{i, s})
		}
	}
	sort.SliceStable(res, func(x, y int) bool { return res[x].s > res[y].s })
	var out []string
	for _, r := range first(res, k) {
		out = append(out, b.paths[r.i])
	}
	return out
}
