package imports

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every reader is fed arbitrary bytes: it must answer with items or an error, never panic, and what it
// emits must be fit to write: one-line non-empty lines, document paths that stay under their folder.

func fuzzRead(t *testing.T, kind, path string) {
	src, err := Open(kind, path, Options{MaxLine: 1 << 20, MaxEntry: 8 << 20, MaxDoc: 4 << 10})
	if err != nil {
		return
	}
	src.Read(context.Background(), func(it Item) error {
		if l := it.Line; l != nil {
			if l.Text == "" || strings.ContainsAny(l.Text, "\n\r") || l.Key == "" || l.Where == "" {
				t.Fatalf("unfit line %+v", l)
			}
		}
		if d := it.Doc; d != nil {
			if !fs.ValidPath(d.Path) || strings.Contains(d.Path, "\\") || d.Key == "" {
				t.Fatalf("unfit document path %q", d.Path)
			}
		}
		return nil
	})
}

func seed(f *testing.F, paths ...string) {
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzServerMemory(f *testing.F) {
	seed(f, "testdata/server-memory/memory.jsonl")
	f.Add([]byte(`{"type":"relation","from":"a_b","to":"Ü","relationType":"isSonOf"}` + "\n\n" + `{"type":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "memory.jsonl")
		os.WriteFile(p, data, 0o644)
		fuzzRead(t, ServerMemory, p)
	})
}

func FuzzMem0(f *testing.F) {
	seed(f, "testdata/mem0/v1.0.json", "testdata/mem0/v1.1.json", "testdata/mem0/openmemory-memories.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "mem0.json")
		os.WriteFile(p, data, 0o644)
		fuzzRead(t, Mem0, p)
		fuzzRead(t, Markdown, p)
		fuzzRead(t, BasicMemory, p)
		Detect(p)
	})
}

func FuzzChatGPT(f *testing.F) {
	seed(f, "testdata/chatgpt/conversations.json", "testdata/chatgpt/memory.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "conversations.json"), data, 0o644)
		os.WriteFile(filepath.Join(dir, "memory.json"), data, 0o644)
		fuzzRead(t, ChatGPT, dir)
	})
}

func FuzzClaude(f *testing.F) {
	seed(f, "testdata/claude/conversations.json", "testdata/claude/memories.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "conversations.json"), data, 0o644)
		os.WriteFile(filepath.Join(dir, "memories.json"), data, 0o644)
		fuzzRead(t, Claude, dir)
	})
}

func FuzzBasicMemory(f *testing.F) {
	seed(f, "testdata/basic-memory/coffee-brewing-methods.md", "testdata/basic-memory/people/leo.md", "testdata/basic-memory/no-frontmatter.md")
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "note.md"), data, 0o644)
		fuzzRead(t, BasicMemory, dir)
	})
}

// FuzzZip feeds arbitrary bytes as an export zip: archive/zip and the entry checks must hold.
func FuzzZip(f *testing.F) {
	dir := f.TempDir()
	zp := filepath.Join(dir, "seed.zip")
	conv, _ := os.ReadFile("testdata/claude/conversations.json")
	writeZip(f, zp, map[string]string{"conversations.json": string(conv), "../x": "[]"})
	seed(f, zp)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "export.zip")
		os.WriteFile(p, data, 0o644)
		fuzzRead(t, Claude, p)
		fuzzRead(t, ChatGPT, p)
		fuzzRead(t, Mem0, p)
		fuzzRead(t, Markdown, p)
		fuzzRead(t, BasicMemory, p)
		Detect(p)
	})
}
