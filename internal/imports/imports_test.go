package imports

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// collect reads a source whole into its lines, documents and skips.
type collected struct {
	lines []Line
	docs  []Doc
	skips []Skip
}

func read(t testing.TB, kind, path string, opts Options) (collected, error) {
	t.Helper()
	var c collected
	opts.Skipped = func(s Skip) { c.skips = append(c.skips, s) }
	src, err := Open(kind, path, opts)
	if err != nil {
		return c, err
	}
	err = src.Read(context.Background(), func(it Item) error {
		if it.Line != nil {
			c.lines = append(c.lines, *it.Line)
		}
		if it.Doc != nil {
			c.docs = append(c.docs, *it.Doc)
		}
		return nil
	})
	return c, err
}

func mustRead(t testing.TB, kind, path string) collected {
	t.Helper()
	c, err := read(t, kind, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func texts(ls []Line) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Text)
	}
	return out
}

func docByPrefix(t *testing.T, docs []Doc, prefix string) Doc {
	t.Helper()
	for _, d := range docs {
		if strings.HasPrefix(d.Path, prefix) {
			return d
		}
	}
	var paths []string
	for _, d := range docs {
		paths = append(paths, d.Path)
	}
	t.Fatalf("no document starts with %q among %v", prefix, paths)
	return Doc{}
}

func TestServerMemorySample(t *testing.T) {
	c := mustRead(t, ServerMemory, "testdata/server-memory/memory.jsonl")
	got := strings.Join(texts(c.lines), "\n")
	for _, want := range []string{
		"Leo: Swims on Thursdays at 5:30",      // an observation that does not name its entity gets the name
		"Leo likes tram 28 in Lisbon",          // one that does is kept as it is
		"Leo is the son of Mira.",              // son_of reads as what Leo is
		"Mira works at St Mary's Hospital.",    // an active-voice relation reads as it is
		"John Smith: Speaks fluent Portuguese", // John_Smith reads as words
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing line %q in:\n%s", want, got)
		}
	}
	for _, l := range c.lines {
		if l.File != "memory.jsonl" || l.ID == "" || l.Key == "" || l.Entity == "" || !strings.HasPrefix(l.Where, "memory.jsonl line ") {
			t.Errorf("line without full provenance: %+v", l)
		}
		if strings.HasPrefix(l.Text, "Leo") && l.Type != "person" {
			t.Errorf("Leo's type hint is %q, want person: %+v", l.Type, l)
		}
	}
}

func TestRelationPhrase(t *testing.T) {
	for in, want := range map[string]string{
		"son_of": "is the son of", "works_at": "works at", "isSonOf": "is son of", "lives in": "lives in",
		"parent_of": "is the parent of", "manages": "manages", "relates_to": "relates to", "": "relates to",
		"has_pet": "has pet", "belongs_to": "belongs to",
	} {
		if got := relationPhrase(in); got != want {
			t.Errorf("relationPhrase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMem0Shapes(t *testing.T) {
	v10 := mustRead(t, Mem0, "testdata/mem0/v1.0.json")
	if len(v10.lines) != 4 {
		t.Fatalf("v1.0: %d lines, want 4 (the importer, not the reader, refuses the password): %v", len(v10.lines), texts(v10.lines))
	}
	first := v10.lines[0]
	if first.Key != "0b6c4c2e-8f3a-4a55-9b8e-1f2d3c4b5a69" || !strings.Contains(first.ID, "user mira") {
		t.Errorf("provenance %+v", first)
	}
	if want := time.Date(2025, 3, 1, 17, 15, 30, 123456000, time.UTC); !first.Time.Equal(want) {
		t.Errorf("dated %v, want its own created_at %v", first.Time, want)
	}
	if want := time.Date(2025, 4, 2, 7, 30, 0, 0, time.UTC); !v10.lines[1].Time.Equal(want) {
		t.Errorf("an updated memory is dated %v, want its updated_at %v", v10.lines[1].Time, want)
	}
	v11 := mustRead(t, Mem0, "testdata/mem0/v1.1.json")
	if len(v11.lines) != 2 || v11.lines[0].Key != first.Key || v11.lines[0].Text == first.Text {
		t.Errorf("v1.1: the same memory id with changed text should come back with the same key: %+v", v11.lines)
	}
	om := mustRead(t, Mem0, "testdata/mem0/openmemory-memories.json")
	if len(om.lines) != 1 || om.lines[0].Text != "Works as a nurse at St Mary's" || len(om.skips) != 1 || !strings.Contains(om.skips[0].Why, "deleted") {
		t.Errorf("OpenMemory: %+v skips %+v", om.lines, om.skips)
	}
	// An OpenMemory backup zip holds memories.json.
	zp := filepath.Join(t.TempDir(), "openmemory-backup.zip")
	data, _ := os.ReadFile("testdata/mem0/openmemory-memories.json")
	writeZip(t, zp, map[string]string{"memories.json": string(data), "memories.jsonl.gz": "not read"})
	if z := mustRead(t, Mem0, zp); len(z.lines) != 1 || z.lines[0].File != "memories.json" {
		t.Errorf("OpenMemory zip: %+v", z.lines)
	}
}

func writeZip(t testing.TB, path string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestChatGPTExport(t *testing.T) {
	dir := t.TempDir()
	zp := filepath.Join(dir, "chatgpt-export.zip")
	files := map[string]string{}
	for _, n := range []string{"conversations.json", "memory.json", "user.json"} {
		data, _ := os.ReadFile("testdata/chatgpt/" + n)
		files["export-2025/"+n] = string(data) // a zip that wraps its files in a folder
	}
	files["export-2025/chat.html"] = "<html></html>"
	writeZip(t, zp, files)
	for _, path := range []string{"testdata/chatgpt", zp} {
		c := mustRead(t, ChatGPT, path)
		if len(c.docs) != 3 {
			t.Fatalf("%s: %d documents, want 3", path, len(c.docs))
		}
		trip := docByPrefix(t, c.docs, "2025-03-01-trip-to-lisbon-")
		s := string(trip.Data)
		shown := []string{"Plan three days in Lisbon", "Day 1: Alfama", "Leo is 7; what about trams for kids?", "print('tram 28')", "Tram 28 is fine for kids; go early."}
		last := -1
		for _, w := range shown {
			i := strings.Index(s, w)
			if i < 0 || i < last {
				t.Errorf("the shown branch should hold %q after what came before:\n%s", w, s)
			}
			last = i
		}
		branches := strings.Index(s, "## Other branches")
		for _, w := range []string{"first answer, regenerated", "What about trams?", "Tram 28 is the classic."} {
			if i := strings.Index(s, w); i < 0 || i < branches || branches < 0 {
				t.Errorf("%q should be kept under Other branches:\n%s", w, s)
			}
		}
		if strings.Contains(s, "execution_output") || strings.Contains(s, "**ok**") {
			t.Errorf("tool output leaked into the document:\n%s", s)
		}
		if !strings.Contains(s, "file-AbC123") || !strings.Contains(s, "title: \"Trip to Lisbon 🇵🇹\"") || !strings.Contains(s, "conversation: \"67c2f0a1-1111") {
			t.Errorf("attachment marker or frontmatter missing:\n%s", s)
		}
		untitled := docByPrefix(t, c.docs, "2025-03-03-untitled-conversation-")
		if !strings.Contains(string(untitled.Data), "日本語") || !strings.Contains(string(untitled.Data), "# Untitled conversation") {
			t.Errorf("unicode or empty title:\n%s", untitled.Data)
		}
		old := docByPrefix(t, c.docs, "2025-03-04-untitled-conversation-")
		if !strings.Contains(string(old.Data), "Then the first child") {
			t.Errorf("an export without current_node:\n%s", old.Data)
		}
		if got := texts(c.lines); strings.Join(got, "|") != "Lives in Lisbon with Leo|Is learning Portuguese" {
			t.Errorf("saved memories %q", got)
		}
		if len(c.skips) != 1 || !strings.Contains(c.skips[0].Why, "switched off") {
			t.Errorf("skips %+v", c.skips)
		}
	}
}

// A conversation longer than MaxDoc goes on in parts; nothing is lost, and each part is bounded.
func TestHugeConversationSplits(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`[{"title": "Long one", "create_time": 1741000000, "id": "long-1", "current_node": "n999", "mapping": {`)
	for i := 0; i < 1000; i++ {
		parent := "null"
		if i > 0 {
			parent = `"n` + itoa(i-1) + `"`
		}
		kids := "[]"
		if i < 999 {
			kids = `["n` + itoa(i+1) + `"]`
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"n` + itoa(i) + `": {"id": "n` + itoa(i) + `", "parent": ` + parent + `, "children": ` + kids +
			`, "message": {"author": {"role": "` + role + `"}, "create_time": 1741000000, "content": {"content_type": "text", "parts": ["message number ` + itoa(i) + ` ` + strings.Repeat("ü", 200) + `"]}}}`)
	}
	b.WriteString(`}}]`)
	os.WriteFile(filepath.Join(dir, "conversations.json"), []byte(b.String()), 0o644)
	c, err := read(t, ChatGPT, dir, Options{MaxDoc: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.docs) < 5 {
		t.Fatalf("%d parts, want several", len(c.docs))
	}
	var all strings.Builder
	keys := map[string]bool{}
	for i, d := range c.docs {
		if len(d.Data) > 64<<10+512 {
			t.Errorf("part %d is %d bytes", i+1, len(d.Data))
		}
		if keys[d.Key] {
			t.Errorf("two parts share the key %s", d.Key)
		}
		keys[d.Key] = true
		all.Write(d.Data)
	}
	for i := 0; i < 1000; i++ {
		if !strings.Contains(all.String(), "message number "+itoa(i)+" ") {
			t.Fatalf("message %d lost across the parts", i)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestClaudeExport(t *testing.T) {
	c := mustRead(t, Claude, "testdata/claude")
	if len(c.docs) != 2 {
		t.Fatalf("%d documents, want 2", len(c.docs))
	}
	s := string(docByPrefix(t, c.docs, "2025-05-01-sourdough-starter-").Data)
	for _, w := range []string{"**You** · 2025-05-01 10:00", "nail polish", "> Mon: 50g flour", "starter.jpg", "feed it twice a day", "used the tool web_search"} {
		if !strings.Contains(s, w) {
			t.Errorf("missing %q:\n%s", w, s)
		}
	}
	if strings.Contains(s, "hidden reasoning") {
		t.Error("thinking blocks are not part of the conversation")
	}
	want := []string{"Mira is a nurse at St Mary's.", "She works night shifts on weekends.", "Has a son, Leo, who swims on Thursdays", "Bakes sourdough", "Planning a trip to Lisbon in March."}
	if got := texts(c.lines); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("memories became %q, want %q", got, want)
	}
}

func TestBasicMemoryProject(t *testing.T) {
	c := mustRead(t, BasicMemory, "testdata/basic-memory")
	got := texts(c.lines)
	want := []string{
		"Coffee Brewing Methods: Pour over provides more flavor clarity than French press",
		"Coffee Brewing Methods: Water temperature at 205°F extracts optimal compounds #brewing",
		"Coffee Brewing Methods: Ethiopian beans work well with lighter roasts (personal experience)",
		"Coffee Brewing Methods relates to Coffee Bean Origins.",
		"Coffee Brewing Methods requires Proper Grinding Technique.",
		"Leo: Swims on Thursdays at 5:30",
		"Leo is the son of Mira.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c.lines[5].Type != "Person" || c.lines[5].Entity != "Leo" || !strings.Contains(c.lines[5].ID, "people/leo") {
		t.Errorf("provenance %+v", c.lines[5])
	}
	doc := string(docByPrefix(t, c.docs, "coffee-brewing-methods.md").Data)
	for _, w := range []string{"I switched to pour over", "- [ ] a task", "inside a code fence", "basic-memory-type: \"note\"", "permalink: \"coffee-brewing-methods\""} {
		if !strings.Contains(doc, w) {
			t.Errorf("the kept note lacks %q:\n%s", w, doc)
		}
	}
	for _, w := range []string{"\ntype: note", "[method] Pour over", "relates_to [[", "## Observations"} {
		if strings.Contains(doc, w) {
			t.Errorf("the kept note still has %q:\n%s", w, doc)
		}
	}
	if len(c.docs) != 3 {
		t.Errorf("%d documents, want 3", len(c.docs))
	}
}

func TestMarkdownVault(t *testing.T) {
	dir := t.TempDir()
	vault := filepath.Join(dir, "My Vault")
	copyDir(t, "testdata/vault", vault)
	outside := filepath.Join(dir, "outside.md")
	os.WriteFile(outside, []byte("# secret diary outside the vault\n"), 0o644)
	must(t, os.Symlink(outside, filepath.Join(vault, "linked.md")))
	must(t, os.Symlink(dir, filepath.Join(vault, "Daily", "up")))
	for _, p := range []string{"Projects/_config/x.md", "_tmp/scratch.md", "notes/_publish/y.md", "big.bin", "big.md", "Box.note.card"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(vault, p)), 0o755))
		data := []byte("# x\n")
		if strings.HasPrefix(p, "big.") {
			data = bytes.Repeat([]byte("x"), MaxFolderFile+1)
		}
		must(t, os.WriteFile(filepath.Join(vault, p), data, 0o644))
	}
	c := readsAsTheTestVault(t, vault)
	skipped := map[string]string{}
	for _, s := range c.skips {
		skipped[strings.TrimPrefix(s.Where, "My Vault/")] = s.Why
	}
	for p, why := range map[string]string{
		"linked.md": "symlink", "Daily/up": "symlink", "Projects/_config": "reserves the name _config",
		"notes/_publish": "reserves the name _publish", "_tmp": "scratch", "big.bin": "over 20 MiB", "big.md": "over 20 MiB", "Box.note.card": "box card",
	} {
		if !strings.Contains(skipped[p], why) {
			t.Errorf("%s: skipped for %q, want %q (all: %v)", p, skipped[p], why, skipped)
		}
	}
	for _, d := range c.docs {
		if strings.Contains(string(d.Data), "secret diary outside") {
			t.Fatal("read a file outside the folder through a symlink")
		}
	}
}

// readsAsTheTestVault opens and reads path, testdata/vault as a folder "My Vault" or a zip of it, and
// checks what both must give: the folder's name, its three documents, a note byte for byte (frontmatter
// and wikilinks) and an attachment as binary. It returns what was read, for the refusals each form has.
func readsAsTheTestVault(t *testing.T, path string) collected {
	t.Helper()
	src, err := Open(Markdown, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if src.Folder != "my-vault" {
		t.Errorf("folder %q", src.Folder)
	}
	c := mustRead(t, Markdown, path)
	var paths []string
	for _, d := range c.docs {
		paths = append(paths, d.Path)
	}
	if strings.Join(paths, ",") != "Daily/2025-03-01.md,Welcome.md,attachments/photo.png" {
		t.Errorf("documents %v", paths)
	}
	welcome, _ := os.ReadFile("testdata/vault/Welcome.md")
	if !bytes.Equal(docByPrefix(t, c.docs, "Welcome.md").Data, welcome) || !docByPrefix(t, c.docs, "attachments/").Binary {
		t.Error("a note is kept byte for byte (frontmatter and wikilinks), an attachment as binary")
	}
	return c
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	must(t, filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	}))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Malformed input is an Invalid error naming the file and the line or entry; nothing is half-read.
func TestBadInputSaysWhere(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	cases := []struct {
		kind, path, want string
	}{
		{ServerMemory, write("memory.jsonl", `{"type":"entity","name":"Leo","entityType":"person","observations":["a"]}`+"\n\n"+`{"type":"entity","name":`+"\n"), "memory.jsonl line 3"},
		{ServerMemory, write("obs.jsonl", `{"type":"entity","name":"Leo","observations":"not a list"}`), "obs.jsonl line 1"},
		{ServerMemory, write("rel.jsonl", `{"type":"relation","from":"Leo"}`), "needs from, to and relationType"},
		{Mem0, write("mem0.json", `{"results": [{"id": "x", "memory": "ok"}, {"memory": "no id"}]}`), "mem0.json results entry 2"},
		{Mem0, write("empty.json", `{"nothing": []}`), "no list of memories"},
		{Mem0, write("notjson.json", `hello`), "it is not JSON"},
		{ChatGPT, write("gpt/conversations.json", `[{"id": "a", "mapping": {}}, {"id": 5}]`), "conversations.json conversation 2"},
		{ChatGPT, filepath.Join(dir, "missing-dir-is-created-below"), "no conversations.json"},
		{Claude, write("cl/conversations.json", `[{"uuid": "a", "chat_messages": [{"sender": 1}]}]`), "conversations.json conversation 1"},
		{BasicMemory, write("bm/a.md", "---\ntitle: [unclosed\n---\nbody\n"), "a.md line 2"},
		{BasicMemory, write("bm2/b.md", "---\ntitle: x\nno end\n"), "never ends"},
	}
	must(t, os.MkdirAll(cases[7].path, 0o755))
	for _, c := range cases {
		src := c.path
		if c.kind == ChatGPT || c.kind == Claude {
			if !strings.HasSuffix(src, "-below") {
				src = filepath.Dir(src)
			}
		}
		if c.kind == BasicMemory {
			src = filepath.Dir(src)
		}
		_, err := read(t, c.kind, src, Options{})
		if err == nil || errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: err = %v, want Invalid naming %q", c.kind, filepath.Base(c.path), err, c.want)
		}
	}
	long := write("long.jsonl", `{"type":"entity","name":"`+strings.Repeat("x", 2<<20)+`"}`)
	if _, err := read(t, ServerMemory, long, Options{MaxLine: 1 << 20}); err == nil || !strings.Contains(err.Error(), "long.jsonl line 1: the line is longer than 1 MiB") {
		t.Errorf("a huge line: %v", err)
	}
	if _, err := Open("evernote", dir, Options{}); errs.KindOf(err) != errs.Usage {
		t.Errorf("an unknown kind: %v", err)
	}
}

// A zip entry whose name leaves the archive is never read; a zip bomb stops with an error.
func TestZipTraversalAndBomb(t *testing.T) {
	dir := t.TempDir()
	zp := filepath.Join(dir, "export.zip")
	conv, _ := os.ReadFile("testdata/claude/conversations.json")
	writeZip(t, zp, map[string]string{
		"conversations.json": string(conv),
		"../../evil.json":    "[]",
		"/etc/passwd":        "root",
		"a\\..\\b.json":      "x",
		"memories.json":      "[]",
	})
	c, err := read(t, Claude, zp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.skips) != 3 {
		t.Errorf("skipped %+v, want the three names that leave the archive", c.skips)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil.json")); err == nil {
		t.Fatal("an entry was written outside")
	}
	bomb := filepath.Join(dir, "bomb.zip")
	writeZip(t, bomb, map[string]string{"conversations.json": "[" + strings.Repeat(" ", 16<<20) + "]"})
	_, err = read(t, ChatGPT, bomb, Options{})
	if err == nil || errs.KindOf(err) != errs.Limited || !strings.Contains(err.Error(), "zip bomb") {
		t.Errorf("a 16 MiB entry of spaces compressed ~1000:1 should stop as a bomb: %v", err)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"Trip to Lisbon 🇵🇹": "trip-to-lisbon", "": "", "日本語 メモ": "日本語-メモ", "_config": "config", "../..": "", "A  B--c": "a-b-c"} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
