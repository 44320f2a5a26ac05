package inbox

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/goldenfile"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

func sample() []Line {
	return []Line{
		{ID: "k3f9a2qd", Time: "14:03:22", Who: "Claude (claude.ai)", Via: "mcp", Trust: Outside, Text: "Leo has swim practice Thursdays at 5:30."},
		{ID: "a7b2c3d4", Time: "14:05:00", Who: "owner", Via: "cli", Trust: Own, Text: "Started a new job at Acme on 3 Nov 2026."},
		{ID: "zz22yy33", Time: "18:40:09", Who: "page · recipes \\ v2", Via: "page", Trust: Outside, Text: "Pasta · basil · parmesan is the weekly favourite ^notanid"},
		{ID: "q2w3e4r5", Time: "23:59:59", Who: "import whatsapp", Via: "import", Trust: Own, Text: "Ana's birthday is 4 March."},
	}
}

func TestGoldenDay(t *testing.T) {
	var data []byte
	for _, l := range sample() {
		var err error
		if data, err = AppendLine(data, "2026-11-29", l); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "day.md", data)
	d, err := ParseDay(data)
	if err != nil {
		t.Fatal(err)
	}
	if d.Date != "2026-11-29" {
		t.Errorf("date = %q", d.Date)
	}
	got := d.Lines()
	if len(got) != len(sample()) {
		t.Fatalf("parsed %d lines, want %d", len(got), len(sample()))
	}
	for i, l := range sample() {
		if got[i] != l {
			t.Errorf("line %d = %+v, want %+v", i, got[i], l)
		}
	}
	if !bytes.Equal(d.Render(), data) {
		t.Error("render differs from parsed bytes")
	}
}

func TestHandEditedRoundTrip(t *testing.T) {
	data, err := os.ReadFile("testdata/hand-edited.md")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDay(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Render(), data) {
		t.Error("hand-edited file does not round-trip")
	}
	if n := len(d.Lines()); n != 2 {
		t.Errorf("parsed %d lines from the hand-edited file, want 2", n)
	}
}

func TestRoundTripOddFiles(t *testing.T) {
	for _, s := range []string{
		"", "\n", "no newline", "- 14:03:22 · owner · cli · own · x ^abc",
		"---\ntype: inbox-day\ndate: 2026-11-29\n---\r\n# x\r\n",
		"\n\n- 14:03:22 · owner · cli · own · x ^abc\n\n",
		"- 14:03:22 · owner · cli · own · x ^abc\r\n",
	} {
		d, err := ParseDay([]byte(s))
		if err != nil {
			continue
		}
		if got := string(d.Render()); got != s {
			t.Errorf("round trip of %q gave %q", s, got)
		}
	}
}

func TestParseDayErrors(t *testing.T) {
	for _, s := range []string{
		"---\ntype: inbox-day\n",
		"---\ntype: [\n---\n",
		"---\ntype: note\n---\n",
	} {
		if _, err := ParseDay([]byte(s)); err == nil {
			t.Errorf("ParseDay(%q) succeeded, want an error", s)
		}
	}
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"- 14:03:22 · owner · cli · own · Leo swims. ^k3f9a2qd", true},
		{"- 14:03:22 · owner · cli · own · Leo · swims · on Thursdays. ^k3f9a2qd", true},
		{"- 14:03:22 · owner · cli · own · Leo swims. ^k3f9a2qd ", false},  // trailing space
		{"- 14:03:22 · owner · cli · own · Leo swims.", false},             // no id
		{"- 24:03:22 · owner · cli · own · Leo swims. ^k3f9a2qd", false},   // bad hour
		{"- 14:03 · owner · cli · own · Leo swims. ^k3f9a2qd", false},      // short time
		{"- 14:03:22 · owner · fax · own · Leo swims. ^k3f9a2qd", false},   // bad via
		{"- 14:03:22 · owner · cli · maybe · Leo swims. ^k3f9a2qd", false}, // bad trust
		{"- 14:03:22 · owner · cli · own ·  ^k3f9a2qd", false},             // empty text
		{"* 14:03:22 · owner · cli · own · Leo swims. ^k3f9a2qd", false},
		{"- 14:03:22 · a·b · cli · own · Leo swims. ^k3f9a2qd", false}, // unescaped middle dot in who
		{"- 14:03:22 · a\\·b · cli · own · Leo swims. ^k3f9a2qd", true},
		{"- 14:03:22 · owner · cli · own · Leo swims. ^k3f9_2qd", false}, // bad id char
	}
	for _, tt := range tests {
		l, ok := ParseLine(tt.in)
		if ok != tt.ok {
			t.Errorf("ParseLine(%q) ok = %v, want %v", tt.in, ok, tt.ok)
		}
		if ok && l.String() != tt.in {
			t.Errorf("ParseLine(%q) renders as %q", tt.in, l.String())
		}
	}
}

func TestValidate(t *testing.T) {
	good := sample()[0]
	bad := map[string]func(*Line){
		"newline":    func(l *Line) { l.Text = "one\ntwo" },
		"cr":         func(l *Line) { l.Text = "one\rtwo" },
		"u2028":      func(l *Line) { l.Text = "one\u2028two" },
		"empty":      func(l *Line) { l.Text = "  " },
		"no who":     func(l *Line) { l.Who = "" },
		"who break":  func(l *Line) { l.Who = "a\nb" },
		"bad via":    func(l *Line) { l.Via = "email" },
		"bad trust":  func(l *Line) { l.Trust = "" },
		"bad time":   func(l *Line) { l.Time = "2:03:22" },
		"bad id":     func(l *Line) { l.ID = "a b" },
		"invalid u8": func(l *Line) { l.Text = "a\xffb" },
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, f := range bad {
		l := good
		f(&l)
		if l.Validate() == nil {
			t.Errorf("%s: Validate accepted %+v", name, l)
		}
		if _, err := AppendLine(nil, "2026-11-29", l); err == nil {
			t.Errorf("%s: AppendLine accepted it", name)
		}
	}
}

func TestAppendBadDate(t *testing.T) {
	if _, err := AppendLine(nil, "29/11/2026", sample()[0]); err == nil {
		t.Error("a new day file with a bad date")
	}
}

func TestAppendKeepsBytes(t *testing.T) {
	base := "---\ntype: inbox-day\ndate: 2026-11-29\n---\n# Inbox 2026-11-29\nhand note without newline"
	out, err := AppendLine([]byte(base), "2026-11-29", sample()[1])
	if err != nil {
		t.Fatal(err)
	}
	want := base + "\n" + sample()[1].String() + "\n"
	if string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestRemoveLines(t *testing.T) {
	data, _ := os.ReadFile("testdata/hand-edited.md")
	out, removed := RemoveLines(data, []string{"k3f9a2qd", "nosuchid"})
	if len(removed) != 1 || removed[0].ID != "k3f9a2qd" {
		t.Fatalf("removed %+v", removed)
	}
	if want := strings.Replace(string(data), removed[0].String()+"\n", "", 1); string(out) != want {
		t.Errorf("RemoveLines touched other bytes:\n%s", out)
	}
	again, none := RemoveLines(out, []string{"k3f9a2qd"})
	if len(none) != 0 || !bytes.Equal(again, out) {
		t.Error("second removal changed something")
	}
	// Text that merely mentions an id is not removed.
	if _, r := RemoveLines([]byte("- see ^k3f9a2qd\n"), []string{"k3f9a2qd"}); len(r) != 0 {
		t.Error("removed a raw line")
	}
}

// A day file saved with Windows line ends reads as the same lines (the \r is no part of an id), and a
// removal keeps every other byte, \r included.
func TestWindowsLineEnds(t *testing.T) {
	data, _ := os.ReadFile("testdata/hand-edited.md")
	crlf := []byte(strings.ReplaceAll(string(data), "\n", "\r\n"))
	want, got := LinesOf(data), LinesOf(crlf)
	if len(got) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("CRLF lines %+v, want %+v", got, want)
	}
	out, removed := RemoveLines(crlf, []string{want[0].ID})
	if len(removed) != 1 || removed[0].ID != want[0].ID || !strings.Contains(string(crlf), removed[0].String()) && !bytes.Contains(crlf, []byte(strings.ReplaceAll(removed[0].String(), "\n", "\r\n"))) {
		t.Fatalf("removed %+v", removed)
	}
	if strings.Count(string(out), "\r\n") != strings.Count(string(out), "\n") || len(LinesOf(out)) != len(want)-1 {
		t.Errorf("after the removal:\n%q", out)
	}
}

func TestNewID(t *testing.T) {
	re := regexp.MustCompile(`^[a-z2-7]{8}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
}

func FuzzParseDay(f *testing.F) {
	for _, name := range []string{"testdata/day.md", "testdata/hand-edited.md", "testdata/day-imported.md"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDay(data)
		if err != nil {
			return
		}
		if !bytes.Equal(d.Render(), data) {
			t.Fatalf("round trip failed:\n%q\n%q", data, d.Render())
		}
		for _, l := range d.Lines() {
			back, err := ParseDay([]byte(l.String()))
			if err != nil || len(back.Lines()) != 1 || back.Lines()[0] != l {
				t.Fatalf("line %+v does not round-trip", l)
			}
		}
	})
}

func FuzzLine(f *testing.F) {
	f.Fuzz(func(t *testing.T, who, text, id string) {
		l := Line{ID: id, Time: "10:00:00", Who: who, Via: "cli", Trust: Own, Text: text}
		if l.Validate() != nil {
			return
		}
		back, ok := ParseLine(l.String())
		if !ok || back != l {
			t.Fatalf("%+v renders as %q and parses back as %+v (%v)", l, l.String(), back, ok)
		}
	})
}

func TestCheck(t *testing.T) {
	data := Header("2026-11-29") + sample()[0].String() + "\n" + sample()[0].String() + "\n- 14:03 · owner · cli · own · short time ^abcd\n"
	fs := Check("/_content/inbox/2026-11-30.md", []byte(data))
	var codes []string
	for _, f := range fs {
		codes = append(codes, f.Code)
	}
	if strings.Join(codes, " ") != "inbox-date inbox-duplicate-id inbox-line" {
		t.Errorf("codes %v", codes)
	}
	if fs := Check("/_content/inbox/2026-11-29.md", []byte("---\ntype: [\n---\n")); len(fs) != 1 || fs[0].Code != "inbox-frontmatter" {
		t.Errorf("broken frontmatter: %v", fs)
	}
	golden, _ := os.ReadFile("testdata/day.md")
	if fs := Check("/_content/inbox/2026-11-29.md", golden); len(fs) != 0 {
		t.Errorf("clean file: %v", fs)
	}
}

func TestFileNames(t *testing.T) {
	for _, c := range []struct {
		name, date string
		n          int
		ok         bool
	}{
		{"2026-11-29.md", "2026-11-29", 1, true},
		{"2026-11-29-2.md", "2026-11-29", 2, true},
		{"2026-11-29-12.md", "2026-11-29", 12, true},
		{"2026-11-29-1.md", "", 0, false},
		{"2026-11-29-02.md", "", 0, false},
		{"2026-11-29-x.md", "", 0, false},
		{"2026-13-29.md", "", 0, false},
		{"2028-02-29.md", "2028-02-29", 1, true}, // a leap day
		{"2027-02-29.md", "", 0, false},          // not one
		{"notes.md", "", 0, false},
	} {
		date, n, ok := ParseFileName(c.name)
		if date != c.date || n != c.n || ok != c.ok {
			t.Errorf("ParseFileName(%q) = %q, %d, %v", c.name, date, n, ok)
		}
		if ok && FileName(date, n) != c.name {
			t.Errorf("FileName(%q, %d) = %q, want %q", date, n, FileName(date, n), c.name)
		}
	}
}

func imported() []Line {
	return []Line{
		{ID: "b7k2m4qa", Time: "09:12:00", Who: "import server-memory", Via: "import", Trust: Own, Text: "Leo is the son of Mira.",
			Source: Source{File: "memory.jsonl", ID: "relation Leo → Mira", Entity: "Leo", Type: "person"}},
		{ID: "c8l3n5rb", Time: "09:12:00", Who: "import mem0", Via: "import", Trust: Own, Text: "Prefers tea · green, no sugar.",
			Source: Source{File: "memories · 2026.json", ID: `a\b`}},
		{ID: "a7b2c3d4", Time: "14:05:00", Who: "owner", Via: "cli", Trust: Own, Text: "Started a new job at Acme on 3 Nov 2026."},
	}
}

// An imported line keeps its provenance on a sub-line; the file round-trips, and a day without imported
// lines renders exactly as before (TestGoldenDay).
func TestGoldenImportedDay(t *testing.T) {
	var data []byte
	for _, l := range imported() {
		var err error
		if data, err = AppendLine(data, "2026-11-30", l); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "day-imported.md", data)
	d, err := ParseDay(data)
	if err != nil {
		t.Fatal(err)
	}
	got := d.Lines()
	if len(got) != len(imported()) {
		t.Fatalf("parsed %d lines, want %d", len(got), len(imported()))
	}
	for i, l := range imported() {
		if got[i] != l {
			t.Errorf("line %d = %+v, want %+v", i, got[i], l)
		}
	}
	if !bytes.Equal(d.Render(), data) {
		t.Error("render differs from parsed bytes")
	}
	if lo := LinesOf(append([]byte("---\nbroken"), data...)); len(lo) != 3 || lo[0].Source != imported()[0].Source {
		t.Errorf("LinesOf on a broken file lost the provenance: %+v", lo)
	}
	out, removed := RemoveLines(data, []string{"b7k2m4qa"})
	if len(removed) != 1 || removed[0] != imported()[0] {
		t.Fatalf("removed %+v", removed)
	}
	if strings.Contains(string(out), "from: memory.jsonl") || !strings.Contains(string(out), "c8l3n5rb") {
		t.Errorf("removing a line left its sub-line or took another:\n%s", out)
	}
}

func TestParseSource(t *testing.T) {
	for _, s := range []string{
		"  - from: memory.jsonl · id: entity Leo, observation 1",
		"  - from: a \\· b · id: x · about: Leo · type: person",
		"  - from: a · id: x · about: Leo",
	} {
		if src, ok := ParseSource(s); !ok || src.String() != s {
			t.Errorf("%q did not round-trip: %+v %v", s, src, ok)
		}
	}
	for _, s := range []string{
		"  - from: memory.jsonl",                     // no id
		"  - from: a · id: x · type: person",         // a type without its subject
		"  - from: a · id: x · type: p · about: Leo", // out of order
		"  - from: a · b · id: x",                    // unescaped separator
		"  - from:  a · id: x",                       // untrimmed
		"    - from: a · id: x",                      // other indent
		"  - from: a · id: x · colour: red",          // unknown key
	} {
		if src, ok := ParseSource(s); ok {
			t.Errorf("%q parsed as %+v", s, src)
		}
	}
}

func FuzzSource(f *testing.F) {
	f.Add("memory.jsonl", "entity Leo, observation 1", "Leo", "person")
	f.Add(`a\·b\`, "x · y", "", "")
	f.Fuzz(func(t *testing.T, file, id, entity, typ string) {
		src := Source{File: file, ID: id, Entity: entity, Type: typ}
		if src.Validate() != nil {
			return
		}
		back, ok := ParseSource(src.String())
		if !ok || back != src {
			t.Fatalf("%+v renders as %q and parses back as %+v (%v)", src, src.String(), back, ok)
		}
	})
}

// A leap day's file takes a line at its last second, reads back as written and checks clean; a 29
// February of a common year and a time past 23:59:59 are refused.
func TestLeapDayLastSecond(t *testing.T) {
	l := sample()[0]
	l.Time = "23:59:59"
	data, err := AppendLine(nil, "2028-02-29", l)
	if err != nil {
		t.Fatal(err)
	}
	if got := LinesOf(data); len(got) != 1 || got[0].Time != "23:59:59" || got[0].ID != l.ID {
		t.Fatalf("read back: %+v", got)
	}
	if fs := Check("/_content/inbox/"+FileName("2028-02-29", 1), data); len(fs) != 0 {
		t.Errorf("a leap day's file: %v", fs)
	}
	if date, n, ok := ParseFileName(FileName("2028-02-29", 2)); !ok || date != "2028-02-29" || n != 2 {
		t.Errorf("the second part of a leap day: %q %d %v", date, n, ok)
	}
	if _, err := AppendLine(nil, "2027-02-29", l); err == nil {
		t.Error("29 February 2027 was taken as a day")
	}
	if _, _, ok := ParseFileName("2027-02-29.md"); ok {
		t.Error("2027-02-29.md was taken as a day file")
	}
	l.Time = "24:00:00"
	if err := l.Validate(); err == nil {
		t.Error("24:00:00 was taken as a time")
	}
}
