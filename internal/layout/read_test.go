package layout

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// readTree is a box with a note, links that stay inside, and links that lead out.
func readTree(t *testing.T) (root, out string) {
	t.Helper()
	root, out = t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(out, "passwd"), []byte("root:x:0:0"), 0o644)
	os.MkdirAll(filepath.Join(root, "_content/notes/sub"), 0o755)
	os.WriteFile(filepath.Join(root, "_content/notes/a.md"), []byte("inside"), 0o644)
	for link, target := range map[string]string{
		"_content/notes/rel.md":      "a.md",
		"_content/notes/abs.md":      filepath.Join(root, "_content/notes/a.md"),
		"_content/notes/dirlink":     "sub",
		"_content/notes/out.md":      filepath.Join(out, "passwd"),
		"_content/notes/dotdot.md":   "../../../" + filepath.Base(out) + "/passwd",
		"_content/notes/outdir":      out,
		"_content/notes/dangling.md": filepath.Join(out, "nothing-here"),
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "_content/notes/sub/b.md"), []byte("below"), 0o644)
	return root, out
}

func TestReadFileStaysInTheBox(t *testing.T) {
	root, _ := readTree(t)
	for p, want := range map[string]string{
		"/_content/notes/a.md":         "inside",
		"/_content/notes/rel.md":       "inside",
		"/_content/notes/abs.md":       "inside",
		"/_content/notes/dirlink/b.md": "below",
	} {
		if got, err := ReadFile(root, p); err != nil || string(got) != want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", p, got, err, want)
		}
	}
	for p, want := range map[string]error{
		"/_content/notes/out.md":        ErrOutside,
		"/_content/notes/outdir/passwd": ErrOutside,
		"/_content/notes/missing.md":    fs.ErrNotExist,
		"/_content/notes/dangling.md":   fs.ErrNotExist,
		"/_content/notes/sub":           ErrNotRegular,
		"/_content/notes/dirlink":       ErrNotRegular,
		"/_content/notes/outdir":        ErrOutside,
	} {
		got, err := ReadFile(root, p)
		if !errors.Is(err, want) || len(got) > 0 {
			t.Errorf("ReadFile(%s) = %q, %v; want %v", p, got, err, want)
		}
	}
	// ../ in a link is resolved like any other: this one climbs out of the box to the outside folder.
	if _, err := ReadFile(root, "/_content/notes/dotdot.md"); err == nil {
		t.Error("a relative link climbing out of the box was read")
	}
	if _, err := Stat(root, "/_content/notes/outdir"); !errors.Is(err, ErrOutside) {
		t.Errorf("Stat of a folder linked from outside: %v", err)
	}
	if fi, err := Stat(root, "/_content/notes/dirlink"); err != nil || !fi.IsDir() {
		t.Errorf("Stat of a folder linked inside: %v %v", fi, err)
	}
}

// A link swapped in between the check and the open is caught after the open.
func TestOpenCatchesALinkSwappedInAfterTheCheck(t *testing.T) {
	root, out := readTree(t)
	realRoot, _ := filepath.EvalSymlinks(root)
	host := filepath.Join(realRoot, "_content/notes/swap.md")
	os.WriteFile(host, []byte("inside"), 0o644)
	// The attacker's move: open the outside file as if the check had passed on the old inside file.
	f, err := os.Open(filepath.Join(out, "passwd"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := checkOpened(f, host, realRoot, "/_content/notes/swap.md"); !errors.Is(err, ErrOutside) {
		t.Errorf("an opened file that is not the file at the path: %v", err)
	}
	os.Remove(host)
	os.Symlink(filepath.Join(out, "passwd"), host)
	if _, err := checkOpened(f, host, realRoot, "/_content/notes/swap.md"); !errors.Is(err, ErrOutside) {
		t.Errorf("a path that now leads outside: %v", err)
	}
}

// A link inside the box that reaches .git or .box (the repository's configuration, the state database,
// the logs) is refused by every read, and so is a path naming them directly.
func TestReadsNeverReachGitOrBox(t *testing.T) {
	root, _ := readTree(t)
	for _, f := range []string{".git/config", ".box/state.db", ".box/logs/box.log"} {
		h := filepath.Join(root, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(h), 0o755)
		os.WriteFile(h, []byte("the box's own"), 0o644)
	}
	for link, target := range map[string]string{
		"_content/leak.md":      "../.git/config",
		"_content/state.md":     filepath.Join(root, ".box", "state.db"),
		"_content/logs":         "../.box/logs",
		"_content/notes/git.md": "../../.git/config",
	} {
		os.Symlink(target, filepath.Join(root, filepath.FromSlash(link)))
	}
	for _, p := range []string{"/_content/leak.md", "/_content/state.md", "/_content/logs/box.log", "/_content/notes/git.md",
		"/.git/config", "/.box/state.db"} {
		if got, err := ReadFile(root, p); !errors.Is(err, ErrOutside) || len(got) > 0 {
			t.Errorf("ReadFile(%s) = %q, %v; want ErrOutside", p, got, err)
		}
		if _, err := Stat(root, p); !errors.Is(err, ErrOutside) {
			t.Errorf("Stat(%s) = %v; want ErrOutside", p, err)
		}
	}
	if _, err := Stat(root, "/_content/logs"); !errors.Is(err, ErrOutside) {
		t.Errorf("Stat of a folder linked to .box/logs: %v", err)
	}
}
