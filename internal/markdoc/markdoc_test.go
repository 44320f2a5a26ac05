package markdoc

import (
	"fmt"
	"strings"
	"testing"
)

// show renders tags compactly so table tests read like the input.
func show(d *Doc) string {
	var parts []string
	for _, t := range d.Tags {
		s := fmt.Sprintf("%s@%d", t.Name, t.Line)
		for _, a := range t.Attrs {
			s += " " + a.Name + "=" + showValue(a.Value)
		}
		if t.SelfClosing {
			s += " /"
		} else if t.CloseLine > 0 {
			s += fmt.Sprintf(" ..%d", t.CloseLine)
		}
		parts = append(parts, s)
	}
	for _, e := range d.Errors {
		parts = append(parts, fmt.Sprintf("!%s@%d", e.Code, e.Line))
	}
	return strings.Join(parts, "; ")
}

func showValue(v Value) string {
	switch v.Kind {
	case String:
		return fmt.Sprintf("%q", v.Str)
	case Number:
		return fmt.Sprint(v.Num)
	case Bool:
		return fmt.Sprint(v.Bool)
	case Null:
		return "null"
	case Variable:
		return "$" + v.Str
	case Array, Function:
		var xs []string
		for _, it := range v.Items {
			xs = append(xs, showValue(it))
		}
		if v.Kind == Function {
			return v.Str + "(" + strings.Join(xs, ",") + ")"
		}
		return "[" + strings.Join(xs, ",") + "]"
	case Hash:
		var xs []string
		for i, it := range v.Items {
			xs = append(xs, v.Keys[i]+":"+showValue(it))
		}
		return "{" + strings.Join(xs, ",") + "}"
	}
	return "?"
}

func TestParse(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"empty", "", ""},
		{"plain text", "hello { % not a tag } and {{x}}", ""},
		{"self-closing", `{% ref "/x" /%}`, `ref@1 primary="/x" /`},
		{"open close", "{% note %}\nbody\n{% /note %}", "note@1 ..3"},
		{"every value type", `{% t s="x" n=1 f=-2.5 b=true c=false z=null a=[1,"x",] h={k: "v", "q r": 2} v=$user.name[0] fn=eq($a, 1) /%}`,
			`t@1 s="x" n=1 f=-2.5 b=true c=false z=null a=[1,"x"] h={k:"v",q r:2} v=$user.name[0] fn=eq($a,1) /`},
		{"escapes", `{% t s="a\"b\\c\n\u00e9" /%}`, `t@1 s="a\"b\\c\né" /`},
		{"class and id shorthand", `{% t .wide #top /%}`, `t@1 class="wide" id="top" /`},
		{"primary variable", "{% if $x %}\ny\n{% else /%}\nn\n{% /if %}", "if@1 primary=$x ..5; else@3 /"},
		{"multi-line tag", "{% t\n  a=1\n  b=2 /%}", "t@1 a=1 b=2 /"},
		{"annotation is not a tag", "# Title {% .big %}", ""},
		{"interpolation is not a tag", "Hi {% $name %} and {% upper($name) %}", ""},
		{"nested", "{% a %}{% b %}{% /b %}{% /a %}", "a@1 ..1; b@1 ..1"},
		{"unclosed", "{% a %}\ntext", "a@1; !markdoc-unclosed@1"},
		{"stray close", "text\n{% /a %}", "!markdoc-stray-close@2"},
		{"mismatched close", "{% a %}\n{% b %}\n{% /a %}", "a@1 ..3; b@2; !markdoc-mismatched-close@3"},
		{"bad attribute", "{% t a=bare %}\n{% u /%}", "u@2 /; !markdoc-syntax@1"},
		{"unterminated tag", "{% t a=1\n\nmore", "!markdoc-syntax@1"},
		{"unterminated string", `{% t a="x %}`, "!markdoc-syntax@1"},
		{"junk after name", `{% t! %}`, "!markdoc-syntax@1"},
		{"second primary refused", `{% t "a" "b" %}`, "!markdoc-syntax@1"},
		{"percent-brace inside a string", `{% t a="50%}" /%}`, `t@1 a="50%}" /`},
		{"code span", "see `{% a %}` here {% b /%}", "b@1 /"},
		{"double backtick span", "``{% a %} ` x`` {% b /%}", "b@1 /"},
		{"unclosed backticks are text", "a ` {% b /%}", "b@1 /"},
		{"code span stops at a blank line", "` \n\n {% b /%} `", "b@3 /"},
		{"escaped backtick", "\\`{% b /%}`", "b@1 /"},
		{"backtick fence", "```\n{% a %}\n```\n{% b /%}", "b@4 /"},
		{"tilde fence", "~~~md\n{% a %}\n~~~\n{% b /%}", "b@4 /"},
		{"longer fence needs longer close", "````\n```\n{% a %}\n````\n{% b /%}", "b@5 /"},
		{"tilde does not close backticks", "```\n~~~\n{% a %}\n```\n{% b /%}", "b@5 /"},
		{"unclosed fence runs to end", "```\n{% a %}", ""},
		{"indented fence in a list", "- x\n  ```\n  {% a %}\n  ```\n{% b /%}", "b@5 /"},
		{"crlf", "{% a %}\r\nx\r\n{% /a %}\r\n", "a@1 ..3"},
		{"tag in string in backticks", "`a` {% t a=\"`\" /%} `b`", "t@1 a=\"`\" /"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := show(Parse([]byte(tt.src))); got != tt.want {
				t.Errorf("Parse(%q)\n got %s\nwant %s", tt.src, got, tt.want)
			}
		})
	}
}

func TestValueOffsets(t *testing.T) {
	src := "intro\n{% card ref=\"/_content/a.md\" n=12 list=[\"x\"] /%}"
	d := Parse([]byte(src))
	if len(d.Tags) != 1 {
		t.Fatalf("tags: %s", show(d))
	}
	for name, want := range map[string]string{"ref": "/_content/a.md", "n": "12", "list": `["x"]`} {
		v, ok := d.Tags[0].Attr(name)
		if !ok {
			t.Fatalf("no attr %s", name)
		}
		if got := src[v.Start:v.End]; got != want {
			t.Errorf("%s: src[Start:End] = %q, want %q", name, got, want)
		}
	}
	if got := src[d.Tags[0].Start:d.Tags[0].End]; !strings.HasPrefix(got, "{% card") || !strings.HasSuffix(got, "/%}") {
		t.Errorf("tag span = %q", got)
	}
}

func TestCode(t *testing.T) {
	src := "a `x` b\n```go\ncode\n```\nc"
	got := Code([]byte(src))
	var texts []string
	for _, s := range got {
		texts = append(texts, src[s.Start:s.End])
	}
	want := []string{"`x`", "```go\ncode\n```\n"}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Errorf("Code = %q, want %q", texts, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"{% a %}x{% /a %}", `{% t s="x" a=[1,{k: $v}] /%}`, "```\n{% a %}\n```", "`{% a %}`", "{% /x %}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		d := Parse(src)
		for _, tg := range d.Tags {
			if tg.Start < 0 || tg.End > len(src) || tg.Start >= tg.End || tg.Line < 1 {
				t.Fatalf("bad tag span %+v", tg)
			}
			for _, a := range tg.Attrs {
				if a.Value.Start < tg.Start || a.Value.End > tg.End || a.Value.Start > a.Value.End {
					t.Fatalf("attr %s value span %d..%d outside tag %d..%d", a.Name, a.Value.Start, a.Value.End, tg.Start, tg.End)
				}
			}
		}
		last := 0
		for _, c := range d.Code {
			if c.Start < last || c.End > len(src) || c.Start > c.End {
				t.Fatalf("code spans out of order: %+v", d.Code)
			}
			last = c.End
		}
		code := map[Span]bool{}
		for _, c := range d.Code {
			code[c] = true
		}
		for _, fc := range Fences(src) {
			if !code[fc] || (fc.Start > 0 && src[fc.Start-1] != '\n') {
				t.Fatalf("fence %+v is not one of Doc.Code at a line start: %+v", fc, d.Code)
			}
		}
	})
}

// TestHostileInputStaysLinear: each input is a megabyte that a naive scanner takes quadratic time
// on; the test would hang rather than finish.
func TestHostileInputStaysLinear(t *testing.T) {
	const mib = 1 << 20
	for name, unit := range map[string]string{
		"unmatched backtick runs": "` `` ",
		"unclosed tag openers":    "{% ",
		"tags with bad paths":     "{% a b=$x[ %}",
		"syntax errors on lines":  "{% a ! %}\n",
		"stray closes":            "{% /a %}",
		"deep arrays":             "{% a b=[[[[[[[[ %}",
	} {
		src := []byte(strings.Repeat(unit, mib/len(unit)))
		d := Parse(src)
		if name == "stray closes" && len(d.Errors) != MaxErrors+1 {
			t.Errorf("%s: %d errors", name, len(d.Errors))
		}
	}
}
