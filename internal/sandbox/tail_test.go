package sandbox

import (
	"strings"
	"testing"
)

func TestTailLog(t *testing.T) {
	cases := []struct {
		name, stderr, want string
		memory             bool
	}{
		{"plain", "line 1\nline 2\n", "line 1\nline 2\n", false},
		{"out of memory", "my log\nfatal error: runtime: out of memory\n\nruntime stack:\nruntime.throw(…)\n", "my log\nfatal error: runtime: out of memory\n", true},
		{"out of arena metadata", "fatal error: out of memory allocating heap arena metadata\n\nruntime stack:\n", "fatal error: out of memory allocating heap arena metadata\n", true},
		{"fault in the collector", "SIGSEGV: segmentation violation\nPC=0x43a5fd m=0\n\ngoroutine 0 …\n", "SIGSEGV: segmentation violation\n", true},
		{"a log that mentions it", "ctx said: fatal error: runtime: out of memory\n", "ctx said: fatal error: runtime: out of memory\n", false},
		{"a goja panic", "panic: runtime error: index out of range\n\ngoroutine 1 …\n", "panic: runtime error: index out of range\n", false},
	}
	for _, c := range cases {
		tl := &tail{}
		tl.Write([]byte(c.stderr))
		if got := tl.Log(); got != c.want {
			t.Errorf("%s: Log = %q, want %q", c.name, got, c.want)
		}
		if got := diedOfMemory(tl.Head()); got != c.memory {
			t.Errorf("%s: diedOfMemory = %v", c.name, got)
		}
	}
	// A dump longer than the window still yields its first line, from the head.
	tl := &tail{}
	tl.Write([]byte("log\nfatal error: runtime: out of memory\n" + strings.Repeat("goroutine dump\n", 20000)))
	if got := tl.Log(); got != "log\nfatal error: runtime: out of memory\n" {
		t.Errorf("long dump: %q", got[:min(100, len(got))])
	}
	if got := lastBytes("ééé", 3); got != "é" {
		t.Errorf("lastBytes cut a character: %q", got)
	}
}
