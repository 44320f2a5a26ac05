package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/apptest"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/routine"
)

// planted is a phrase no box holds by chance; the test puts it everywhere an erase must reach.
const planted = "Quokka-Marzipan-Lighthouse"

// After the owner's erase, no erased text can be read back: not from the working tree, not from any git
// object (every one, reachable or not), not from the trash, the archive, the diary, the index or the
// state store. The passkeys stay; every connection ends.
func TestEraseLeavesNoPlantedPhrase(t *testing.T) {
	ctx := context.Background()
	a := apptest.Open(t, app.Options{Now: leapNight})
	owner := memory.Actor{Who: "owner", Via: "cli", Trust: "own"}
	claude := memory.Actor{Who: "Claude " + planted, Via: "mcp", Conn: "k_x", Trust: "outside"}

	// The phrase in the inbox, a note (after a tidy), a core fact, the trash, a waiting and a decided card,
	// a to-do, a page's notes, the diary (summaries), git history, a key's name and the runtime folder.
	for _, text := range []string{"Leo met " + planted + " in Lisbon.", "Ana knows " + planted + " well."} {
		if _, err := a.Memory.Remember(ctx, claude, memory.RememberInput{Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Memory.Tidy(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Memory.Remember(ctx, owner, memory.RememberInput{Text: "Leo's school trip goes to the " + planted + " museum.", Core: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Memory.Remember(ctx, owner, memory.RememberInput{Text: "Mia said " + planted + " twice."}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Memory.Forget(ctx, owner, memory.ForgetInput{Words: "mia twice"}); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Save " + planted + " for later.", "Keep " + planted + " too."} {
		if _, err := a.Gate.Propose(ctx, memory.RememberAction(text), gate.Asker{Connection: claude.Who, Via: "mcp", Conn: claude.Conn}); err != nil {
			t.Fatal(err)
		}
	}
	cards, err := a.Gate.Waiting(ctx)
	if err != nil || len(cards) != 2 {
		t.Fatalf("cards: %v %v", cards, err)
	}
	if _, err := a.Gate.Approve(ctx, cards[0].ID, apptest.Local); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Todos.Add(ctx, owner, "", "Call "+planted); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Box.Do(ctx, box.Change{Actor: owner, Op: "edit", Summary: "owner wrote a page note about " + planted,
		Apply: func(tx *box.Tx) error {
			return tx.Write("/_content/pages/garden/notes.md", []byte("# Garden\n\n"+planted+" grows here.\n"))
		}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Keys.New(ctx, "Key for "+planted, keys.Caps{Memory: true}); err != nil {
		t.Fatal(err)
	}
	// A routine's prompt and the settings card hold the owner's words too; the brain's block stays.
	if _, err := a.Routines.Add(ctx, owner, routine.Routine{Name: "custody", At: "09:00", Days: []string{"mon"}, Prompt: "Check my notes on " + planted + "'s custody hearing.", On: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Box.Do(ctx, box.Change{Actor: owner, Op: "edit", Summary: "settings",
		Apply: func(tx *box.Tx) error {
			return tx.Write("/_config/settings.card", []byte("---\ntitle: Settings\nbrain:\n  provider: openai\n  model: gpt-4.1\n  budget: 12.5\n---\nThe settings; I keep "+planted+" in mind.\n"))
		}}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(a.Root, ".box", "sessions", "s1", "record.json"), `{"task":"ask about `+planted+`"}`)
	writeFile(t, filepath.Join(a.Root, "_tmp", "scratch.txt"), planted)
	for _, q := range []string{
		`INSERT INTO web_passkeys(id, name, cred, created) VALUES('pk1', 'My phone', '{}', 1)`,
		`INSERT INTO web_sessions(hash, csrf, created, seen) VALUES('s-hash', 'csrf', 1, 1)`,
		`INSERT INTO web_setup(hash, expires) VALUES('setup-hash', 9999999999)`,
	} {
		if _, err := a.State.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Memory.Search(ctx, memory.SearchInput{Words: planted}); err != nil {
		t.Fatal(err)
	}
	if where := findPhrase(t, a.Root); len(where) < 8 {
		t.Fatalf("the phrase was not planted widely enough to test anything: %v", where)
	}

	// The caller has gone (the browser tab closed) before the erase starts: it runs to the end anyway.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	res, err := a.Erase(gone, box.Actor{Who: "owner", Via: "web", Trust: "own"})
	if err != nil {
		t.Fatalf("erase: %v", err)
	}
	if res.Files == 0 || res.Entry == "" {
		t.Errorf("erase result: %+v", res)
	}
	if where := findPhrase(t, a.Root); len(where) > 0 {
		t.Fatalf("after erase the phrase can still be read back from:\n%s", strings.Join(where, "\n"))
	}
	if data, err := os.ReadFile(filepath.Join(a.Root, "_config", "settings.card")); err != nil || !strings.Contains(string(data), "brain:\n  provider: openai\n  model: gpt-4.1\n  budget: 12.5\n") {
		t.Errorf("the brain's settings did not stay (%v):\n%s", err, data)
	}
	if rs, err := a.Routines.List(ctx); err != nil || len(rs) != 0 {
		t.Errorf("a routine survived the erase: %+v %v", rs, err)
	}
	var n int
	if err := a.State.DB().QueryRowContext(ctx, `SELECT count(*) FROM web_passkeys`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the passkey did not stay: %d %v", n, err)
	}
	for _, table := range []string{"web_sessions", "web_setup"} {
		if err := a.State.DB().QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s keeps %d rows after the erase (%v): a web session or setup link outlived it", table, n, err)
		}
	}
	if conns, err := a.Keys.List(ctx); err != nil || len(conns) != 0 {
		t.Errorf("a connection survived: %v %v", conns, err)
	}
	es, err := a.Box.Diary(ctx, 10, nil)
	// No count in the line: it would be of a listing made before the lock, not of what was erased.
	if err != nil || len(es) != 1 || es[0].Op != "erase" || es[0].Summary != "owner erased the box" || len(es[0].Paths) != 0 || len(es[0].Undo) != 0 {
		t.Errorf("the diary after erase: %+v %v", es, err)
	}
	if out := git(t, a.Root, "rev-list", "--all", "--count"); out != "1" {
		t.Errorf("git keeps %s commits after erase, want 1", out)
	}
	// The box still works: a new fact is saved and found.
	if _, err := a.Memory.Remember(ctx, owner, memory.RememberInput{Text: "Leo swims on Fridays."}); err != nil {
		t.Fatal(err)
	}
	if hits, err := a.Memory.Search(ctx, memory.SearchInput{Words: "leo swims"}); err != nil || len(hits.Hits) != 1 {
		t.Errorf("after erase, search: %+v %v", hits, err)
	}
}

// findPhrase lists where the planted phrase can be read: every file under root (the working tree, .git,
// .box) and every git object, reachable or not, decompressed.
func findPhrase(t *testing.T, root string) []string {
	t.Helper()
	var where []string
	needle := []byte(planted)
	words := [][]byte{[]byte("Quokka"), []byte("quokka")} // an index holds words, not phrases
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, needle) || bytes.Contains(data, words[0]) || bytes.Contains(data, words[1]) {
			rel, _ := filepath.Rel(root, p)
			where = append(where, "file "+rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "cat-file", "--batch-all-objects", "--batch").Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, needle) || bytes.Contains(bytes.ToLower(out), []byte("quokka")) {
		where = append(where, "a git object (git cat-file --batch-all-objects)")
	}
	return where
}

func writeFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// reader holds a read transaction open on a SQLite file, as another process of the box does (a box mcp
// searching the index, a hook, a CLI verb reading the state), until release is called.
func reader(t *testing.T, path, query string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if err := tx.Rollback(); err != nil {
				t.Error(err)
			}
			if err := db.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// plantInDatabases puts the phrase in the state file (a key's name, a web session's row) and in the
// index, and checks that it is there (in the file or its write-ahead log) before the erase.
func plantInDatabases(t *testing.T, a *app.App) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := a.Keys.New(ctx, "Key for "+planted, keys.Caps{Memory: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Memory.Remember(ctx, memory.Actor{Who: "owner", Via: "cli", Trust: "own"}, memory.RememberInput{Text: "Leo met " + planted + " in Lisbon."}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Memory.Search(ctx, memory.SearchInput{Words: planted}); err != nil {
		t.Fatal(err)
	}
	where := strings.Join(findPhrase(t, a.Root), "\n")
	for _, f := range []string{"state.db", "index.db"} {
		if !strings.Contains(where, filepath.Join(".box", f)) {
			t.Fatalf("the phrase is not in %s or its log before the erase, so the test tests nothing:\n%s", f, where)
		}
	}
}

// Another process reading the state file and the index while the owner erases (a box mcp, a hook) must
// not keep erased rows alive in their write-ahead logs: the erase waits for the readers to let go and
// then folds the logs in and empties them.
func TestEraseWaitsForReaders(t *testing.T) {
	ctx := context.Background()
	a := apptest.Open(t, app.Options{Now: leapNight})
	plantInDatabases(t, a)
	rs := reader(t, filepath.Join(a.Root, ".box", "state.db"), `SELECT count(*) FROM connections`)
	ri := reader(t, filepath.Join(a.Root, ".box", "index.db"), `SELECT count(*) FROM sqlite_master`)
	go func() {
		time.Sleep(700 * time.Millisecond)
		rs()
		ri()
	}()
	if _, err := a.Erase(ctx, box.Actor{Who: "owner", Via: "web", Trust: "own"}); err != nil {
		t.Fatalf("erase: %v", err)
	}
	for _, f := range []string{"state.db-wal", "index.db-wal"} {
		if fi, err := os.Stat(filepath.Join(a.Root, ".box", f)); err == nil && fi.Size() != 0 {
			t.Errorf("%s keeps %d bytes after the erase", f, fi.Size())
		}
	}
	if where := findPhrase(t, a.Root); len(where) > 0 {
		t.Fatalf("after erase the phrase can still be read back from:\n%s", strings.Join(where, "\n"))
	}
}

// A reader that never lets go makes the erase fail, saying which file it could not empty, instead of
// reporting an erase that left erased rows in a log.
func TestEraseReportsALogItCannotEmpty(t *testing.T) {
	ctx := context.Background()
	a := apptest.Open(t, app.Options{Now: leapNight})
	plantInDatabases(t, a)
	reader(t, filepath.Join(a.Root, ".box", "state.db"), `SELECT count(*) FROM connections`)
	_, err := a.Erase(ctx, box.Actor{Who: "owner", Via: "web", Trust: "own"})
	if err == nil {
		t.Fatal("the erase reported success while another process held the state file's log")
	}
	if msg := err.Error(); !strings.Contains(msg, "state file") {
		t.Errorf("the error does not name the state file: %q", msg)
	}
}

// A worktree of the box's repository elsewhere would keep the erased history reachable: the erase
// refuses before it ends a connection or removes a file, and names the folder.
func TestEraseRefusesWithALinkedWorktree(t *testing.T) {
	ctx := context.Background()
	a := apptest.Open(t, app.Options{Now: leapNight})
	if _, err := a.Memory.Remember(ctx, memory.Actor{Who: "owner", Via: "cli", Trust: "own"}, memory.RememberInput{Text: "Leo met " + planted + " in Lisbon."}); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if out, err := exec.Command("git", "-C", a.Root, "worktree", "add", "-q", "--detach", wt, "HEAD").CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	_, err := a.Erase(ctx, box.Actor{Who: "owner", Via: "web", Trust: "own"})
	if !errs.Is(err, errs.Conflict) || !strings.Contains(err.Error(), wt) {
		t.Fatalf("erase with a worktree at %s: %v", wt, err)
	}
	if hits, _ := a.Memory.Search(ctx, memory.SearchInput{Words: planted}); len(hits.Hits) == 0 {
		t.Error("the refused erase removed the memory")
	}
	if out, err := exec.Command("git", "-C", a.Root, "worktree", "remove", "--force", wt).CombinedOutput(); err != nil {
		t.Fatalf("git worktree remove: %v\n%s", err, out)
	}
	if _, err := a.Erase(ctx, box.Actor{Who: "owner", Via: "web", Trust: "own"}); err != nil {
		t.Fatalf("erase without the worktree: %v", err)
	}
	if where := findPhrase(t, a.Root); len(where) > 0 {
		t.Fatalf("after erase the phrase can still be read back from:\n%s", strings.Join(where, "\n"))
	}
}
