package routine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/boxmem/box/internal/routine"
)

// FuzzParse: a routine file never panics the parser, and whatever it accepts formats back to a file it
// reads as the same routine.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.md")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := routine.Parse("r", data)
		if err != nil {
			return
		}
		back, err := routine.Parse("r", r.Format())
		if err != nil {
			t.Fatalf("a routine it accepted does not read back: %v\n%s", err, r.Format())
		}
		if back.At != r.At || back.On != r.On || back.Prompt != r.Prompt || back.When() != r.When() {
			t.Fatalf("round trip: %+v → %+v", r, back)
		}
	})
}
