package card

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/errs"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, path, src string
		wantType        string
		wantLine        int    // for errors: the line the error names
		wantErr         string // substring; "" = no error
	}{
		{"note by name", "/_content/memory/notes/entity-leo.md", "---\ntitle: Leo\n---\nbody\n", "note", 0, ""},
		{"md without frontmatter", "/_content/docs/readme.md", "# Hello\n", "", 0, ""},
		{"md with type key", "/_content/docs/x.md", "---\ntype: recipe\n---\n", "recipe", 0, ""},
		{"empty frontmatter", "/_content/x.md", "---\n---\n", "", 0, ""},
		{"comment-only frontmatter", "/_content/x.md", "---\n# just a comment\n---\n", "", 0, ""},
		{"delimiter at end of file", "/_config/switches.card", "---\nchange: ask-me\n---", "switches", 0, ""},
		{"card type from name", "/_content/todos/Groceries.todo.card", "---\ntitle: G\n---\n", "todo", 0, ""},
		{"card needs frontmatter", "/_content/todos/Groceries.todo.card", "- [ ] milk\n", "", 1, "needs frontmatter"},
		{"card type mismatch", "/_content/todos/Groceries.todo.card", "---\ntitle: G\ntype: note\n---\n", "", 3, "does not match"},
		{"card type undeterminable", "/_content/Bad Name!.card", "---\n---\n", "", 0, "cannot tell the type"},
		{"malformed yaml", "/_content/x.md", "---\ntitle: a\nbad: [1, 2\n---\n", "", 3, "not valid YAML"},
		{"malformed yaml line", "/_content/x.md", "---\na: 1\nb: c: d\n---\n", "", 3, "not valid YAML"},
		{"parser error line", "/_content/x.md", "---\na: 1\n- b\n---\n", "", 3, "not valid YAML"},
		{"tab indentation", "/_content/x.md", "---\na:\n\t- x\n---\n", "", 3, "not valid YAML"},
		{"not a mapping", "/_content/x.md", "---\n- a\n- b\n---\n", "", 2, "key: value"},
		{"scalar frontmatter", "/_content/x.md", "---\njust text\n---\n", "", 2, "key: value"},
		{"unterminated", "/_content/x.md", "---\ntitle: x\nbody\n", "", 1, "never closed"},
		{"lone delimiter", "/_content/x.md", "---", "", 1, "never closed"},
		{"NUL byte", "/_content/x.md", "---\na: 1\n---\nx\x00y\n", "", 4, "NUL"},
		{"invalid UTF-8", "/_content/x.md", "ok\nbad \xff\n", "", 2, "UTF-8"},
		{"too big", "/_content/x.md", strings.Repeat("a", MaxSize+1), "", 0, "1 MiB"},
		{"duplicate key", "/_content/x.md", "---\na: 1\nb: 2\na: 3\n---\n", "", 4, "appears twice"},
		{"duplicate nested key", "/_content/x.md", "---\np:\n  a: 1\n  a: 2\n---\n", "", 4, "appears twice"},
		{"second document", "/_content/x.md", "---\na: 1\n...\n---\n", "", 0, ""},
		{"type not a word", "/_content/x.md", "---\ntype: [a]\n---\n", "", 2, "single word"},
		{"bad type name in md", "/_content/x.md", "---\ntype: Big Type\n---\n", "", 2, "not a type name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(tt.path, []byte(tt.src))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if c.Type != tt.wantType {
					t.Errorf("type = %q, want %q", c.Type, tt.wantType)
				}
				if !bytes.Equal(c.Bytes(), []byte(tt.src)) {
					t.Errorf("Bytes() differs from input")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
			if !errs.Is(err, errs.Invalid) {
				t.Errorf("kind = %v, want invalid", errs.KindOf(err))
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Path != tt.path || (tt.wantLine > 0 && ce.Line != tt.wantLine) {
				t.Errorf("card error = %+v, want path %s line %d", ce, tt.path, tt.wantLine)
			}
		})
	}
}

func TestParseParts(t *testing.T) {
	src := "---\r\ntitle: Leo\r\nmaps:\r\n  - moc-people\r\n---\r\nline one\r\n"
	c, err := Parse("/_content/memory/notes/entity-leo.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !c.CRLF || !c.HasFront || c.FrontLine != 2 || c.BodyLine != 6 || string(c.Body) != "line one\r\n" {
		t.Errorf("parts: crlf=%v front=%v frontLine=%d bodyLine=%d body=%q", c.CRLF, c.HasFront, c.FrontLine, c.BodyLine, c.Body)
	}
	if n := c.Get("maps"); n == nil || n.Line != 4 {
		t.Errorf("maps node line = %v, want file line 4", n)
	}
	if c.String("title") != "Leo" || c.String("missing") != "" {
		t.Errorf("String() wrong")
	}
}

func TestTypeOf(t *testing.T) {
	tests := []struct{ path, front, want, err string }{
		{"/_content/Leo.note.card", "", "note", ""},
		{"/_config/switches.card", "", "switches", ""},
		{"/_config/interface/dashboard.card", "", "dashboard", ""},
		{"/_bookkeeping/jobs/Foo.kind.job.card", "", "kind-job", ""},
		{"/_bookkeeping/approvals/a1b2.approval.card", "approval", "approval", ""},
		{"/_content/Leo.note.card", "todo", "", "does not match"},
		{"/_content/.card", "", "", "cannot tell"},
		{"/_content/Leo.Note.card", "", "", "cannot tell"},
		{"/_content/memory/MEMORY.md", "", "router", ""},
		{"/_content/memory/maps/moc-people.md", "", "map", ""},
		{"/_content/memory/maps/moc-people/a.md", "", "map", ""},
		{"/_content/pages/garden/moc-garden.md", "", "map", ""},
		{"/_content/memory/notes/entity-leo.md", "", "note", ""},
		{"/_content/memory/notes/topic-gardening.md", "", "note", ""},
		{"/_content/inbox/2026-11-29.md", "", "inbox-day", ""},
		{"_content/inbox/2026-11-29.md", "", "inbox-day", ""},
		{"/_content/inbox/old/2026-11-29.md", "", "", ""},
		{"/_content/inbox/notes.md", "", "", ""},
		{"/_content/recipes/soup.md", "", "", ""},
		{"/_content/recipes/soup.md", "recipe", "recipe", ""},
		{"/_content/memory/notes/entity-leo.md", "map", "map", ""},
		{"/_content/photo.png", "", "", ""},
	}
	for _, tt := range tests {
		got, err := TypeOf(tt.path, tt.front)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("TypeOf(%s, %q) error = %v, want %q", tt.path, tt.front, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("TypeOf(%s, %q) = %q, %v; want %q", tt.path, tt.front, got, err, tt.want)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"---\ntitle: x\n---\nbody\n", "---\r\na: 1\r\n---\r\n", "no front", "---\n---", "---  \na: [1]\n--- \n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("/_content/x.md", data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error without a card.Error: %v", err)
			}
			return
		}
		if !bytes.Equal(c.Bytes(), data) {
			t.Fatalf("round trip changed the bytes:\n%q\n%q", data, c.Bytes())
		}
	})
}

func FuzzSetField(f *testing.F) {
	f.Add([]byte("---\ntitle: x # c\nb: [1, 2]\nc:\n  d: 'e'\n---\nbody\n"), "title", "new value")
	f.Add([]byte("---\ntitle: x # c\nb: [1, 2]\nc:\n  d: 'e'\n---\nbody\n"), "c.d", "x: y")
	f.Add([]byte("---\ntitle: x # c\nb: [1, 2]\nc:\n  d: 'e'\n---\nbody\n"), "b.1", "#")
	f.Add([]byte("---\r\nlist:\r\n  - a\r\nz: \"q\"\r\n---\r\n"), "list", "x: y")
	f.Add([]byte("---\nk: |\n  block\nz: 1\n---\n"), "k", "")
	f.Add([]byte("# none\n"), "type", "note")
	f.Fuzz(func(t *testing.T, data []byte, pathText, value string) {
		before, err := parseRaw(data)
		if err != nil || pathText == "" {
			return
		}
		path := strings.Split(pathText, ".")
		out, err := SetField(data, path, value)
		if err != nil {
			return
		}
		after, err := parseRaw(out)
		if err != nil {
			t.Fatalf("SetField result does not parse: %v\n%q", err, out)
		}
		for i := 0; i < len(before.Node.Content); i += 2 {
			if before.Node.Content[i].Tag != "!!str" {
				return // a key like ~ or 1: the decoded model below cannot tell it from a text key
			}
		}
		var want, got map[string]any
		if before.Node.Decode(&want) != nil {
			return
		}
		if want == nil {
			want = map[string]any{}
		}
		if !setIn(want, path, value) {
			return
		}
		if err := after.Node.Decode(&got); err != nil {
			t.Fatalf("result does not decode: %v\n%q", err, out)
		}
		if fmtAny(want) != fmtAny(got) {
			t.Fatalf("SetField(%s, %q):\n%q\nwant %s\ngot  %s", pathText, value, out, fmtAny(want), fmtAny(got))
		}
	})
}

func FuzzDeleteField(f *testing.F) {
	f.Add([]byte("---\na: 1 # c\nb:\n  - x\n  - y\n# about c\nc: {d: 1}\n---\nbody\n"), "b")
	f.Add([]byte("---\r\na: |\r\n  text\r\n\r\nb: 2\r\n---\r\n"), "a")
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		before, err := parseRaw(data)
		if err != nil || key == "" {
			return
		}
		for i := 0; i < len(before.Node.Content); i += 2 {
			if before.Node.Content[i].Tag != "!!str" {
				return
			}
		}
		out, err := DeleteField(data, []string{key})
		if err != nil {
			return
		}
		after, err := parseRaw(out)
		if err != nil {
			t.Fatalf("DeleteField result does not parse: %v\n%q", err, out)
		}
		var want, got map[string]any
		if before.Node.Decode(&want) != nil || after.Node.Decode(&got) != nil {
			return
		}
		delete(want, key)
		if len(want) == 0 && len(got) == 0 {
			return
		}
		if fmtAny(want) != fmtAny(got) {
			t.Fatalf("DeleteField(%s):\n%q\nwant %s\ngot  %s", key, out, fmtAny(want), fmtAny(got))
		}
	})
}

// setIn is what SetField should do, on decoded YAML.
func setIn(doc any, path []string, value string) bool {
	for i, p := range path {
		last := i == len(path)-1
		switch d := doc.(type) {
		case map[string]any:
			if _, ok := d[p]; !ok && !(last && i == 0) {
				return false
			}
			if last {
				d[p] = value
				return true
			}
			doc = d[p]
		case []any:
			j, err := strconv.Atoi(p)
			if err != nil || j < 0 || j >= len(d) {
				return false
			}
			if last {
				d[j] = value
				return true
			}
			doc = d[j]
		default:
			return false
		}
	}
	return false
}

// fmtAny renders decoded YAML canonically (sorted keys) for comparison.
func fmtAny(v any) string { return strings.TrimSpace(string(mustYAML(v))) }

func TestSurgeryRefusals(t *testing.T) {
	for _, tt := range []struct {
		src  string
		path []string
		del  bool
	}{
		{"---\nlist:\n  - a: 1\n    b: 2\n---\n", []string{"list", "0", "a"}, true}, // shares its line with "- "
		{"---\nm: {a: 1, b: 2}\n---\n", []string{"m", "a"}, true},                   // in a flow mapping
		{"---\na: [\n---\n", []string{"a"}, false},                                  // the card does not parse
		{"---\na: 1\n---\n", nil, false},                                            // no path
		{"---\na: 1\n---\n", []string{"a", "b"}, false},                             // a is not a mapping
	} {
		var err error
		if tt.del {
			_, err = DeleteField([]byte(tt.src), tt.path)
		} else {
			_, err = SetField([]byte(tt.src), tt.path, "x")
		}
		if err == nil {
			t.Errorf("%q %v: want an error", tt.src, tt.path)
		}
	}
	if _, err := SetField([]byte("---\na: 1\n---\n"), []string{"a"}, map[string]int{}); err == nil {
		t.Error("SetField with a map: want an error")
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		in, front, body string
		ok              bool
	}{
		{"# no front\ntext\n", "", "# no front\ntext\n", false},
		{"---\ntitle: x\n---\nbody\n", "title: x\n", "body\n", true},
		{"---\n---\nbody\n", "", "body\n", true},
		{"---\ntitle: x\n---", "title: x\n", "", true},
		{"---\r\ntitle: x\r\n---\r\nbody\r\n", "title: x\r\n", "body\r\n", true},
		{"---\ntitle: never closed\nbody\n", "", "---\ntitle: never closed\nbody\n", false},
		{"", "", "", false},
	} {
		front, body, ok := Split([]byte(tc.in))
		if string(front) != tc.front || string(body) != tc.body || ok != tc.ok {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q, %v", tc.in, front, body, ok, tc.front, tc.body, tc.ok)
		}
	}
}
