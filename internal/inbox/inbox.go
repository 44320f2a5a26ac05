// Package inbox owns the format of an inbox day file, _content/inbox/YYYY-MM-DD.md: its lines, their ids,
// and byte-for-byte round trips. It is pure: it never touches files, git, the index or the rules of remember.
package inbox

import (
	"bytes"
	"crypto/rand"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/markdoc"
	"go.yaml.in/yaml/v3"
)

// A day file looks like this (the time is the box machine's local wall clock; the date comes from the
// file, so a line's instant is date+time in the owner's zone, and lines stay in the order they were
// appended even when a DST fall-back repeats an hour):
//
//	---
//	type: inbox-day
//	date: 2026-11-29
//	---
//	# Inbox 2026-11-29
//	- 14:03:22 · Claude (claude.ai) · mcp · outside · Leo has swim practice Thursdays at 5:30. ^k3f9a2qd
//
// Fields are separated by " · ". The text is everything between the fourth separator and the final
// " ^id", so it may itself contain " · " or "^"; only Who is escaped ("\·" and "\\").

// Sep separates the fields of a line.
const Sep = " · "

// Via values: how a line reached the box.
var Vias = []string{"cli", "mcp", "web", "chat", "page", "import", "hook"}

// Trust values: the owner's own words, or anything else.
const (
	Own     = "own"
	Outside = "outside"
)

// Line is one inbox line.
type Line struct {
	ID    string // Obsidian block id, 8 base32 chars when made by NewID
	Time  string // HH:MM:SS, local wall-clock time on the file's day
	Who   string // "owner", "chat", "Claude (claude.ai)", "page recipes", "import whatsapp"
	Via   string // one of Vias
	Trust string // Own or Outside
	Text  string // one fact, one line
	// Source is an imported line's provenance, rendered on a sub-line of its own (source.go); zero for
	// every other line.
	Source Source `json:",omitzero"`
}

// Entry is one line of a day file: a parsed Line, or Raw text kept verbatim (frontmatter, heading,
// blank lines, anything hand-edited that is not exactly in the line format).
type Entry struct {
	Line *Line
	Raw  string // the text as read: a line's with its Source sub-line and any \r
}

// Day is a parsed day file. Render gives back the bytes it was parsed from.
type Day struct {
	Date    string // from the frontmatter; "" when the file has none
	Entries []Entry
	noEOL   bool // the file did not end with a newline
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

// NewID returns 8 random base32 characters (40 bits): unique enough within a box, short enough to read.
func NewID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("inbox: crypto/rand failed: " + err.Error())
	}
	for i := range b {
		b[i] = idAlphabet[b[i]&31]
	}
	return string(b[:])
}

// Header returns the first lines of a new day file for date (YYYY-MM-DD).
func Header(date string) string {
	return "---\ntype: inbox-day\ndate: " + date + "\n---\n# Inbox " + date + "\n"
}

// Validate reports, as a user sentence, what makes l unfit to be written.
func (l Line) Validate() error {
	const op = "inbox.line"
	switch {
	case !validID(l.ID):
		return errs.E(op, errs.Invalid, "The line id %q is not a block id (letters, digits and dashes).", l.ID)
	case !validTime(l.Time):
		return errs.E(op, errs.Invalid, "The line time %q is not HH:MM:SS.", l.Time)
	case strings.TrimSpace(l.Who) == "" || hasBreak(l.Who):
		return errs.E(op, errs.Invalid, "Who wrote the line must be one non-empty line.")
	case !validVia(l.Via):
		return errs.E(op, errs.Invalid, "The line's via %q is not one of %s.", l.Via, strings.Join(Vias, ", "))
	case l.Trust != Own && l.Trust != Outside:
		return errs.E(op, errs.Invalid, "The line's trust must be own or outside, not %q.", l.Trust)
	case strings.TrimSpace(l.Text) == "":
		return errs.E(op, errs.Invalid, "The line has no text.")
	case hasBreak(l.Text):
		return errs.E(op, errs.Invalid, "The text must be a single line; save one fact at a time.")
	case !utf8.ValidString(l.Text) || !utf8.ValidString(l.Who):
		return errs.E(op, errs.Invalid, "The text is not valid UTF-8.")
	case !l.Source.IsZero():
		return l.Source.Validate()
	}
	return nil
}

// String renders the line without its final newline: one line, or two when it has a Source.
func (l Line) String() string {
	s := "- " + l.Time + Sep + escapeWho(l.Who) + Sep + l.Via + Sep + l.Trust + Sep + l.Text + " ^" + l.ID
	if !l.Source.IsZero() {
		s += "\n" + l.Source.String()
	}
	return s
}

// ParseLine parses one line (without newline), without its Source sub-line (ParseDay, LinesOf and
// RemoveLines attach that). It succeeds only when the line is exactly in the format, so that rendering
// the result gives the same text back.
func ParseLine(s string) (Line, bool) {
	s = strings.TrimSuffix(s, "\r") // a day file saved with Windows line ends: the \r ends the line, it is not the id's
	rest, ok := strings.CutPrefix(s, "- ")
	if !ok {
		return Line{}, false
	}
	i := strings.LastIndex(rest, " ^")
	if i < 0 {
		return Line{}, false
	}
	id := rest[i+2:]
	f := strings.SplitN(rest[:i], Sep, 5)
	if len(f) != 5 {
		return Line{}, false
	}
	who, ok := unescapeWho(f[1])
	if !ok {
		return Line{}, false
	}
	l := Line{ID: id, Time: f[0], Who: who, Via: f[2], Trust: f[3], Text: f[4]}
	if l.Validate() != nil || l.String() != s {
		return Line{}, false
	}
	return l, true
}

// ParseDay parses a day file. Lines not in the format are kept as raw entries. It fails only when the
// frontmatter is broken (unterminated, not YAML, or of another type), so validate can name the file.
func ParseDay(data []byte) (*Day, error) {
	const op = "inbox.parse"
	s := string(data)
	d := &Day{}
	if s == "" {
		return d, nil
	}
	d.noEOL = !strings.HasSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	start := 0
	if markdoc.IsFrontDelimiter(lines[0]) {
		end := -1
		for i := 1; i < len(lines); i++ {
			if markdoc.IsFrontDelimiter(lines[i]) {
				end = i
				break
			}
		}
		if end < 0 {
			return nil, errs.E(op, errs.Invalid, "The inbox file's frontmatter is not closed with ---.")
		}
		var fm struct {
			Type string `yaml:"type"`
			Date string `yaml:"date"`
		}
		if err := yaml.Unmarshal([]byte(strings.Join(lines[1:end], "\n")), &fm); err != nil {
			return nil, errs.E(op, errs.Invalid, "The inbox file's frontmatter is not valid YAML.")
		}
		if fm.Type != "" && fm.Type != "inbox-day" {
			return nil, errs.E(op, errs.Invalid, "The inbox file says it is of type %q, not inbox-day.", fm.Type)
		}
		d.Date = fm.Date
		for _, raw := range lines[:end+1] {
			d.Entries = append(d.Entries, Entry{Raw: raw})
		}
		start = end + 1
	}
	body := lines[start:]
	for i := 0; i < len(body); i++ {
		raw := body[i]
		l, ok := ParseLine(raw)
		if !ok {
			d.Entries = append(d.Entries, Entry{Raw: raw})
			continue
		}
		if i+1 < len(body) {
			if src, ok := ParseSource(body[i+1]); ok {
				l.Source = src
				raw += "\n" + body[i+1]
				i++
			}
		}
		d.Entries = append(d.Entries, Entry{Line: &l, Raw: raw})
	}
	return d, nil
}

// Lines returns the parsed lines in file order.
func (d *Day) Lines() []Line {
	var out []Line
	for _, e := range d.Entries {
		if e.Line != nil {
			out = append(out, *e.Line)
		}
	}
	return out
}

// LinesOf returns a day file's lines in file order, for readers that must not miss one: a file whose
// frontmatter is broken (which ParseDay refuses) is read line by line.
func LinesOf(data []byte) []Line {
	if d, err := ParseDay(data); err == nil {
		return d.Lines()
	}
	var out []Line
	raws := strings.Split(string(data), "\n")
	for i, s := range raws {
		if l, ok := ParseLine(strings.TrimSuffix(s, "\r")); ok {
			if i+1 < len(raws) {
				l.Source, _ = ParseSource(strings.TrimSuffix(raws[i+1], "\r"))
			}
			out = append(out, l)
		}
	}
	return out
}

// AppendLine appends l to a day file's bytes without touching the rest (a missing final newline is
// added). Empty data gets the header first, dated today by the caller through date.
func AppendLine(data []byte, date string, l Line) ([]byte, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(data)+len(l.Text)+64)
	out = append(out, data...)
	if len(out) == 0 {
		if !validDate(date) {
			return nil, errs.E("inbox.append", errs.Invalid, "The inbox day %q is not a date (YYYY-MM-DD).", date)
		}
		out = append(out, Header(date)...)
	} else if out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, l.String()...)
	return append(out, '\n'), nil
}

// RemoveLines drops the lines whose id is in ids (with their Source sub-lines) and returns the new bytes
// and the removed lines, in file order. Every other byte stays; it works line by line, so a file with
// broken frontmatter works too.
func RemoveLines(data []byte, ids []string) ([]byte, []Line) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	return RemoveLinesFunc(data, func(l Line) bool { return want[l.ID] })
}

// RemoveLinesFunc is RemoveLines for the lines drop says: an id alone does not name one line of a file
// edited by hand, which may hold two lines with one id.
func RemoveLinesFunc(data []byte, drop func(Line) bool) ([]byte, []Line) {
	var out []byte
	var removed []Line
	rest := data
	for len(rest) > 0 {
		n := bytes.IndexByte(rest, '\n') + 1
		if n == 0 {
			n = len(rest)
		}
		raw := rest[:n]
		rest = rest[n:]
		if l, ok := ParseLine(strings.TrimSuffix(string(raw), "\n")); ok && drop(l) {
			next := bytes.IndexByte(rest, '\n') + 1
			if next == 0 {
				next = len(rest)
			}
			if src, ok := ParseSource(strings.TrimSuffix(string(rest[:next]), "\n")); ok {
				l.Source = src
				rest = rest[next:]
			}
			removed = append(removed, l)
			continue
		}
		out = append(out, raw...)
	}
	if out == nil {
		out = []byte{}
	}
	return out, removed
}

func escapeWho(s string) string {
	if !strings.ContainsAny(s, `\·`) {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, "·", `\·`).Replace(s)
}

func unescapeWho(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, !strings.Contains(s, "·")
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\\':
			r2, n2 := utf8.DecodeRuneInString(s[i+n:])
			if r2 != '\\' && r2 != '·' {
				return "", false
			}
			b.WriteRune(r2)
			i += n + n2
			continue
		case '·':
			return "", false
		}
		b.WriteRune(r)
		i += n
	}
	return b.String(), true
}

func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func validTime(t string) bool {
	if len(t) != 8 || t[2] != ':' || t[5] != ':' {
		return false
	}
	num := func(s string, max int) bool {
		return s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && int(s[0]-'0')*10+int(s[1]-'0') <= max
	}
	return num(t[0:2], 23) && num(t[3:5], 59) && num(t[6:8], 59)
}

func validDate(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

func validVia(v string) bool {
	for _, x := range Vias {
		if v == x {
			return true
		}
	}
	return false
}

// hasBreak reports control characters and Unicode line breaks, which would split or hide a line.
func hasBreak(s string) bool {
	for _, r := range s {
		if r == '\t' {
			continue
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return true
		}
	}
	return false
}
