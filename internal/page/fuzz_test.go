package page

import (
	"os"
	"strings"
	"testing"
)

// FuzzProblems: any input is read without a panic into well-formed problems; a page that passes gets
// the bridge as its first script.
func FuzzProblems(f *testing.F) {
	for _, name := range []string{"garden.html", "probe.html", "throws.html"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`<img srcset="data:a,b 1x, //x.example 2x">`, "<svg><style><img src=//x></style>", "<script>if(a)/`/.test(b)</script>",
		`<a href="java&#9;script:alert(1)">`, "<style>@import url(x)</style>", "<!doctype html><script>x</script><html><head>", "\ufeff<p>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		ps := Problems(src)
		if len(ps) > MaxProblems {
			t.Fatalf("%d problems", len(ps))
		}
		lines := strings.Count(string(src), "\n") + strings.Count(string(src), "\r") + 1
		for _, p := range ps {
			if p.Found == "" || p.Why == "" || p.Line < 0 || p.Line > lines {
				t.Fatalf("bad problem %+v", p)
			}
		}
		if (Check(src) == nil) != (len(ps) == 0) {
			t.Fatal("Check and Problems disagree")
		}
		if len(ps) == 0 {
			if _, err := Inject(src, testBridge); err != nil {
				t.Fatalf("a page that passes can't be served: %v", err)
			}
		}
	})
}
