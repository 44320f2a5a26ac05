package server

import (
	"testing"
	"time"
)

// TestDefaultLimitFitsRealUse holds the default's size: 400 calls at once and 200 a second sustained pass
// (the conformance suite unpaced, 16 writers on one client), a flood of thousands a second is stopped.
func TestDefaultLimitFitsRealUse(t *testing.T) {
	t0 := time.Date(2028, 2, 29, 23, 59, 59, 0, time.UTC)
	l := newLimiter(DefaultRate, DefaultBurst)
	for i := range 400 {
		if _, ok := l.take("c", t0, 1); !ok {
			t.Fatalf("call %d of a burst of 400 was refused", i+1)
		}
	}
	if _, ok := l.take("c", t0, 1); ok {
		t.Fatal("the 401st call at once passed")
	}
	// 200 a second for ten seconds, evenly spaced.
	now := t0
	for i := range 2000 {
		now = now.Add(5 * time.Millisecond)
		if _, ok := l.take("c", now, 1); !ok {
			t.Fatalf("call %d at 200 a second was refused", i+1)
		}
	}
	// A flood of 5,000 a second for a second, on a fresh connection: at most the burst and a second's rate pass.
	passed := 0
	for i := range 5000 {
		if _, ok := l.take("flood", t0.Add(time.Duration(i)*200*time.Microsecond), 1); ok {
			passed++
		}
	}
	if passed > DefaultBurst+DefaultRate+1 {
		t.Fatalf("%d of a flood of 5000 in a second passed", passed)
	}
}
