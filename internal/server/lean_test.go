package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcptest"
	"github.com/boxmem/box/internal/server"
)

// noteBox is a box of n entity notes, committed, as bench/mcp makes them: note i likes one of ten hobbies
// and lives in one of seven cities, and is named by a unique word.
func noteBox(t testing.TB, n int) string {
	t.Helper()
	a, err := app.Init(context.Background(), t.TempDir(), nil, "true", app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := a.Root
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	hobbies := []string{"gardening", "chess", "climbing", "baking", "cycling", "painting", "sailing", "pottery", "running", "fishing"}
	cities := []string{"Lyon", "Porto", "Leeds", "Bergen", "Graz", "Ghent", "Turin"}
	dir := filepath.Join(root, "_content", "memory", "notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		nm := uniqueWord(i)
		body := fmt.Sprintf("---\ntype: note\nkind: entity\ntitle: %s\ndescription: %s likes %s in %s.\n---\n# %s\n\n## Key facts\n- Likes %s.\n- Lives in %s.\n",
			nm, nm, hobbies[i%len(hobbies)], cities[i%len(cities)], nm, hobbies[i%len(hobbies)], cities[i%len(cities)])
		if err := os.WriteFile(filepath.Join(dir, "entity-"+nm+".md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "_content"}, {"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "--no-verify", "-m", "notes"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return root
}

func uniqueWord(i int) string {
	b := []byte("zoraaaa")
	for k := len(b) - 1; k >= 3; k-- {
		b[k] = byte('a' + i%26)
		i /= 26
	}
	return string(b)
}

// BenchmarkLeanSearch is the server's side of bench/mcp's lean request path: one authenticated tools/call
// memory_search over Streamable HTTP on a box of 10,000 notes, for a query finding one note, none, and
// thousands (10 returned). Profile it with -cpuprofile.
func BenchmarkLeanSearch(b *testing.B) {
	a, err := app.Open(context.Background(), noteBox(b, 10000), app.Options{Mode: app.Serve})
	if err != nil {
		b.Fatal(err)
	}
	for a.Memory.Indexing() {
		time.Sleep(50 * time.Millisecond)
	}
	e := serve(b, a, func(s *server.Server) { s.Rate = -1 })
	_, key := e.key("bench", keys.Caps{Memory: true})
	canned := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"hits\":[]}"}],"structuredContent":{"hits":[]}}}`
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, canned)
	}))
	defer bare.Close()
	for _, q := range []struct{ name, words, base string }{{"bare", "hits", bare.URL}, {"one", uniqueWord(5000), e.base}, {"none", "xylophone", e.base}, {"broad", "likes", e.base}} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_search","arguments":{"words":"` + q.words + `"}}}`
		b.Run(q.name, func(b *testing.B) {
			cpu := cpuTime()
			g0 := goroutinesCreated()
			for b.Loop() {
				req := mcptest.Post(q.base+"/mcp", body)
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"hits"`) {
					b.Fatalf("HTTP %d: %s", resp.StatusCode, data)
				}
			}
			// On a shared machine the process's CPU time (client and server) varies less than the wall clock.
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
			b.ReportMetric(float64(goroutinesCreated()-g0)/float64(b.N), "goroutines/op")
		})
	}
}

func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
