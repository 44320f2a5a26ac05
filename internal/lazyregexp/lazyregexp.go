// Package lazyregexp owns regular expressions compiled on first use: a package-level pattern costs
// nothing when the process never matches it. Every `box hook` call is a fresh process of the one binary
// (docs/HOOKS.md), so a pattern compiled at package init is paid by every call of every verb.
// It knows nothing of the box.
package lazyregexp

import (
	"regexp"
	"sync"
	"testing"
)

// Regexp is a regexp.Regexp compiled the first time one of its methods is called. It has the methods
// the box uses; add one here when a pattern needs it.
type Regexp struct{ rx func() *regexp.Regexp }

// New returns the pattern str, compiled on first use; like regexp.MustCompile it panics on a bad pattern
// (at once in a test binary, so a bad pattern fails every test binary that imports its package, not only
// the test using it).
func New(str string) *Regexp {
	r := newLazy(str)
	if testing.Testing() {
		r.rx()
	}
	return r
}

// newLazy is New without compiling at once in a test binary: what the box binary runs.
func newLazy(str string) *Regexp {
	return &Regexp{rx: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(str) })}
}

func (r *Regexp) MatchString(s string) bool { return r.rx().MatchString(s) }

func (r *Regexp) FindString(s string) string { return r.rx().FindString(s) }

func (r *Regexp) FindStringSubmatch(s string) []string { return r.rx().FindStringSubmatch(s) }

func (r *Regexp) FindStringSubmatchIndex(s string) []int { return r.rx().FindStringSubmatchIndex(s) }

func (r *Regexp) FindAllString(s string, n int) []string { return r.rx().FindAllString(s, n) }

func (r *Regexp) FindAllStringIndex(s string, n int) [][]int { return r.rx().FindAllStringIndex(s, n) }

func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.rx().FindAllStringSubmatch(s, n)
}

func (r *Regexp) FindAllSubmatch(b []byte, n int) [][][]byte { return r.rx().FindAllSubmatch(b, n) }

func (r *Regexp) ReplaceAllString(src, repl string) string { return r.rx().ReplaceAllString(src, repl) }

func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.rx().ReplaceAllStringFunc(src, repl)
}
