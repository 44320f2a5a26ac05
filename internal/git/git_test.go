package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustRepo(t *testing.T) *Repo {
	t.Helper()
	r := Open(t.TempDir())
	if err := r.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

func put(t *testing.T, r *Repo, path, data string) {
	t.Helper()
	h := filepath.Join(r.Dir, filepath.FromSlash(path))
	os.MkdirAll(filepath.Dir(h), 0o755)
	if err := os.WriteFile(h, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCommitTrailersLogShow(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	put(t, r, "a.md", "one\n")
	if err := r.Add(ctx, "a.md"); err != nil {
		t.Fatal(err)
	}
	h1, err := r.Commit(ctx, "first\nbody line", []Trailer{{"Box-Entry", "e1"}, {"Box-Actor", "Claude\nBox-Op: forged"}})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := r.Trailers(ctx, h1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0] != (Trailer{"Box-Entry", "e1"}) || ts[1].Value != "Claude Box-Op: forged" {
		t.Errorf("trailers %+v (a newline in a value must not forge a trailer)", ts)
	}
	author, _ := r.Run(ctx, nil, "log", "-1", "--format=%an <%ae>|%cn")
	if strings.TrimSpace(string(author)) != "Box <box@localhost>|Box" {
		t.Errorf("identity %q", author)
	}
	put(t, r, "a.md", "two\n")
	r.Add(ctx, "a.md")
	h2, _ := r.Commit(ctx, "second", []Trailer{{"Box-Entry", "e2"}})
	cs, err := r.Log(ctx, LogOptions{Key: "Box-Entry", Value: "e1"})
	if err != nil || len(cs) != 1 || cs[0].Hash != h1 || cs[0].Subject != "first" {
		t.Errorf("log by trailer: %+v %v", cs, err)
	}
	if cs, _ := r.Log(ctx, LogOptions{Max: 1}); len(cs) != 1 || cs[0].Hash != h2 {
		t.Errorf("log max 1: %+v", cs)
	}
	if got, err := r.Show(ctx, h1, "/a.md"); err != nil || string(got) != "one\n" {
		t.Errorf("show %q %v", got, err)
	}
	if _, err := r.Show(ctx, h1, "missing.md"); !isNotExist(err) {
		t.Errorf("show missing: %v", err)
	}
	if err := r.Revert(ctx, h2); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(r.Dir, "a.md")); string(got) != "one\n" {
		t.Errorf("after revert %q", got)
	}
}

func isNotExist(err error) bool {
	return err != nil && strings.Contains(err.Error(), ErrNotExist.Error())
}

func TestStagedAndStatus(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	put(t, r, "keep.md", strings.Repeat("a long enough line to detect a rename\n", 5))
	put(t, r, "gone.md", "bye\n")
	put(t, r, "edit.md", "v1\n")
	r.Add(ctx, "keep.md", "gone.md", "edit.md")
	if cs, _ := r.Staged(ctx); len(cs) != 3 || cs[0].Status != "A" {
		t.Errorf("staged before the first commit: %+v", cs)
	}
	r.Commit(ctx, "init", nil)
	os.Rename(filepath.Join(r.Dir, "keep.md"), filepath.Join(r.Dir, "moved with space.md"))
	os.Remove(filepath.Join(r.Dir, "gone.md"))
	put(t, r, "edit.md", "v2\n")
	put(t, r, "new.md", "n\n")
	if err := r.Add(ctx, "keep.md", "moved with space.md", "gone.md", "edit.md", "new.md", "never-existed.md"); err != nil {
		t.Fatal(err)
	}
	cs, err := r.Staged(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Change{}
	for _, c := range cs {
		got[c.Status+":"+c.Path] = c
	}
	for _, k := range []string{"R:moved with space.md", "D:gone.md", "M:edit.md", "A:new.md"} {
		if _, ok := got[k]; !ok {
			t.Errorf("staged lacks %s: %+v", k, cs)
		}
	}
	if got["R:moved with space.md"].OldPath != "keep.md" {
		t.Errorf("rename old path: %+v", got)
	}
	put(t, r, "untracked.md", "u\n")
	st, err := r.Status(ctx)
	if err != nil || len(st) != 5 {
		t.Errorf("status %+v %v", st, err)
	}
}

func TestBlobsInProcessMatchGit(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	for _, data := range []string{"", "x", "line\r\nwith crlf\n", strings.Repeat("é", 5000)} {
		want, err := r.HashObject(ctx, []byte(data), false)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.BlobID([]byte(data)); got != want {
			t.Errorf("BlobID %q = %s, git says %s", data, got, want)
		}
		id, err := r.WriteBlob([]byte(data))
		if err != nil || id != want {
			t.Fatal(id, err)
		}
		back, err := r.Blob(ctx, id)
		if err != nil || string(back) != data {
			t.Errorf("blob read back %q %v", back, err)
		}
	}
	if _, err := r.Run(ctx, nil, "fsck", "--strict"); err != nil {
		t.Errorf("fsck after in-process blob writes: %v", err)
	}
}

func TestMergeFile(t *testing.T) {
	r := Open(t.TempDir())
	out, conflict, err := r.MergeFile(context.Background(), []byte("a\nb\nc\nd\ne\n"), []byte("a\nb\nc\nd\n"), []byte("a\nc\nd\n"))
	if err != nil || conflict || string(out) != "a\nc\nd\ne\n" {
		t.Errorf("merge %q %v %v", out, conflict, err)
	}
	_, conflict, err = r.MergeFile(context.Background(), []byte("a\nX\n"), []byte("a\nb\n"), []byte("a\nY\n"))
	if err != nil || !conflict {
		t.Errorf("conflict not reported: %v %v", conflict, err)
	}
}

func TestEnvironmentIgnoresCaller(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	t.Setenv("GIT_DIR", "/nonexistent")
	t.Setenv("GIT_INDEX_FILE", "/nonexistent/index")
	t.Setenv("GIT_AUTHOR_NAME", "Mallory")
	put(t, r, "a.md", "x\n")
	if err := r.Add(ctx, "a.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(ctx, "x", nil); err != nil {
		t.Fatal(err)
	}
	out, _ := r.Run(ctx, nil, "log", "-1", "--format=%an")
	if strings.TrimSpace(string(out)) != "Box" {
		t.Errorf("author %q", out)
	}
	_, err := r.Run(ctx, nil, "cat-file", "-t", "nope")
	if err == nil || !strings.Contains(err.Error(), "git cat-file -t nope") {
		t.Errorf("error should name the command and git's words: %v", err)
	}
}

// A gitlink in the index whose folder holds a repository: status must not run git inside it, where that
// repository's own configuration (a clean filter here) names a program the box never checked.
func TestStatusNeverEntersANestedRepository(t *testing.T) {
	ctx := context.Background()
	r := mustRepo(t)
	commit(t, r, "_content/a.md", "one\n")
	marker := filepath.Join(t.TempDir(), "pwned")
	sub := filepath.Join(r.Dir, "_content", "sub")
	os.MkdirAll(sub, 0o755)
	plain(t, sub, "init", "-q")
	os.WriteFile(filepath.Join(sub, "f.txt"), []byte("one\n"), 0o644)
	os.WriteFile(filepath.Join(sub, ".gitattributes"), []byte("* filter=evil\n"), 0o644)
	plain(t, sub, "add", "f.txt", ".gitattributes")
	plain(t, sub, "commit", "-q", "-m", "inner")
	plain(t, sub, "config", "filter.evil.clean", "touch "+marker+"; cat")
	plain(t, r.Dir, "update-index", "--add", "--cacheinfo", "160000,"+plain(t, sub, "rev-parse", "HEAD")+",_content/sub")
	// Same size, later time: git must read the file (through the filter) to know whether it changed.
	os.WriteFile(filepath.Join(sub, "f.txt"), []byte("two\n"), 0o644)
	os.Chtimes(filepath.Join(sub, "f.txt"), time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	if _, err := r.Status(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("status ran the nested repository's clean filter")
	}
	// The test shows something: git itself, asked plainly, runs it.
	plain(t, r.Dir, "status", "--porcelain")
	if _, err := os.Stat(marker); err != nil {
		t.Error("plain git status did not run the filter either: the test proves nothing")
	}
}
