package look

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameTheAllowList keeps docs/PAGES.md (Looks) true: every element, class, variable,
// pseudo-class, pseudo-element and property a look may use is written there.
func TestDocsNameTheAllowList(t *testing.T) {
	data, err := os.ReadFile("../../docs/PAGES.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[a-z0-9*()-]+`).FindAllString(doc, -1) {
		words[w] = true
	}
	check := func(what string, names map[string]bool) {
		for n := range names {
			if !words[n] {
				t.Errorf("docs/PAGES.md does not name the %s %s", what, n)
			}
		}
	}
	check("element", Types)
	check("class", Classes)
	check("pseudo-class", pseudoClasses)
	check("pseudo-element", pseudoElements)
	for v := range Variables {
		if !strings.Contains(doc, v) {
			t.Errorf("docs/PAGES.md does not name the variable %s", v)
		}
	}
	for p := range Properties {
		if !strings.Contains(doc, "`"+p+"`") {
			t.Errorf("docs/PAGES.md does not name the property %s", p)
		}
	}
}
