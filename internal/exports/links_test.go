package exports

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The markdown export copies plain files only: a link inside /_content/ to the box's runtime files
// (.box/, .git/) or out of the box is never followed, as a file or as a folder, in the folder export
// and in the zip, and nothing it points to leaves the box.
func TestExportMarkdownNeverFollowsLinks(t *testing.T) {
	m := sampleBox(t)
	root := m.Box().Root
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "private.md"), []byte("PLANTED-OUTSIDE\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".box", "planted.md"), []byte("PLANTED-RUNTIME\n"), 0o600)
	notes := filepath.Join(root, "_content", "memory", "notes")
	for name, target := range map[string]string{
		"entity-state.md": filepath.Join(root, ".box", "planted.md"),
		"entity-head.md":  filepath.Join(root, ".git", "HEAD"),
		"entity-out.md":   filepath.Join(outside, "private.md"),
		"entity-rel.md":   "../../../.git/config",
	} {
		if err := os.Symlink(target, filepath.Join(notes, name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"gitdir": filepath.Join(root, ".git"), "boxdir": filepath.Join(root, ".box"), "away": outside} {
		if err := os.Symlink(target, filepath.Join(root, "_content", name)); err != nil {
			t.Fatal(err)
		}
	}
	dest := filepath.Join(t.TempDir(), "vault")
	res := export(t, m, Markdown, dest)
	var copied []string
	filepath.Walk(dest, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dest, p)
			copied = append(copied, rel)
			if bytes.Contains(data, []byte("PLANTED")) || strings.HasPrefix(string(data), "ref: ") {
				t.Errorf("%s holds what a link pointed to", rel)
			}
		}
		return nil
	})
	if len(copied) != res.Files {
		t.Errorf("%d files on disk, %d reported", len(copied), res.Files)
	}
	var zipped bytes.Buffer
	zres, err := Stream(context.Background(), Markdown, root, "box.zip", &zipped, Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(zipped.Bytes()), int64(zipped.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != res.Files || zres.Files != res.Files {
		t.Errorf("the zip holds %d files (reported %d), the folder export %d", len(zr.File), zres.Files, res.Files)
	}
	for _, f := range zr.File {
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		if bytes.Contains(data, []byte("PLANTED")) || strings.HasPrefix(string(data), "ref: ") {
			t.Errorf("zip entry %s holds what a link pointed to", f.Name)
		}
		want, err := os.ReadFile(filepath.Join(root, f.Name))
		if err != nil || !bytes.Equal(want, data) {
			t.Errorf("zip entry %s is not the box's file byte for byte", f.Name)
		}
	}
}

// A /_content/ that is itself a link (to .git, or out of the box) is refused, not followed.
func TestExportRefusesALinkedContentFolder(t *testing.T) {
	m := sampleBox(t)
	root := m.Box().Root
	content := filepath.Join(root, "_content")
	if err := os.Rename(content, filepath.Join(root, "_tmp-real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", content); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(context.Background(), Markdown, root, filepath.Join(t.TempDir(), "v"), Options{}); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("a linked _content: %v", err)
	}
	if _, err := Stream(context.Background(), Markdown, root, "box.zip", io.Discard, Options{}); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("a linked _content, zipped: %v", err)
	}
}
