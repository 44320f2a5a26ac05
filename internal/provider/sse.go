package provider

import (
	"bufio"
	"bytes"
	"io"
)

// event is one server-sent event: its name (may be empty) and its data lines joined by "\n".
type event struct {
	name string
	data []byte
}

// maxLine bounds one SSE line; a tool call's arguments arrive in many small deltas, never one huge line.
const maxLine = 4 << 20

// readEvents reads server-sent events as the HTML living standard defines them: lines end in LF, CRLF
// or CR; "event:" names, "data:" lines join; lines starting with ":" are comments (OpenRouter sends
// ": OPENROUTER PROCESSING"); a blank line dispatches. each returns false to stop early; tick runs on
// every line so the caller can reset its silence timer.
func readEvents(r io.Reader, tick func(), each func(event) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	sc.Split(scanLines)
	var ev event
	hasData := false
	for sc.Scan() {
		tick()
		line := sc.Bytes()
		if len(line) == 0 {
			if hasData && !each(ev) {
				return nil
			}
			ev, hasData = event{}, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.name = string(value)
		case "data":
			if hasData {
				ev.data = append(ev.data, '\n')
			}
			ev.data = append(ev.data, value...)
			hasData = true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if hasData { // a last event without its blank line still counts
		each(ev)
	}
	return nil
}

// scanLines splits on LF, CRLF or a lone CR.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	for i, c := range data {
		switch c {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // need one more byte to tell CR from CRLF
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// consume reads events into handle until it says stop or fails.
func consume(r io.Reader, tick func(), handle func(event) (bool, error)) error {
	var failure error
	err := readEvents(r, tick, func(ev event) bool {
		more, err := handle(ev)
		failure = err
		return more && err == nil
	})
	if failure != nil {
		return failure
	}
	return err
}

// maxCalls bounds the tool calls of one reply; a stream asking for more is broken.
const maxCalls = 64
