package box

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/layout"
)

var owner = Actor{Who: "owner", Via: "test", Trust: "own"}

// mustInit makes a new box in a temp folder.
func mustInit(tb testing.TB, opts Options) *Box {
	tb.Helper()
	b, err := Init(context.Background(), tb.TempDir(), InitOptions{Options: opts, HookBinary: "box"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}

func write(p, data string) func(*Tx) error {
	return func(tx *Tx) error { return tx.Write(p, []byte(data)) }
}

func gitOut(tb testing.TB, b *Box, args ...string) string {
	tb.Helper()
	out, err := b.git.Run(context.Background(), nil, args...)
	if err != nil {
		tb.Fatal(err)
	}
	return string(out)
}

func readFile(tb testing.TB, b *Box, p string) (string, bool) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(b.Root, filepath.FromSlash(p)))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		tb.Fatal(err)
	}
	return string(data), true
}

func TestInitLayoutAndFirstCommit(t *testing.T) {
	b := mustInit(t, Options{})
	sw, _ := readFile(t, b, layout.Switches)
	if sw != SwitchesDefault {
		t.Errorf("switches.card = %q", sw)
	}
	claude, _ := readFile(t, b, "CLAUDE.md")
	agents, _ := readFile(t, b, "AGENTS.md")
	if claude != layout.AgentGuide() || agents != claude {
		t.Error("CLAUDE.md and AGENTS.md must both be the agent guide")
	}
	if fi, err := os.Lstat(filepath.Join(b.Root, "AGENTS.md")); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		t.Error("AGENTS.md must be a file, not a symlink")
	}
	for _, f := range layout.Folders {
		if fi, err := os.Stat(filepath.Join(b.Root, f.Name)); err != nil || !fi.IsDir() {
			t.Errorf("folder %s missing", f.Name)
		}
	}
	for _, p := range append([]string{layout.Router, layout.Settings, "/.gitignore", "/_publish/.gitkeep", "/_content/todos/.gitkeep"}, layout.InterfaceCards...) {
		if _, ok := readFile(t, b, p); !ok {
			t.Errorf("%s missing", p)
		}
	}
	if _, ok := readFile(t, b, "/_content/memory/.gitkeep"); ok {
		t.Error("a folder with a file needs no .gitkeep")
	}
	tracked := gitOut(t, b, "ls-files")
	for _, want := range []string{".box/box.json", ".gitignore", "_config/switches.card", "_content/memory/MEMORY.md", "_bookkeeping/diary/"} {
		if !strings.Contains(tracked, want) {
			t.Errorf("first commit lacks %s:\n%s", want, tracked)
		}
	}
	if strings.Contains(tracked, ".box/lock") {
		t.Error(".box/lock must be ignored")
	}
	if n := strings.Count(gitOut(t, b, "log", "--format=%H"), "\n"); n != 1 {
		t.Errorf("want one commit, got %d", n)
	}
	if tr := gitOut(t, b, "log", "-1", "--format=%(trailers:key=Box-Op,valueonly)"); strings.TrimSpace(tr) != "init" {
		t.Errorf("Box-Op = %q", tr)
	}
	if st := gitOut(t, b, "status", "--porcelain"); st != "" {
		t.Errorf("tree not clean after init:\n%s", st)
	}
	hook, _ := os.ReadFile(filepath.Join(b.Root, ".git/hooks/pre-commit"))
	if !strings.Contains(string(hook), "'box' validate --pre-commit") {
		t.Errorf("pre-commit hook = %q", hook)
	}
	m, err := ReadMarker(b.Root)
	if err != nil || m.ShapeVersion != 1 || m.ID == "" {
		t.Errorf("marker %+v %v", m, err)
	}
	s, err := b.Status(context.Background())
	if err != nil || len(s.Strays) != 0 || len(s.Uncommitted) != 0 || s.Areas["_config"] < 5 {
		t.Errorf("status %+v %v", s, err)
	}
}

func TestInitRefusals(t *testing.T) {
	ctx := context.Background()
	b := mustInit(t, Options{})
	head := gitOut(t, b, "rev-parse", "HEAD")
	if _, err := Init(ctx, b.Root, InitOptions{}); !errs.Is(err, errs.Exists) || !strings.Contains(err.Error(), "already a box; nothing changed") {
		t.Errorf("init on a box: %v", err)
	}
	if gitOut(t, b, "rev-parse", "HEAD") != head {
		t.Error("init on a box changed it")
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "notes.txt"), []byte("x"), 0o644)
	if _, err := Init(ctx, full, InitOptions{}); !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "not empty and is not a box") {
		t.Errorf("init on a full folder: %v", err)
	}
	onlyGit := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", onlyGit).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	refuse := func(string, []string, map[string][]byte) []finding.Finding {
		return []finding.Finding{finding.Errorf("/_config/switches.card", 1, "schema", "no")}
	}
	if _, err := Init(ctx, onlyGit, InitOptions{HookBinary: "box", Options: Options{Validate: refuse}}); !errs.Is(err, errs.Invalid) {
		t.Errorf("init with refused seed files: %v", err)
	}
	if ents, _ := os.ReadDir(onlyGit); len(ents) != 1 {
		t.Errorf("a failed init must leave the folder as it was: %v", ents)
	}
	b2, err := Init(ctx, onlyGit, InitOptions{HookBinary: "box"})
	if err != nil {
		t.Fatalf("init on a folder holding only .git: %v", err)
	}
	b2.Close()
}

func TestMarker(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenWith(dir, Options{}); !errs.Is(err, errs.NotABox) || !strings.Contains(err.Error(), "run `box init`") {
		t.Errorf("missing marker: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, ".box"), 0o755)
	marker := filepath.Join(dir, ".box", "box.json")
	os.WriteFile(marker, []byte("{not json"), 0o644)
	if _, err := OpenWith(dir, Options{}); !errs.Is(err, errs.NotABox) || !strings.Contains(err.Error(), "box.json") {
		t.Errorf("garbage marker: %v", err)
	}
	os.WriteFile(marker, []byte(`{"shapeVersion": 7, "id": "x"}`), 0o644)
	if _, err := OpenWith(dir, Options{}); !errs.Is(err, errs.NotABox) || !strings.Contains(err.Error(), "newer box (shape 7); upgrade the box binary") {
		t.Errorf("newer marker: %v", err)
	}
	os.WriteFile(marker, []byte(`{"shapeVersion": 1, "id": "x"}`), 0o644)
	sub := filepath.Join(dir, "_content", "a", "b")
	os.MkdirAll(sub, 0o755)
	if got, err := Find(sub); err != nil || got != dir {
		t.Errorf("Find = %q, %v", got, err)
	}
	if _, err := Find(t.TempDir()); !errs.Is(err, errs.NotABox) {
		t.Errorf("Find outside a box: %v", err)
	}
	if got, _ := Discover("", dir, t.TempDir()); got != dir {
		t.Errorf("Discover env = %q", got)
	}
	if _, err := Discover(sub, "", ""); !errs.Is(err, errs.NotABox) {
		t.Errorf("Discover --box on a non-box: %v", err)
	}
	if got, _ := Discover("", "", sub); got != dir {
		t.Errorf("Discover walk-up = %q", got)
	}
}

// A box whose .box (or marker) is a link would keep its lock, index, state, spool and logs wherever the
// link points: Open, Find and Discover refuse it with a sentence, and nothing is made there.
func TestLinkedRuntimeFolderRefused(t *testing.T) {
	b := mustInit(t, Options{})
	root := b.Root
	b.Close()
	elsewhere := filepath.Join(t.TempDir(), "runtime")
	if err := os.Rename(filepath.Join(root, ".box"), elsewhere); err != nil {
		t.Fatal(err)
	}
	os.Symlink(elsewhere, filepath.Join(root, ".box"))
	before, _ := os.ReadDir(elsewhere)
	sub := filepath.Join(root, "_content")
	for name, open := range map[string]func() error{
		"Open":     func() error { _, err := OpenWith(root, Options{}); return err },
		"Find":     func() error { _, err := Find(sub); return err },
		"Discover": func() error { _, err := Discover(root, "", ""); return err },
	} {
		if err := open(); !errs.Is(err, errs.Refused) || !strings.Contains(err.Error(), ".box") {
			t.Errorf("%s with .box linked elsewhere: %v", name, err)
		}
	}
	if after, _ := os.ReadDir(elsewhere); len(after) != len(before) {
		t.Errorf("the linked folder went from %d to %d entries", len(before), len(after))
	}
	// A real .box with a linked marker is refused too.
	os.Remove(filepath.Join(root, ".box"))
	os.Rename(elsewhere, filepath.Join(root, ".box"))
	marker := filepath.Join(root, ".box", "box.json")
	os.Rename(marker, filepath.Join(elsewhere+"-marker.json"))
	os.Symlink(elsewhere+"-marker.json", marker)
	if _, err := OpenWith(root, Options{}); !errs.Is(err, errs.Refused) {
		t.Errorf("Open with the marker linked elsewhere: %v", err)
	}
	os.Remove(marker)
	os.Rename(elsewhere+"-marker.json", marker)
	if _, err := OpenWith(root, Options{}); err != nil {
		t.Errorf("the box put back: %v", err)
	}
}

func TestDoCommitsWithTrailersAndDiary(t *testing.T) {
	ctx := context.Background()
	var after []string
	b := mustInit(t, Options{})
	b.Subscribe(func(_ context.Context, paths []string) { after = append(after, paths...) })
	res, err := b.Do(ctx, Change{Actor: Actor{Who: "Claude", Via: "mcp", Trust: "outside"}, Op: "remember",
		Summary: "Claude remembered: Leo swims", Switch: "change", Apply: write("/_content/inbox/2026-11-29.md", "- Leo swims\n")})
	if err != nil {
		t.Fatal(err)
	}
	if head := strings.TrimSpace(gitOut(t, b, "rev-parse", "HEAD")); head != res.Commit {
		t.Errorf("commit %s, HEAD %s", res.Commit, head)
	}
	ts, err := b.git.Trailers(ctx, res.Commit)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tr := range ts {
		got[tr.Key] = tr.Value
	}
	want := map[string]string{"Box-Entry": res.EntryID, "Box-Actor": "Claude", "Box-Via": "mcp", "Box-Trust": "outside", "Box-Op": "remember", "Box-Switch": "change"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("trailer %s = %q, want %q", k, got[k], v)
		}
	}
	files := gitOut(t, b, "show", "--name-only", "--format=", res.Commit)
	if !strings.Contains(files, "_content/inbox/2026-11-29.md") || !strings.Contains(files, "_bookkeeping/diary/") {
		t.Errorf("commit holds %q; want the file and the diary line", files)
	}
	e, err := diary.Find(b.Root, res.EntryID)
	if err != nil || e.Summary != "Claude remembered: Leo swims" || e.Trust != "outside" || len(e.Undo) != 1 || e.Undo[0].Pre != "" {
		t.Errorf("diary entry %+v %v", e, err)
	}
	if len(after) != 1 || after[0] != "/_content/inbox/2026-11-29.md" {
		t.Errorf("the subscriber got %v", after)
	}
	es, _ := b.Diary(ctx, 1, nil)
	if len(es) != 1 || es[0].Commit != res.Commit {
		t.Errorf("Diary = %+v", es)
	}
	if st := gitOut(t, b, "status", "--porcelain"); st != "" {
		t.Errorf("tree not clean:\n%s", st)
	}
}

// DoAll commits its changes together, each with its own diary line and undo, or none of them.
func TestDoAllIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	b := mustInit(t, Options{})
	before := commits(t, b)
	fail := errs.E("test", errs.Conflict, "the second change refuses")
	_, err := b.DoAll(ctx,
		Change{Actor: Actor{Who: "owner"}, Op: "edit", Summary: "one", Apply: write("/_content/a.md", "a\n")},
		Change{Actor: Actor{Who: "owner"}, Op: "approve", Summary: "two", Apply: func(*Tx) error { return fail }})
	if !errs.Is(err, errs.Conflict) {
		t.Fatalf("DoAll with a failing change: %v", err)
	}
	if _, ok := readFile(t, b, "/_content/a.md"); ok || commits(t, b) != before {
		t.Fatal("a failed group left a file or a commit behind")
	}
	rs, err := b.DoAll(ctx,
		Change{Actor: Actor{Who: "Claude", Trust: "outside"}, Op: "forget", Summary: "one", Apply: write("/_content/a.md", "a\n")},
		Change{Actor: Actor{Who: "owner"}, Op: "approve", Summary: "two", Permanent: true, Apply: write("/_bookkeeping/archive/x.card", "x\n")})
	if err != nil || len(rs) != 2 || rs[0].Commit != rs[1].Commit || rs[0].EntryID == rs[1].EntryID {
		t.Fatalf("DoAll: %+v %v", rs, err)
	}
	if commits(t, b) != before+1 {
		t.Errorf("a group is one commit")
	}
	one, _ := diary.Find(b.Root, rs[0].EntryID)
	two, _ := diary.Find(b.Root, rs[1].EntryID)
	if len(one.Undo) != 1 || len(two.Undo) != 0 || two.Paths[0] != "/_bookkeeping/archive/x.card" {
		t.Errorf("the first keeps its undo, the permanent one none: %+v / %+v", one, two)
	}
	if _, err := b.Undo(ctx, rs[1].EntryID, Actor{Who: "owner"}); err == nil {
		t.Error("a permanent change was undone")
	}
	if _, err := b.Undo(ctx, "", Actor{Who: "owner"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := readFile(t, b, "/_content/a.md"); ok {
		t.Error("undo did not reverse the group's first change")
	}
	if _, ok := readFile(t, b, "/_bookkeeping/archive/x.card"); !ok {
		t.Error("undoing one change of a group touched the other")
	}
}

func TestDoRefusesBadPaths(t *testing.T) {
	b := mustInit(t, Options{})
	for _, p := range []string{"/.git/config", "/.box/x", "/stray.md", "/_content/a/_config/b.md", "../out", "/_bookkeeping/diary/x.jsonl"} {
		if _, err := b.Do(context.Background(), Change{Actor: owner, Op: "edit", Apply: write(p, "x")}); !errs.Is(err, errs.Invalid) {
			t.Errorf("write %s: %v", p, err)
		}
	}
}

func TestValidationRefusalWritesNothing(t *testing.T) {
	b := mustInit(t, Options{Validate: func(root string, paths []string, files map[string][]byte) []finding.Finding {
		if strings.Contains(string(files[paths[0]]), "bad") {
			return []finding.Finding{finding.Errorf(paths[0], 2, "schema", "title is missing")}
		}
		return nil
	}})
	head := gitOut(t, b, "rev-parse", "HEAD")
	_, err := b.Do(context.Background(), Change{Actor: owner, Op: "edit", Apply: write("/_content/x.card", "bad")})
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "title is missing") {
		t.Fatalf("err = %v", err)
	}
	if _, ok := readFile(t, b, "/_content/x.card"); ok {
		t.Error("refused file was written")
	}
	if gitOut(t, b, "rev-parse", "HEAD") != head {
		t.Error("refused change committed")
	}
	if st := gitOut(t, b, "status", "--porcelain"); st != "" {
		t.Errorf("tree not clean:\n%s", st)
	}
}

func TestGroupCommit(t *testing.T) {
	b := mustInit(t, Options{})
	before := commits(t, b)
	const n = 64
	var wg sync.WaitGroup
	errc := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var apply func(*Tx) error = write(fmt.Sprintf("/_content/g/%02d.md", i), fmt.Sprintf("note %d\n", i))
			if i%16 == 5 {
				apply = func(tx *Tx) error { tx.Write("/_content/g/poison.md", []byte("x")); return errors.New("poisoned") }
			}
			_, err := b.Do(context.Background(), Change{Actor: owner, Op: "edit", Summary: fmt.Sprintf("note %d", i), Apply: apply})
			if (err != nil) != (i%16 == 5) {
				errc <- fmt.Errorf("change %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	made := commits(t, b) - before
	if made >= n-4 || made < 1 {
		t.Errorf("%d changes made %d commits; want far fewer", n, made)
	}
	t.Logf("%d changes → %d commits", n, made)
	for i := range n {
		data, ok := readFile(t, b, fmt.Sprintf("/_content/g/%02d.md", i))
		if (i%16 == 5) == ok || ok && data != fmt.Sprintf("note %d\n", i) {
			t.Errorf("file %d: %q %v", i, data, ok)
		}
	}
	if _, ok := readFile(t, b, "/_content/g/poison.md"); ok {
		t.Error("a failed change's write leaked")
	}
	es, _ := diary.Recent(b.Root, 0, func(e diary.Entry) bool { return e.Op == "edit" })
	if len(es) != n-4 {
		t.Errorf("diary has %d edit entries, want %d", len(es), n-4)
	}
	if st := gitOut(t, b, "status", "--porcelain"); st != "" {
		t.Errorf("tree not clean:\n%s", st)
	}
}

func commits(tb testing.TB, b *Box) int {
	return strings.Count(gitOut(tb, b, "log", "--format=%H"), "\n")
}

func TestUndo(t *testing.T) {
	ctx := context.Background()
	b := mustInit(t, Options{})
	const p = "/_content/doc.md"
	orig := "line one\nline two\r\nno newline at end"
	if _, err := b.Do(ctx, Change{Actor: owner, Op: "edit", Apply: write(p, orig)}); err != nil {
		t.Fatal(err)
	}
	r, err := b.Do(ctx, Change{Actor: owner, Op: "edit", Summary: "rewrote doc", Apply: write(p, "changed\n")})
	if err != nil {
		t.Fatal(err)
	}
	u, err := b.Undo(ctx, "", owner)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := readFile(t, b, p); got != orig {
		t.Errorf("after undo %q, want %q", got, orig)
	}
	e, _ := diary.Find(b.Root, u.EntryID)
	if e.Op != "undo" || e.UndoOf != r.EntryID {
		t.Errorf("undo entry %+v", e)
	}
	// Undoing an undo by id redoes.
	if _, err := b.Undo(ctx, u.EntryID, owner); err != nil {
		t.Fatal(err)
	}
	if got, _ := readFile(t, b, p); got != "changed\n" {
		t.Errorf("after redo %q", got)
	}
	// A plain undo now takes the rewrite out again (the redo cancelled the undo), then the creation.
	for i, want := range []string{orig, ""} {
		if _, err := b.Undo(ctx, "", owner); err != nil {
			t.Fatal(err)
		}
		got, ok := readFile(t, b, p)
		if got != want || ok != (i == 0) {
			t.Errorf("plain undo %d: %q %v, want %q", i, got, ok, want)
		}
	}
	if _, err := b.Undo(ctx, "", owner); !errs.Is(err, errs.NotFound) {
		t.Errorf("nothing left to undo: %v", err)
	}
	if st := gitOut(t, b, "status", "--porcelain"); st != "" {
		t.Errorf("tree not clean:\n%s", st)
	}
}

func TestUndoOneOfABatchAndAfterLaterEdit(t *testing.T) {
	ctx := context.Background()
	b := mustInit(t, Options{})
	const p = "/_content/inbox/day.md"
	base := "# day\n"
	b.Do(ctx, Change{Actor: owner, Op: "edit", Apply: write(p, base)})
	// Three appends to one file in one batch: hold the lock so they queue, then release.
	var ids [3]string
	appendLine := func(s string) func(*Tx) error {
		return func(tx *Tx) error {
			d, _ := tx.Read(p)
			return tx.Write(p, append(d, s...))
		}
	}
	_, unlock, _ := b.lock(ctx, nil)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := b.Do(ctx, Change{Actor: owner, Op: "remember", Apply: appendLine(fmt.Sprintf("- line %d\n", i))})
			if err != nil {
				t.Error(err)
			}
			ids[i] = r.EntryID
		}()
	}
	waitQueued(b, 2)
	unlock()
	wg.Wait()
	got, _ := readFile(t, b, p)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("file %q", got)
	}
	// Undo the middle one: the others stay.
	var middle string
	for _, id := range ids {
		e, _ := diary.Find(b.Root, id)
		post, _ := b.git.Blob(ctx, e.Undo[0].Post)
		if strings.HasSuffix(string(post), lines[2]+"\n") {
			middle = id
		}
	}
	if _, err := b.Undo(ctx, middle, owner); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{lines[0], lines[1], lines[3]}, "\n") + "\n"
	if got, _ := readFile(t, b, p); got != want {
		t.Errorf("after undoing one of a batch: %q, want %q", got, want)
	}
	// A later hand edit elsewhere in the file survives undo (3-way merge).
	r, _ := b.Do(ctx, Change{Actor: owner, Op: "edit", Apply: func(tx *Tx) error {
		d, _ := tx.Read(p)
		return tx.Write(p, []byte(strings.Replace(string(d), "# day", "# the day", 1)))
	}})
	b.Do(ctx, Change{Actor: owner, Op: "edit", Apply: appendLine("- later\n")})
	if _, err := b.Undo(ctx, r.EntryID, owner); err != nil {
		t.Fatal(err)
	}
	if got, _ := readFile(t, b, p); got != want+"- later\n" {
		t.Errorf("after undo with a later edit: %q", got)
	}
	// A later edit of the same line conflicts, and nothing changes.
	r, _ = b.Do(ctx, Change{Actor: owner, Op: "edit", Apply: func(tx *Tx) error {
		d, _ := tx.Read(p)
		return tx.Write(p, []byte(strings.Replace(string(d), "- later", "- later, edited", 1)))
	}})
	b.Do(ctx, Change{Actor: owner, Op: "edit", Apply: func(tx *Tx) error {
		d, _ := tx.Read(p)
		return tx.Write(p, []byte(strings.Replace(string(d), "- later, edited", "- later, edited twice", 1)))
	}})
	before, _ := readFile(t, b, p)
	head := gitOut(t, b, "rev-parse", "HEAD")
	if _, err := b.Undo(ctx, r.EntryID, owner); !errs.Is(err, errs.Conflict) {
		t.Errorf("conflicting undo: %v", err)
	}
	if got, _ := readFile(t, b, p); got != before || gitOut(t, b, "rev-parse", "HEAD") != head {
		t.Error("a refused undo changed something")
	}
}

func waitQueued(b *Box, n int) {
	for {
		b.mu.Lock()
		q := len(b.queue)
		b.mu.Unlock()
		if q >= n {
			return
		}
		runtimeGosched()
	}
}

func TestLockBusy(t *testing.T) {
	b := mustInit(t, Options{})
	other, err := OpenWith(b.Root, Options{LockTimeout: 50_000_000})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, unlock, err := b.lock(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = other.Do(context.Background(), Change{Actor: owner, Op: "edit", Apply: write("/_content/x.md", "x")})
	if !errs.Is(err, errs.Busy) {
		t.Errorf("err = %v", err)
	}
}

func TestLineMerge(t *testing.T) {
	cases := []struct{ cur, base, other, want string }{
		{"a\nb\nc\n", "a\nb\n", "a\n", "a\nc\n"},       // undo an append, a later append stays
		{"x\na\nb\nc\n", "a\nb\n", "a\n", "x\na\nc\n"}, // and an insert at the top
		{"a\nB\nc\n", "a\nb\nc\n", "a\nc\n", ""},       // the line was changed again: conflict
		{"a\nb\nc\nd\n", "a\nb\n", "", "c\nd\n"},       // undo a creation keeps later lines
	}
	for _, c := range cases {
		got, ok := lineMerge([]byte(c.cur), []byte(c.base), []byte(c.other))
		if c.want == "" && ok {
			t.Errorf("%q: want a conflict, got %q", c.cur, got)
		}
		if c.want != "" && (!ok || string(got) != c.want) {
			t.Errorf("%q: got %q %v, want %q", c.cur, got, ok, c.want)
		}
	}
}

func runtimeGosched() { runtime.Gosched() }

func TestStatusReportsStraysReservedAndUncommitted(t *testing.T) {
	b := mustInit(t, Options{})
	os.WriteFile(filepath.Join(b.Root, "stray.txt"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(b.Root, "_weird"), 0o755)
	os.MkdirAll(filepath.Join(b.Root, "_content", "a", "_config", "deep", "_publish"), 0o755)
	os.WriteFile(filepath.Join(b.Root, "_content", "a", "_config", "deep", "_publish", "x.md"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(b.Root, "_content", "a", "note.md"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(b.Root, ".DS_Store"), []byte("x"), 0o644)
	s, err := b.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, f := range s.Strays {
		codes = append(codes, f.Path+":"+f.Code)
	}
	if fmt.Sprint(codes) != "[/_weird:ad-hoc-underscore /stray.txt:unlisted]" {
		t.Errorf("strays %v", codes)
	}
	if len(s.Reserved) != 1 || s.Reserved[0].Path != "/_content/a/_config" {
		t.Errorf("reserved %+v (want only the shallowest offender)", s.Reserved)
	}
	if s.Areas["_content"] != 2 || len(s.Uncommitted) == 0 {
		t.Errorf("areas %v, uncommitted %v", s.Areas, s.Uncommitted)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Error(err)
	}
	if len(s.Linked) != 0 {
		t.Errorf("linked %+v in a box without links", s.Linked)
	}
	// A folder that is a link is named (a warning: the box writes nothing through it); a linked file is not.
	os.Symlink("a", filepath.Join(b.Root, "_content", "linked"))
	os.Symlink("note.md", filepath.Join(b.Root, "_content", "a", "alias.md"))
	os.Symlink("a", filepath.Join(b.Root, "_content", "a", "_publish"))
	if s, err = b.Status(context.Background()); err != nil || len(s.Linked) != 1 || s.Linked[0].Path != "/_content/linked" || s.Linked[0].Code != "linked-folder" {
		t.Errorf("linked %+v %v", s.Linked, err)
	}
	// A link with a reserved name is a violation as any other; a link to a file is a file of its area.
	if len(s.Reserved) != 2 || s.Reserved[1].Path != "/_content/a/_publish" || s.Areas["_content"] != 3 {
		t.Errorf("reserved %+v, areas %v", s.Reserved, s.Areas)
	}
}

func TestStaleGitLockAndTempFilesAreRepaired(t *testing.T) {
	b := mustInit(t, Options{})
	lock := filepath.Join(b.Root, ".git", "index.lock")
	os.WriteFile(lock, nil, 0o644)
	old := time.Now().Add(-time.Minute)
	os.Chtimes(lock, old, old)
	os.MkdirAll(filepath.Join(b.Root, ".box", "tmp"), 0o755)
	os.WriteFile(filepath.Join(b.Root, ".box", "tmp", ".box-tmp-dead"), []byte("half"), 0o644)
	b2, err := OpenWith(b.Root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(filepath.Join(b.Root, ".box", "tmp")); len(left) != 0 {
		t.Errorf("Open left temp files: %v", left)
	}
	if _, err := b2.Do(context.Background(), Change{Actor: owner, Op: "edit", Apply: write("/_content/x.md", "x\n")}); err != nil {
		t.Errorf("a stale index.lock blocked the write: %v", err)
	}
}

// What the box's recovery reads from .box/ never reaches outside what a change writes: a link in place
// of .box/tmp is removed, not followed (its target's files stay), and a journal naming a file in .git/ or
// .box/, which no change writes, is dropped without applying any of it.
func TestRecoveryWritesOnlyWhereChangesWrite(t *testing.T) {
	ctx := context.Background()
	b := mustInit(t, Options{})
	b.Do(ctx, Change{Actor: owner, Op: "edit", Apply: write("/_content/a.md", "v1\n")})
	head, _ := b.git.Head(ctx)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "taxes.txt"), []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(b.Root, ".box", "tmp"))
	if err := os.Symlink(outside, filepath.Join(b.Root, ".box", "tmp")); err != nil {
		t.Fatal(err)
	}
	config, _ := os.ReadFile(filepath.Join(b.Root, ".git", "config"))
	evil := b.git.BlobID([]byte("[core]\n\tfsmonitor = echo pwned\n"))
	if _, err := b.git.Run(ctx, []byte("[core]\n\tfsmonitor = echo pwned\n"), "hash-object", "-w", "--stdin"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/.git/config", "/.GIT/config", "/.box/box.json", "/_content/../.git/config"} {
		j := journal{Head: head, Entries: []string{"20260101T000000-planted0"}, Files: []journalEntry{
			{Path: "/_content/a.md", Pre: b.git.BlobID([]byte("v1\n")), Exists: true},
			{Path: p, Pre: evil, Exists: true},
		}}
		if err := b.writeJournal(j); err != nil {
			t.Fatal(err)
		}
		b2, err := OpenWith(b.Root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b2.Do(ctx, Change{Actor: owner, Op: "edit", Apply: write("/_content/b.md", p+"\n")}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(b.Root, ".git", "config")); string(got) != string(config) {
			t.Errorf("a journal naming %s rewrote .git/config:\n%s", p, got)
		}
		if _, err := os.Stat(filepath.Join(b.Root, journalPath)); err == nil {
			t.Errorf("a journal naming %s was left", p)
		}
	}
	if data, err := os.ReadFile(filepath.Join(outside, "taxes.txt")); err != nil || string(data) != "keep me" {
		t.Errorf("the folder a link in place of .box/tmp named lost its files: %q %v", data, err)
	}
}

// A folder of the box that is a link (to another folder of the box) takes no write: git keeps no file
// beyond a link, so the write could be neither committed nor rolled back, and the box would refuse every
// command after it. The write is refused with a sentence and nothing is written; a journal left by such a
// write (a box written before) is recovered without it, and the box works again.
func TestWritesThroughALinkedFolderAreRefused(t *testing.T) {
	ctx := context.Background()
	b := mustInit(t, Options{})
	if err := os.MkdirAll(filepath.Join(b.Root, "_content", "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other", filepath.Join(b.Root, "_content", "linked")); err != nil {
		t.Fatal(err)
	}
	_, err := b.Do(ctx, Change{Actor: owner, Op: "edit", Apply: write("/_content/linked/a.md", "a\n")})
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "/_content/linked is a link to a folder") {
		t.Fatalf("a write through a linked folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.Root, "_content", "other", "a.md")); err == nil {
		t.Error("the refused write reached the folder the link points to")
	}
	head, _ := b.git.Head(ctx)
	j := journal{Head: head, Entries: []string{"20260101T000000-linked00"}, Files: []journalEntry{{Path: "/_content/linked/b.md"}}}
	if err := b.writeJournal(j); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(b.Root, "_content", "other", "b.md"), []byte("half"), 0o644)
	b2, err := OpenWith(b.Root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b2.Do(ctx, Change{Actor: owner, Op: "edit", Apply: write("/_content/x.md", "x\n")}); err != nil {
		t.Fatalf("the box after a journal naming a path beyond a link: %v", err)
	}
	// The diary, which the box writes past the change's own guard, is held to the same rule.
	diaryDir := filepath.Join(b.Root, "_bookkeeping", "diary")
	if err := os.Rename(diaryDir, diaryDir+"2"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("diary2", diaryDir); err != nil {
		t.Fatal(err)
	}
	days := func() string {
		var all strings.Builder
		ents, _ := os.ReadDir(diaryDir + "2")
		for _, e := range ents {
			data, _ := os.ReadFile(filepath.Join(diaryDir+"2", e.Name()))
			all.WriteString(e.Name() + "\n" + string(data))
		}
		return all.String()
	}
	before := days()
	_, err = b2.Do(ctx, Change{Actor: owner, Op: "edit", Apply: write("/_content/y.md", "y\n")})
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "/_bookkeeping/diary is a link to a folder") {
		t.Fatalf("a write whose diary folder is a link: %v", err)
	}
	if days() != before {
		t.Error("the refused change left a diary line")
	}
	if _, err := os.Stat(filepath.Join(b.Root, journalPath)); err == nil {
		t.Error("the refused change left a journal")
	}
	if _, err := os.Stat(filepath.Join(b.Root, "_content", "y.md")); err == nil {
		t.Error("the refused change wrote its file")
	}
}

func TestInterruptedBatchIsRolledBack(t *testing.T) {
	ctx := context.Background()
	b := mustInit(t, Options{})
	b.Do(ctx, Change{Actor: owner, Op: "edit", Apply: write("/_content/a.md", "v1\n")})
	head, _ := b.git.Head(ctx)
	// What a writer killed between its renames and its commit leaves behind.
	j := journal{Head: head, Entries: []string{"20260101T000000-killed00"}, Files: []journalEntry{
		{Path: "/_content/a.md", Pre: b.git.BlobID([]byte("v1\n")), Exists: true},
		{Path: "/_content/new.md"},
	}}
	if err := b.writeJournal(j); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(b.Root, "_content", "a.md"), []byte("v2 half"), 0o644)
	os.WriteFile(filepath.Join(b.Root, "_content", "new.md"), []byte("new"), 0o644)
	b.git.Add(ctx, "_content/a.md", "_content/new.md")
	if _, err := OpenWith(b.Root, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := readFile(t, b, "/_content/a.md"); got != "v1\n" {
		t.Errorf("a.md = %q after recovery", got)
	}
	if _, ok := readFile(t, b, "/_content/new.md"); ok {
		t.Error("new.md should be gone after recovery")
	}
	if st := gitOut(t, b, "status", "--porcelain"); st != "" {
		t.Errorf("tree not clean after recovery:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(b.Root, journalPath)); err == nil {
		t.Error("journal left")
	}
}

// The switches and the settings card are set again, never undone: an undo (which a signed-in session may
// ask for) would give back a switch the owner tightened without their passkey. A plain undo passes over
// such an entry, one named by its id is refused, and an undo-since leaves it.
func TestOwnersSettingsAreNotUndone(t *testing.T) {
	ctx := context.Background()
	b := mustInit(t, Options{})
	before, _ := readFile(t, b, layout.Switches)
	if _, err := b.Do(ctx, Change{Actor: owner, Op: "edit", Apply: write("/_content/doc.md", "x\n")}); err != nil {
		t.Fatal(err)
	}
	tight, err := b.Do(ctx, Change{Actor: owner, Op: "switch", Apply: write(layout.Switches, strings.Replace(before, "just-do-it", "never", 1))})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := readFile(t, b, layout.Switches)
	if after == before {
		t.Fatal("the switch was not tightened; the test sees nothing")
	}
	if _, err := b.Undo(ctx, tight.EntryID, owner); !errs.Is(err, errs.Refused) {
		t.Fatalf("undo of a switch change by id: %v", err)
	}
	e, _ := diary.Find(b.Root, tight.EntryID)
	if Undoable(e) {
		t.Error("a switch change is shown as undoable")
	}
	if _, _, err := b.UndoSince(ctx, time.Unix(0, 0), func(diary.Entry) bool { return true }, owner); err != nil {
		t.Fatal(err)
	}
	if got, _ := readFile(t, b, layout.Switches); got != after {
		t.Errorf("the switches after the undos:\n%s\nwant\n%s", got, after)
	}
	if _, ok := readFile(t, b, "/_content/doc.md"); ok {
		t.Error("the undo-since left the doc, which it may undo")
	}
}
