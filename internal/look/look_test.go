package look

import (
	"os"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/errs"
)

func TestWarmLookPasses(t *testing.T) {
	b, err := os.ReadFile("testdata/warm.css")
	if err != nil {
		t.Fatal(err)
	}
	// var() is refused: the warm look uses it once on purpose, to show the refusal names it.
	ps := Problems(string(b))
	if len(ps) != 1 || ps[0].Found != "var(" || ps[0].Line != 7 {
		t.Fatalf("problems: %v", ps)
	}
	fixed := strings.Replace(string(b), "color: var(--ink);", "color: #2b2118;", 1)
	if err := Check(fixed); err != nil {
		t.Fatal(err)
	}
}

func TestRefused(t *testing.T) {
	for _, c := range []struct{ name, css, found string }{
		{"url", "body { background: url(https://img.example.com/x.png) }", "url("},
		{"quoted url", `body { background-color: url("x") }`, "url("},
		{"escaped url", `body { background: u\72l(x.png) }`, "url("},
		{"import", `@import "x.css";`, "@import"},
		{"font face", "@font-face { font-family: x; src: local(x) }", "@font-face"},
		{"keyframes", "@keyframes spin { from { color: red } }", "@keyframes"},
		{"nested at-rule", "@media print { @media screen { p { color: red } } }", "@media"},
		{"display", "p { display: none }", "display:"},
		{"escaped display", `p { dis\70 lay: none }`, "display:"},
		{"position", "p { position: fixed }", "position:"},
		{"content", `p::before { content: "x" }`, "content:"},
		{"behaviour", "p { behavior: url(x.htc) }", "behavior:"},
		{"binding", "p { -moz-binding: url(x) }", "-moz-binding:"},
		{"expression", "p { color: expression(alert(1)) }", "expression("},
		{"var", "p { color: var(--x) }", "var("},
		{"calc", "p { font-size: calc(1px + 1px) }", "calc("},
		{"important", "p { color: red !important }", "!important"},
		{"small text", "p { font-size: 11px }", "font-size: 11px"},
		{"small em", "p { font-size: 0.7em }", "font-size: 0.7em"},
		{"x-small", "p { font-size: x-small }", "font-size: x-small"},
		{"smaller", "p { font-size: smaller }", "font-size: smaller"},
		{"negative margin", "p { margin: -40px }", "margin: -40px"},
		{"huge padding", "p { padding: 0 9000px }", "padding: 9000px"},
		{"big shadow", "p { box-shadow: 0 0 200px red }", "box-shadow: 200px"},
		{"four shadows", "p { text-shadow: 0 1px red, 0 1px red, 0 1px red, 0 1px red }", "text-shadow: 0 1px red"},
		{"button", "button { color: red }", "button"},
		{"button in a list", "p, button.primary { color: red }", "button"},
		{"card class", ".card { color: red }", ".card"},
		{"primary class", ".primary { color: transparent }", ".primary"},
		{"escaped class", `.c\61rd { color: red }`, ".card"},
		{"dialog", "dialog { color: red }", "dialog"},
		{"universal", "* { color: red }", "*"},
		{"id", "#consent-approve { color: red }", "#consent-approve"},
		{"not", "p:not(.x) { color: red }", ":not(.x)"},
		{"has", "main:has(button) { color: red }", ":has(button)"},
		{"role attribute", `[role=dialog] { color: red }`, "[role=dialog]"},
		{"nesting", "main { color: red; & p { color: blue } }", "& p {color: blue}"},
		{"nested rule", "main { p { color: blue } }", "p {color: blue}"},
		{"markup", "p { color: red } </style><script>", "<"},
		{"html comment", "<!-- p { color: red } -->", "<"},
		{"unknown variable", ":root { --x: red }", "--x:"},
		{"variable of the wrong kind", ":root { --bg: 12px }", "--bg: 12px"},
		{"bad hex", "p { color: #ggg }", "color: #ggg"},
		{"string colour", `p { color: "red" }`, `color: "red"`},
		{"selector without block", "p { color: red } main", "main"},
		{"unclosed", "p { color: red", "{"},
		{"font shorthand", "p { font: 10px serif }", "font:"},
		{"opacity", "p { opacity: 0 }", "opacity:"},
		{"media with url", "@media url(x) { p { color: red } }", "url(x)"},
	} {
		ps := Problems(c.css)
		ok := false
		var got []string
		for _, p := range ps {
			got = append(got, p.String())
			if p.Found == c.found && p.Why != "" {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s: want `%s`, got %q", c.name, c.found, got)
		}
	}
}

func TestLimits(t *testing.T) {
	rule := "p { color: red }\n"
	ok := strings.Repeat(rule, MaxChars/len(rule))
	if err := Check(ok); err != nil {
		t.Errorf("%d characters: %v", len(ok), err)
	}
	long := ok + strings.Repeat(" ", MaxChars-len(ok)+1)
	if ps := Problems(long); len(ps) != 1 || ps[0].Found != "3501 characters" {
		t.Errorf("3,501 characters: %v", ps)
	}
	// Characters, not bytes: 3,500 é fit.
	if ps := Problems("/*" + strings.Repeat("é", MaxChars-4) + "*/"); len(ps) != 0 {
		t.Errorf("3,500 two-byte characters: %v", ps)
	}
	for name, src := range map[string]string{"empty": "  ", "not utf8": "p{color:red}\xff"} {
		if err := Check(src); !errs.Is(err, errs.Invalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestLines(t *testing.T) {
	ps := Problems("p { color: red }\n\nbutton {\n  color: red;\n  display: none }")
	if len(ps) != 2 || ps[0].Line != 3 || ps[0].Found != "button" || ps[1].Line != 5 || ps[1].Found != "display:" {
		t.Errorf("problems: %v", ps)
	}
	want := "line 3: `button`: " + whyProtected + "; line 5: `display:`: " + whyProperty + "."
	if err := Check("p { color: red }\n\nbutton {\n  color: red;\n  display: none }"); err == nil || err.Error() != want {
		t.Errorf("sentence\n got %v\nwant %s", err, want)
	}
}

func FuzzCheck(f *testing.F) {
	b, _ := os.ReadFile("testdata/warm.css")
	for _, s := range []string{string(b), "p{color:red}", "@media (x){p{color:red}}", ".tabs a[aria-current=page]{}", "p{box-shadow:0 0 1px red,inset 1px 1px}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ps := Problems(src)
		if len(ps) > 20 {
			t.Fatalf("%d problems", len(ps))
		}
		lines := strings.Count(src, "\n") + strings.Count(src, "\r") + strings.Count(src, "\f") + 1
		for _, p := range ps {
			if p.Found == "" || p.Why == "" || p.Line < 0 || p.Line > lines {
				t.Fatalf("bad problem %+v", p)
			}
		}
		if (Check(src) == nil) != (len(ps) == 0) {
			t.Fatal("Check and Problems disagree")
		}
	})
}

// TestLegible: a look can't make text or the approve button vanish: text colours stay solid, and a
// block that sets a text colour beside its ground keeps them apart.
func TestLegible(t *testing.T) {
	for _, c := range []struct{ css, found, why string }{
		{"html { --accent: transparent; }", "--accent: transparent", whyFaint},
		{"html { --accent-ink: transparent; }", "--accent-ink: transparent", whyFaint},
		{"h3, p, li { color: transparent; }", "color: transparent", whyFaint},
		{"label { color: rgba(0,0,0,0); }", "color: rgba(0,0,0,0)", whyFaint},
		{"p { color: hsla(0, 0%, 0%, 0.2) }", "color: hsla(0, 0%, 0%, 0.2)", whyFaint},
		{"p { color: rgb(0 0 0 / 10%) }", "color: rgb(0 0 0 / 10%)", whyFaint},
		{"p { color: rgb(0 0 0 / none) }", "color: rgb(0 0 0 / none)", whyFaint},
		{"p { color: #0000 }", "color: #0000", whyFaint},
		{"p { color: #1f242110 }", "color: #1f242110", whyFaint},
		{"p { color: currentcolor }", "color: currentcolor", whyFaint},
		{"p { color: Canvas }", "color: Canvas", whyFaint},
		{"p { color: rgb(from red r g b / 0) }", "color: rgb(from red r g b / 0)", whyFaint},
		{"p { color: color-mix(in srgb, red 1%, blue 1%) }", "color: color-mix(in srgb, red 1%, blue 1%)", whyFaint},
		{"p { color: light-dark(#000, transparent) }", "color: transparent", whyFaint},
		{":root { --ink: oklch(0.2 0.01 150 / 0.1) }", "--ink: oklch(0.2 0.01 150 / 0.1)", whyFaint},
		{":root { --ink: #fffdf9; --surface: #fffdf9; }", "--ink: #fffdf9 on --surface: #fffdf9", whyContrast},
		{":root { --bg: #f7f4ee; --ink: #eeeae3 }", "--ink: #eeeae3 on --bg: #f7f4ee", whyContrast},
		{"div { background-color: #fffdf9; color: #fffdf9; }", "color: #fffdf9 on background-color: #fffdf9", whyContrast},
		{"p { color: white; background: snow }", "color: white on background: snow", whyContrast},
		{":root { --accent: #2f6f5e; --accent-ink: rgb(47 111 95) }", "--accent-ink: rgb(47 111 95) on --accent: #2f6f5e", whyContrast},
		{":root { --surface: hsl(40 100% 99%); --muted: hsl(40, 50%, 95%) }", "--muted: hsl(40, 50%, 95%) on --surface: hsl(40 100% 99%)", whyContrast},
	} {
		found := false
		var got []string
		for _, p := range Problems(c.css) {
			got = append(got, p.String())
			found = found || p.Found == c.found && p.Why == c.why
		}
		if !found {
			t.Errorf("%s: want `%s` (%s), got %q", c.css, c.found, c.why, got)
		}
	}
	for _, ok := range []string{
		"p { color: rgba(0,0,0,.6) }", ".muted { color: #0009 }", ":root { --ink: #1f2421; --surface: #fffdf9; --bg: #f7f4ee }",
		"p { color: black; background-color: white }", ":root { --accent: oklch(0.75 0.12 50); --accent-ink: #0f1b16 }",
		"p { color: inherit; background-color: transparent }", "p { color: light-dark(#222, #eee) }",
		":root { --accent: #2f6f5e; --accent-ink: #ffffff; --surface: #202421; --ink: #ecebe6 }",
		"p { color: hsl(120deg 40% 20%); background: linear-gradient(#fff, #eee) }",
	} {
		if err := Check(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
