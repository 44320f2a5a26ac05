package server_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcp"
	"github.com/boxmem/box/internal/server"
)

// TestWriteThatMissesItsDeadline: a memory_remember over /mcp that cannot finish within the request's
// deadline (another writer holds the box lock throughout) is answered in time with a sentence saying it
// was stopped, and leaves nothing: no commit, no line, no spooled request that a later writer would
// apply. Both the direct path and the SDK's session answer so.
func TestWriteThatMissesItsDeadline(t *testing.T) {
	a, err := app.Init(context.Background(), t.TempDir(), nil, "true", app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const limit = 1500 * time.Millisecond
	short := func(s *server.Server) { s.MCPWriteTimeout = limit }
	direct := serve(t, a, short)
	viaSDK := serveAlso(t, a, short, server.ThroughSDK)
	_, key := direct.key("Writer", keys.Caps{Memory: true})
	remember := func(e *env, text string) (time.Duration, string, bool) {
		t.Helper()
		start := time.Now()
		resp := e.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_remember","arguments":{"text":"`+text+`"}}}`,
			map[string]string{"Authorization": "Bearer " + key, "Mcp-Protocol-Version": "2025-11-25"})
		var body struct {
			Result struct {
				IsError bool `json:"isError"`
				Content []struct{ Text string }
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 || len(body.Result.Content) == 0 {
			t.Fatalf("HTTP %d: %v %+v", resp.StatusCode, err, body)
		}
		return time.Since(start), body.Result.Content[0].Text, body.Result.IsError
	}
	commits := func() string {
		out, err := exec.Command("git", "-C", a.Root, "rev-list", "--count", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	holds := func(text string) bool {
		found := false
		filepath.WalkDir(filepath.Join(a.Root, "_content"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				found = found || strings.Contains(string(b), text)
			}
			return nil
		})
		return found
	}

	lock, err := os.OpenFile(filepath.Join(a.Root, ".box", "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	before := commits()
	for i, e := range []*env{direct, viaSDK} {
		text := []string{"Leo starts judo on Mondays.", "Mira moved the piano lesson to Fridays."}[i]
		took, answer, isErr := remember(e, text)
		if !isErr || answer != mcp.TooLongSentence {
			t.Errorf("a write past its deadline answered isError=%v %q", isErr, answer)
		}
		// The answer came while the lock is still held, so the write did not wait for it; the bound is
		// loose because a client's own clock on a loaded machine adds to the server's deadline.
		if took >= limit+3*time.Second {
			t.Errorf("the answer took %v, long past the %v deadline", took, limit)
		}
	}
	spooled, _ := os.ReadDir(filepath.Join(a.Root, ".box", "spool"))
	for _, s := range spooled {
		if !strings.HasSuffix(s.Name(), ".tmp") {
			t.Errorf("a stopped write left %s in the spool", s.Name())
		}
	}
	if err := lock.Close(); err != nil { // the other writer is done
		t.Fatal(err)
	}
	if _, answer, isErr := remember(direct, "Ana bakes bread on Sundays."); isErr {
		t.Fatalf("a write after the lock was freed: %s", answer)
	}
	if got := commits(); got == before {
		t.Fatal("the later write made no commit")
	}
	for _, text := range []string{"Leo starts judo", "Mira moved the piano"} {
		if holds(text) {
			t.Errorf("a write stopped at its deadline was saved after all: %q", text)
		}
	}
	if !holds("Ana bakes bread") {
		t.Error("the later write is not in the box")
	}
	if out, err := exec.Command("git", "-C", a.Root, "log", "--all", "-p").Output(); err != nil || strings.Contains(string(out), "judo") {
		t.Errorf("git history holds the stopped write (%v)", err)
	}
}
