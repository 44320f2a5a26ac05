package index

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
)

func mustOpen(tb testing.TB) *Index {
	tb.Helper()
	ix, err := Open(filepath.Join(tb.TempDir(), ".box", "index.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	return ix
}

func note(path, title, body string) Doc {
	return Doc{Path: path, Kind: "note", Title: title, Body: body, Trust: "own", Who: "owner",
		Date: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func put(tb testing.TB, ix *Index, docs ...Doc) {
	tb.Helper()
	for _, d := range docs {
		if err := ix.ReplaceFile(d.Path, []Doc{d}); err != nil {
			tb.Fatal(err)
		}
	}
}

func paths(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	slices.Sort(out)
	return out
}

func search(tb testing.TB, ix *Index, q Query) []Hit {
	tb.Helper()
	hits, err := ix.Search(context.Background(), q)
	if err != nil {
		tb.Fatalf("Search(%q): %v", q.Text, err)
	}
	return hits
}

func TestQueryRules(t *testing.T) {
	ix := mustOpen(t)
	put(t, ix,
		note("/a", "Leo", "Leo plays the cello in Lisbon"),
		note("/b", "Mia", "Mia runs marathons in Porto"),
		note("/c", "Trip", "Leo and Mia visited Porto together"),
		note("/d", "Cooking", "the best cellist recipes; running shoes"),
		note("/e", "Chess", "Ana won the chess final"),
	)
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"leo", []string{"/a", "/c"}},
		{"LEO!", []string{"/a", "/c"}},
		{"leo porto", []string{"/c"}},                                                 // two words: both
		{"leo porto lisbon", []string{"/a", "/c"}},                                    // three words: two of them
		{"leo mia porto lisbon", []string{"/a", "/b", "/c"}},                          // four: two
		{"leo mia porto lisbon cello marathons together", []string{"/c"}},             // seven: four (counted)
		{"leo mia porto lisbon cello marathons together plays", []string{"/a", "/c"}}, // eight: four
		{"the and of it", nil},                                                        // stopwords only
		{"the leo", []string{"/a", "/c"}},                                             // stopwords dropped
		{"won", []string{"/e"}},                                                       // the past of win, not a stopword
		{`"plays the cello"`, []string{"/a"}},                                         // phrase
		{`"cello plays"`, nil},                                                        // phrase order matters
		{`"the of"`, nil},                                                             // phrase of stopwords
		{"cell*", []string{"/a", "/d"}},                                               // prefix
		{"run", []string{"/b", "/d"}},                                                 // porter stemming: runs, running
		{"marathon", []string{"/b"}},
		{"visit", []string{"/c"}},
		{"zebra", nil},
		{"leo zebra", nil},
	} {
		t.Run(tc.text, func(t *testing.T) {
			if got := paths(search(t, ix, Query{Text: tc.text})); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHostileInputNeverErrors(t *testing.T) {
	ix := mustOpen(t)
	put(t, ix, note("/a", "Leo", "Leo plays the cello; e-mail leo@example.com NEAR(x y)"))
	for _, text := range []string{
		`"`, `""`, `"""`, `*`, `**`, `leo*`, `*leo`, `le*o`, `(`, `)`, `leo)`, `AND`, `OR`, `NOT`, `leo AND`,
		`NEAR(leo cello)`, `leo NOT cello`, `title:leo`, `{title}: leo`, `^leo`, `leo + cello`, `-leo`,
		`'; DROP TABLE docs; --`, "\x00", "leo\x00cello", `\"`, `"leo`, `leo"`, `"leo" "cello`, `e-mail*`,
		`leo@example.com`, "日本語 テスト", "café", "ℌ𝔢𝔩𝔩𝔬", "\u0301", `""*`, `"*"`, `*"leo"`, `: ; , . ! ?`,
	} {
		if _, err := ix.Search(context.Background(), Query{Text: text}); err != nil {
			t.Errorf("Search(%q): %v", text, err)
		}
	}
	if hits := search(t, ix, Query{Text: `"leo`}); len(hits) != 1 {
		t.Errorf("an unclosed quote still finds: %v", hits)
	}
}

func TestBadQueryIsInvalid(t *testing.T) {
	ix := mustOpen(t)
	now := time.Now()
	for _, q := range []Query{
		{Text: "x", Limit: -1},
		{Text: "x", Limit: MaxLimit + 1},
		{Text: "x", Trust: "maybe"},
		{Text: "x", Since: now, Until: now.Add(-time.Hour)},
		{Text: string(make([]byte, maxTextBytes+1))},
	} {
		if _, err := ix.Search(context.Background(), q); !errs.Is(err, errs.Invalid) {
			t.Errorf("%+v: got %v, want Invalid", q, err)
		}
	}
}

func TestFiltersAndRanking(t *testing.T) {
	ix := mustOpen(t)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 12, 0, 0, 0, time.UTC) }
	put(t, ix,
		Doc{Path: "/n/leo", Kind: "note", Title: "Leo", Body: "a friend", Map: "moc-people", Trust: "own", Date: day(1)},
		Doc{Path: "/n/x", Kind: "note", Title: "Cello", Body: "Leo bought a cello", Map: "moc-music", Trust: "own", Date: day(2)},
		Doc{Path: "/i#1", Kind: "inbox", Body: "leo called", Who: "Claude", Trust: "outside", Date: day(3)},
		Doc{Path: "/i#2", Kind: "inbox", Body: "leo called", Who: "owner", Trust: "own", Date: day(4)},
	)
	for _, tc := range []struct {
		q    Query
		want []string
	}{
		{Query{Kind: "inbox"}, []string{"/i#1", "/i#2"}},
		{Query{Map: "moc-people"}, []string{"/n/leo"}},
		{Query{Who: "claude"}, []string{"/i#1"}},
		{Query{Trust: "own", Kind: "inbox"}, []string{"/i#2"}},
		{Query{Since: day(2), Until: day(3)}, []string{"/i#1", "/n/x"}},
		{Query{Limit: 1, Kind: "note"}, []string{"/n/leo"}}, // title beats body
	} {
		tc.q.Text = "leo"
		if got := paths(search(t, ix, tc.q)); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: got %v, want %v", tc.q, got, tc.want)
		}
	}
	hits := search(t, ix, Query{Text: "leo called"})
	if len(hits) != 2 || hits[0].Path != "/i#2" {
		t.Errorf("equal scores should put the newer first: %+v", hits)
	}
	if h := hits[0]; h.Snippet != "**leo** **called**" || h.Who != "owner" || h.Trust != "own" || !h.Date.Equal(day(4)) || h.Score <= 0 {
		t.Errorf("hit fields: %+v", h)
	}
}

func TestPartial(t *testing.T) {
	ix := mustOpen(t)
	put(t, ix, note("/a", "Leo", "Leo plays the cello"), note("/b", "Mia", "Mia plays drums and guitar"))
	if hits := search(t, ix, Query{Text: "leo cello guitar"}); len(hits) != 1 || hits[0].Path != "/a" {
		t.Fatalf("strict: %v", hits)
	}
	hits := search(t, ix, Query{Text: "leo cello guitar", Partial: true})
	if len(hits) != 2 || hits[0].Path != "/a" || hits[0].Partial || hits[1].Path != "/b" || !hits[1].Partial {
		t.Fatalf("relaxed: %+v", hits)
	}
	if hits := search(t, ix, Query{Text: "leo cello guitar", Partial: true, Limit: 1}); len(hits) != 1 || hits[0].Partial {
		t.Fatalf("relaxed within the limit: %+v", hits)
	}
	if hits := search(t, ix, Query{Text: "zebra leo", Partial: true}); len(hits) != 1 || !hits[0].Partial {
		t.Fatalf("relaxed, nothing strict: %+v", hits)
	}
}

func TestFilesReplaceDeleteReconcile(t *testing.T) {
	ctx := context.Background()
	ix := mustOpen(t)
	mt := time.Unix(1700000000, 123)
	inbox := "/_content/inbox/2026-11-29.md"
	lines := []Doc{
		{Path: inbox + "#a1", Kind: "inbox", Body: "Leo likes tea", ModTime: mt, Size: 10, Hash: "h1"},
		{Path: inbox + "#a2", Kind: "inbox", Body: "Mia likes coffee", ModTime: mt, Size: 10, Hash: "h1"},
	}
	if err := ix.ReplaceFile(inbox, lines); err != nil {
		t.Fatal(err)
	}
	if n, _ := ix.Count(ctx); n != 2 {
		t.Fatalf("count %d", n)
	}
	if err := ix.ReplaceFile(inbox, lines[1:]); err != nil { // a line removed
		t.Fatal(err)
	}
	if got := search(t, ix, Query{Text: "likes"}); len(got) != 1 || got[0].Path != inbox+"#a2" {
		t.Fatalf("after replace: %v", got)
	}
	files, err := ix.Files(ctx)
	if err != nil || !files[inbox].ModTime.Equal(mt) || files[inbox].Hash != "h1" {
		t.Fatalf("files %v %v", files, err)
	}

	loads := 0
	load := func(p string) ([]Doc, error) {
		loads++
		return []Doc{{Path: p, Kind: "note", Title: filepath.Base(p)}}, nil
	}
	current := map[string]FileStamp{inbox: files[inbox], "/n/one": {Size: 1, Hash: "x"}, "/n/two": {Size: 2, Hash: "y"}}
	var last [2]int
	n, err := ix.Reconcile(ctx, current, load, func(done, total int) { last = [2]int{done, total} })
	if err != nil || n != 2 || loads != 2 || last != [2]int{2, 2} {
		t.Fatalf("reconcile: n=%d loads=%d progress=%v err=%v", n, loads, last, err)
	}
	delete(current, inbox)
	current["/n/one"] = FileStamp{Size: 1, Hash: "changed"}
	if n, err = ix.Reconcile(ctx, current, load, nil); err != nil || n != 2 || loads != 3 {
		t.Fatalf("second reconcile: n=%d loads=%d err=%v", n, loads, err)
	}
	if n, err = ix.Reconcile(ctx, current, load, nil); err != nil || n != 0 {
		t.Fatalf("third reconcile changed %d, %v", n, err)
	}
	if c, _ := ix.Count(ctx); c != 2 {
		t.Fatalf("count %d", c)
	}
	if err := ix.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ix.DeleteFile("/n/one"); err != nil {
		t.Fatal(err)
	}
	if got := search(t, ix, Query{Text: "one"}); len(got) != 0 {
		t.Fatalf("deleted file still found: %v", got)
	}
}

// TestReconcileIndexesOldestFirst: a rebuild indexes files by modification time, then path, so "most
// recently indexed" (docs/SEARCH.md, "Cost") means the newest files after a rebuild too.
func TestReconcileIndexesOldestFirst(t *testing.T) {
	ctx := context.Background()
	ix := mustOpen(t)
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	current := map[string]FileStamp{}
	for i, p := range []string{"/n/a", "/n/b", "/n/c", "/n/d", "/n/e", "/n/f"} {
		current[p] = FileStamp{ModTime: day.AddDate(0, 0, -i/2), Size: 1} // a, b newest; then c, d; e, f oldest
	}
	load := func(p string) ([]Doc, error) { return []Doc{{Path: p, Kind: "note", Body: "word"}}, nil }
	if _, err := ix.Reconcile(ctx, current, load, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	rows, err := ix.rdb.QueryContext(ctx, `SELECT path FROM docs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if want := []string{"/n/e", "/n/f", "/n/c", "/n/d", "/n/a", "/n/b"}; !slices.Equal(got, want) {
		t.Errorf("indexed in the order %v, want %v", got, want)
	}
}

func TestDocPathMovesBetweenFiles(t *testing.T) {
	ix := mustOpen(t)
	d := Doc{Path: "/x#1", Body: "walnut"}
	if err := ix.ReplaceFile("/a", []Doc{d}); err != nil {
		t.Fatal(err)
	}
	if err := ix.ReplaceFile("/b", []Doc{d}); err != nil {
		t.Fatal(err)
	}
	if got := search(t, ix, Query{Text: "walnut"}); len(got) != 1 {
		t.Fatalf("got %v", got)
	}
	if err := ix.DeleteFile("/b"); err != nil {
		t.Fatal(err)
	}
	if got := search(t, ix, Query{Text: "walnut"}); len(got) != 0 {
		t.Fatalf("got %v", got)
	}
}

func TestRebuild(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, path string)
	}{
		{"version", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", Version+1)); err != nil {
				t.Fatal(err)
			}
		}},
		{"meta", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("UPDATE meta SET value = '0' WHERE key = 'version'"); err != nil {
				t.Fatal(err)
			}
		}},
		{"tokenizer", func(t *testing.T, path string) { // an index of this version made with another tokenizer
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, q := range []string{`DROP TABLE fts`, `CREATE VIRTUAL TABLE fts USING fts5(title, aliases, description, body, tokenize='unicode61')`} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"garbage", func(t *testing.T, path string) {
			os.Remove(path + "-wal")
			os.Remove(path + "-shm")
			if err := os.WriteFile(path, []byte("this is not a database, it is a shopping list\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", func(t *testing.T, path string) {
			os.Remove(path + "-wal")
			os.Remove(path + "-shm")
			if err := os.Truncate(path, 100); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			ix, err := Open(path)
			if err != nil || !ix.NeedsRebuild() {
				t.Fatalf("new file: %v, needsRebuild=%v", err, ix != nil && ix.NeedsRebuild())
			}
			put(t, ix, note("/a", "Leo", "cello"))
			ix.Close()
			if ix, err = Open(path); err != nil || ix.NeedsRebuild() {
				t.Fatalf("reopen: %v, needsRebuild=%v", err, ix.NeedsRebuild())
			}
			ix.Close()
			tc.spoil(t, path)
			ix, err = Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if !ix.NeedsRebuild() {
				t.Fatal("spoiled index trusted")
			}
			if n, err := ix.Count(context.Background()); err != nil || n != 0 {
				t.Fatalf("count %d %v", n, err)
			}
			put(t, ix, note("/b", "Mia", "flute"))
			if got := search(t, ix, Query{Text: "flute"}); len(got) != 1 {
				t.Fatalf("rebuilt index: %v", got)
			}
		})
	}
}

// TestConcurrency runs writers and readers on one Index and on a second Index of the same file (as a
// second process would): no reader errors, no lost write.
func TestConcurrency(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const perWriter = 100
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	stop := make(chan struct{})
	for w, ix := range []*Index{a, a, b} {
		wg.Go(func() {
			for i := range perWriter {
				p := fmt.Sprintf("/_content/inbox/w%d.md", w)
				d := Doc{Path: fmt.Sprintf("%s#%d", p, i), Kind: "inbox", Body: fmt.Sprintf("walnut line %d", i)}
				if err := ix.ReplaceFiles([]FileDocs{{Path: p + fmt.Sprint(i), Docs: []Doc{d}}}); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	var readers sync.WaitGroup
	for _, ix := range []*Index{a, a, b, b} {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := ix.Search(ctx, Query{Text: "walnut line", Limit: 5}); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for _, ix := range []*Index{a, b} {
		if n, err := ix.Count(ctx); err != nil || n != 3*perWriter {
			t.Errorf("count %d, want %d (%v)", n, 3*perWriter, err)
		}
	}
}

// TestProcesses runs writers as separate processes (this test binary, re-executed) while this process
// searches the same file.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "index.db")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	const procs, each = 3, 60
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildWriter$")
		cmd.Env = append(os.Environ(), "BOX_INDEX_CHILD="+path, fmt.Sprintf("BOX_INDEX_CHILD_ID=%d", p))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	done := make(chan struct{})
	go func() {
		for _, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Error(err)
			}
		}
		close(done)
	}()
	for searching := true; searching; {
		select {
		case <-done:
			searching = false
		default:
			if _, err := ix.Search(context.Background(), Query{Text: "hazelnut"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, err := ix.Count(context.Background()); err != nil || n != procs*each {
		t.Fatalf("count %d, want %d (%v)", n, procs*each, err)
	}
	if hits := search(t, ix, Query{Text: "hazelnut", Limit: MaxLimit}); len(hits) != procs*each {
		t.Fatalf("found %d", len(hits))
	}
}

func TestChildWriter(t *testing.T) {
	path := os.Getenv("BOX_INDEX_CHILD")
	if path == "" {
		t.Skip("run by TestProcesses")
	}
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	id := os.Getenv("BOX_INDEX_CHILD_ID")
	for i := range 60 {
		f := fmt.Sprintf("/_content/p%s/%d.md", id, i)
		if err := ix.ReplaceFile(f, []Doc{{Path: f, Kind: "doc", Body: "hazelnut"}}); err != nil {
			t.Fatal(err)
		}
	}
}
