package page

import (
	"os"
	"strings"
	"testing"
)

// TestDocsNameEveryRule keeps docs/PAGES.md true: every refused element, name and permission of the code
// is written there.
func TestDocsNameEveryRule(t *testing.T) {
	data, err := os.ReadFile("../../docs/PAGES.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	var want []string
	for name := range refusedNames {
		want = append(want, "`"+name+"`")
	}
	for name := range refusedElements {
		want = append(want, "<"+name+">")
	}
	for _, p := range permissions {
		want = append(want, p)
	}
	for name := range urlAttributes {
		want = append(want, "`"+name+"`")
	}
	want = append(want, CSP("<the box's own address>")[:40], IframeSandbox)
	for _, w := range want {
		if !strings.Contains(doc, w) {
			t.Errorf("docs/PAGES.md does not name %s", w)
		}
	}
}
