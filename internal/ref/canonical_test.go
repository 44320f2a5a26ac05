package ref

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/boxmem/box/internal/layout"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Each testdata/canonical/<case>/ holds input/ (a box tree), expected/ (the tree after --fix) and
// report.json. Every case also checks that a second run changes nothing and that report mode
// (no fix) reports the same and writes nothing.
func TestCanonicalGolden(t *testing.T) {
	cases, err := os.ReadDir("testdata/canonical")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join("testdata/canonical", c.Name())
			input := readTree(t, filepath.Join(dir, "input"))
			root := t.TempDir()
			writeFiles(t, root, input)

			rep, err := canonical(root, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			got := marshal(t, rep)
			after := readTree(t, root)
			if *update {
				if err := os.RemoveAll(filepath.Join(dir, "expected")); err != nil {
					t.Fatal(err)
				}
				writeFiles(t, filepath.Join(dir, "expected"), after)
				if err := os.WriteFile(filepath.Join(dir, "report.json"), got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(filepath.Join(dir, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("report:\n%s\nwant:\n%s", got, want)
			}
			diffTrees(t, after, readTree(t, filepath.Join(dir, "expected")))

			again, err := canonical(root, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			if again.FilesChanged != 0 || again.RefsRewritten+again.LinksRewritten+again.RefsRepaired+again.LinksRepaired != 0 ||
				again.Ambiguous != rep.Ambiguous || again.Skipped != rep.Skipped {
				t.Errorf("second run: %s", marshal(t, again))
			}
			diffTrees(t, readTree(t, root), after)

			dry := t.TempDir()
			writeFiles(t, dry, input)
			dryRep, err := canonical(dry, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(marshal(t, dryRep), got) {
				t.Errorf("report mode reports differently:\n%s", marshal(t, dryRep))
			}
			diffTrees(t, readTree(t, dry), input)
		})
	}
}

func TestCanonicalFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"_content/a/doc.md": "[b](b.md)\n", "_content/a/b.md": "b\n",
		"_content/a/other.md": "[b](b.md)\n", "_tmp/x.md": "[b](../_content/a/b.md)\n",
	})
	if err := os.Chmod(filepath.Join(root, "_content/a/doc.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := canonical(root, []string{"/_content/a/doc.md"}, true)
	if err != nil || rep.LinksRewritten != 1 || rep.FilesChanged != 1 {
		t.Fatalf("%+v, %v", rep, err)
	}
	tree := readTree(t, root)
	if tree["_content/a/doc.md"] != "[b](/_content/a/b.md)\n" || tree["_content/a/other.md"] != "[b](b.md)\n" {
		t.Errorf("only the listed file changes: %q", tree)
	}
	if fi, err := os.Stat(filepath.Join(root, "_content/a/doc.md")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after rewrite: %v, %v", fi.Mode(), err)
	}
	rep, err = canonical(root, nil, true) // the whole box: _tmp is scratch and left alone
	if err != nil || rep.LinksRewritten != 1 || readTree(t, root)["_tmp/x.md"] != "[b](../_content/a/b.md)\n" {
		t.Errorf("%+v, %v", rep, err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(root, "_content/a/.*tmp*")); len(leftovers) != 0 {
		t.Errorf("temp files left: %v", leftovers)
	}
	for _, bad := range []string{"/_content/none.md", "/../x.md", "/etc/passwd"} {
		if _, err := canonical(root, []string{bad}, false); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

// A file symlinked out of the box is neither read nor written.
func TestCanonicalSymlinkOut(t *testing.T) {
	root := testBox(t)
	before := readTree(t, filepath.Join(root, "../outside"))
	if _, err := canonical(root, []string{"/_content/leak.md"}, true); err == nil {
		t.Error("a file symlinked out of the box: want an error")
	}
	if _, err := canonical(root, nil, true); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, readTree(t, filepath.Join(root, "../outside")), before)

	// A symlink that stays inside is left a symlink: a rename over it would replace it with a copy.
	writeTree(t, root, map[string]string{"_content/a/rel.md": "[b](b.md)\n"})
	symlink(t, filepath.Join(root, "_content/a/rel.md"), filepath.Join(root, "_content/a/alias.md"))
	rep, err := canonical(root, []string{"/_content/a/alias.md"}, true)
	if err != nil || rep.FilesChanged != 0 {
		t.Errorf("%+v, %v", rep, err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "_content/a/alias.md")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("alias.md is no longer a symlink: %v, %v", fi, err)
	}
}

func marshal(t *testing.T, rep Report) []byte {
	t.Helper()
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// readTree returns the regular files under dir by slash path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	writeTree(t, dir, files)
}

func diffTrees(t *testing.T, got, want map[string]string) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	for p, g := range got {
		if w, ok := want[p]; !ok {
			t.Errorf("unexpected file %s", p)
		} else if g != w {
			t.Errorf("%s:\n%q\nwant\n%q", p, g, w)
		}
	}
	for p := range want {
		if _, ok := got[p]; !ok {
			t.Errorf("missing file %s", p)
		}
	}
}

// canonical runs RewriteWith as validate's canonical pass does, with a Write that puts each rewritten
// file on disk (in the box that is the transaction's Tx.Write); fix false is a dry run.
func canonical(root string, files []string, fix bool) (Report, error) {
	var w Write
	if fix {
		w = func(boxPath string, data []byte) error {
			host, err := layout.Host(root, boxPath)
			if err != nil {
				return err
			}
			return os.WriteFile(host, data, 0o644)
		}
	}
	return RewriteWith(root, files, w)
}
