// Package say owns the few small rules of how the box words numbers and ids for people: a word's form
// for a count, and a long hash cut to what a person compares. It knows no domain and imports nothing.
package say

import "fmt"

// Plural is one when n is 1, else many: "1 line", "3 lines", "0 lines".
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n with its word, the word taking a plain s past one: "1 line", "3 lines".
func Count(n int, word string) string { return fmt.Sprintf("%d %s", n, Plural(n, word, word+"s")) }

// Hash is how a commit id or a digest is shown: its first 12 characters, enough to tell two apart.
func Hash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
