package js

import "strconv"

// Test helpers: the box never prints a token, a failing test does.

var kindNames = [...]string{"", "identifier", "punctuator", "string", "template", "regex", "number", "private name"}

// String names a token's kind in a failing test's message.
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}
