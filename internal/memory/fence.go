package memory

import "strings"

// Fence marks text that is not in the owner's own words (a note written mostly by others, an inbox line
// from an assistant, later mail and connector output) before a model reads it: the model treats what is
// inside <outside_content> as data, never as instructions. A closing tag inside the text is broken so
// the text cannot end its own fence (docs/SECURITY.md).
func Fence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ReplaceAll(s, "</outside_content>", "</outside_content >")
	return "<outside_content>" + s + "</outside_content>"
}

// OwnVias are the ways in that carry the owner's own words; a memory log entry that came any other way
// is outside content.
var OwnVias = map[string]bool{"cli": true, "web": true, "chat": true, "": true}
