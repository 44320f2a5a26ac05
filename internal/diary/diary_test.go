package diary

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestAppendParseRoundTrip(t *testing.T) {
	e := Entry{ID: "20261129T140322-abcdefgh", Time: "2026-11-29T14:03:22Z", Actor: "Claude", Via: "mcp", Trust: "outside",
		Op: "remember", Summary: "Claude remembered: Leo swims", Paths: []string{"/_content/inbox/2026-11-29.md"},
		Undo: []FileUndo{{Path: "/_content/inbox/2026-11-29.md", Pre: "", Post: "abc"}}, Commit: "dropped"}
	data := Append([]byte(`{"id":"x1","op":"init","time":"t","actor":"owner","summary":"s"}`), e) // unterminated line first
	data = append(data, "not json\n"...)
	es, bad := Parse(data)
	if bad != 1 || len(es) != 2 {
		t.Fatalf("parsed %d entries, %d bad", len(es), bad)
	}
	got := es[1]
	if got.Commit != "" {
		t.Error("Commit must not be stored")
	}
	got.Commit = e.Commit
	if fmt.Sprint(got) != fmt.Sprint(e) {
		t.Errorf("round trip\n got %+v\nwant %+v", got, e)
	}
}

func TestIDsUniqueAndSortable(t *testing.T) {
	seen := map[string]bool{}
	now := time.Now()
	var ids []string
	for i := range 10000 {
		id := NewID(now.Add(time.Duration(i/1000) * time.Second))
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	if !sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i][:15] < ids[j][:15] }) {
		t.Error("ids do not sort by time")
	}
}

func writeDays(t *testing.T, days, per int) string {
	root := t.TempDir()
	dir := filepath.Join(root, "_bookkeeping", "diary")
	os.MkdirAll(dir, 0o755)
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for d := range days {
		var data []byte
		for i := range per {
			tm := start.AddDate(0, 0, d).Add(time.Duration(i) * time.Second)
			data = Append(data, Entry{ID: NewID(tm), Time: tm.Format(time.RFC3339), Actor: "a", Op: []string{"remember", "forget"}[i%2], Summary: fmt.Sprintf("d%d i%d", d, i)})
		}
		os.WriteFile(filepath.Join(root, filepath.FromSlash(Day(start.AddDate(0, 0, d)))), data, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o644)
	return root
}

func TestRecentNewestFirstWithFilter(t *testing.T) {
	root := writeDays(t, 3, 4)
	es, err := Recent(root, 5, func(e Entry) bool { return e.Op == "remember" })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Summary)
	}
	if want := "[d2 i2 d2 i0 d1 i2 d1 i0 d0 i2]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	if es, _ := Recent(t.TempDir(), 5, nil); len(es) != 0 {
		t.Error("an empty box has an empty diary")
	}
}

func TestFind(t *testing.T) {
	root := writeDays(t, 3, 4)
	all, _ := Recent(root, 0, nil)
	if len(all) != 12 {
		t.Fatalf("%d entries", len(all))
	}
	for _, want := range all {
		got, err := Find(root, want.ID)
		if err != nil || got.Summary != want.Summary {
			t.Errorf("Find %s: %+v %v", want.ID, got, err)
		}
	}
	if _, err := Find(root, "20990101T000000-nothere1"); err == nil {
		t.Error("found an id that is not there")
	}
}

// An entry made in the last second of a leap day, local time, is filed under its UTC day and found by
// its id from the day of the id, in whatever zone the test runs.
func TestLeapDayLastSecond(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2028, 2, 29, 23, 59, 59, 0, time.Local)
	e := Entry{ID: NewID(at), Time: at.UTC().Format(time.RFC3339Nano), Actor: "owner", Op: "remember", Summary: "late"}
	if day, err := DayOf(e); err != nil || day != Day(at) || Day(at) != Day(at.UTC()) {
		t.Fatalf("an entry's day %s (%v), the clock's %s: one UTC day file for one instant", day, err, Day(at))
	}
	if day, err := DayOf(Entry{ID: "x", Op: "remember"}); err == nil {
		t.Fatalf("an entry with no time has the day %s", day)
	}
	if got := path.Base(Day(at)); got != at.UTC().Format("2006-01-02")+".jsonl" {
		t.Fatalf("Day(%v) = %s", at, got)
	}
	p := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(Day(at), "/")))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, Line(e), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Find(root, e.ID)
	if err != nil || got.Summary != "late" {
		t.Fatalf("Find: %+v %v", got, err)
	}
	if es, err := Recent(root, 5, nil); err != nil || len(es) != 1 || es[0].ID != e.ID {
		t.Fatalf("Recent: %+v %v", es, err)
	}
}

// BenchmarkRecent shows Recent's cost does not grow with the diary: 10 entries from 365 days × 500.
func BenchmarkRecent(b *testing.B) {
	root := b.TempDir()
	dir := filepath.Join(root, "_bookkeeping", "diary")
	os.MkdirAll(dir, 0o755)
	line := Line(Entry{ID: "20260101T000000-aaaaaaaa", Time: "2026-01-01T00:00:00Z", Actor: "a", Op: "remember", Summary: "a fact"})
	for d := range 365 {
		var data []byte
		for range 500 {
			data = append(data, line...)
		}
		os.WriteFile(filepath.Join(dir, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d).Format("2006-01-02")+".jsonl"), data, 0o644)
	}
	b.ResetTimer()
	for range b.N {
		if es, _ := Recent(root, 10, nil); len(es) != 10 {
			b.Fatal(len(es))
		}
	}
}

// FuzzParse: a day file never panics the parser; every entry it keeps renders back to a line that parses
// to the same entry, and good lines plus bad lines account for every non-empty line.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"id":"20261129T140322-k3f9","time":"2026-11-29T14:03:22Z","actor":"owner","via":"cli","trust":"own","op":"remember","summary":"owner remembered: x"}` + "\n"))
	f.Add([]byte("not json\n{}\n\n{\"id\":1}\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, bad := Parse(data)
		if bad < 0 || len(entries)+bad > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d entries + %d bad lines from %d lines", len(entries), bad, bytes.Count(data, []byte("\n"))+1)
		}
		for _, e := range entries {
			again, bad2 := Parse(Append(nil, e))
			if bad2 != 0 || len(again) != 1 || again[0].ID != e.ID || again[0].Summary != e.Summary {
				t.Fatalf("entry %+v does not round-trip: %+v (bad %d)", e, again, bad2)
			}
		}
	})
}
