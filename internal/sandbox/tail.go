package sandbox

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// TailBytes is how much of a connector's stderr a health report keeps: the end of it.
const TailBytes = 1536

// tail keeps the last bytes written to it. It keeps more than TailBytes so that a key cut in half by the
// window is still whole when scrubbed; the text is cut to size after scrubbing.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailKeep = 64 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailKeep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailKeep:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lastBytes cuts s to its last n bytes, starting at a whole character.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return strings.TrimLeft(s, "\n")
}
