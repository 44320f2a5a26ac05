package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// The parent and the child speak in frames over the child's stdin and stdout: a 4-byte big-endian length,
// then that many bytes of JSON (one message). The child asks (fetch, store) and the parent answers, one
// question at a time; the child ends with done. The parent trusts nothing a frame says.

// Frame size caps: what the parent reads from the child (a result, a request with its body), and what
// the child reads from the parent (the script, a response body: 2 MB of text can take six times that
// as JSON escapes).
const (
	maxFromChild = 4 << 20
	maxToChild   = 16 << 20
)

// message is every frame's shape; op says which fields count.
type message struct {
	Op string `json:"op"` // start, fetch, store, done (child→parent); start, reply (parent→child)

	// start
	Script    string          `json:"script,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	TimeoutMs int64           `json:"timeoutMs,omitempty"`
	MemoryMB  int             `json:"memoryMB,omitempty"`

	// fetch (child→parent) and its reply
	Req *fetchRequest  `json:"req,omitempty"`
	Res *fetchResponse `json:"res,omitempty"`

	// store (child→parent) and its reply
	Action string          `json:"action,omitempty"` // get, set, delete, keys
	Key    string          `json:"key,omitempty"`
	Value  json.RawMessage `json:"value,omitempty"` // a store value, or a done result
	Keys   []string        `json:"keys,omitempty"`

	// reply and done. On done, Error is the connector's own words when its tool threw (outside text, never
	// a sentence of the box's), and Stop names why the child stopped the tool itself: a claim the parent
	// checks against its own evidence before it says a limit was reached.
	Error    string   `json:"error,omitempty"`
	Stop     string   `json:"stop,omitempty"` // stopTime, stopMemory, stopUnsettled, stopNoTools, stopNoTool
	Tools    []string `json:"tools,omitempty"`
	Landlock int      `json:"landlock,omitempty"` // the Landlock ABI the child is held by, 0 for none
}

// Why the child stopped a tool of its own accord (message.Stop).
const (
	stopTime      = "time"
	stopMemory    = "memory"
	stopUnsettled = "unsettled"
	stopNoTools   = "no-tools"
	stopNoTool    = "no-tool"
)

// fetchRequest is what connector code asked of ctx.fetch, placeholders and all.
type fetchRequest struct {
	URL     string      `json:"url"`
	Method  string      `json:"method"`
	Headers [][2]string `json:"headers"`
	Body    *string     `json:"body"`
}

// fetchResponse is what the parent hands back: the site's answer, with keys scrubbed out.
type fetchResponse struct {
	Status     int         `json:"status"`
	StatusText string      `json:"statusText"`
	URL        string      `json:"url"`
	Redirected bool        `json:"redirected"`
	Headers    [][2]string `json:"headers"`
	Body       string      `json:"body"`
}

func writeFrame(w io.Writer, m *message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	buf := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	_, err = w.Write(append(buf, body...))
	return err
}

// readFrame reads one message of at most max bytes; a longer one is refused before it is read.
func readFrame(r io.Reader, max int) (*message, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > uint32(max) {
		return nil, &tooLarge{size, uint32(max)}
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	m := &message{}
	if err := json.Unmarshal(body, m); err != nil {
		return nil, fmt.Errorf("a message that is not JSON: %v", err)
	}
	return m, nil
}

// tooLarge is a frame over its cap, refused before it is read.
type tooLarge struct{ size, max uint32 }

func (e *tooLarge) Error() string {
	return fmt.Sprintf("a message of %d bytes; at most %d", e.size, e.max)
}
