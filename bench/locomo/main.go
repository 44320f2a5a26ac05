// Command locomo measures retrieval quality of box search on LoCoMo with the peer method of
// ../shared/datasets/README.md: one note per session, every question a search, recall@5/@10 and MRR,
// per category, with the rule's matches alone and with the partial matches that follow them
// (docs/SEARCH.md), and on each half of the conversations (the ranking weights were chosen on the first).
package main

import (
	"bytes"
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
	conv     int // the conversation's place in the file
	want     map[string]bool
}

func main() {
	data := flag.String("data", "", "LoCoMo JSON file (default: shared/datasets/locomo-dev.json beside the repository or its worktree folder)")
	verbose := flag.Bool("v", false, "print the questions the box search misses at 10")
	flag.StringVar(&dumpPath, "dump", "", "write each question's box search list to this file, one JSON object a line (question, category, conversation, wanted and got paths)")
	flag.Parse()
	shown := *data // as the reproduce line says it: from a clone beside the shared folder
	if *data == "" {
		*data, shown = defaultData(), "../shared/datasets/locomo-dev.json"
	}
	if err := run(*data, shown, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "locomo:", err)
		os.Exit(1)
	}
}

// defaultData is the dev set in the shared folder beside the repository (../shared) or, from a worktree
// under a folder of worktrees, beside that folder (../../shared). The data set is never committed.
func defaultData() string {
	for _, p := range []string{"../shared/datasets/locomo-dev.json", "../../shared/datasets/locomo-dev.json"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "../shared/datasets/locomo-dev.json"
}

// dumpPath, when set, is where run writes every question's ranked list, for looking at misses.
var dumpPath string

func run(data, shown string, verbose bool) error {
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

	// One pass of box search per question gives both lists: the rule's matches come first, so the
	// strict list is the full list without its partial hits.
	bm := newBM25(sessions)
	peer, strict, full := results{}, results{}, results{}
	var dump bytes.Buffer // one JSON object a line, written once every question is searched
	enc := json.NewEncoder(&dump)
	for _, q := range questions {
		withPartials, rule, err := memorySearch(mem, q.text)
		if err != nil {
			return fmt.Errorf("%q: %w", q.text, err)
		}
		if dumpPath != "" {
			if err := enc.Encode(map[string]any{"question": q.text, "category": q.category, "conversation": q.conv,
				"want": keys(q.want), "got": withPartials, "matches": len(rule)}); err != nil {
				return err
			}
		}
		peer.add(q, bm.search(q.text, 10))
		strict.add(q, rule)
		if !full.add(q, withPartials) && verbose && q.category != 5 {
			fmt.Fprintf(os.Stderr, "miss cat%d %q want %v got %v\n", q.category, q.text, keys(q.want), first(withPartials, 3))
		}
	}
	if dumpPath != "" {
		if err := os.WriteFile(dumpPath, dump.Bytes(), 0o644); err != nil {
			return err
		}
	}
	head := func(q question) bool { return q.category != 5 }
	fmt.Println("<!-- bench:locomo -->")
	defer fmt.Println("<!-- bench:end -->")
	fmt.Printf("## LoCoMo retrieval (%s, %d sessions, %d questions)\n\n", filepath.Base(data), len(sessions), len(questions))
	fmt.Printf("%s, %s, index schema %d. Reproduce: `go run ./bench/locomo -data %s` (bench/run.sh locomo).\n",
		time.Now().UTC().Format("2006-01-02"), benchkit.Machine(), index.Version, shown)
	fmt.Println("One note per session in a real box, every question a `box search --limit 10` (memory.Search); the peer is a")
	fmt.Println("plain BM25 (k1 1.2, b 0.75) over the same notes. R@k: share of a question's evidence sessions in the first k")
	fmt.Println("results, averaged; MRR: 1/rank of the first evidence session; \"empty\": questions with no result. The rules and")
	fmt.Println("the ranking: docs/SEARCH.md.")
	fmt.Println()
	fmt.Println("| method | questions | R@5 | R@10 | MRR | empty |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, m := range []struct {
		name string
		r    results
	}{
		{"plain BM25 (peer), whole note", peer},
		{"box search, the rule's matches only", strict},
		{"**box search** (matches, then partial matches)", full},
	} {
		for _, c := range []struct {
			name string
			sel  func(question) bool
		}{{"categories 1–4", head}, {"category 5", func(q question) bool { return q.category == 5 }}} {
			s := m.r.score(c.sel)
			fmt.Printf("| %s — %s | %d | %.3f | %.3f | %.3f | %d |\n", m.name, c.name, s.n, s.r5(), s.r10(), s.mrr(), s.empty)
		}
	}
	fmt.Println()
	fmt.Println("Per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial), box search:")
	fmt.Println()
	fmt.Println("| category | questions | matches only: R@5 | R@10 | MRR | empty | with partial matches: R@5 | R@10 | MRR | empty |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for cat := 1; cat <= 5; cat++ {
		sel := func(q question) bool { return q.category == cat }
		a, b := strict.score(sel), full.score(sel)
		fmt.Printf("| %d | %d | %.3f | %.3f | %.3f | %d | %.3f | %.3f | %.3f | %d |\n", cat, a.n, a.r5(), a.r10(), a.mrr(), a.empty, b.r5(), b.r10(), b.mrr(), b.empty)
	}
	fmt.Println()
	fmt.Println("Cross-validation by conversation, categories 1–4, box search with partial matches: the ranking's weights were")
	fmt.Println("chosen on half A; half B had no part in choosing them. The index is built oldest file first, so every run gives these numbers.")
	fmt.Println()
	fmt.Println("| half | conversations | questions | R@5 | R@10 | MRR | plain BM25 R@5 | plain BM25 MRR |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|")
	for _, h := range []struct {
		name string
		in   func(int) bool
	}{{"A (tuned on)", func(c int) bool { return c < len(samples)/2+1 }}, {"B (held out)", func(c int) bool { return c >= len(samples)/2+1 }}} {
		sel := func(q question) bool { return head(q) && h.in(q.conv) }
		var names []string
		for ci, smp := range samples {
			if h.in(ci) {
				names = append(names, smp.SampleID)
			}
		}
		s, p := full.score(sel), peer.score(sel)
		fmt.Printf("| %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f |\n", h.name, strings.Join(names, ", "), s.n, s.r5(), s.r10(), s.mrr(), p.r5(), p.mrr())
	}
	return nil
}

// results keeps each question's ranked list, to score any subset of the questions.
type results struct {
	qs    []question
	lists [][]string
}

// add keeps one ranked list and reports whether any wanted session is in its first ten.
func (r *results) add(q question, got []string) bool {
	r.qs = append(r.qs, q)
	r.lists = append(r.lists, got)
	for _, p := range first(got, 10) {
		if q.want[p] {
			return true
		}
	}
	return false
}

func (r results) score(sel func(question) bool) score {
	var s score
	for i, q := range r.qs {
		if sel(q) {
			s.add(r.lists[i], q.want)
		}
	}
	return s
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
	a, err := benchkit.Open(ctx, root)
	if err != nil {
		return nil, err
	}
	return a.Memory, nil // the process ends with the bench; its box stays open until then
}

// memorySearch asks the memory exactly as `box search WORDS --limit 10` does and returns the whole list
// and the rule's matches alone.
func memorySearch(m *memory.Memory, q string) (all, matches []string, err error) {
	res, err := m.Search(context.Background(), memory.SearchInput{Words: q, Limit: 10})
	for _, h := range res.Hits {
		all = append(all, h.Path)
		if !h.Partial {
			matches = append(matches, h.Path)
		}
	}
	return all, matches, err
}

var evidenceID = regexp.MustCompile(`^D(\d+):`)

func build(samples []sample) ([]session, []question, int, error) {
	var sessions []session
	var questions []question
	skipped := 0
	for ci, smp := range samples {
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
			questions = append(questions, question{text: q.Question, category: q.Category, conv: ci, want: want})
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
// (title, date, turns).
type bm25 struct {
	paths []string
	tf    []map[string]int
	lens  []float64
	df    map[string]int
	avg   float64
}

var alnum = regexp.MustCompile(`[a-z0-9]+`)

func tokens(s string) []string { return alnum.FindAllString(strings.ToLower(s), -1) }

func newBM25(sessions []session) *bm25 {
	b := &bm25{df: map[string]int{}}
	total := 0.0
	for _, s := range sessions {
		tf := map[string]int{}
		toks := tokens(s.title + "\n" + s.text())
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
