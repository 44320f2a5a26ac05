package card

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/boxmem/box/internal/goldenfile"
)

// TestSurgeryGolden runs testdata/surgery/<case>.op ("set a.b <json>" or "delete a.b") on <case>.in
// and compares with <case>.out; go test -run Golden -update rewrites the .out files.
func TestSurgeryGolden(t *testing.T) {
	ops, _ := filepath.Glob("testdata/surgery/*.op")
	if len(ops) == 0 {
		t.Fatal("no golden cases")
	}
	for _, opFile := range ops {
		name := strings.TrimSuffix(opFile, ".op")
		t.Run(filepath.Base(name), func(t *testing.T) {
			in, err := os.ReadFile(name + ".in")
			if err != nil {
				t.Fatal(err)
			}
			opText, _ := os.ReadFile(opFile)
			verb, rest, _ := strings.Cut(strings.TrimSpace(string(opText)), " ")
			pathText, valText, _ := strings.Cut(rest, " ")
			path := strings.Split(pathText, ".")
			var got []byte
			switch verb {
			case "set":
				var v any
				if err := json.Unmarshal([]byte(valText), &v); err != nil {
					t.Fatalf("bad op value %q: %v", valText, err)
				}
				got, err = SetField(in, path, jsonValue(v))
			case "delete":
				got, err = DeleteField(in, path)
			default:
				t.Fatalf("unknown op %q", verb)
			}
			if err != nil {
				got = []byte("error: " + err.Error() + "\n")
			} else if _, perr := parseRaw(got); perr != nil {
				t.Errorf("result does not parse: %v", perr)
			}
			if strings.HasPrefix(filepath.Base(name), "error-") != (err != nil) {
				t.Errorf("error = %v; cases named error-* must fail and only they", err)
			}
			goldenfile.Check(t, name+".out", got)
		})
	}
}

// jsonValue turns decoded JSON into SetField values: integral numbers to int, arrays to []string.
func jsonValue(v any) any {
	switch v := v.(type) {
	case float64:
		if v == float64(int(v)) {
			return int(v)
		}
	case []any:
		out := []string{}
		for _, x := range v {
			out = append(out, x.(string))
		}
		return out
	}
	return v
}

func TestSetFieldReadsBack(t *testing.T) {
	in := []byte("---\ntitle: x # c\nlist:\n  - a\nnum: 1\n---\n")
	values := []any{"plain", "needs: quoting", "#hash", "yes", "2024-01-02", "", " pad ", "line\nbreak", "tab\there", "é ü 中",
		true, false, 42, -7, 1.5, nil, []string{"a", "b: c", "[x]"}, []string{}}
	for _, v := range values {
		for _, key := range []string{"title", "list", "num", "new"} {
			out, err := SetField(in, []string{key}, v)
			if err != nil {
				t.Errorf("SetField(%s, %#v): %v", key, v, err)
				continue
			}
			var m map[string]any
			c, err := parseRaw(out)
			if err != nil {
				t.Fatalf("SetField(%s, %#v) broke the card: %v\n%s", key, v, err, out)
			}
			if err := c.Node.Decode(&m); err != nil {
				t.Fatal(err)
			}
			want := v
			if l, ok := v.([]string); ok {
				var anyList []any
				for _, s := range l {
					anyList = append(anyList, s)
				}
				want = anyList
			}
			if f, ok := v.(float64); ok {
				want = f
			}
			if got := m[key]; !reflect.DeepEqual(got, want) && !(len(v.([]string)) == 0 && reflect.ValueOf(got).Len() == 0) {
				t.Errorf("SetField(%s, %#v) reads back %#v\n%s", key, v, got, out)
			}
		}
	}
}

func TestBuild(t *testing.T) {
	got := string(Build([]Field{
		{"type", "note"},
		{"title", "Leo: the painter"},
		{"description", strings.TrimSpace(strings.Repeat("a very long description ", 10))},
		{"aliases", []string{"Leo", "yes"}},
		{"maps", []string{}},
		{"updated", mustDate("2026-11-29")},
		{"proposedBy", []Field{{"who", "Claude"}, {"host", "claude.ai"}}},
		{"count", 3},
		{"ok", true},
		{"none", nil},
	}, "# Leo\n"))
	want := "---\ntype: note\ntitle: \"Leo: the painter\"\ndescription: " + strings.Repeat("a very long description ", 9) +
		"a very long description\naliases:\n  - Leo\n  - \"yes\"\nmaps: []\nupdated: 2026-11-29\nproposedBy:\n  who: Claude\n  host: claude.ai\ncount: 3\nok: true\nnone: null\n---\n# Leo\n"
	if got != want {
		t.Errorf("Build:\n%s\nwant:\n%s", got, want)
	}
	c, err := Parse("/_content/memory/notes/entity-leo.md", []byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if c.String("description") != strings.Repeat("a very long description ", 9)+"a very long description" {
		t.Errorf("description read back as %q", c.String("description"))
	}
	var fm struct{ Aliases []string }
	if err := c.Decode(&fm); err != nil || !reflect.DeepEqual(fm.Aliases, []string{"Leo", "yes"}) {
		t.Errorf("aliases = %v, %v", fm.Aliases, err)
	}
}

func TestSpan(t *testing.T) {
	src := "---\nref: \"/_content/a.md\"\nnested:\n  - ref: ../b.md # rel\n  - {ref: 'c d.md', x: 1}\nbody: |\n  text\n---\n"
	c, err := Parse("/_content/x.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "ref" || n.Content[i].Value == "body" {
					s, e, err := c.Span(n.Content[i+1])
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, src[s:e])
				}
			}
		}
		for _, ch := range n.Content {
			walk(ch)
		}
	}
	walk(c.Node)
	want := []string{`"/_content/a.md"`, "|\n  text", "../b.md", "'c d.md'"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spans = %q, want %q", got, want)
	}
}

func mustDate(s string) any {
	var n yaml.Node
	_ = yaml.Unmarshal([]byte(s), &n)
	var v any
	_ = n.Decode(&v)
	return v
}

func mustYAML(v any) []byte {
	b, _ := yaml.Marshal(v)
	return b
}

// A mapping is added whole as a new top-level key, and read back; on a key that exists, or below the
// top level, it is refused and the card is left as it was.
func TestSetFieldMapping(t *testing.T) {
	in := []byte("---\ntitle: x # keep\n---\nbody\n")
	m := []Field{{Key: "provider", Value: "anthropic"}, {Key: "budget", Value: 20.5},
		{Key: "prices", Value: []Field{{Key: "claude-haiku-*", Value: []Field{{Key: "in", Value: 1.0}, {Key: "out", Value: 5.0}}}}}}
	out, err := SetField(in, []string{"brain"}, m)
	if err != nil {
		t.Fatal(err)
	}
	want := "---\ntitle: x # keep\nbrain:\n  provider: anthropic\n  budget: 20.5\n  prices:\n    claude-haiku-*:\n      in: 1.0\n      out: 5.0\n---\nbody\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	c, err := parseRaw(out)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Brain struct {
			Provider string
			Budget   float64
			Prices   map[string]map[string]float64
		}
	}
	if err := c.Node.Decode(&got); err != nil || got.Brain.Provider != "anthropic" || got.Brain.Prices["claude-haiku-*"]["out"] != 5 {
		t.Fatalf("reads back %+v, %v", got, err)
	}
	for _, path := range [][]string{{"brain"}, {"title"}, {"brain", "new"}} {
		if _, err := SetField(out, path, m); err == nil {
			t.Errorf("SetField(%v, mapping) on an existing or nested key should be refused", path)
		}
	}
}
