package lazyregexp

import (
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestSameAsRegexp checks each method answers as regexp.Regexp does on the same pattern.
func TestSameAsRegexp(t *testing.T) {
	const pat, text = `(\w+)@(\w+)`, "ana@home, leo@work and no one@"
	lazy, eager := New(pat), regexp.MustCompile(pat)
	upper := func(s string) string { return strings.ToUpper(s) }
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"MatchString", lazy.MatchString(text), eager.MatchString(text)},
		{"FindString", lazy.FindString(text), eager.FindString(text)},
		{"FindStringSubmatch", lazy.FindStringSubmatch(text), eager.FindStringSubmatch(text)},
		{"FindStringSubmatchIndex", lazy.FindStringSubmatchIndex(text), eager.FindStringSubmatchIndex(text)},
		{"FindAllString", lazy.FindAllString(text, -1), eager.FindAllString(text, -1)},
		{"FindAllStringIndex", lazy.FindAllStringIndex(text, 1), eager.FindAllStringIndex(text, 1)},
		{"FindAllStringSubmatch", lazy.FindAllStringSubmatch(text, -1), eager.FindAllStringSubmatch(text, -1)},
		{"FindAllSubmatch", lazy.FindAllSubmatch([]byte(text), -1), eager.FindAllSubmatch([]byte(text), -1)},
		{"ReplaceAllString", lazy.ReplaceAllString(text, "<$2>"), eager.ReplaceAllString(text, "<$2>")},
		{"ReplaceAllStringFunc", lazy.ReplaceAllStringFunc(text, upper), eager.ReplaceAllStringFunc(text, upper)},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, regexp says %v", c.name, c.got, c.want)
		}
	}
}

// TestBadPatternPanicsInTests checks a bad pattern fails at New in a test binary, as regexp.MustCompile
// would at package init, so a typo cannot wait for the one call that compiles it.
func TestBadPatternPanicsInTests(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New(`(`) did not panic in a test binary")
		}
	}()
	New(`(`)
}

// TestFirstUseFromManyGoroutines: a first use made by many goroutines together (the box binary's path;
// New compiles at once in tests) answers each of them; under -race, an unguarded compile shows.
func TestFirstUseFromManyGoroutines(t *testing.T) {
	r := newLazy(`^(\w+)@home$`)
	var wg sync.WaitGroup
	got := make([]string, 32)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m := r.FindStringSubmatch("ana@home"); len(m) == 2 {
				got[i] = m[1]
			}
		}()
	}
	wg.Wait()
	for i, g := range got {
		if g != "ana" {
			t.Fatalf("goroutine %d got %q", i, g)
		}
	}
}
