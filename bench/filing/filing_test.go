package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/testbin"
)

// Floors the real tidy must reach on testdata/lines.tsv. The rules reach 1.0 on these lines; on two
// batches of new lines written after the rules (before they were merged in) they reached 0.95 precision
// and 1.0 recall, so the floors leave that much room for lines the rules have not seen.
const (
	floorPrecision = 0.95 // of the lines tidy kept as facts, how many are facts
	floorRecall    = 0.95 // of the facts, how many tidy kept
	floorKeptOut   = 0.90 // of each kind of line that is not a fact, how many tidy kept out of the notes
)

// TestFilingFloors runs the real tidy (the box binary) on a real box with the labelled lines and holds it
// to the floors; a secret kept as a fact fails it whatever the numbers.
func TestFilingFloors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the box binary and tidies a few hundred lines")
	}
	lines, err := readLines("testdata/lines.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 200 {
		t.Fatalf("%d labelled lines; the set needs at least 200", len(lines))
	}
	tmp := t.TempDir()
	bin, err := testbin.Build(tmp)
	if err != nil {
		t.Fatal(err)
	}
	r, err := evaluate(context.Background(), bin, filepath.Join(tmp, "memory"), lines)
	if err != nil {
		t.Fatal(err)
	}
	misses := "\n" + strings.Join(r.misses(), "\n")
	s := r.scoreOf(kept)
	if s.precision() < floorPrecision || s.recall() < floorRecall {
		t.Errorf("kept as a fact: precision %.3f (floor %.2f), recall %.3f (floor %.2f)%s", s.precision(), floorPrecision, s.recall(), floorRecall, misses)
	}
	for _, c := range labels[1:] {
		n, of := r.notKept(c)
		if c == "secret" && n != of {
			t.Errorf("%d of %d secrets were kept as facts%s", of-n, of, misses)
		}
		if ratio(n, of) < floorKeptOut {
			t.Errorf("%s: %d of %d kept out of the notes (floor %.2f)%s", c, n, of, floorKeptOut, misses)
		}
	}
}

// TestReadLinesRefusesUnknownLabels: a typo in a label is an error naming the line, not a silent class.
func TestReadLinesRefusesUnknownLabels(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lines.tsv")
	if err := write(filepath.Dir(p), "/lines.tsv", "fact\tLeo swims.\nfcat\tAna paints.\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := readLines(p); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("readLines: %v, want an error naming line 2", err)
	}
}
