package memory

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/imports"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
)

// importFrom reads a source of kind at path into m.
func importFrom(tb testing.TB, m *Memory, kind, path string, dry bool) ImportResult {
	tb.Helper()
	res, err := importTry(m, kind, path, dry)
	if err != nil {
		tb.Fatalf("import %s %s: %v", kind, path, err)
	}
	return res
}

func importTry(m *Memory, kind, path string, dry bool) (ImportResult, error) {
	var skips []imports.Skip
	src, err := imports.Open(kind, path, imports.Options{Skipped: func(s imports.Skip) { skips = append(skips, s) }})
	if err != nil {
		return ImportResult{}, err
	}
	res, err := m.Import(context.Background(), own, ImportInput{Kind: kind, Source: src.Name, Path: src.Path, Folder: src.Folder, DryRun: dry, Read: src.Read})
	res.Skipped = append(skips, res.Skipped...)
	return res, err
}

func gitCount(tb testing.TB, m *Memory) int {
	tb.Helper()
	out, err := exec.Command("git", "-C", m.root, "rev-list", "--count", "HEAD").Output()
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, c := range strings.TrimSpace(string(out)) {
		n = n*10 + int(c-'0')
	}
	return n
}

// treeAndHistory is every byte a secret could hide in: the working tree (without .git) and every git
// object's content.
func treeAndHistory(tb testing.TB, m *Memory) string {
	tb.Helper()
	var b strings.Builder
	filepath.Walk(m.root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && !strings.Contains(p, string(filepath.Separator)+".git"+string(filepath.Separator)) {
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return nil
	})
	out, _ := exec.Command("sh", "-c", "cd '"+m.root+"' && git rev-list --objects --all | cut -d' ' -f1 | git cat-file --batch").Output()
	b.Write(out)
	return b.String()
}

const serverMemorySample = "../imports/testdata/server-memory/memory.jsonl"

func TestImportServerMemory(t *testing.T) {
	m := mustOpen(t, nil)
	before := gitCount(t, m)

	dry := importFrom(t, m, imports.ServerMemory, serverMemorySample, true)
	if !dry.DryRun || dry.Lines != 9 || dry.Refused != 1 || len(dry.Sample) == 0 || !strings.HasPrefix(dry.Text, "Would import from memory.jsonl: 9 lines") {
		t.Fatalf("dry run %+v", dry)
	}
	if gitCount(t, m) != before || exists(m, layout.InboxDir) && len(inboxLines(t, m)) > 0 {
		t.Fatal("a dry run wrote something")
	}

	res := importFrom(t, m, imports.ServerMemory, serverMemorySample, false)
	if res.Lines != 9 || res.Refused != 1 || res.Entry == "" || res.Changed != 0 {
		t.Fatalf("import %+v", res)
	}
	if len(res.Places) != 1 || res.Places[0] != "memory.jsonl line 2: "+strings.TrimSpace(res.Places[0][len("memory.jsonl line 2: "):]) || strings.Contains(strings.Join(res.Places, " "), "4821") {
		t.Errorf("refused places %q: the place and the reason, never the text", res.Places)
	}
	if gitCount(t, m) != before+1 {
		t.Errorf("an import is one commit: %d → %d", before, gitCount(t, m))
	}
	lines := inboxLines(t, m)
	if len(lines) != 9 {
		t.Fatalf("%d lines in the inbox", len(lines))
	}
	for _, l := range lines {
		if l.Who != "import server-memory" || l.Via != "import" || l.Trust != inbox.Own || l.Source.File != "memory.jsonl" || l.Source.ID == "" {
			t.Errorf("line without provenance: %+v", l)
		}
	}
	if h := hits(t, m, SearchInput{Words: "fluent Portuguese"}); len(h) == 0 || h[0].Kind != KindInbox {
		t.Errorf("an imported line is searchable at once: %+v", h)
	}
	// The whole sentence, not the bare digits: object ids in git's history are hex and may hold "4821".
	if strings.Contains(treeAndHistory(t, m), "PIN is 4821") {
		t.Fatal("the refused PIN reached the tree or git")
	}
	recent, _ := m.Recent(context.Background(), 1)
	if len(recent) != 1 || recent[0].Op != "import" || recent[0].Entry != res.Entry {
		t.Errorf("one diary entry: %+v", recent)
	}

	again := importFrom(t, m, imports.ServerMemory, serverMemorySample, false)
	if again.Lines != 0 || again.Unchanged != 9 || again.Entry != "" || gitCount(t, m) != before+1 {
		t.Errorf("importing the same file twice added something: %+v", again)
	}

	if _, err := m.Undo(context.Background(), own, res.Entry); err != nil {
		t.Fatal(err)
	}
	if n := len(inboxLines(t, m)); n != 0 {
		t.Fatalf("undo left %d lines", n)
	}
	if back := importFrom(t, m, imports.ServerMemory, serverMemorySample, false); back.Lines != 9 {
		t.Errorf("after undo the record is undone too, so the lines come back: %+v", back)
	}

	tidy, err := m.Tidy(context.Background(), own)
	if err != nil {
		t.Fatal(err)
	}
	if tidy.Filed != 9 {
		t.Errorf("tidy filed %d of 9: %+v", tidy.Filed, tidy)
	}
	for name, kind := range map[string]string{"entity-leo": "person", "entity-mira": "person", "entity-john-smith": "person", "entity-zoe": "person", "entity-st-marys-hospital": "org"} {
		n, err := m.Read(context.Background(), name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(n.Text, "kind: "+kind) {
			t.Errorf("%s is not a %s note (the type hint):\n%s", name, kind, n.Text)
		}
	}
	leo, _ := m.Read(context.Background(), "entity-leo")
	for _, f := range []string{"Leo: Swims on Thursdays at 5:30", "Leo is the son of Mira.", "[[entity-mira]]"} {
		if !strings.Contains(leo.Text, f) {
			t.Errorf("entity-leo lacks %q:\n%s", f, leo.Text)
		}
	}
	if again := importFrom(t, m, imports.ServerMemory, serverMemorySample, false); again.Lines != 0 {
		t.Errorf("after tidy the same file still adds nothing: %+v", again)
	}
}

func exists(m *Memory, p string) bool {
	_, err := os.Stat(m.host(p))
	return err == nil
}

func inboxLines(tb testing.TB, m *Memory) []inbox.Line {
	tb.Helper()
	ls, _, err := m.inboxNow()
	if err != nil {
		tb.Fatal(err)
	}
	var out []inbox.Line
	for _, l := range ls {
		out = append(out, l.Line)
	}
	return out
}

// A changed entry adds the change; an unchanged one adds nothing; each line is dated by its own time.
func TestImportChangedEntry(t *testing.T) {
	m := mustOpen(t, nil)
	first := importFrom(t, m, imports.Mem0, "../imports/testdata/mem0/v1.0.json", false)
	if first.Lines != 3 || first.Refused != 1 {
		t.Fatalf("first %+v", first)
	}
	second := importFrom(t, m, imports.Mem0, "../imports/testdata/mem0/v1.1.json", false)
	if second.Lines != 1 || second.Changed != 1 || second.Unchanged != 1 {
		t.Fatalf("second %+v", second)
	}
	var found bool
	for _, l := range inboxLines(t, m) {
		if l.Text == "Leo has swim practice on Wednesdays" {
			found = true
			if l.Source.ID != "0b6c4c2e-8f3a-4a55-9b8e-1f2d3c4b5a69 (user mira)" {
				t.Errorf("provenance %+v", l.Source)
			}
		}
	}
	if !found {
		t.Error("the changed memory is not in the inbox")
	}
	// Dated by their own timestamps: the files are those days' (in the box's zone), never today's.
	days, _ := os.ReadDir(m.host(layout.InboxDir))
	var names []string
	for _, d := range days {
		names = append(names, d.Name())
	}
	if len(names) < 3 || strings.Contains(strings.Join(names, " "), fixedAt.Format("2006-01-02")) {
		t.Errorf("lines should be filed under their own days, not today's: %v", names)
	}
}

// Documents: conversations are kept and searchable; a secret-like line in one is blanked and counted;
// a conversation that changed is rewritten where it went; a document the box would refuse is skipped.
func TestImportDocuments(t *testing.T) {
	m := mustOpen(t, nil)
	dir := t.TempDir()
	conv, _ := os.ReadFile("../imports/testdata/claude/conversations.json")
	leak := strings.Replace(string(conv), "My starter smells like nail polish.", `My starter smells like nail polish.\nmy key is sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789`, 2)
	os.WriteFile(filepath.Join(dir, "conversations.json"), []byte(leak), 0o644)
	res := importFrom(t, m, imports.Claude, dir, false)
	if res.Documents != 2 || res.Refused != 1 {
		t.Fatalf("%+v", res)
	}
	if strings.Contains(treeAndHistory(t, m), "AbCdEfGhIjKlMnOp") {
		t.Fatal("the key reached the box")
	}
	h := hits(t, m, SearchInput{Words: "acetone hungry"})
	if len(h) == 0 || !strings.HasPrefix(h[0].Path, "/_content/imports/claude/2025-05-01-sourdough-starter-") {
		t.Fatalf("the conversation is not searchable: %+v", h)
	}
	path := h[0].Path
	changed := strings.Replace(leak, "feed it twice a day", "feed it three times a day", 1)
	os.WriteFile(filepath.Join(dir, "conversations.json"), []byte(changed), 0o644)
	again := importFrom(t, m, imports.Claude, dir, false)
	if again.Documents != 1 || again.Unchanged != 1 || !strings.Contains(read(t, m, path), "three times a day") {
		t.Errorf("a changed conversation is rewritten in place: %+v", again)
	}

	vault := filepath.Join(t.TempDir(), "Notes")
	os.MkdirAll(vault, 0o755)
	os.WriteFile(filepath.Join(vault, "broken.md"), []byte("---\ntitle: [unclosed\n---\nA note whose frontmatter is not YAML.\n"), 0o644)
	os.WriteFile(filepath.Join(vault, "ideas.md"), []byte("# Ideas\n\nA greenhouse for tomatoes, see [[broken]].\n"), 0o644)
	v := importFrom(t, m, imports.Markdown, vault, false)
	if v.Documents != 1 || len(v.Skipped) != 1 || !strings.Contains(v.Skipped[0].Why, "the box would refuse it") || v.Skipped[0].Where != "Notes/broken.md" {
		t.Errorf("vault %+v", v)
	}
	if got := read(t, m, "/_content/imports/notes/ideas.md"); got != "# Ideas\n\nA greenhouse for tomatoes, see [[broken]].\n" {
		t.Errorf("kept as %q", got)
	}
}

// An import's record is a file in the box: where it says a document went is used again only when that
// is a path an import writes. A record edited to send the next version elsewhere (out of the imports
// folder, onto the switches) is ignored, and the document goes where it would go the first time.
func TestImportRecordCannotSendADocumentElsewhere(t *testing.T) {
	m := mustOpen(t, nil)
	vault := filepath.Join(t.TempDir(), "Notes")
	os.MkdirAll(vault, 0o755)
	os.WriteFile(filepath.Join(vault, "a.md"), []byte("# A\n\nThe first version.\n"), 0o644)
	importFrom(t, m, imports.Markdown, vault, false)
	rec := filepath.Join(m.root, filepath.FromSlash(strings.TrimPrefix(recordPath(string(imports.Markdown)), "/")))
	data, err := os.ReadFile(rec)
	if err != nil || !strings.Contains(string(data), `"to":"/_content/imports/notes/a.md"`) {
		t.Fatalf("the record: %s %v", data, err)
	}
	switches := read(t, m, layout.Switches)
	for _, to := range []string{"/_content/imports/../../_config/switches.card", "/_config/switches.card", "/_content/imports/notes/_config/x.md", "/_content/imports/notes/_tmp/a.md"} {
		if data, err = os.ReadFile(rec); err != nil || !strings.Contains(string(data), `"to":"/_content/imports/notes/a.md"`) { // as the last import left it
			t.Fatalf("the record: %s %v", data, err)
		}
		planted := strings.Replace(string(data), `"to":"/_content/imports/notes/a.md"`, `"to":"`+to+`"`, 1)
		if err := os.WriteFile(rec, []byte(planted), 0o644); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(vault, "a.md"), []byte("# A\n\nVersion for "+to+"\n"), 0o644)
		if _, err := importTry(m, imports.Markdown, vault, false); err != nil {
			t.Errorf("a record sending the document to %s: %v", to, err)
		}
		if got := read(t, m, layout.Switches); got != switches {
			t.Fatalf("a record sending the document to %s changed the switches:\n%s", to, got)
		}
		if got := read(t, m, "/_content/imports/notes/a.md"); !strings.Contains(got, "Version for "+to) {
			t.Errorf("the document with the record sending it to %s went elsewhere: %q", to, got)
		}
	}
}

// An import holds what it keeps until its one commit, bounded: past maxKept it stops with a sentence
// (limited), a dry run as well, and nothing is written.
func TestImportKeepsABoundedAmount(t *testing.T) {
	m := mustOpen(t, nil)
	defer func(was int64) { maxKept = was }(maxKept)
	maxKept = 3 << 20
	vault := filepath.Join(t.TempDir(), "Notes")
	os.MkdirAll(vault, 0o755)
	for i := range 4 {
		os.WriteFile(filepath.Join(vault, fmt.Sprintf("photo-%d.bin", i)), bytes.Repeat([]byte{byte(i)}, 1<<20), 0o644)
	}
	before := treeAndHistory(t, m)
	for _, dry := range []bool{true, false} {
		_, err := importTry(m, imports.Markdown, vault, dry)
		if !errs.Is(err, errs.Limited) || !strings.Contains(err.Error(), "more than 3 MiB") {
			t.Errorf("dry run %v: %v", dry, err)
		}
	}
	if treeAndHistory(t, m) != before {
		t.Error("a refused import wrote to the box")
	}
	os.Remove(filepath.Join(vault, "photo-3.bin"))
	if res := importFrom(t, m, imports.Markdown, vault, false); res.Documents != 3 {
		t.Errorf("three photos under the bound: %+v", res)
	}
}

// The seam for proposing facts from conversations: what Extract returns goes through the same rules as
// a source's own lines (a secret is refused by place, the line carries the conversation's provenance).
func TestImportExtractSeam(t *testing.T) {
	m := mustOpen(t, nil)
	src, err := imports.Open(imports.Claude, "../imports/testdata/claude", imports.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	extract := func(_ context.Context, d imports.Doc) ([]imports.Line, error) {
		seen = append(seen, d.Path)
		if !strings.Contains(string(d.Data), "sourdough") && !strings.Contains(string(d.Data), "Sourdough") {
			return nil, nil
		}
		return []imports.Line{{Text: "Mira bakes sourdough."}, {Text: "my password is hunter2hunter2"}}, nil
	}
	res, err := m.Import(context.Background(), own, ImportInput{Kind: imports.Claude, Source: src.Name, Path: src.Path, Read: src.Read, Extract: extract})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || res.Documents != 2 || res.Refused != 1 {
		t.Fatalf("%+v (extract saw %v)", res, seen)
	}
	var got *inbox.Line
	for _, l := range inboxLines(t, m) {
		if l.Text == "Mira bakes sourdough." {
			got = &l
		}
	}
	if got == nil || got.Source.File != "conversations.json" || !strings.HasPrefix(got.Source.ID, "conversation c0ffee00-0000-4000-8000-000000000001, proposed: ") {
		t.Fatalf("proposed line %+v", got)
	}
	again, _ := m.Import(context.Background(), own, ImportInput{Kind: imports.Claude, Source: src.Name, Path: src.Path, Read: src.Read, Extract: extract})
	if again.Lines != 0 || again.Documents != 0 {
		t.Errorf("a second import proposes nothing new: %+v", again)
	}
}

// A secret-like line in a document's frontmatter becomes a YAML comment, so the frontmatter still parses
// and the document still comes in.
func TestImportSecretInFrontmatter(t *testing.T) {
	m := mustOpen(t, nil)
	vault := filepath.Join(t.TempDir(), "vault")
	os.MkdirAll(vault, 0o755)
	os.WriteFile(filepath.Join(vault, "keys.md"), []byte("---\ntitle: Keys\napi: sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n---\n# Keys\nThe key was sk-proj-ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210 once.\n"), 0o644)
	res := importFrom(t, m, imports.Markdown, vault, false)
	if res.Documents != 1 || res.Refused != 2 || len(res.Skipped) != 0 {
		t.Fatalf("%+v", res)
	}
	got := read(t, m, "/_content/imports/vault/keys.md")
	want := "---\ntitle: Keys\n" + secretFrontMarker + "\n---\n# Keys\n" + secretMarker + "\n"
	if got != want {
		t.Errorf("kept as\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(treeAndHistory(t, m), "AbCdEfGhIjKlMnOp") {
		t.Fatal("the key reached the box")
	}
}

// A name is kept where a line is not blanked (the tree, git's trees, the diary's paths): a file whose
// name reads like a secret is skipped, and a conversation whose title does is filed as untitled.
func TestImportSecretInAName(t *testing.T) {
	m := mustOpen(t, nil)
	vault := filepath.Join(t.TempDir(), "vault")
	os.MkdirAll(vault, 0o755)
	os.WriteFile(filepath.Join(vault, "my wifi password is Tr0ub4dor-horse.md"), []byte("# Wifi\n\nThe router is in the hall.\n"), 0o644)
	os.WriteFile(filepath.Join(vault, "garden.md"), []byte("# Garden\n\nTomatoes by the fence.\n"), 0o644)
	res := importFrom(t, m, imports.Markdown, vault, false)
	if res.Documents != 1 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Why, "its name looks like") {
		t.Fatalf("%+v", res)
	}
	data, err := os.ReadFile("../imports/testdata/claude/conversations.json")
	if err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(t.TempDir(), "claude")
	os.MkdirAll(export, 0o755)
	os.WriteFile(filepath.Join(export, "conversations.json"), []byte(strings.Replace(string(data), `"name": "Sourdough starter"`, `"name": "my bank pin is 4821"`, 1)), 0o644)
	if res := importFrom(t, m, imports.Claude, export, false); res.Documents == 0 {
		t.Fatalf("the conversations: %+v", res)
	}
	all := treeAndHistory(t, m)
	filepath.Walk(m.root, func(p string, _ os.FileInfo, _ error) error { all += "\n" + p; return nil })
	for _, s := range []string{"Tr0ub4dor", "4821"} {
		if strings.Contains(all, s) {
			t.Errorf("%s reached the box's tree, history or names", s)
		}
	}
}

// An import never writes over a file the box holds that it did not leave as it is: the owner's edit of an
// imported document stays, and the new document goes beside it. What it wrote itself and no one changed
// is updated in place.
func TestImportKeepsWhatChangedInTheBox(t *testing.T) {
	ctx := context.Background()
	m := mustOpen(t, nil)
	vault := filepath.Join(t.TempDir(), "Notes")
	os.MkdirAll(vault, 0o755)
	os.WriteFile(filepath.Join(vault, "plan.md"), []byte("# Plan\n\nLisbon in March.\n"), 0o644)
	if res := importFrom(t, m, imports.Markdown, vault, false); res.Documents != 1 {
		t.Fatalf("first import: %+v", res)
	}
	const p = "/_content/imports/notes/plan.md"
	// Changed at the source only: updated in place.
	os.WriteFile(filepath.Join(vault, "plan.md"), []byte("# Plan\n\nLisbon in April.\n"), 0o644)
	if res := importFrom(t, m, imports.Markdown, vault, false); res.Documents != 1 || len(res.Beside) != 0 || !strings.Contains(read(t, m, p), "April") {
		t.Fatalf("a source change: %+v\n%s", res, read(t, m, p))
	}
	// The owner edits it in the box; the source changes again: the edit stays, the new text goes beside it.
	if _, err := m.box.Do(ctx, box.Change{Actor: box.Actor{Who: "owner", Via: "cli", Trust: "own"}, Op: "edit", Summary: "edit",
		Apply: func(tx *box.Tx) error { return tx.Write(p, []byte("# Plan\n\nLisbon in April, with Leo.\n")) }}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(vault, "plan.md"), []byte("# Plan\n\nLisbon in May.\n"), 0o644)
	res := importFrom(t, m, imports.Markdown, vault, false)
	if res.Documents != 1 || len(res.Beside) != 1 || res.Beside[0] != "/_content/imports/notes/plan-2.md" || !strings.Contains(res.Text, "written beside") {
		t.Fatalf("over the owner's edit: %+v", res)
	}
	if got := read(t, m, p); !strings.Contains(got, "with Leo") {
		t.Fatalf("the owner's edit was written over:\n%s", got)
	}
	if got := read(t, m, "/_content/imports/notes/plan-2.md"); !strings.Contains(got, "May") {
		t.Fatalf("the new text:\n%s", got)
	}
	// A folder of the same name is the same source (an entry is known by its kind and path), so its plan
	// is the next version of the one beside; the owner's edit still stays.
	other := filepath.Join(t.TempDir(), "notes")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "plan.md"), []byte("# Plan\n\nA different plan.\n"), 0o644)
	res = importFrom(t, m, imports.Markdown, other, false)
	if res.Documents != 1 || !strings.Contains(read(t, m, p), "with Leo") || !strings.Contains(read(t, m, "/_content/imports/notes/plan-2.md"), "different") {
		t.Fatalf("another source of the same name: %+v", res)
	}
}
