package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestCLIDocCoversEveryVerb keeps docs/CLI.md true: every verb has its own section, and every exit code
// constant is documented.
func TestCLIDocCoversEveryVerb(t *testing.T) {
	data, err := os.ReadFile("../../docs/CLI.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	app := &Global{IO: IO{Getenv: func(string) string { return "" }}}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if sub.Runnable() && sub.Annotations[groupOnly] == "" {
				heading := "### `" + sub.CommandPath() + "`"
				if !strings.Contains(doc, heading) {
					t.Errorf("docs/CLI.md has no section %q", heading)
				}
			}
			walk(sub)
		}
	}
	walk(app.rootCmd())
	for code, name := range map[int]string{ExitOK: "0", ExitFailure: "1", ExitUsage: "2", ExitNotABox: "3",
		ExitRefused: "4", ExitNotFound: "5", ExitConflict: "6", ExitBusy: "7"} {
		if !strings.Contains(doc, "| "+name+" |") {
			t.Errorf("docs/CLI.md does not document exit code %d", code)
		}
	}
}

// Every code fence in the docs is closed: one left open renders everything after it inverted.
func TestDocsCloseEveryFence(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs: %v", err)
	}
	for _, f := range append(files, "../../README.md") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		open, at := false, 0
		for i, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				open, at = !open, i+1
			}
		}
		if open {
			t.Errorf("%s: the code fence opened at line %d is never closed", f, at)
		}
	}
}
