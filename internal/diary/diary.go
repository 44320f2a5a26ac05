// Package diary owns the box's diary: one JSON line per change or outside read in
// _bookkeeping/diary/YYYY-MM-DD.jsonl (UTC days). It formats, parses and reads it; it never writes files.
package diary

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
)

// Entry is one diary line.
type Entry struct {
	ID      string     `json:"id"`
	Time    string     `json:"time"` // RFC 3339, UTC
	Actor   string     `json:"actor"`
	Via     string     `json:"via,omitempty"`
	Host    string     `json:"host,omitempty"`
	Conn    string     `json:"conn,omitempty"`  // the connection (key or OAuth grant id) that made it, when one did
	Trust   string     `json:"trust,omitempty"` // own | outside
	Op      string     `json:"op"`              // remember, forget, tidy, undo, init, edit, …
	Summary string     `json:"summary"`         // one plain sentence: "Claude remembered: Leo swims"
	Reason  string     `json:"reason,omitempty"`
	Switch  string     `json:"switch,omitempty"`
	Paths   []string   `json:"paths,omitempty"`
	Undo    []FileUndo `json:"undo,omitempty"`
	UndoOf  string     `json:"undoOf,omitempty"`
	// Commit is never stored (the line is written in the commit it would name); readers that know
	// the repository fill it in.
	Commit string `json:"commit,omitempty"`
}

// FileUndo is what undo needs for one path: the git blob ids before and after ("" = absent).
type FileUndo struct {
	Path string `json:"path"`
	Pre  string `json:"pre"`
	Post string `json:"post"`
}

// NewID returns a unique, time-sortable id: "20261129T140322-k3f9x2ab" (UTC second, 40 random bits).
func NewID(t time.Time) string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	var b [8]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return t.UTC().Format("20060102T150405") + "-" + string(b[:])
}

// Day is the box path of the diary file holding entries at t.
func Day(t time.Time) string {
	return path.Join(layout.DiaryDir, t.UTC().Format("2006-01-02")+".jsonl")
}

// DayOf is the box path of the day file for an entry (by its Time, else its id); an entry with neither
// has no day (the box's clock stamps every entry it writes).
func DayOf(e Entry) (string, error) {
	if t, err := time.Parse(time.RFC3339Nano, e.Time); err == nil {
		return Day(t), nil
	}
	if t, ok := idTime(e.ID); ok {
		return Day(t), nil
	}
	return "", errs.E("diary.day", errs.Other, "The diary entry %s has no time.", e.ID)
}

func idTime(id string) (time.Time, bool) {
	if len(id) < 15 {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102T150405", id[:15])
	return t, err == nil
}

// Line is e as one diary line (no Commit), newline included.
func Line(e Entry) []byte {
	e.Commit = ""
	b, _ := json.Marshal(e)
	return append(b, '\n')
}

// Append returns data with e's line added, first ending an unterminated last line.
func Append(data []byte, e Entry) []byte {
	out := make([]byte, 0, len(data)+256)
	out = append(out, data...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, Line(e)...)
}

// Parse reads a day file's lines in order. A line that is not a JSON entry is skipped and counted in
// bad, so one hand-mangled line never hides the rest.
func Parse(data []byte) (entries []Entry, bad int) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil || e.ID == "" {
			bad++
			continue
		}
		entries = append(entries, e)
	}
	return entries, bad
}

// Filter keeps an entry when it returns true; nil keeps all.
type Filter func(Entry) bool

// Recent returns up to n entries, newest first, reading day files from the newest back and stopping
// as soon as it has n: the work is bounded by what it returns, not by the size of the diary.
func Recent(root string, n int, keep Filter) ([]Entry, error) {
	return read(root, n, time.Time{}, keep)
}

// Since returns every entry at or after since that keep accepts, newest first, reading only the day
// files from since's day on: the work is bounded by the time asked for, not by the size of the diary.
func Since(root string, since time.Time, keep Filter) ([]Entry, error) {
	return read(root, 0, since, keep)
}

// read is Recent and Since: up to n entries (0: all) no older than since (zero: any).
func read(root string, n int, since time.Time, keep Filter) ([]Entry, error) {
	days, err := dayFiles(root)
	if err != nil {
		return nil, err
	}
	first := ""
	if !since.IsZero() {
		first = since.UTC().Format("2006-01-02") + ".jsonl"
	}
	var out []Entry
	for i := len(days) - 1; i >= 0 && (n <= 0 || len(out) < n) && days[i] >= first; i-- {
		data, err := layout.ReadFile(root, layout.DiaryDir+"/"+days[i])
		if err != nil && !layout.Skipped(err) {
			return nil, errs.Wrap("diary.read", errs.Other, err, "The diary could not be read")
		}
		// Lines are decoded from the end, only as many as needed.
		for end := len(data); end > 0 && (n <= 0 || len(out) < n); {
			start := bytes.LastIndexByte(data[:end-1], '\n') + 1
			line := bytes.TrimSpace(data[start:end])
			end = start
			var e Entry
			if len(line) == 0 || json.Unmarshal(line, &e) != nil || e.ID == "" {
				continue
			}
			if !since.IsZero() {
				if t, err := time.Parse(time.RFC3339Nano, e.Time); err != nil || t.Before(since) {
					continue
				}
			}
			if keep == nil || keep(e) {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// ErrNotFound is returned by Find for an id the diary does not hold.
var ErrNotFound = errors.New("no diary entry with that id")

// Find returns the entry with id, looking first in the day its id names, then everywhere.
func Find(root, id string) (Entry, error) {
	var tried []string
	if t, ok := idTime(id); ok {
		for _, d := range []time.Time{t, t.Add(-24 * time.Hour), t.Add(24 * time.Hour)} {
			name := path.Base(Day(d))
			tried = append(tried, name)
			if e, ok, err := findIn(root, name, id); err != nil || ok {
				return e, err
			}
		}
	}
	days, err := dayFiles(root)
	if err != nil {
		return Entry{}, err
	}
	for i := len(days) - 1; i >= 0; i-- {
		if contains(tried, days[i]) {
			continue
		}
		if e, ok, err := findIn(root, days[i], id); err != nil || ok {
			return e, err
		}
	}
	return Entry{}, errs.Wrap("diary.find", errs.NotFound, ErrNotFound, "There is no diary entry "+id+"; `box diary` lists them")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func findIn(root, day, id string) (Entry, bool, error) {
	es, err := readDay(root, day)
	if err != nil {
		return Entry{}, false, err
	}
	for _, e := range es {
		if e.ID == id {
			return e, true, nil
		}
	}
	return Entry{}, false, nil
}

func readDay(root, name string) ([]Entry, error) {
	data, err := layout.ReadFile(root, layout.DiaryDir+"/"+name)
	if layout.Skipped(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errs.Wrap("diary.read", errs.Other, err, "The diary could not be read")
	}
	es, _ := Parse(data)
	return es, nil
}

// dayFiles lists the day files oldest first.
func dayFiles(root string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(layout.DiaryDir)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errs.Wrap("diary.read", errs.Other, err, "The diary could not be read")
	}
	var days []string
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() && strings.HasSuffix(n, ".jsonl") && len(n) == len("2006-01-02.jsonl") {
			if _, err := time.Parse("2006-01-02", strings.TrimSuffix(n, ".jsonl")); err == nil {
				days = append(days, n)
			}
		}
	}
	sort.Strings(days)
	return days, nil
}
