package note

import (
	"strings"

	"github.com/boxmem/box/internal/errs"
)

// The edits joining two notes needs beyond a fact, an alias, a map and a link (docs/MERGE.md, "Joining").

// AddEvent puts a dated line in the Timeline (made if missing), after every line dated on or before it.
// An event already there (the same id, or the same date and text) is not added twice.
func AddEvent(data []byte, e Event) ([]byte, error) {
	const op = "note.addEvent"
	if !dateRe.MatchString(e.Date) {
		return nil, errs.E(op, errs.Invalid, "The date %q is not YYYY-MM-DD.", e.Date)
	}
	if err := checkLine(op, "event", e.Text); err != nil {
		return nil, err
	}
	d, err := parseForEdit(op, data)
	if err != nil {
		return nil, err
	}
	s := d.ensure("Timeline", Sections)
	for _, l := range s.body {
		if g, ok := parseEvent(l); ok && ((e.ID != "" && g.ID == e.ID) || (g.Date == e.Date && g.Text == e.Text)) {
			return data, nil
		}
	}
	insertEvent(s, e)
	return d.render(), nil
}

// AddThread appends "- text" to Open threads (made if missing) unless that line is there already.
func AddThread(data []byte, text string) ([]byte, error) {
	const op = "note.addThread"
	if err := checkLine(op, "open thread", text); err != nil {
		return nil, err
	}
	d, err := parseForEdit(op, data)
	if err != nil {
		return nil, err
	}
	s := d.ensure("Open threads", Sections)
	for _, l := range s.body {
		if t, ok := strings.CutPrefix(l, "- "); ok && strings.TrimSpace(t) == strings.TrimSpace(text) {
			return data, nil
		}
	}
	s.insert(contentEnd(s.body), "- "+text)
	return d.render(), nil
}

// RemoveLink takes the lines of Links that link only target ("- [[target]]", with or without an alias or
// heading) out, reporting whether there were any. Other lines are untouched.
func RemoveLink(data []byte, target string) ([]byte, bool) {
	d, err := parseDoc("note.removeLink", data)
	if err != nil {
		return data, false
	}
	s := d.section("Links")
	if s == nil {
		return data, false
	}
	kept := s.body[:0:0]
	for _, l := range s.body {
		if t, ok := strings.CutPrefix(l, "- "); ok && strings.HasPrefix(t, "[[") && strings.HasSuffix(t, "]]") {
			if ts := Wikilinks(t); len(ts) == 1 && ts[0] == target && linkRe.FindString(t) == t {
				continue
			}
		}
		kept = append(kept, l)
	}
	if len(kept) == len(s.body) {
		return data, false
	}
	s.body = kept
	return d.render(), true
}
