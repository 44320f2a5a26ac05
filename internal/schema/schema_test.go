package schema

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/finding"
)

func TestBuiltin(t *testing.T) {
	want := []string{"approval", "attachments", "browse", "connector", "dashboard", "inbox-day", "look", "map", "note", "page",
		"router", "settings", "switches", "todo"}
	if got := Types(); !reflect.DeepEqual(got, want) {
		t.Errorf("Types() = %v, want %v", got, want)
	}
	s, _ := Builtin().Schema("switches")
	if s.BodyAllowed() || s.Fields["access"].Type != "enum" || len(s.Fields["access"].Values) != 2 {
		t.Errorf("switches schema wrong: %+v", s)
	}
}

// short renders findings as "line:severity:code" for table tests.
func short(fs []finding.Finding) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%d:%s:%s", f.Line, f.Severity[:1], f.Code))
	}
	return strings.Join(parts, " ")
}

const hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestCheck(t *testing.T) {
	approval := "---\nid: a1\nkind: send\ntitle: Send as you\nproposedBy:\n  who: Claude\n  via: mcp\n  host: claude.ai\nactionHash: " + hash +
		"\nswitch: send\nstatus: waiting\ncreated: 2026-11-29T10:00:00Z\n---\nSend this mail?\n"
	tests := []struct{ name, path, src, want string }{
		{"untyped document is not checked", "/_content/docs/x.md", "---\nwhatever: [1]\n---\n{% nope %}", ""},
		{"good note", "/_content/memory/notes/entity-leo.md",
			"---\ntype: note\nkind: person\ntitle: Leo\ndescription: a friend\naliases: [Leonardo]\nmaps: [moc-people]\nupdated: 2026-11-29\nsource: own\n---\n# Leo\n", ""},
		{"note without frontmatter", "/_content/memory/notes/topic-garden.md", "# Garden\n", ""},
		{"unknown key warns", "/_content/memory/notes/entity-leo.md", "---\ntitle: Leo\ncolour: red\n---\n", "3:w:unknown-key"},
		{"bad enum", "/_content/memory/notes/entity-leo.md", "---\nkind: persn\n---\n", "2:e:bad-value"},
		{"wrong list", "/_content/memory/notes/entity-leo.md", "---\naliases: Leo\nmaps: [people]\n---\n", "2:e:wrong-type 3:e:bad-value"},
		{"bad date", "/_content/memory/notes/entity-leo.md", "---\nupdated: 29/11/2026\n---\n", "2:e:wrong-type"},
		{"list item a map", "/_content/memory/notes/entity-leo.md", "---\ntags:\n  - a\n  - {b: c}\n---\n", "4:e:wrong-type"},
		{"title must be a value", "/_content/memory/maps/moc-people.md", "---\ntitle: [a]\n---\n", "2:e:wrong-type"},
		{"number title is fine", "/_content/memory/maps/moc-1984.md", "---\ntitle: 1984\n---\n", ""},
		{"good approval", "/_bookkeeping/approvals/a1.approval.card", approval, ""},
		{"approval missing keys", "/_bookkeeping/approvals/a1.approval.card", "---\nid: a1\nkind: send\n---\n",
			"1:e:missing-key 1:e:missing-key 1:e:missing-key 1:e:missing-key 1:e:missing-key 1:e:missing-key"},
		{"approval bad values", "/_bookkeeping/approvals/a1.approval.card",
			strings.NewReplacer("kind: send", "kind: spend", hash, "abc", "created: 2026-11-29T10:00:00Z", "created: yesterday", "  who: Claude\n", "").Replace(approval),
			"3:e:bad-value 5:e:missing-key 8:e:bad-value 11:e:wrong-type"},
		{"good switches", "/_config/switches.card", "---\nchange: just-do-it\nsend: ask-me\nshare: ask-me\naccess: ask-me\ndelete: never\n---\n", ""},
		{"switches refuse just-do-it for access, and a body", "/_config/switches.card",
			"---\nchange: just-do-it\nsend: ask-me\nshare: ask-me\naccess: just-do-it\ndelete: never\n---\nhello\n", "5:e:bad-value 8:e:body-not-allowed"},
		{"blank body is no body", "/_config/switches.card", "---\nchange: never\nsend: never\nshare: never\naccess: never\ndelete: never\n---\n\n  \n", ""},
		{"required but empty", "/_config/switches.card", "---\nchange:\nsend: never\nshare: never\naccess: never\ndelete: never\n---\n", "2:e:missing-key"},
		{"undefined tag and nesting warn", "/_content/todos/x.todo.card", "---\ntitle: t\n---\n- [ ] a {% ref \"/x\" /%}\n{% chart %}\n`{% code %}`\n{% if $a %}\n", "5:w:markdoc-unclosed 5:w:undefined-tag 7:w:markdoc-unclosed"},
		{"dashboard tags", "/_config/interface/dashboard.card", "---\ntitle: Home\n---\n{% section title=\"Today\" %}\n{% instrument name=\"x\" /%}\n{% /section %}\n", ""},
		{"router over 40 lines", "/_content/memory/MEMORY.md", "---\ntitle: Memory\n---\n" + strings.Repeat("- line\n", 41), "4:w:too-long"},
		{"unknown type", "/_content/x.thing.card", "---\n---\n", "1:e:unknown-type"},
		{"unknown type of a document warns", "/_content/x.md", "---\ntype: recipe\n---\n", "1:w:unknown-type"},
		{"look css too long", "/_config/looks/x.look.card", "---\nname: x\ncss: " + strings.Repeat("a", 3501) + "\n---\n", "3:e:bad-value"},
		{"connector egress limit", "/_config/connectors/x.connector.card", "---\nid: x\nname: X\negress: [a, b, c, d, e, f, g, h, i, j, k]\nversion: one\n---\n", "4:e:bad-value 5:e:wrong-type"},
		{"crlf lines", "/_content/memory/notes/entity-x.md", "---\r\ntitle: x\r\nkind: nope\r\n---\r\n", "3:e:bad-value"},
	}
	r := Builtin()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.CheckFile(tt.path, []byte(tt.src))
			if short(got) != tt.want {
				t.Errorf("findings = %q, want %q\n%v", short(got), tt.want, got)
			}
			for _, f := range got {
				if f.Path != tt.path {
					t.Errorf("finding path %s, want %s", f.Path, tt.path)
				}
			}
		})
	}
}

func TestCheckFileParseError(t *testing.T) {
	got := Builtin().CheckFile("/_content/x.md", []byte("---\na: [\n---\n"))
	if short(got) != "2:e:invalid-card" {
		t.Errorf("findings = %v", got)
	}
}

func TestLoad(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "_config", "schemas")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"recipe.yaml":   "description: A recipe.\nfields:\n  serves: {type: int, required: true}\nmarkdocTags: [step]\n",
		"todo.yaml":     "body: false\n",                                // overrides the built-in
		"broken.yaml":   "fields:\n  x: {type: colour}\n",               // bad field type
		"typo.yaml":     "feilds: {}\n",                                 // unknown schema key
		"bad-re.yaml":   "fields:\n  x: {type: string, pattern: '('}\n", // bad pattern
		"mismatch.yaml": "type: other\n",
		"notes.txt":     "ignored",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, f := range r.Findings() {
		bad = append(bad, f.Path)
	}
	wantBad := []string{"/_config/schemas/bad-re.yaml", "/_config/schemas/broken.yaml", "/_config/schemas/mismatch.yaml", "/_config/schemas/typo.yaml"}
	if !reflect.DeepEqual(bad, wantBad) {
		t.Errorf("schema findings on %v, want %v", bad, wantBad)
	}
	if f := r.Findings(); len(f) > 0 && f[3].Line != 1 {
		t.Errorf("typo.yaml finding line %d, want 1", f[3].Line)
	}
	cases := map[string]string{
		"/_content/recipes/soup.recipe.card":   "---\nserves: two\n---\n{% step %}{% /step %}{% x /%}\n",
		"/_content/todos/a.todo.card":          "---\ntitle: a\n---\n- [ ] x\n",
		"/_content/recipes/soup.broken.card":   "---\n---\n",
		"/_content/memory/notes/entity-leo.md": "---\nkind: person\n---\n",
	}
	want := map[string]string{
		"/_content/recipes/soup.recipe.card":   "2:e:wrong-type 4:w:undefined-tag",
		"/_content/todos/a.todo.card":          "4:e:body-not-allowed",
		"/_content/recipes/soup.broken.card":   "1:w:unchecked",
		"/_content/memory/notes/entity-leo.md": "",
	}
	for p, src := range cases {
		if got := short(r.CheckFile(p, []byte(src))); got != want[p] {
			t.Errorf("%s: %q, want %q", p, got, want[p])
		}
	}
	if _, err := Load(filepath.Join(root, "nothing-here")); err != nil {
		t.Errorf("Load of a box without schemas: %v", err)
	}
}

func BenchmarkParseCheck(b *testing.B) {
	src := []byte("---\ntype: note\nkind: person\ntitle: Leo Marlowe\ndescription: Friend from the climbing gym\naliases: [Leo, Leonardo]\nmaps: [moc-people]\nupdated: 2026-11-29\n---\n# Leo Marlowe\n\n## Snapshot\nClimbs on Tuesdays. {% ref \"/_content/memory/notes/entity-gym.md\" /%}\n\n## Key facts\n" +
		strings.Repeat("- A fact about Leo with a [[entity-gym]] link and `code {% x %}`.\n", 30) + "\n```\n{% not a tag %}\n```\n")
	r := Builtin()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := card.Parse("/_content/memory/notes/entity-leo.md", src)
		if err != nil {
			b.Fatal(err)
		}
		if fs := r.Check(c); len(fs) != 0 {
			b.Fatal(fs)
		}
	}
}

// TestDocExample keeps the format example in the package comment valid.
func TestDocExample(t *testing.T) {
	example := `type: note
description: One subject.
body: true
maxLines: 40
fields:
  kind: {type: enum, values: [person, org], required: true}
  maps: {type: list, pattern: "^moc-", max: 10}
  who:  {type: map, fields: {name: {type: string}}}
markdocTags: [ref, section]
`
	if _, err := parse("note", []byte(example)); err != nil {
		t.Fatal(err)
	}
}
