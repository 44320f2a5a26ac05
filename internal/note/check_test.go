package note

import (
	"os"
	"strings"
	"testing"
)

func TestChecks(t *testing.T) {
	leo, _ := os.ReadFile("testdata/note-leo.md")
	condensed, _ := os.ReadFile("testdata/router-condensed.md")
	index, _ := os.ReadFile("testdata/map-index.md")
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"clean note", len(CheckNote("/_content/memory/notes/entity-leo.md", leo)), 0},
		{"wrong prefix", len(CheckNote("/_content/memory/notes/topic-leo.md", leo)), 1},
		{"no kind no title", len(CheckNote("/x/entity-a.md", []byte("---\ntype: note\n---\n"))), 2},
		{"broken", len(CheckNote("/x/entity-a.md", []byte("---\na: [\n---\n"))), 1},
		{"duplicate id", len(CheckNote("/x/entity-leo.md", []byte(strings.Replace(string(leo), "^a7b2c3d4", "^m4n5p6q7", 1)))), 1},
		{"router at 40", len(CheckRouter("/x/MEMORY.md", condensed)), 0},
		{"router at 41", len(CheckRouter("/x/MEMORY.md", append(condensed, "extra\n"...))), 1},
		{"index", len(CheckMap("/x/moc-people.md", index)), 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %d findings, want %d", tt.name, tt.got, tt.want)
		}
	}
}
