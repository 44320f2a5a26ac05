package page

import (
	"strings"
	"testing"
)

// bigPage is a page near the 512 KB limit: many rows of markup with inline styles, handlers and a
// script, the shape of a large generated page.
func bigPage() []byte {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><style>li{padding:4px 0;background:url(data:image/png;base64,iVBO)}</style></head><body><ul>\n")
	row := `<li style="color:#333" onclick="box.data.set('k', this.textContent)"><img src="data:image/png;base64,iVBORw0KGgo" alt="">Row with some text</li>` + "\n"
	for b.Len()+len(row) < MaxSize-8<<10 {
		b.WriteString(row)
	}
	b.WriteString("</ul><script>\n")
	line := "const xs = [1, 2, 3].map((x) => x * 2 / 3); if (xs.length) /a[/]b/.test('s'); el.textContent = `n ${xs[0]}`;\n"
	for b.Len()+len(line) < MaxSize-64 {
		b.WriteString(line)
	}
	b.WriteString("</script></body></html>")
	return []byte(b.String())
}

func BenchmarkProblemsGarden(b *testing.B) {
	src := garden(b)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if ps := Problems(src); len(ps) != 0 {
			b.Fatal(ps)
		}
	}
}

func BenchmarkProblems512KB(b *testing.B) {
	src := bigPage()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if ps := Problems(src); len(ps) != 0 {
			b.Fatal(ps)
		}
	}
}

func BenchmarkInjectGarden(b *testing.B) {
	src := garden(b)
	for b.Loop() {
		if _, err := Inject(src, testBridge); err != nil {
			b.Fatal(err)
		}
	}
}
