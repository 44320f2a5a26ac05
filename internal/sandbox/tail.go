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
// It also keeps the first bytes, where the Go runtime writes why it died before its stack dump.
type tail struct {
	mu   sync.Mutex
	head []byte
	buf  []byte
}

const (
	tailKeep = 64 << 10
	headKeep = 4 << 10
)

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := headKeep - len(t.head); n > 0 {
		t.head = append(t.head, p[:min(n, len(p))]...)
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailKeep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailKeep:]...)
	}
	return len(p), nil
}

// Head is the first bytes written.
func (t *tail) Head() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head)
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

// Log is what the connector wrote, without the Go runtime's dump when the child crashed (at the memory
// limit): that dump is the box's, not the connector's, and only its first line says anything.
func (t *tail) Log() string {
	head, all := t.Head(), t.String()
	if i := crashAt(all); i >= 0 {
		return all[:i] + firstLine(all[i:]) + "\n"
	}
	if i := crashAt(head); i >= 0 {
		return lastBytes(head[:i], TailBytes/2) + firstLine(head[i:]) + "\n"
	}
	return all
}

// crashMarks start the Go runtime's last words, each at the start of a line.
var crashMarks = []string{"fatal error: ", "SIGSEGV: ", "unexpected fault address ", "panic: "}

// crashAt is where the runtime's last words start in s, or -1.
func crashAt(s string) int {
	at := -1
	for _, m := range crashMarks {
		i := strings.Index(s, m)
		for i > 0 && s[i-1] != '\n' {
			j := strings.Index(s[i+1:], m)
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	return at
}

// diedOfMemory reads the Go runtime's last words: at the data rlimit an allocation fails and the runtime
// either says it is out of memory or faults inside itself (the collector touching what it could not map).
// The child runs no unsafe code of its own, so a fault in the runtime is the rlimit's doing.
func diedOfMemory(head string) bool {
	i := crashAt(head)
	if i < 0 {
		return false
	}
	last := head[i:]
	first := firstLine(last)
	return (strings.HasPrefix(last, "fatal error: ") && strings.Contains(first, "out of memory")) || strings.Contains(first, "cannot allocate memory") ||
		strings.HasPrefix(last, "SIGSEGV: ") || strings.HasPrefix(last, "unexpected fault address ")
}
