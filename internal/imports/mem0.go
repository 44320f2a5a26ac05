package imports

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// mem0 and OpenMemory hand out memories as JSON: mem0's get_all is a list of memories (v1.0) or an
// object whose "results" is that list (v1.1); OpenMemory's backup is a zip whose memories.json holds a
// "memories" list. A memory has an id, its text ("memory" in mem0, "content" in OpenMemory), a user,
// created_at/updated_at and metadata. Each becomes one line dated by its own time (updated_at, else
// created_at); a memory OpenMemory marks deleted or archived is left out (reported).

type mem0Memory struct {
	ID        json.RawMessage `json:"id"`
	Memory    *string         `json:"memory"`
	Content   *string         `json:"content"`
	Text      *string         `json:"text"`
	UserID    string          `json:"user_id"`
	State     string          `json:"state"`
	CreatedAt any             `json:"created_at"`
	UpdatedAt any             `json:"updated_at"`
}

func (r *reader) mem0() error {
	rd, name, done, err := r.mem0File()
	if err != nil {
		return err
	}
	defer done()
	found, err := r.eachElement(rd, name, []string{"results", "memories"}, func(at string, i int, raw json.RawMessage) error {
		where := fmt.Sprintf("%s entry %d", at, i+1)
		var m mem0Memory
		if err := json.Unmarshal(raw, &m); err != nil {
			return r.bad(where, "a memory is an object with an id and its text (%v)", jsonErr(err))
		}
		id := strings.Trim(string(m.ID), `"`)
		text := first(m.Memory, m.Content, m.Text)
		if id == "" || id == "null" || text == nil {
			return r.bad(where, "a memory needs an id and its text (memory or content)")
		}
		switch strings.ToLower(m.State) {
		case "deleted", "archived":
			r.skip(where, "the memory is marked %s", strings.ToLower(m.State))
			return nil
		}
		when := parseTime(m.UpdatedAt)
		if when.IsZero() {
			when = parseTime(m.CreatedAt)
		}
		l := Line{Text: *text, Time: when, File: name, ID: id, Where: where}
		if m.UserID != "" {
			l.ID = id + " (user " + m.UserID + ")"
			l.Key = id
		}
		return r.line(l)
	})
	if err == nil && !found {
		return r.bad(name, "there is no list of memories in it (a list, or \"results\" or \"memories\")")
	}
	return err
}

// mem0File opens the JSON file, or memories.json inside an OpenMemory backup zip.
func (r *reader) mem0File() (io.Reader, string, func(), error) {
	fi, err := os.Stat(r.src.Path)
	if err == nil && !fi.IsDir() && !isZip(r.src.Path) {
		f, err := r.openFile()
		if err != nil {
			return nil, "", nil, err
		}
		return f, r.src.Name, func() { f.Close() }, nil
	}
	a, err := r.openArchive()
	if err != nil {
		return nil, "", nil, err
	}
	p := a.find("memories.json")
	if p == "" {
		_ = a.Close() // read only
		return nil, "", nil, r.bad(r.src.Name, "it holds no memories.json")
	}
	f, err := a.open(p)
	if err != nil {
		_ = a.Close() // read only
		return nil, "", nil, err
	}
	return f, p, func() { _ = f.Close(); _ = a.Close() }, nil // read only
}

// isZip reports a file that starts like a zip archive.
func isZip(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }() // read only
	var b [4]byte
	n, _ := io.ReadFull(f, b[:])
	return n == 4 && string(b[:]) == "PK\x03\x04"
}

func first(ss ...*string) *string {
	for _, s := range ss {
		if s != nil {
			return s
		}
	}
	return nil
}
