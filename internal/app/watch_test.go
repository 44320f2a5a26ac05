package app

import "testing"

// Lines waiting arm a tidy at the first look and whenever their count or the box moves; lines a tidy
// left where they are arm nothing more until something changes.
func TestWaitingLinesArmATidyOnlyWhenSomethingChanged(t *testing.T) {
	var w waitWatch
	for i, c := range []struct {
		n     int
		moved bool
		arm   bool
	}{
		{0, false, false}, // nothing waits
		{2, false, true},  // two lines came (another process)
		{2, false, false}, // the tidy armed for them has not run yet, or left them: no second arm
		{2, true, true},   // the box moved (a commit): look again
		{2, false, false}, // the tidy filed nothing (two lines of one id): no run every few minutes
		{3, false, true},  // a new line
		{1, true, true},   // the tidy filed two and left one
		{1, false, false},
		{0, true, false}, // the owner fixed the ids and filed it
	} {
		w.saw(c.moved)
		if got := w.arm(c.n); got != c.arm {
			t.Errorf("look %d (%d waiting, moved %v): arm %v, want %v", i, c.n, c.moved, got, c.arm)
		}
	}
	var first waitWatch
	if !first.arm(4) {
		t.Error("lines waiting when box serve starts do not arm a tidy")
	}
	// The box moved while a tidy ran (no look then): the next look arms, though the count is the same.
	first.saw(true)
	first.saw(false)
	if !first.arm(4) {
		t.Error("a commit made while a tidy ran was forgotten")
	}
}
