// Command imports benchmarks `box import` and the tidy that files what came in, with the real binary,
// one process each, on generated sources in the published shapes (docs/IMPORTS.md): a server-memory
// graph and a ChatGPT export zip, each at two sizes, so the peak RSS shows whether memory follows the
// source (it must not: sources are streamed) or only what is written. It prints a Markdown section.
//
//	go run ./bench/imports [-observations 2500,10000] [-conversations 500,2000]   ($BOX_BIN or a fresh build)
package main

import (
	"archive/zip"
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/boxmem/box/bench/benchkit"
)

var (
	observations  = flag.String("observations", "2500,10000", "observations per server-memory graph")
	conversations = flag.String("conversations", "500,2000", "conversations per ChatGPT export")
)

func main() { benchkit.Run("imports", run) }

// step is one timed process: wall time and peak resident memory.
type step struct {
	wall time.Duration
	rss  int64 // KiB
	out  map[string]any
}

type row struct {
	what        string
	source      int64 // bytes
	items       int   // lines or documents that came in
	unit        string
	imp, tidy   step
	filed       int
	tidyCreated int
}

func run(tmp, bin string) error {
	ctx := context.Background()
	var rows []row
	for _, n := range ints(*observations) {
		src := filepath.Join(tmp, fmt.Sprintf("memory-%d.jsonl", n))
		size, err := genGraph(src, n)
		if err != nil {
			return err
		}
		r, err := measure(ctx, tmp, bin, "server-memory", src, fmt.Sprintf("server-memory graph, %d observations (%d entities, %d relations)", n, n/5, n/10))
		if err != nil {
			return err
		}
		r.source, r.unit = size, "lines"
		r.items = num(r.imp.out, "lines")
		rows = append(rows, r)
	}
	for _, n := range ints(*conversations) {
		src := filepath.Join(tmp, fmt.Sprintf("chatgpt-%d.zip", n))
		size, err := genChatGPT(src, n)
		if err != nil {
			return err
		}
		r, err := measure(ctx, tmp, bin, "chatgpt", src, fmt.Sprintf("ChatGPT export zip, %d conversations (+ %d saved memories)", n, n/10))
		if err != nil {
			return err
		}
		r.source, r.unit = size, "documents"
		r.items = num(r.imp.out, "documents")
		rows = append(rows, r)
	}
	print(rows)
	return nil
}

// measure imports src into a new box, then tidies it, each as its own process.
func measure(ctx context.Context, tmp, bin, kind, src, what string) (row, error) {
	root := filepath.Join(tmp, "box-"+filepath.Base(src))
	if err := benchkit.NewBox(ctx, root); err != nil {
		return row{}, err
	}
	imp, err := timed(bin, root, "import", kind, src)
	if err != nil {
		return row{}, err
	}
	td, err := timed(bin, root, "tidy")
	if err != nil {
		return row{}, err
	}
	created, _ := td.out["created"].([]any)
	return row{what: what, imp: imp, tidy: td, filed: num(td.out, "filed"), tidyCreated: len(created)}, nil
}

// timed runs the box binary with --json and returns its wall time, peak RSS and output.
func timed(bin, root string, args ...string) (step, error) {
	cmd := exec.Command(bin, append([]string{"--box", root, "--json"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		return step{}, fmt.Errorf("box %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		return step{}, fmt.Errorf("box %s: %v", args[0], err)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := step{wall: wall, out: res}
	if ru != nil {
		s.rss = ru.Maxrss // KiB on Linux
	}
	return s, nil
}

func num(m map[string]any, k string) int {
	f, _ := m[k].(float64)
	return int(f)
}

var (
	firstNames = strings.Fields("Leo Mira Ana Tomás Zoë Kenji Amara Ravi Lena Omar Ines Yusuf Clara Mateo Aiko Noor Sven Lucía Femi Hana")
	lastNames  = strings.Fields("Silva Okafor Tanaka Novak Haddad Larsen Moreau Costa Ivanova Mensah Kowalski Reyes Singh Brandt Ito")
	facts      = []string{"Swims on Thursdays at %d:30", "Likes tram %d in Lisbon", "Works night shifts %d days a month", "Has read %d books this year",
		"Moved flats in %d", "Plays the cello since %d", "Keeps %d tomato plants on the balcony", "Runs %d km on Sundays"}
	relations = strings.Fields("son_of works_with friend_of lives_near knows mentors")
)

// genGraph writes a server-memory graph with n observations over n/5 entities and n/10 relations.
func genGraph(path string, n int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	name := func(i int) string {
		return fmt.Sprintf("%s %s %d", firstNames[i%len(firstNames)], lastNames[(i/len(firstNames))%len(lastNames)], i)
	}
	ents := n / 5
	for i := 0; i < ents; i++ {
		obs := make([]string, 5)
		for j := range obs {
			obs[j] = fmt.Sprintf(facts[rng.IntN(len(facts))], i*5+j)
		}
		enc.Encode(map[string]any{"type": "entity", "name": name(i), "entityType": []string{"person", "organization", "place", "project"}[i%4], "observations": obs})
	}
	for i := 0; i < n/10; i++ {
		enc.Encode(map[string]any{"type": "relation", "from": name(rng.IntN(ents)), "to": name(rng.IntN(ents)), "relationType": relations[rng.IntN(len(relations))]})
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	fi, _ := f.Stat()
	return fi.Size(), f.Close()
}

// genChatGPT writes a ChatGPT export zip: n conversations of 10–40 messages (every fifth with a
// regenerated answer, so a branch), written one at a time, and n/10 saved memories. It returns the size
// of conversations.json before compression.
func genChatGPT(path string, n int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	zw := zip.NewWriter(f)
	cw, err := zw.Create("conversations.json")
	if err != nil {
		return 0, err
	}
	counted := &counter{w: cw}
	w := bufio.NewWriter(counted)
	rng := rand.New(rand.NewPCG(2, uint64(n)))
	words := strings.Fields("the a trip plan garden tomato lisbon tram school swim recipe bread starter flour oven weekend budget car train museum doctor appointment book cello run park river coffee tea")
	sentence := func(k int) string {
		var b strings.Builder
		for i := 0; i < k; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String() + "."
	}
	w.WriteString("[")
	for c := 0; c < n; c++ {
		if c > 0 {
			w.WriteString(",")
		}
		t0 := 1.7e9 + float64(c)*3600
		msgs := 10 + rng.IntN(31)
		mapping := map[string]any{"root": map[string]any{"id": "root", "message": nil, "parent": nil, "children": []string{"m0"}}}
		parent := "root"
		for i := 0; i < msgs; i++ {
			id := "m" + strconv.Itoa(i)
			role := []string{"user", "assistant"}[i%2]
			var parts []string
			for p := 0; p < 1+rng.IntN(4); p++ {
				parts = append(parts, sentence(8+rng.IntN(30)))
			}
			node := map[string]any{"id": id, "parent": parent, "children": []string{},
				"message": map[string]any{"id": id, "author": map[string]any{"role": role}, "create_time": t0 + float64(i*30),
					"content": map[string]any{"content_type": "text", "parts": []string{strings.Join(parts, " ")}}}}
			mapping[id] = node
			pn := mapping[parent].(map[string]any)
			kids := pn["children"].([]string)
			if c%5 == 0 && i == 1 { // a regenerated first answer: a branch off the shown path
				old := "old-" + id
				mapping[old] = map[string]any{"id": old, "parent": parent, "children": []string{},
					"message": map[string]any{"id": old, "author": map[string]any{"role": "assistant"}, "create_time": t0 + 20,
						"content": map[string]any{"content_type": "text", "parts": []string{sentence(20)}}}}
				kids = append(kids, old)
			}
			pn["children"] = append(kids, id)
			parent = id
		}
		conv := map[string]any{"id": fmt.Sprintf("conv-%06d", c), "title": strings.TrimSuffix(sentence(4), "."), "create_time": t0, "update_time": t0 + 3600,
			"current_node": parent, "mapping": mapping}
		data, _ := json.Marshal(conv)
		w.Write(data)
	}
	w.WriteString("]")
	if err := w.Flush(); err != nil {
		return 0, err
	}
	mw, err := zw.Create("memory.json")
	if err != nil {
		return 0, err
	}
	var mems []map[string]any
	for i := 0; i < n/10; i++ {
		mems = append(mems, map[string]any{"id": fmt.Sprintf("mem-%d", i), "content": fmt.Sprintf("%s %s likes %s", firstNames[i%len(firstNames)], lastNames[i%len(lastNames)], words[i%len(words)]), "enabled": true})
	}
	json.NewEncoder(mw).Encode(mems)
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return counted.n, f.Close()
}

// counter counts what goes through it: the size of conversations.json before compression.
type counter struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func print(rows []row) {
	fmt.Println("<!-- bench:imports -->")
	fmt.Println("## Imports")
	fmt.Println()
	fmt.Printf("`go run ./bench/imports` (bench/run.sh imports; flags -observations %s -conversations %s). The real binary, one process\n", *observations, *conversations)
	fmt.Printf("per step, on %s: `box import KIND SOURCE` into a new box (one commit), then `box tidy` (one commit)\n", benchkit.Machine())
	fmt.Println("filing what came in. Sources are generated in the published shapes (docs/IMPORTS.md); peak RSS is the process's")
	fmt.Println("`ru_maxrss`; a ChatGPT source's size is its conversations.json before compression. Each source is streamed: at two")
	fmt.Println("sizes, RSS follows what is written (the transaction holds it), not the size of the source. Import time is mostly")
	fmt.Println("the box transaction's (a temp file, an fsync and a git blob per document); tidy's is the deterministic filing.")
	fmt.Println()
	fmt.Println("| source | size | came in | import | per second | import peak RSS | tidy (filed, new notes) | filed per second | tidy peak RSS |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Printf("| %s | %.1f MiB | %d %s | %.2f s | %.0f %s/s | %d MiB | %.2f s (%d, %d) | %.0f lines/s | %d MiB |\n",
			r.what, float64(r.source)/(1<<20), r.items, r.unit, r.imp.wall.Seconds(), float64(r.items)/r.imp.wall.Seconds(), r.unit,
			r.imp.rss>>10, r.tidy.wall.Seconds(), r.filed, r.tidyCreated, float64(r.filed)/r.tidy.wall.Seconds(), r.tidy.rss>>10)
	}
	fmt.Println("<!-- bench:end -->")
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}
