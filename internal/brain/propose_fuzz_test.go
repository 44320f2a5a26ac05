package brain

import (
	"strings"
	"testing"
)

// parseFacts reads whatever a model answers: it never panics, and every fact is one non-empty line
// without its bullet, at most maxProposed, none repeated.
func FuzzParseFacts(f *testing.F) {
	for _, s := range []string{"- Mira bakes sourdough.\n1. Leo swims.\nNONE", "NONE", "", "-\n- \n* **bold**\n2) two\n• dot", "- a\n- a\n" + strings.Repeat("- x\n", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		facts := parseFacts(s)
		if len(facts) > maxProposed {
			t.Fatalf("%d facts", len(facts))
		}
		seen := map[string]bool{}
		for _, x := range facts {
			if x == "" || strings.ContainsAny(x, "\n") || seen[x] || strings.EqualFold(x, "none") {
				t.Fatalf("unfit fact %q", x)
			}
			seen[x] = true
		}
	})
}
