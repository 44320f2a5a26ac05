package inbox

import (
	"strings"
	"unicode/utf8"

	"github.com/boxmem/box/internal/errs"
)

// A line brought in by an import carries its provenance on a sub-line of its own, a nested list item
// right under it, so the line itself stays byte for byte in the format above (a reader that does not
// know sub-lines keeps this one as raw text and loses nothing):
//
//	- 09:12:00 · import server-memory · import · own · Leo is the son of Mira. ^b7k2m4qa
//	  - from: memory.jsonl · id: relation Leo → Mira · about: Leo · type: person
//
// "from" and "id" are always there; "about" (the subject the source names) and "type" (its type in the
// source, a hint for tidy) only when the source says. Values are escaped like Who ("\·" and "\\").

// SourcePrefix starts a provenance sub-line.
const SourcePrefix = "  - from: "

// Source is where an imported line came from.
type Source struct {
	File   string `json:"file,omitempty"`   // the file inside what was imported ("memory.jsonl")
	ID     string `json:"id,omitempty"`     // the entry's own id there (a mem0 id, "entity Leo, observation 3")
	Entity string `json:"entity,omitempty"` // the subject the source names ("Leo"), for tidy
	Type   string `json:"type,omitempty"`   // the subject's type in the source ("person"), a hint for tidy
}

// IsZero reports a line without provenance.
func (s Source) IsZero() bool { return s == Source{} }

// String renders the sub-line without its newline.
func (s Source) String() string {
	out := SourcePrefix + escapeWho(s.File) + Sep + "id: " + escapeWho(s.ID)
	if s.Entity != "" {
		out += Sep + "about: " + escapeWho(s.Entity)
	}
	if s.Type != "" {
		out += Sep + "type: " + escapeWho(s.Type)
	}
	return out
}

// Validate reports, as a user sentence, what makes s unfit to be written.
func (s Source) Validate() error {
	const op = "inbox.source"
	if strings.TrimSpace(s.File) == "" || strings.TrimSpace(s.ID) == "" {
		return errs.E(op, errs.Invalid, "An imported line names the file it came from and its id there.")
	}
	for _, v := range []string{s.File, s.ID, s.Entity, s.Type} {
		if hasBreak(v) || v != strings.TrimSpace(v) || !utf8.ValidString(v) {
			return errs.E(op, errs.Invalid, "A line's provenance is one line of trimmed UTF-8 text.")
		}
	}
	if s.Type != "" && s.Entity == "" {
		return errs.E(op, errs.Invalid, "A type hint needs the subject it is the type of.")
	}
	return nil
}

// ParseSource parses a provenance sub-line (without newline); like ParseLine it succeeds only when
// rendering the result gives the same text back.
func ParseSource(s string) (Source, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSuffix(s, "\r"), SourcePrefix)
	if !ok {
		return Source{}, false
	}
	var src Source
	for i, f := range strings.Split(rest, Sep) {
		key, val := "from", f
		if i > 0 {
			var found bool
			if key, val, found = strings.Cut(f, ": "); !found {
				return Source{}, false
			}
		}
		v, ok := unescapeWho(val)
		if !ok {
			return Source{}, false
		}
		switch {
		case i == 0:
			src.File = v
		case i == 1 && key == "id":
			src.ID = v
		case key == "about" && src.Entity == "" && src.Type == "":
			src.Entity = v
		case key == "type" && src.Type == "":
			src.Type = v
		default:
			return Source{}, false
		}
	}
	if src.Validate() != nil || src.String() != s {
		return Source{}, false
	}
	return src, true
}
