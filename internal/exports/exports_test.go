package exports

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	boxpkg "github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/imports"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/mcptest"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/note"
)

var (
	owner = memory.Actor{Who: "owner", Via: "cli", Trust: "own"}
	clock = func() time.Time { return time.Date(2026, 11, 29, 14, 3, 22, 0, time.UTC) }
)

func newBox(t testing.TB) *memory.Memory {
	t.Helper()
	a, err := app.Init(context.Background(), t.TempDir(), map[string][]byte{layout.Router: []byte(note.RouterSkeleton)}, "box", app.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a.Memory
}

// filedFacts are tidied into notes; unfiled stay in the inbox; core is a core fact of the router.
var (
	filedFacts = []string{
		"Leo has swim practice Thursdays at 5:30.",
		"Mira works night shifts at St Mary's.",
		"Leo and Mira visited Porto in May.",
		"Started a new job at Acme on 3 Nov 2026.",
		"Zoë lives in Lisbon — ünïcödé 🇵🇹.",
	}
	unfiled = []string{"Ana's birthday is 4 March.", "The boiler was serviced in October."}
	core    = "Allergic to penicillin."
)

// sampleBox is a box with notes, links, a core fact, unfiled lines and a to-do card.
func sampleBox(t testing.TB) *memory.Memory {
	t.Helper()
	m := newBox(t)
	ctx := context.Background()
	for _, f := range filedFacts {
		if _, err := m.Remember(ctx, owner, memory.RememberInput{Text: f}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Remember(ctx, owner, memory.RememberInput{Text: core, Core: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Tidy(ctx, owner); err != nil {
		t.Fatal(err)
	}
	for _, f := range unfiled {
		if _, err := m.Remember(ctx, owner, memory.RememberInput{Text: f}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Box().Do(ctx, boxpkg.Change{Actor: owner, Op: "edit", Summary: "a to-do list", Apply: func(tx *boxpkg.Tx) error {
		return tx.Write("/_content/todos/home.todo.card", []byte("---\ntitle: Home\n---\n"))
	}}); err != nil {
		t.Fatal(err)
	}
	return m
}

func export(t testing.TB, m *memory.Memory, kind, dest string) Result {
	t.Helper()
	res, err := Export(context.Background(), kind, m.Box().Root, dest, Options{Now: clock})
	if err != nil {
		t.Fatalf("export %s: %v", kind, err)
	}
	return res
}

func TestExportMarkdown(t *testing.T) {
	m := sampleBox(t)
	dest := filepath.Join(t.TempDir(), "vault")
	res := export(t, m, Markdown, dest)
	if res.Notes < 5 || res.Files < res.Notes {
		t.Fatalf("%+v", res)
	}
	filepath.Walk(m.Box().Root+"/_content", func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || strings.HasPrefix(fi.Name(), ".") {
			return nil
		}
		rel, _ := filepath.Rel(m.Box().Root, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(dest, rel))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s not copied byte for byte: %v", rel, err)
		}
		return nil
	})
	for _, p := range []string{".git", ".box", "_bookkeeping", "_config", "CLAUDE.md", "_content/inbox/.gitkeep"} {
		if _, err := os.Stat(filepath.Join(dest, p)); err == nil {
			t.Errorf("%s is a runtime or box file and was exported", p)
		}
	}
	if _, err := Export(context.Background(), Markdown, m.Box().Root, dest, Options{}); errs.KindOf(err) != errs.Exists {
		t.Errorf("a non-empty destination: %v", err)
	}
	if _, err := Export(context.Background(), Markdown, m.Box().Root, filepath.Join(m.Box().Root, "_tmp", "out"), Options{}); errs.KindOf(err) != errs.Invalid {
		t.Errorf("a destination inside the box: %v", err)
	}
}

// graph is a server-memory graph as its read_graph tool returns it.
type graph struct {
	Entities []struct {
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
	} `json:"entities"`
	Relations []struct {
		From         string `json:"from"`
		To           string `json:"to"`
		RelationType string `json:"relationType"`
	} `json:"relations"`
}

// The reference server loads the export: its read_graph gives back every entity, fact and relation.
func TestExportServerMemoryLoadsInTheRealServer(t *testing.T) {
	m := sampleBox(t)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	res := export(t, m, ServerMemory, file)
	if res.Lines != len(unfiled) || res.Relations == 0 || res.Notes < 5 {
		t.Fatalf("%+v", res)
	}
	cs := mcptest.ServerMemory(t, file)
	var g graph
	if err := json.Unmarshal([]byte(mcptest.CallOK(t, cs, "read_graph", map[string]any{})), &g); err != nil {
		t.Fatal(err)
	}
	var obs []string
	types := map[string]string{}
	for _, e := range g.Entities {
		obs = append(obs, e.Observations...)
		types[e.Name] = e.EntityType
	}
	all := strings.Join(obs, "\n")
	for _, f := range append(append(append([]string{}, filedFacts...), unfiled...), core) {
		if !strings.Contains(all, f) {
			t.Errorf("the server's graph lacks %q", f)
		}
	}
	if len(obs) != res.Facts || len(g.Relations) != res.Relations {
		t.Errorf("the server loaded %d facts and %d relations, the export wrote %d and %d", len(obs), len(g.Relations), res.Facts, res.Relations)
	}
	if types["Leo"] != "person" || types[InboxEntity] != imports.InboxType {
		t.Errorf("entity types %v", types)
	}
	// The server can work on it, too: a search finds a fact.
	if !strings.Contains(mcptest.CallOK(t, cs, "search_nodes", map[string]any{"query": "swim practice"}), "Leo") {
		t.Error("search_nodes on the loaded export found nothing")
	}
}

// box → server-memory JSONL → a new box → tidy keeps every fact: each filed fact, core fact and unfiled
// line of the first box is in a note of the second.
func TestRoundTripThroughServerMemory(t *testing.T) {
	a := sampleBox(t)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	export(t, a, ServerMemory, file)
	b := newBox(t)
	src, err := imports.Open(imports.ServerMemory, file, imports.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Import(context.Background(), owner, memory.ImportInput{Kind: imports.ServerMemory, Source: src.Name, Path: src.Path, Read: src.Read})
	if err != nil || res.Refused != 0 || len(res.Skipped) != 0 {
		t.Fatalf("import %+v %v", res, err)
	}
	if _, err := b.Tidy(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	var notes strings.Builder
	ents, _ := os.ReadDir(filepath.Join(b.Box().Root, "_content/memory/notes"))
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(b.Box().Root, "_content/memory/notes", e.Name()))
		notes.Write(data)
	}
	for _, f := range append(append(append([]string{}, filedFacts...), unfiled...), core) {
		if !strings.Contains(notes.String(), f) {
			t.Errorf("the round trip lost %q", f)
		}
	}
	if o, _ := b.Overview(context.Background()); o.Inbox != 0 {
		t.Errorf("%d lines left unfiled after tidy", o.Inbox)
	}
}

func TestExportJSON(t *testing.T) {
	m := sampleBox(t)
	vault := filepath.Join(t.TempDir(), "v")
	os.MkdirAll(vault, 0o755)
	os.WriteFile(filepath.Join(vault, "garden.md"), []byte("---\ntags: [home]\n---\n# Garden\nTomatoes.\n"), 0o644)
	src, _ := imports.Open(imports.Markdown, vault, imports.Options{})
	if _, err := m.Import(context.Background(), owner, memory.ImportInput{Kind: imports.Markdown, Source: src.Name, Path: src.Path, Folder: src.Folder, Read: src.Read}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "box.json")
	res := export(t, m, JSON, file)
	data, _ := os.ReadFile(file)
	var doc struct {
		Format   string `json:"format"`
		Exported string `json:"exported"`
		Notes    []struct {
			Name       string      `json:"name"`
			Facts      []jsonFact  `json:"facts"`
			Provenance *Provenance `json:"provenance"`
		} `json:"notes"`
		Router struct {
			CoreFacts []jsonFact `json:"coreFacts"`
		} `json:"router"`
		Inbox []jsonLine `json:"inbox"`
		Cards []jsonCard `json:"cards"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	if doc.Format != "box-export" || doc.Exported != "2026-11-29T14:03:22Z" || len(doc.Notes) != res.Notes || len(doc.Inbox) != len(unfiled) {
		t.Fatalf("%+v", res)
	}
	var facts []string
	for _, n := range doc.Notes {
		if n.Provenance == nil || n.Provenance.By != "owner" || n.Provenance.Op != "tidy" {
			t.Errorf("%s without provenance: %+v", n.Name, n.Provenance)
		}
		for _, f := range n.Facts {
			if f.Line == "" {
				t.Errorf("fact %q without its line id", f.Text)
			}
			facts = append(facts, f.Text)
		}
	}
	sort.Strings(facts)
	if len(facts) != len(filedFacts) || len(doc.Router.CoreFacts) != 1 || doc.Router.CoreFacts[0].Text != core {
		t.Errorf("facts %q core %+v", facts, doc.Router.CoreFacts)
	}
	if doc.Inbox[0].Who != "owner" || doc.Inbox[0].Trust != "own" || doc.Inbox[0].Day == "" {
		t.Errorf("line %+v", doc.Inbox[0])
	}
	paths := map[string]jsonCard{}
	for _, c := range doc.Cards {
		paths[c.Path] = c
	}
	todo, ok := paths["/_content/todos/home.todo.card"]
	if !ok || todo.Type != "todo" || todo.Provenance == nil || todo.Provenance.Op != "edit" {
		t.Errorf("the to-do card %+v", todo)
	}
	garden := paths["/_content/imports/v/garden.md"]
	if garden.Provenance == nil || garden.Provenance.Op != "import" || !strings.Contains(garden.Body, "Tomatoes") {
		t.Errorf("the imported document %+v", garden)
	}
	if _, ok := paths["/_config/switches.card"]; !ok {
		t.Error("the box's own cards are part of the export")
	}
}
