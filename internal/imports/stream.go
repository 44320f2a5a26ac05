package imports

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// A JSON export may be hundreds of megabytes: it is walked token by token (json.Decoder), and only one
// element of its big array is decoded at a time, so memory holds one entry, not the file.

// eachElement calls fn with each element of the big array in a JSON stream: the stream itself when it
// is an array, else the first of keys at the top of the object that holds an array. found is false
// when there was no such array.
func (r *reader) eachElement(rd io.Reader, where string, keys []string, fn func(i int, raw json.RawMessage) error) (found bool, err error) {
	dec := json.NewDecoder(rd)
	tok, err := dec.Token()
	if err != nil {
		return false, r.bad(where, "it is not JSON (%v)", jsonErr(err))
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
			return false, r.bad(where, "it is not JSON (%v)", jsonErr(err))
		}
		key, _ := k.(string)
		if contains(keys, key) && !found {
			t, err := dec.Token()
			if err != nil {
				return false, r.bad(where, "it is not JSON (%v)", jsonErr(err))
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
			return found, r.bad(where, "it is not JSON (%v)", jsonErr(err))
		}
	}
	return found, nil
}

// elements reads the elements of an array whose '[' was just read, and its ']'.
func (r *reader) elements(dec *json.Decoder, where string, fn func(i int, raw json.RawMessage) error) error {
	for i := 0; dec.More(); i++ {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return r.bad(fmt.Sprintf("%s entry %d", where, i+1), "it is not JSON (%v)", jsonErr(err))
		}
		if err := fn(i, raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return r.bad(where, "the list is not closed (%v)", jsonErr(err))
	}
	return nil
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
