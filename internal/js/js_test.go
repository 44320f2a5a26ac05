package js

import (
	"fmt"
	"strings"
	"testing"
)

func show(ts []Token) string {
	var b []string
	for _, t := range ts {
		switch t.Kind {
		case Punct, Number:
			b = append(b, t.Value)
		case Ident:
			b = append(b, "id:"+t.Value)
		case String:
			b = append(b, fmt.Sprintf("str:%q", t.Value))
		case Template:
			b = append(b, fmt.Sprintf("tpl:%q", t.Value))
		case Regex:
			b = append(b, "re:"+t.Value)
		case PrivateName:
			b = append(b, "priv:"+t.Value)
		}
	}
	return strings.Join(b, " ")
}

func TestTokenize(t *testing.T) {
	for _, c := range []struct {
		in, want string
		module   bool
	}{
		{in: `new WebSocket("wss://x")`, want: `id:new id:WebSocket ( str:"wss://x" )`},
		{in: `// new WebSocket
x /* WebSocket */ = 'a\'b'`, want: `id:x = str:"a'b"`},
		{in: `\u0057ebSocket; \u{57}ebSocket`, want: `id:WebSocket ; id:WebSocket`},
		{in: `"\x57eb\u0053ocket\101\n"`, want: `str:"WebSocketA\n"`},
		{in: "`a${b + `c${d}`}e`", want: `tpl:"a" id:b + tpl:"c" id:d tpl:"" tpl:"e"`},
		{in: "`x${ {a:1} }y`", want: `tpl:"x" { id:a : 1 } tpl:"y"`},
		{in: `a = b / c / d`, want: `id:a = id:b / id:c / id:d`},
		{in: `a = /'/.test(s)`, want: `id:a = re:/'/ . id:test ( id:s )`},
		{in: `if (x) /'/.test(s)`, want: `id:if ( id:x ) re:/'/ . id:test ( id:s )`},
		{in: `f(x) / 2 / 'y'`, want: `id:f ( id:x ) / 2 / str:"y"`},
		{in: "{}\n/`/.test(s)", want: "{ } re:/`/ . id:test ( id:s )"},
		{in: "x = {} / 2", want: "id:x = { } / 2"},
		{in: "return /a[/]b/g", want: "id:return re:/a[/]b/g"},
		{in: "x.return / 2", want: "id:x . id:return / 2"},
		{in: "a++ / 2", want: "id:a ++ / 2"},
		{in: "[1] / 2", want: "[ 1 ] / 2"},
		{in: "x = a ? .5 : 1e-3 + 0xFF + 1_000n", want: "id:x = id:a ? .5 : 1e-3 + 0xFF + 1_000n"},
		{in: "a?.b ?? c", want: "id:a ?. id:b ?? id:c"},
		{in: "class A { #p = 1; m() { return this.#p } }", want: "id:class id:A { priv:#p = 1 ; id:m ( ) { id:return id:this . priv:#p } }"},
		{in: "x = 1 <!-- new WebSocket\n--> also a comment\ny", want: "id:x = 1 id:y"},
		{in: "x = a <!--b", want: "id:x = id:a < ! -- id:b", module: true},
		{in: "#!/usr/bin/env node\nx", want: "id:x"},
		{in: "a\u00a0b\u2028c", want: "id:a id:b id:c"},
		{in: "é = 'ü'", want: `id:é = str:"ü"`},
		{in: "'a\\\nb'", want: `str:"ab"`},
		{in: "x=>{}/1/", want: "id:x => { } re:/1/"},
	} {
		ts, err := Tokenize(c.in, Options{Module: c.module})
		if err != nil {
			t.Errorf("Tokenize(%q): %v", c.in, err)
			continue
		}
		if got := show(ts); got != c.want {
			t.Errorf("Tokenize(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"'abc", "line 1: a string is never closed"},
		{"'ab\ncd'", "line 1: a string runs past the end of its line"},
		{"x\n/* a", "line 2: a /* comment is never closed"},
		{"x = `\n\nabc", "line 1: a template literal is never closed"},
		{"x = /abc\n/", "line 1: a regular expression runs past the end of its line"},
		{"f(a]", `line 1: a "]" closes the "(" of line 1`},
		{"}", `line 1: a "}" closes nothing`},
		{"f(\n", `line 2: the "(" of line 1 is never closed`},
		{"`${a", "line 1: the template substitution ${ of line 1 is never closed"},
		{"\\x41", `line 1: a backslash in a name must start a \u escape`},
		{"\\u0031a", `line 1: the escape \u0031 cannot appear in a name`},
		{"a ¤ b", `line 1: the character '¤' cannot appear here`},
		{"'\\u12'", `line 1: a \u escape needs four hex digits`},
		{"#", "line 1: a stray #"},
	} {
		_, err := Tokenize(c.in, Options{})
		if err == nil || err.Error() != c.want {
			t.Errorf("Tokenize(%q) = %v, want %s", c.in, err, c.want)
		}
	}
}

func TestLines(t *testing.T) {
	ts, err := Tokenize("a\n/* x\n */ b `c\nd` e\n'f\\\ng' h", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range ts {
		got = append(got, fmt.Sprintf("%s@%d", strings.ReplaceAll(tk.Value, "\n", "|"), tk.Line))
	}
	if want := "a@1 b@3 c|d@3 e@4 fg@5 h@6"; strings.Join(got, " ") != want {
		t.Errorf("lines = %s, want %s", strings.Join(got, " "), want)
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"new WebSocket('x')", "a = /'/.test(s)", "`a${b}c`", "x <!-- y\n--> z", "\\u0057x", "if(a)/b/.c"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, src string, module bool) {
		ts, err := Tokenize(src, Options{Module: module})
		if err != nil {
			var e *Error
			if !asError(err, &e) || e.Line < 1 || e.Line > strings.Count(src, "\n")+1 {
				t.Fatalf("bad error %v", err)
			}
		}
		line, off := 1, -1
		for _, tk := range ts {
			if tk.Line < line || tk.Offset <= off || tk.Offset >= len(src) || tk.Kind < Ident || tk.Kind > PrivateName {
				t.Fatalf("bad token %+v after line %d offset %d", tk, line, off)
			}
			if want := 1 + strings.Count(src[:tk.Offset], "\n"); tk.Line != want {
				t.Fatalf("token %+v: line %d, want %d", tk, tk.Line, want)
			}
			line, off = tk.Line, tk.Offset
		}
	})
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}
