package imports

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/errs"
)

// zipDir zips a folder under prefix ("" for none), plus extra entries as given (a mode of
// fs.ModeSymlink makes a symlink entry).
func zipDir(t testing.TB, dir, prefix, dest string, extra map[string]string, modes map[string]fs.FileMode) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte, mode fs.FileMode) {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		must(t, err)
		w.Write(data)
	}
	must(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		add(prefix+filepath.ToSlash(rel), data, 0o644)
		return err
	}))
	names := make([]string, 0, len(extra))
	for n := range extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		mode := modes[n]
		if mode == 0 {
			mode = 0o644
		}
		add(n, []byte(extra[n]), mode)
	}
	must(t, zw.Close())
	must(t, os.WriteFile(dest, buf.Bytes(), 0o644))
}

// A zipped vault reads as the vault: the same documents, and the same refusals, with nothing extracted
// to disk; a name leaving the archive, a symlink entry and a reserved name are listed.
func TestMarkdownZipReadsAsItsFolder(t *testing.T) {
	dir := t.TempDir()
	zp := filepath.Join(dir, "My Vault.zip")
	zipDir(t, "testdata/vault", "My Vault/", zp, map[string]string{
		"My Vault/../../evil.md":         "# evil",
		"My Vault/linked.md":             "/etc/passwd",
		"My Vault/__MACOSX/._x.md":       "junk",
		"My Vault/Projects/_config/x.md": "# x",
		"My Vault/_tmp/scratch.md":       "# x",
	}, map[string]fs.FileMode{"My Vault/linked.md": fs.ModeSymlink | 0o777})
	c := readsAsTheTestVault(t, zp)
	var skips []string
	for _, s := range c.skips {
		skips = append(skips, s.Where+" → "+s.Why)
	}
	all := strings.Join(skips, "\n")
	for _, want := range []string{`"My Vault/../../evil.md" → an archive entry whose name leaves`, "linked.md → a symlink is never followed",
		"Projects/_config/x.md → the box reserves the name _config", "_tmp/scratch.md → a folder named _tmp"} {
		if !strings.Contains(all, want) {
			t.Errorf("skips lack %q:\n%s", want, all)
		}
	}
	if len(skips) != 4 {
		t.Errorf("skips: %d\n%s", len(skips), all)
	}
	bomb := filepath.Join(dir, "bomb.zip")
	writeZip(t, bomb, map[string]string{"notes/a.md": strings.Repeat(" ", 16<<20)})
	if _, err := read(t, Markdown, bomb, Options{}); errs.KindOf(err) != errs.Limited || !strings.Contains(err.Error(), "zip bomb") {
		t.Errorf("a zipped vault's bomb: %v", err)
	}
}

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	zip := func(name, from string) string {
		p := filepath.Join(dir, name)
		zipDir(t, from, "", p, nil, nil)
		return p
	}
	junk := filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(junk, []byte("just some words\n"), 0o644))
	for p, want := range map[string]string{
		"testdata/server-memory/memory.jsonl":  ServerMemory,
		"testdata/mem0/v1.0.json":              Mem0,
		"testdata/mem0/v1.1.json":              Mem0,
		"testdata/chatgpt":                     ChatGPT,
		"testdata/claude":                      Claude,
		"testdata/vault":                       Markdown,
		"testdata/basic-memory":                BasicMemory,
		zip("gpt.zip", "testdata/chatgpt"):     ChatGPT,
		zip("claude.zip", "testdata/claude"):   Claude,
		zip("vault.zip", "testdata/vault"):     Markdown,
		zip("bm.zip", "testdata/basic-memory"): BasicMemory,
		junk:                                   "",
		filepath.Join(dir, "missing"):          "",
	} {
		if got := Detect(p); got != want {
			t.Errorf("Detect(%s) = %q, want %q", filepath.Base(p), got, want)
		}
	}
}

// A file of exactly the size an import reads from one file is read; one byte more is refused.
func TestEntryOfExactlyTheLimit(t *testing.T) {
	dir := t.TempDir()
	const limit = 4096
	for _, size := range []int{limit, limit + 1} {
		text := "# a\n\n" + strings.Repeat("word ", limit)
		p := filepath.Join(dir, fmt.Sprint(size)+".zip")
		writeZip(t, p, map[string]string{"notes/a.md": text[:size-1] + "\n"})
		c, err := read(t, Markdown, p, Options{MaxEntry: limit})
		switch {
		case size == limit && (err != nil || len(c.docs) != 1):
			t.Errorf("%d bytes: %v, %d documents", size, err, len(c.docs))
		case size > limit && errs.KindOf(err) != errs.Limited:
			t.Errorf("%d bytes: %v", size, err)
		}
	}
}
