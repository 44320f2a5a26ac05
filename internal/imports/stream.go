package imports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
)

// A JSON export may be hundreds of megabytes: it is walked token by token (json.Decoder), and only one
// element of its big array is decoded at a time, so memory holds one entry, not the file.

// eachElement calls fn with where the array is (the file, and its key) and each element of the big array in a JSON stream: the stream itself when it
// is an array, else the first of keys at the top of the object that holds an array. found is false
// when there was no such array.
func (r *reader) eachElement(rd io.Reader, where string, keys []string, fn func(at string, i int, raw json.RawMessage) error) (found bool, err error) {
	dec := json.NewDecoder(&squeeze{r: rd})
	tok, err := dec.Token()
	if err != nil {
		return false, r.jsonFail(where, "it is not JSON", err)
	}
	switch tok {
	case json.Delim('['):
		return true, r.elements(dec, where, fn)
	case json.Delim('{'):
	default:
		return false, r.bad(where, "it holds %v where a list or an object was expected", tok)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false, r.jsonFail(where, "it is not JSON", err)
		}
		key, _ := k.(string)
		if contains(keys, key) && !found {
			t, err := dec.Token()
			if err != nil {
				return false, r.jsonFail(where, "it is not JSON", err)
			}
			if t != json.Delim('[') {
				return false, r.bad(where, "%q should be a list", key)
			}
			found = true
			if err := r.elements(dec, where+" "+key, fn); err != nil {
				return true, err
			}
			continue
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return found, r.jsonFail(where, "it is not JSON", err)
		}
	}
	return found, nil
}

// elements reads the elements of an array whose '[' was just read, and its ']'.
func (r *reader) elements(dec *json.Decoder, where string, fn func(at string, i int, raw json.RawMessage) error) error {
	for i := 0; dec.More(); i++ {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return r.jsonFail(fmt.Sprintf("%s entry %d", where, i+1), "it is not JSON", err)
		}
		if err := fn(where, i, raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return r.jsonFail(where, "the list is not closed", err)
	}
	return nil
}

// jsonFail is the error for a decoding or reading failure: a limit the stream hit is its own error; anything else
// is malformed input.
func (r *reader) jsonFail(where, what string, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return e
	}
	return r.bad(where, "%s (%v)", what, jsonErr(err))
}

// squeeze folds each run of JSON white space outside strings to one space as the stream goes by:
// json.Decoder keeps the white space it skips in its buffer and rescans it, so a file of mostly blanks
// would grow memory and time without bound; squeezed, it reads like any other.
type squeeze struct {
	r        io.Reader
	inString bool
	escaped  bool
	blank    bool
}

func (s *squeeze) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		w := 0
		for _, c := range p[:n] {
			switch {
			case s.inString:
				if s.escaped {
					s.escaped = false
				} else if c == '\\' {
					s.escaped = true
				} else if c == '"' {
					s.inString = false
				}
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				if s.blank {
					continue
				}
				s.blank = true
				p[w] = ' '
				w++
				continue
			case c == '"':
				s.inString = true
			}
			s.blank = false
			p[w] = c
			w++
		}
		if w > 0 || err != nil || n == 0 {
			return w, err
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// parseTime reads the timestamps exports use: RFC 3339 with or without a zone (no zone means UTC), a
// date, or Unix seconds (a number, possibly fractional). Zero when absent or unreadable.
func parseTime(v any) time.Time {
	switch t := v.(type) {
	case float64:
		if t <= 0 {
			return time.Time{}
		}
		sec := int64(t)
		return time.Unix(sec, int64((t-float64(sec))*1e9)).UTC()
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return time.Time{}
		}
		return parseTime(f)
	case string:
		s := strings.TrimSpace(t)
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
			if tm, err := time.Parse(layout, s); err == nil {
				return tm
			}
		}
	}
	return time.Time{}
}
