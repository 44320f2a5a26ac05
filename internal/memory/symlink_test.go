package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
)

// outsideSecret is a word that only the files outside the box hold.
const outsideSecret = "zanzibarquokka"

// outside makes a folder outside the box holding a note, a doc and an inbox day full of outsideSecret.
func outside(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"entity-p.md":   "---\ntype: note\nkind: entity\ntitle: P\n---\n# P\n\n## Key facts\n- root:x:0:0 " + outsideSecret + "\n",
		"secret.md":     "# Secret\n\nThe " + outsideSecret + " lives here.\n",
		"2026-11-28.md": "---\ntype: inbox-day\ndate: 2026-11-28\n---\n# Inbox 2026-11-28\n- 09:00:00 · owner · cli · own · Ana met the " + outsideSecret + " at the zoo. ^k3f9a2qd\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func link(t *testing.T, root, boxPath, target string) {
	t.Helper()
	h := filepath.Join(root, filepath.FromSlash(boxPath))
	os.MkdirAll(filepath.Dir(h), 0o755)
	if err := os.Symlink(target, h); err != nil {
		t.Fatal(err)
	}
}

// plantLinks points a note, an inbox day and a docs folder of the box at files outside it.
func plantLinks(t *testing.T, root, out string) {
	link(t, root, "/_content/memory/notes/entity-p.md", filepath.Join(out, "entity-p.md"))
	link(t, root, "/_content/inbox/2026-11-28.md", filepath.Join(out, "2026-11-28.md"))
	link(t, root, "/_content/docs/ext", out)
}

func TestReadRefusesLinksOutOfTheBox(t *testing.T) {
	m := mustOpen(t, map[string]string{"/_content/memory/notes/entity-leo.md": "---\ntype: note\nkind: entity\ntitle: Leo\n---\n# Leo\n\n## Key facts\n- Leo swims.\n"})
	plantLinks(t, m.root, outside(t))
	ctx := context.Background()
	for _, name := range []string{"entity-p", "/_content/docs/ext/secret", "/_content/docs/ext/entity-p"} {
		n, err := m.Read(ctx, name)
		if errs.KindOf(err) != errs.Refused || !strings.Contains(err.Error(), "outside the box") {
			t.Errorf("read %s: %v (want a refusal naming the way out)", name, err)
		}
		if strings.Contains(n.Text+errText(err), outsideSecret) {
			t.Errorf("read %s leaked the outside file", name)
		}
	}
	// A link that stays inside the box is followed, relative or absolute (the rule writes use).
	link(t, m.root, "/_content/memory/notes/entity-leo-alias.md", "entity-leo.md")
	link(t, m.root, "/_content/memory/notes/entity-leo-abs.md", filepath.Join(m.root, "_content/memory/notes/entity-leo.md"))
	for _, name := range []string{"entity-leo-alias", "entity-leo-abs"} {
		if n, err := m.Read(ctx, name); err != nil || !strings.Contains(n.Text, "Leo swims.") {
			t.Errorf("read %s (a link inside the box): %q %v", name, n.Text, err)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestIndexSkipsLinksOutOfTheBox(t *testing.T) {
	m := mustOpen(t, map[string]string{"/_content/docs/real.md": "# Real\n\nThe " + outsideSecret + " is only a word here.\n"})
	plantLinks(t, m.root, outside(t))
	ctx := context.Background()
	check := func(when string) {
		t.Helper()
		hs := hits(t, m, SearchInput{Words: outsideSecret})
		if len(hs) != 1 || hs[0].Path != "/_content/docs/real.md" {
			t.Errorf("%s: search found %+v; only the file inside the box may be found", when, hs)
		}
	}
	check("first reconcile")
	if _, err := m.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check("reindex")
	o, err := m.Overview(ctx)
	if err != nil || o.Inbox != 0 {
		t.Errorf("overview counts %d inbox lines from a linked day (%v)", o.Inbox, err)
	}
	remember(t, m, own, "Leo saw the "+outsideSecret+" at the lake.")
	ms, err := m.ForgetPreview(ctx, outsideSecret)
	if err != nil || len(ms) != 1 || !strings.Contains(ms[0].Text, "lake") {
		t.Errorf("forget lists %+v %v; only the line inside the box may be listed", ms, err)
	}
	ps, _ := m.Problems(ctx)
	for _, p := range ps {
		if strings.Contains(p.Path, "/ext/") || strings.Contains(p.Path, "entity-p") {
			t.Errorf("problems read a linked file: %+v", p)
		}
	}
	if _, err := m.Tidy(ctx, own); err != nil {
		t.Fatal(err)
	}
	// Tidy filed the line remembered inside the box and nothing from the linked day.
	filepath.WalkDir(filepath.Join(m.root, "_content"), func(h string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if data, _ := os.ReadFile(h); strings.Contains(string(data), "zoo") {
				t.Errorf("tidy copied a line of a linked inbox day into %s", h)
			}
		}
		return nil
	})
}

// openWatched makes a new box and opens its memory with the file watcher, once its first reconcile is done.
func openWatched(t *testing.T) (*Memory, string) {
	t.Helper()
	dir := t.TempDir()
	b, err := box.Init(context.Background(), dir, box.InitOptions{HookBinary: "box"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	m := openAt(t, dir, Options{Mode: Watch}, nil)
	waitFor(t, func() bool { return !m.indexing.Load() })
	return m, dir
}

func TestWatcherSkipsLinksOutOfTheBox(t *testing.T) {
	m, dir := openWatched(t)
	plantLinks(t, dir, outside(t))
	// A file written after the links is reported in the same or a later batch: once it is found, the
	// watcher has handled the links.
	real := filepath.Join(dir, "_content/docs/real.md")
	os.WriteFile(real, []byte("# Real\n\nThe "+outsideSecret+" is only a word here.\n"), 0o644)
	waitFor(t, func() bool { return len(hits(t, m, SearchInput{Words: outsideSecret})) > 0 })
	if hs := hits(t, m, SearchInput{Words: outsideSecret}); len(hs) != 1 || hs[0].Path != "/_content/docs/real.md" {
		t.Errorf("the watcher indexed links out of the box: %+v", hs)
	}
}

// A link inside the box that reaches the repository (.git/config) or the runtime folder is refused
// like a link out: a read-only key never reads the box's own files.
func TestReadRefusesLinksIntoGitAndBox(t *testing.T) {
	m := mustOpen(t, map[string]string{"/_content/docs/real.md": "# Real\n"})
	link(t, m.root, "/_content/leak.md", "../.git/config")
	link(t, m.root, "/_content/docs/state.md", "../../.box/box.json")
	for _, name := range []string{"/_content/leak", "/_content/docs/state"} {
		n, err := m.Read(context.Background(), name)
		if errs.KindOf(err) != errs.Refused || strings.Contains(n.Text, "[core]") || strings.Contains(n.Text, "shapeVersion") {
			t.Errorf("read %s: %q %v", name, n.Text, err)
		}
	}
}
