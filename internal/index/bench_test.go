package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The benchmarks index generated memories: entity notes for people and places, topic notes, and inbox
// lines, over a vocabulary of names, places, jobs, hobbies and everyday words.

var (
	firstNames = strings.Fields(`Leo Mia Ana Tom Eva Sam Ivy Max Zoe Ben Ada Eli Noa Kai Lea Ray Joy Ian Amy Dan
Lucas Emma Olivia Noah Liam Sofia Mateo Chloe Hugo Clara Felix Nora Oscar Alice Jonas Marta Pablo Ines Tiago Rosa
Yuki Hana Kenji Aiko Ravi Priya Arjun Meera Omar Layla Karim Nadia Ivan Olga Petra Milan Sven Freya Lars Astrid`)
	lastNames = strings.Fields(`Marsh Silva Costa Reyes Novak Berg Hale Quinn Moreau Rossi Tanaka Sato Khan Patel
Okafor Mensah Fischer Weber Larsen Dahl Santos Ferreira Murphy Kelly Walsh Byrne Duarte Lopes Pereira Almeida`)
	places = strings.Fields(`Lisbon Porto Madrid Paris Berlin Vienna Prague Oslo Dublin Rome Milan Kyoto Osaka
Lagos Accra Nairobi Cairo Lima Quito Bogota Denver Austin Boston Seattle Toronto Montreal Sydney Perth Auckland
Reykjavik Tallinn Riga Krakow Seville Valencia Bilbao Lyon Nantes Geneva Zurich`)
	jobs = strings.Fields(`carpenter nurse teacher architect baker engineer designer pilot chef lawyer doctor
pharmacist librarian plumber photographer journalist translator accountant gardener musician`)
	hobbies = strings.Fields(`cycling climbing chess pottery painting surfing running sailing knitting birding
gardening fishing hiking photography baking swimming rowing skiing tennis jazz`)
	things = strings.Fields(`coffee tea wine bread cheese olives books records bicycles plants cameras guitars
violins maps stamps watches kites boats dogs cats horses`)
	verbs = strings.Fields(`likes enjoys collects loves took-up plays teaches studies sells repairs
tried gave-up misses shares avoids`)
	filler = strings.Fields(`meeting dinner birthday project deadline weekend holiday flight hotel concert
museum market garden kitchen office school hospital station bridge river mountain beach forest island village
morning evening winter summer spring autumn letter phone message invoice contract budget recipe present
gift party wedding trip visit call reminder doctor appointment class lesson course exam report review plan`)
)

// The short real lists are stretched with made-up words of two or three syllables, so that, as in a
// real box, most names and places occur in a few notes and a few occur in many (picks are Zipf-like).
func init() {
	syl := strings.Fields("ka lo mi ra te no vi sa de li ma ro ta ne zo be ri la so fe gu an el or")
	made := func(n, parts int, suffixes ...string) []string {
		r := rand.New(rand.NewPCG(uint64(n), uint64(parts)))
		var out []string
		for range n {
			w := ""
			for range parts {
				w += syl[r.IntN(len(syl))]
			}
			if len(suffixes) > 0 {
				w += suffixes[r.IntN(len(suffixes))]
			}
			out = append(out, strings.ToUpper(w[:1])+w[1:])
		}
		return out
	}
	firstNames = append(firstNames, made(400, 2)...)
	lastNames = append(lastNames, made(2000, 3)...)
	places = append(places, made(600, 2, "ville", "port", "ton", "berg", "a")...)
	for _, w := range made(2000, 3) {
		filler = append(filler, strings.ToLower(w))
	}
	hobbies = append(hobbies, strings.Fields(`archery bouldering calligraphy canoeing crochet darts embroidery fencing
golf judo karate kayaking origami parkour quilting rugby sculpting snorkeling squash woodworking yoga`)...)
	things = append(things, strings.Fields(`lamps rugs clocks vinyl comics puzzles candles teapots knives pens
notebooks scarves hats shoes bags mugs posters prints sketches fossils`)...)
}

// pick is skewed: low indexes (the real words) come up often, the long tail rarely.
func pick(r *rand.Rand, xs []string) string {
	if r.IntN(3) == 0 {
		return xs[r.IntN(len(xs))]
	}
	return xs[int(float64(len(xs))*r.Float64()*r.Float64()*r.Float64())]
}

func genNote(r *rand.Rand, i int) Doc {
	first, last, place := pick(r, firstNames), pick(r, lastNames), pick(r, places)
	name := first + " " + last
	var body strings.Builder
	fmt.Fprintf(&body, "## Snapshot\n%s is a %s living in %s.\n\n## Key facts\n", name, pick(r, jobs), place)
	for range 4 + r.IntN(6) {
		fmt.Fprintf(&body, "- %s %s %s and %s; %s %s in %s.\n", first, pick(r, verbs), pick(r, hobbies), pick(r, things),
			pick(r, filler), pick(r, filler), pick(r, places))
	}
	body.WriteString("\n## Timeline\n")
	for range 2 + r.IntN(4) {
		fmt.Fprintf(&body, "- 2026-%02d-%02d: %s %s with %s in %s.\n", 1+r.IntN(12), 1+r.IntN(28), pick(r, filler),
			pick(r, filler), pick(r, firstNames), pick(r, places))
	}
	p := fmt.Sprintf("/_content/memory/notes/entity-%s-%s-%d.md", strings.ToLower(first), strings.ToLower(last), i)
	return Doc{
		Path: p, Kind: "note", Title: name, Aliases: []string{first}, Map: "moc-people",
		Description: fmt.Sprintf("%s from %s", pick(r, jobs), place), Body: body.String(),
		Who: "owner", Trust: "own", Date: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),
		Size: int64(body.Len()), Hash: fmt.Sprint(i),
	}
}

func genInbox(r *rand.Rand, i int) Doc {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i/50)
	file := fmt.Sprintf("/_content/inbox/%s.md", day.Format("2006-01-02"))
	trust, who := "own", "owner"
	if r.IntN(4) == 0 {
		trust, who = "outside", "claude"
	}
	return Doc{
		Path: fmt.Sprintf("%s#l%d", file, i), Kind: "inbox", Who: who, Trust: trust, Date: day,
		Body: fmt.Sprintf("%s %s %s with %s in %s", pick(r, firstNames), pick(r, []string{"booked", "moved", "bought", "cancelled", "loves"}),
			pick(r, filler), pick(r, things), pick(r, places)),
		Hash: file,
	}
}

// corpus returns the files of a generated box: notes one per file, inbox lines fifty per day file.
func corpus(notes, inbox int) []FileDocs {
	r := rand.New(rand.NewPCG(1, 2))
	var files []FileDocs
	for i := range notes {
		d := genNote(r, i)
		files = append(files, FileDocs{Path: d.Path, Stamp: FileStamp{Size: d.Size, Hash: d.Hash}, Docs: []Doc{d}})
	}
	for i := range inbox {
		d := genInbox(r, i)
		file, _, _ := strings.Cut(d.Path, "#")
		if n := len(files); n > 0 && files[n-1].Path == file {
			files[n-1].Docs = append(files[n-1].Docs, d)
			continue
		}
		files = append(files, FileDocs{Path: file, Stamp: FileStamp{Hash: file}, Docs: []Doc{d}})
	}
	return files
}

var (
	benchDir  string
	benchOnce sync.Once
	builtMu   sync.Mutex
	built     = map[string]string{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchIndex builds (once per process) an index of the given size and opens it.
func benchIndex(b *testing.B, notes, inbox int) *Index {
	b.Helper()
	benchOnce.Do(func() {
		var err error
		if benchDir, err = os.MkdirTemp("", "box-index-bench-"); err != nil {
			b.Fatal(err)
		}
	})
	key := fmt.Sprintf("%d-%d", notes, inbox)
	builtMu.Lock()
	defer builtMu.Unlock()
	path, ok := built[key]
	if !ok {
		path = filepath.Join(benchDir, key+".db")
		ix, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		files := corpus(notes, inbox)
		start := time.Now()
		for chunk := range slices.Chunk(files, reconcileBatch) {
			if err := ix.ReplaceFiles(chunk); err != nil {
				b.Fatal(err)
			}
		}
		if err := ix.Optimize(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.Logf("built %s in %v", key, time.Since(start))
		ix.Close()
		built[key] = path
	}
	ix, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	return ix
}

// benchQueries mixes what people type: a name, two words, a short fact, a long question.
func benchQueries() []Query {
	r := rand.New(rand.NewPCG(3, 4))
	var qs []Query
	for i := range 200 {
		var text string
		switch i % 5 {
		case 0:
			text = pick(r, firstNames)
		case 1:
			text = pick(r, firstNames) + " " + pick(r, places)
		case 2:
			text = fmt.Sprintf("%s %s %s", pick(r, firstNames), pick(r, hobbies), pick(r, places))
		case 3:
			text = fmt.Sprintf("Where did %s %s go for the %s in %s?", pick(r, firstNames), pick(r, lastNames), pick(r, filler), pick(r, places))
		case 4:
			text = fmt.Sprintf("what does %s the %s from %s like to do with %s and %s on %s %s", pick(r, firstNames),
				pick(r, jobs), pick(r, places), pick(r, things), pick(r, hobbies), pick(r, filler), pick(r, filler))
		}
		qs = append(qs, Query{Text: text, Limit: 10})
	}
	return qs
}

func benchSearch(b *testing.B, notes, inbox int, partial bool) {
	ix := benchIndex(b, notes, inbox)
	ctx := context.Background()
	qs := benchQueries()
	for i := range qs {
		qs[i].Partial = partial
	}
	for _, q := range qs { // warm the statement cache and the page cache
		if _, err := ix.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := ix.Search(ctx, qs[i%len(qs)]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

func BenchmarkSearch1k(b *testing.B)            { benchSearch(b, 1_000, 0, false) }
func BenchmarkSearch10k(b *testing.B)           { benchSearch(b, 10_000, 0, false) }
func BenchmarkSearch100kInbox100k(b *testing.B) { benchSearch(b, 100_000, 100_000, false) }

// BenchmarkSearch10kPartial is what box search does: the rule's matches, then partial matches when
// fewer than the limit match.
func BenchmarkSearch10kPartial(b *testing.B) { benchSearch(b, 10_000, 0, true) }

func benchReindex(b *testing.B, notes int) {
	files := corpus(notes, 0)
	byPath := map[string][]Doc{}
	current := map[string]FileStamp{}
	for _, f := range files {
		byPath[f.Path], current[f.Path] = f.Docs, f.Stamp
	}
	load := func(p string) ([]Doc, error) { return byPath[p], nil }
	for b.Loop() {
		b.StopTimer()
		ix, err := Open(filepath.Join(b.TempDir(), "index.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if n, err := ix.Reconcile(context.Background(), current, load, nil); err != nil || n != notes {
			b.Fatal(n, err)
		}
		b.StopTimer()
		ix.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(notes)/(b.Elapsed().Seconds()/float64(b.N)), "notes/s")
}

func BenchmarkReindex10k(b *testing.B)  { benchReindex(b, 10_000) }
func BenchmarkReindex100k(b *testing.B) { benchReindex(b, 100_000) }

// BenchmarkSearchBroad10k: one word thousands of the 10k notes hold ("likes", a verb of their key facts;
// "leo", the commonest first name), 10 returned (docs/SEARCH.md, "Cost").
func BenchmarkSearchBroad10k(b *testing.B) {
	ix := benchIndex(b, 10_000, 0)
	ctx := context.Background()
	for _, w := range []string{"likes", "leo"} {
		b.Run(w, func(b *testing.B) {
			q := Query{Text: w, Limit: 10, Partial: true}
			hits, err := ix.Search(ctx, q)
			if err != nil || len(hits) != 10 {
				b.Fatal(len(hits), err)
			}
			for b.Loop() {
				if _, err := ix.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSearchLean10k is the index's part of bench/mcp's lean request path: 10,000 notes as that
// harness writes them (a unique name, "<Name> likes <hobby> in <city>."), searched as memory.Search does
// (partial matches on, 10 returned) for one name, a word no note holds, a city 1,429 notes hold and a
// word every note holds.
func BenchmarkSearchLean10k(b *testing.B) {
	hobbies := []string{"gardening", "chess", "climbing", "baking", "cycling", "painting", "sailing", "pottery", "running", "fishing"}
	cities := []string{"Lyon", "Porto", "Leeds", "Bergen", "Graz", "Ghent", "Turin"}
	name := func(i int) string {
		w := []byte("zoraaaa")
		for k := len(w) - 1; k >= 3; k-- {
			w[k] = byte('a' + i%26)
			i /= 26
		}
		return string(w)
	}
	var files []FileDocs
	for i := range 10_000 {
		nm := name(i)
		title := strings.ToUpper(nm[:1]) + nm[1:]
		fact := fmt.Sprintf("%s likes %s in %s.", title, hobbies[i%len(hobbies)], cities[i%len(cities)])
		p := "/_content/memory/notes/entity-" + nm + ".md"
		d := Doc{Path: p, Kind: "note", Title: title, Description: fact, Who: "owner", Trust: "own",
			Body: fmt.Sprintf("# %s\n\n## Snapshot\n%s\n\n## Key facts\n- Likes %s.\n- Lives in %s.\n", title, fact, hobbies[i%len(hobbies)], cities[i%len(cities)]),
			Hash: nm}
		files = append(files, FileDocs{Path: p, Stamp: FileStamp{Hash: nm}, Docs: []Doc{d}})
	}
	ix, err := Open(filepath.Join(b.TempDir(), "index.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	for chunk := range slices.Chunk(files, reconcileBatch) {
		if err := ix.ReplaceFiles(chunk); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	if err := ix.Optimize(ctx); err != nil { // as Reconcile leaves a rebuilt index
		b.Fatal(err)
	}
	for _, q := range []struct{ label, words string }{{"one", name(5000)}, {"none", "xylophone"}, {"lyon", "lyon"}, {"likes", "likes"}} {
		b.Run(q.label, func(b *testing.B) {
			s := Query{Text: q.words, Limit: 10, Partial: true}
			if _, err := ix.Search(ctx, s); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := ix.Search(ctx, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
