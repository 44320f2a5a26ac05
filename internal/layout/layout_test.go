package layout

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated docs table")

func TestDocsTableMatchesLayout(t *testing.T) {
	data, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	_, rest, ok := strings.Cut(doc, "<!-- layout:begin -->\n")
	if !ok {
		t.Fatal("docs/ARCHITECTURE.md lost its <!-- layout:begin --> marker")
	}
	got, _, ok := strings.Cut(rest, "<!-- layout:end -->")
	if !ok {
		t.Fatal("docs/ARCHITECTURE.md lost its <!-- layout:end --> marker")
	}
	if got != Table() && *update {
		before, _, _ := strings.Cut(doc, "<!-- layout:begin -->\n")
		doc = before + "<!-- layout:begin -->\n" + Table() + "<!-- layout:end -->" + strings.SplitN(rest, "<!-- layout:end -->", 2)[1]
		if err := os.WriteFile("../../docs/ARCHITECTURE.md", []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != Table() {
		t.Errorf("docs/ARCHITECTURE.md layout table drifted from internal/layout; run go test ./internal/layout -update; it should read:\n%s", Table())
	}
}

func TestCheckRoot(t *testing.T) {
	fs := CheckRoot([]string{"_content", ".DS_Store", "notes", "_stuff", ".git", "CLAUDE.md"})
	if len(fs) != 2 {
		t.Fatalf("want 2 findings, got %v", fs)
	}
	if fs[0].Code != "ad-hoc-underscore" || fs[0].Path != "/_stuff" {
		t.Errorf("first finding: %v", fs[0])
	}
	if fs[1].Code != "unlisted" || fs[1].Path != "/notes" {
		t.Errorf("second finding: %v", fs[1])
	}
}

func TestReservedOffender(t *testing.T) {
	cases := []struct {
		path, want string
	}{
		{"/_content/memory/notes/entity-leo.md", ""},
		{"/_content/a/_config/b/_content/c.md", "/_content/a/_config"},
		{"/_content/_publish", "/_content/_publish"},
		{"/_content/x/_tmp/y.md", ""},
		{"/_config/_template-updates/_content/memory/MEMORY.md", ""},
		{"/_config/schemas/_bookkeeping.yaml", ""},
		{"/_bookkeeping/_bookkeeping", "/_bookkeeping/_bookkeeping"},
	}
	for _, c := range cases {
		got, ok := ReservedOffender(c.path)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("ReservedOffender(%q) = %q, %v; want %q", c.path, got, ok, c.want)
		}
	}
}

func TestClean(t *testing.T) {
	cases := []struct {
		in, want string
		bad      bool
	}{
		{"/_content/x.md", "/_content/x.md", false},
		{"_content/x.md", "/_content/x.md", false},
		{"./_content//a/./b.md", "/_content/a/b.md", false},
		{"_content/a/../b.md", "/_content/b.md", false},
		{"../etc/passwd", "", true},
		{"/_content/../../x", "", true},
		{"/etc/hosts", "", true},
		{"_content/\x00x", "", true},
		{`_content\x.md`, "", true},
	}
	for _, c := range cases {
		got, err := Clean(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("Clean(%q) = %q, %v; want %q bad=%v", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestHostRefusesSymlinkOut(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(root+"/_content", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, root+"/_content/out"); err != nil {
		t.Fatal(err)
	}
	if _, err := Host(root, "/_content/out/secret.md"); err == nil {
		t.Error("a path through a symlink pointing out of the box resolved")
	}
	if _, err := Host(root, "/_content/in/new.md"); err != nil {
		t.Errorf("a new path inside the box refused: %v", err)
	}
	if _, err := FromHost(root, outside+"/x"); err == nil {
		t.Error("FromHost accepted a path outside the box")
	}
}

// FuzzClean: a cleaned box path is canonical, never escapes the root and cleans to itself.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"/_content/x.md", "_content/a/../b", "../x", "/etc/hosts", "./_config//s.card", "/", "", "_content/\x00", "/_content/a/_config/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := Clean(p)
		if err != nil {
			return
		}
		if !strings.HasPrefix(c, "/") || strings.Contains(c, "//") || strings.Contains(c, "/../") || strings.HasSuffix(c, "/..") || strings.ContainsRune(c, 0) {
			t.Fatalf("Clean(%q) = %q: not a canonical box path", p, c)
		}
		again, err := Clean(c)
		if err != nil || again != c {
			t.Fatalf("Clean is not idempotent: %q → %q → %q, %v", p, c, again, err)
		}
		if _, bad := ReservedOffender(c); bad {
			return
		}
	})
}

// Resolve follows a path as the kernel does: link/.. is the parent of the link's target, a link to
// nothing yet leads to its target, a relative target is read from the link's folder, and a loop of
// links ends.
func TestResolve(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b/c", "x"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"x/l": filepath.Join(dir, "a", "b", "c"), "x/rel": "../a/b", "x/dangle": "../a/new.card", "x/loop1": "loop2", "x/loop2": "loop1"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for in, want := range map[string]string{
		dir + "/x/l/..":             dir + "/a/b",
		dir + "/x/l/../../f":        dir + "/a/f",
		dir + "/x/rel/c/..":         dir + "/a/b",
		dir + "/x/dangle":           dir + "/a/new.card",
		dir + "/x/./l/missing/../y": dir + "/a/b/c/y",
		dir + "/x/../a/./b":         dir + "/a/b",
	} {
		if got := Resolve(in); got != want {
			t.Errorf("Resolve(%s) = %s, want %s", in, got, want)
		}
	}
	if got := Resolve(dir + "/x/loop1/z"); !strings.HasPrefix(got, dir+"/x/") {
		t.Errorf("a loop of links: %s", got)
	}
	if got := Join(dir, "l/.."); got != dir+"/l/.." {
		t.Errorf("Join cleaned the path: %s", got)
	}
}

func TestNeverCommitted(t *testing.T) {
	for _, c := range []struct {
		rel   string
		plain bool
		never bool
	}{
		{".box/box.json", true, false}, {".box/box.json", false, true}, {".box/tmp", false, true}, {".box/state.db", true, true},
		{".BOX/journal.json", true, true}, {"_tmp/x", true, true}, {"_TMP/x", true, true}, {"_content/a.md", true, false},
		{"_content/.box/x", true, false}, {".boxes/x", true, false},
	} {
		if got := NeverCommitted(c.rel, c.plain); got != c.never {
			t.Errorf("NeverCommitted(%q, plain %v) = %v", c.rel, c.plain, got)
		}
	}
}
