package css

import (
	"fmt"
	"strings"
	"testing"
)

// show renders tokens compactly: type:value, for table tests.
func show(ts []Token) string {
	var b []string
	for _, t := range ts {
		switch t.Type {
		case Whitespace:
			b = append(b, "ws")
		case Ident, Function, AtKeyword, String, BadString, URL, BadURL, Delim:
			b = append(b, fmt.Sprintf("%s:%s", t.Type, t.Value))
		case Hash:
			b = append(b, fmt.Sprintf("hash:%s:%v", t.Value, t.ID))
		case Number, Percentage:
			b = append(b, fmt.Sprintf("%s:%g", t.Type, t.Num))
		case Dimension:
			b = append(b, fmt.Sprintf("dimension:%g:%s", t.Num, t.Unit))
		default:
			b = append(b, t.Type.String())
		}
	}
	return strings.Join(b, " ")
}

func TestTokenize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a{color:red}", "ident:a { ident:color : ident:red }"},
		{"/* c */x/**/y", "ident:x ident:y"},
		{"/* unclosed", ""},
		{`"a\"b" 'c'`, `string:a"b ws string:c`},
		{"\"line\nbreak\"", "bad-string:line ws ident:break string:"},
		{`"\41 BC"`, "string:ABC"},
		{`"cont\` + "\n" + `inued"`, "string:continued"},
		{"u\\72l(x.png)", "url:x.png"},
		{"URL( \"a\" )", "function:URL ws string:a ws )"},
		{"url(  x  )", "url:x"},
		{"url(a b)", "bad-url:a"},
		{"url(a\"b) z", "bad-url:a ws ident:z"},
		{"url(a\\)b)", "url:a)b"},
		{"pos\\ition:fixed", "ident:position : ident:fixed"},
		{"\\0 x", "ident:\ufffdx"},
		{"\\110000", "ident:\ufffd"},
		{"#abc #123 #-x", "hash:abc:true ws hash:123:false ws hash:-x:true"},
		{"# x", "delim:# ws ident:x"},
		{"12px 1.5em 50% -3 +.5 1e3 2E-2x", "dimension:12:px ws dimension:1.5:em ws percentage:50 ws number:-3 ws number:0.5 ws number:1000 ws dimension:0.02:x"},
		{"1e", "dimension:1:e"},
		{"<!-- -->", "<!-- ws -->"},
		{"<a", "delim:< ident:a"},
		{"@import @-x @1", "at-keyword:import ws at-keyword:-x ws delim:@ number:1"},
		{"--custom -x -", "ident:--custom ws ident:-x ws delim:-"},
		{"a\r\nb\fc", "ident:a ws ident:b ws ident:c"},
		{"a\x00b", "ident:a\ufffdb"},
		{"\\", "ident:\ufffd"},
		{"[a=\"b\"] (c) ;,", "[ ident:a delim:= string:b ] ws ( ident:c ) ws ; ,"},
		{"~= |=", "delim:~ delim:= ws delim:| delim:="},
	} {
		if got := show(Tokenize(c.in)); got != c.want {
			t.Errorf("Tokenize(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestLines(t *testing.T) {
	ts := Tokenize("a\n/* x\ny */ b\r\nc \"s\n")
	var got []string
	for _, tk := range ts {
		if tk.Type != Whitespace {
			got = append(got, fmt.Sprintf("%s@%d", tk.Value, tk.Line))
		}
	}
	if want := "a@1 b@3 c@4 s@4"; strings.Join(got, " ") != want {
		t.Errorf("lines = %s, want %s", strings.Join(got, " "), want)
	}
}

func TestStylesheet(t *testing.T) {
	rs := Stylesheet("<!-- @import url(x.css); a, b > c { color: red !important; margin: 0 } @media (x) { p { y: z } } d")
	if len(rs) != 4 {
		t.Fatalf("got %d rules: %+v", len(rs), rs)
	}
	if rs[0].At != "import" || rs[0].Body != nil {
		t.Errorf("rule 0 = %+v", rs[0])
	}
	if rs[1].At != "" || rs[1].Body == nil || len(rs[1].Prelude) != 9 {
		t.Errorf("rule 1 = %+v", rs[1])
	}
	items := Declarations(rs[1].Body.Children)
	if len(items) != 2 || items[0].Decl == nil || items[0].Decl.Name != "color" || !items[0].Decl.Important ||
		show(tokens(items[0].Decl.Value)) != "ident:red" || items[1].Decl == nil || items[1].Decl.Important {
		t.Errorf("declarations = %+v", items)
	}
	if rs[2].At != "media" || rs[2].Body == nil {
		t.Errorf("rule 2 = %+v", rs[2])
	}
	inner := Rules(rs[2].Body.Children)
	if len(inner) != 1 || inner[0].Body == nil {
		t.Errorf("inner rules = %+v", inner)
	}
	if rs[3].Body != nil || show(tokens(rs[3].Prelude)) != "ident:d" {
		t.Errorf("rule 3 = %+v", rs[3])
	}
}

func TestDeclarationsJunk(t *testing.T) {
	items := Declarations(Components("color red; a { b: c } ; @x y; --v: { q }; x: y ! important"))
	var kinds []string
	for _, it := range items {
		switch {
		case it.Decl != nil:
			kinds = append(kinds, "decl:"+it.Decl.Name+fmt.Sprint(it.Decl.Important))
		case it.Rule != nil:
			kinds = append(kinds, "at:"+it.Rule.At)
		default:
			kinds = append(kinds, "junk")
		}
	}
	if want := "junk junk at:x decl:--vfalse decl:xtrue"; strings.Join(kinds, " ") != want {
		t.Errorf("items = %s, want %s", strings.Join(kinds, " "), want)
	}
}

func TestDepthIsBounded(t *testing.T) {
	deep := strings.Repeat("a(", 100000) + strings.Repeat(")", 100000)
	ns := Components(deep)
	depth, cut := 0, false
	var walk func([]Node, int)
	walk = func(ns []Node, d int) {
		for _, n := range ns {
			depth = max(depth, d)
			cut = cut || n.Unclosed
			walk(n.Children, d+1)
		}
	}
	walk(ns, 1)
	if depth > MaxDepth+1 || !cut {
		t.Errorf("depth %d (max %d), cut %v", depth, MaxDepth, cut)
	}
}

func tokens(ns []Node) []Token {
	var out []Token
	for _, n := range ns {
		out = append(out, n.Token)
	}
	return out
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"a{color:red}", "url(x", "\"\\", "@media (x){p{q:r}}", "u\\72l(", "#\\", "1e+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ts := Tokenize(src)
		line := 1
		for _, tk := range ts {
			if tk.Type < Ident || tk.Type > RightBrace || tk.Line < line {
				t.Fatalf("bad token %+v after line %d", tk, line)
			}
			line = tk.Line
		}
		if n := strings.Count(src, "\n") + strings.Count(src, "\r") + strings.Count(src, "\f"); line > n+1 {
			t.Fatalf("line %d past the %d line breaks", line, n)
		}
		for _, r := range Stylesheet(src) {
			for _, it := range func() []Item {
				if r.Body == nil {
					return nil
				}
				return Declarations(r.Body.Children)
			}() {
				if it.Decl == nil && it.Rule == nil && len(it.Junk) == 0 {
					t.Fatalf("empty item in %q", src)
				}
			}
		}
	})
}
