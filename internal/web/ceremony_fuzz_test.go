package web

import (
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/state"
)

// Seeds are in testdata/fuzz/FuzzCeremonyID; run with go test -fuzz=^FuzzCeremonyID$ ./internal/web.

// A ceremony id opens only as the box sealed it: made-up ids, and sealed ones with any byte changed, do
// not; the sealed one opens once finished, never again.
func FuzzCeremonyID(f *testing.F) {
	st, err := state.Open(f.TempDir(), state.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	s, err := newAuth(st, time.Now)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id string, flip uint16) {
		if c, err := s.open(id, "login"); err == nil {
			t.Fatalf("a made-up id opened: %q → %+v", id, c)
		}
		// What a ceremony is bound to comes from a JSON body or from the box, so it is valid UTF-8 (the
		// seal is JSON, which would not keep other bytes).
		bound := strings.ToValidUTF8(id, "?")
		real, err := s.begin(&ceremony{purpose: "login", card: bound})
		if err != nil {
			t.Fatal(err)
		}
		b := []byte(real)
		i := int(flip) % len(b)
		b[i] ^= byte(flip>>8) | 1
		if c, err := s.open(string(b), "login"); err == nil && string(b) != real {
			t.Fatalf("an id with byte %d changed opened: %+v", i, c)
		}
		c, err := s.open(real, "login")
		if err != nil || c.card != bound {
			t.Fatalf("the sealed id: %+v %v", c, err)
		}
		if _, err := s.open(real, "approve"); err == nil {
			t.Fatal("a login ceremony opened for approve")
		}
		if err := s.spend(c); err != nil {
			t.Fatal(err)
		}
		if _, err := s.open(real, "login"); err == nil {
			t.Fatal("a finished ceremony opened again")
		}
	})
}
