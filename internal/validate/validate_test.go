package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/egress"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/ref"
	"github.com/boxmem/box/internal/usage"
)

func newBox(tb testing.TB) string {
	tb.Helper()
	b, err := box.Init(context.Background(), filepath.Join(tb.TempDir(), "box"), box.InitOptions{HookBinary: "true", Files: map[string][]byte{
		// The built-in seeds of these two have an unquoted ": " in their description (see cli/init.go).
		"/_config/interface/dashboard.card": []byte("---\ntitle: Dashboard\ndescription: \"Today: what waits.\"\n---\n# Dashboard\n"),
		"/_config/settings.card":            []byte("---\ntitle: Settings\ndescription: \"How the box is set up: brain, safety.\"\n---\nSettings.\n"),
	}})
	if err != nil {
		tb.Fatal(err)
	}
	b.Close()
	return b.Root
}

func write(tb testing.TB, root, rel, data string) {
	tb.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func gitIn(tb testing.TB, root string, args ...string) {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func codes(fs []finding.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s:%d:%s:%s", f.Path, f.Line, f.Severity, f.Code))
	}
	return strings.Join(out, " ")
}

// Every bad input is a finding with the file (and line where there is one).
func TestBadInput(t *testing.T) {
	root := newBox(t)
	write(t, root, "_content/docs/target.md", "---\ntitle: T\n---\n")
	v := New(root, Options{})
	for _, c := range []struct {
		name, path, data, want string
	}{
		{"malformed YAML", "/_content/docs/a.md", "---\ntitle: ok\nkind: [x\n---\n", "/_content/docs/a.md:3:error:invalid-card"},
		{"type from name", "/_content/docs/Foo.Bar.card", "---\ntitle: x\n---\n", "/_content/docs/Foo.Bar.card:0:error:invalid-card"},
		{"type key mismatch", "/_content/docs/Leo.note.card", "---\ntype: todo\n---\n", "/_content/docs/Leo.note.card:2:error:invalid-card"},
		{"unknown card type", "/_content/docs/x.gizmo.card", "---\ntitle: x\n---\n", "/_content/docs/x.gizmo.card:1:error:unknown-type"},
		{"NUL byte", "/_content/docs/a.md", "---\ntitle: a\n---\nx\x00y\n", "/_content/docs/a.md:4:error:invalid-card"},
		{"invalid UTF-8", "/_content/docs/a.md", "---\ntitle: \xff\n---\n", "/_content/docs/a.md:2:error:invalid-card"},
		{"over 1 MiB", "/_content/docs/a.md", strings.Repeat("x", 1<<20+1), "/_content/docs/a.md:0:error:too-large"},
		{"dot-dot ref", "/_content/docs/a.md", "---\ntitle: a\n---\n[x](../../../etc/passwd)\n", "/_content/docs/a.md:4:warning:bad-ref"},
		{"broken ref", "/_content/docs/a.md", "---\ntitle: a\nref: /_content/nope.md\n---\n", "/_content/docs/a.md:3:warning:broken-ref"},
		{"reserved name", "/_content/x/_bookkeeping/a.md", "---\ntitle: a\n---\n", "/_content/x/_bookkeeping:0:error:reserved-name"},
		{"undefined tag", "/_content/todos/a.todo.card", "---\ntitle: a\n---\n{% chart /%}\n", "/_content/todos/a.todo.card:4:warning:undefined-tag"},
		{"body on a type without one", "/_config/switches.card", "---\nchange: just-do-it\nsend: ask-me\nshare: ask-me\naccess: ask-me\ndelete: ask-me\n---\nhello\n", "body-not-allowed"},
		{"clean", "/_content/docs/a.md", "---\ntitle: a\n---\n[t](/_content/docs/target.md)\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := codes(v.Data(c.path, []byte(c.data), ref.NewResolver(root)))
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestWrites(t *testing.T) {
	root := newBox(t)
	fs := New(root, Options{}).Writes(root, []string{"/_content/a.md", "/_content/b.md", "/_content/gone.md", "/_content/pic.png"}, map[string][]byte{
		"/_content/a.md":    []byte("---\ntitle: [x\n---\n"),
		"/_content/b.md":    []byte("---\ntitle: b\n---\n[broken](/nowhere.md)\n"),
		"/_content/gone.md": nil,
		"/_content/pic.png": []byte("\x89PNG\x00"),
	})
	if got := codes(fs); got != "/_content/a.md:2:error:invalid-card" {
		t.Errorf("Writes = %q: want only the malformed card, refs unchecked", got)
	}
	// The same error, already in the file on disk, does not refuse a change to it; a new one does.
	p := filepath.Join(root, "_content", "a.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("---\ntitle: [x\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := New(root, Options{})
	if fs := v.Writes(root, []string{"/_content/a.md"}, map[string][]byte{"/_content/a.md": []byte("---\ntitle: [x\n---\nmore text\n")}); finding.HasErrors(fs) {
		t.Errorf("an error the file already had refused the change: %v", fs)
	}
	big := append([]byte("---\ntitle: [x\n---\n"), bytes.Repeat([]byte("a"), 1<<20)...)
	if fs := v.Writes(root, []string{"/_content/a.md"}, map[string][]byte{"/_content/a.md": big}); codes(fs) != "/_content/a.md:0:error:too-large" {
		t.Errorf("a change that breaks the file in a new way: %q, want it refused for that", codes(fs))
	}
}

// --staged reads the index, not the working tree, in one git process.
func TestStagedReadsIndex(t *testing.T) {
	root := newBox(t)
	write(t, root, "_content/a.md", "---\ntitle: [x\n---\n")
	write(t, root, "_content/with space.md", "---\ntitle: fine\n---\n")
	gitIn(t, root, "add", "-A")
	write(t, root, "_content/a.md", "---\ntitle: fixed\n---\n")
	res, err := New(root, Options{}).Staged(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := codes(res.Findings); got != "/_content/a.md:2:error:invalid-card" || res.Files != 2 {
		t.Errorf("Staged = %q, %d files", got, res.Files)
	}
}

// A staged symlink is checked by its staged target: one leading out of the box is an error for --staged
// and pre-commit alike, whatever the working tree holds since; one inside is fine.
func TestStagedSymlinks(t *testing.T) {
	root := newBox(t)
	write(t, root, "_content/in.md", "---\ntitle: in\n---\n")
	for name, target := range map[string]string{"_content/out.md": "/etc/passwd", "_content/up.md": "../../x.md", "_content/ok.md": "in.md"} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, root, "add", "-A")
	if err := os.Remove(filepath.Join(root, "_content", "out.md")); err != nil { // the working tree moves on
		t.Fatal(err)
	}
	write(t, root, "_content/out.md", "---\ntitle: now a file\n---\n")
	v := New(root, Options{})
	for name, check := range map[string]func(context.Context) (Result, error){"staged": v.Staged, "pre-commit": v.PreCommit} {
		res, err := check(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := codes(res.Findings), "/_content/out.md:0:error:symlink-out /_content/up.md:0:error:symlink-out"; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// A staged symlink's target is followed as the kernel follows it, each link where it stands and then
// "..", not cleaned as text first: sub/../x.md through sub, a link to the box's root, climbs out of the
// box. deep/../../../x.md through deep, a link to a folder two down, stays in it as the kernel reads it
// but not as text, and is refused too.
func TestStagedSymlinkFollowsLinksBeforeDotDot(t *testing.T) {
	root := newBox(t)
	write(t, root, "_content/a/b/c.md", "---\ntitle: c\n---\n")
	for name, target := range map[string]string{"_content/sub": "..", "_content/sneak.md": "sub/../x.md",
		"_content/deep": "a/b", "_content/back.md": "deep/../../../x.md"} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, root, "add", "-A")
	res, err := New(root, Options{}).Staged(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// back.md stays in the box as the kernel follows it, but not as text: refused, since a folder on
	// disk may be a link the commit does not hold (below).
	if got, want := codes(res.Findings), "/_content/back.md:0:error:symlink-out /_content/sneak.md:0:error:symlink-out"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// A staged link that leaves the box in the commit is refused though a folder on disk, not staged, now
// leads its ".." elsewhere.
func TestStagedSymlinkIsReadAsTextToo(t *testing.T) {
	root := newBox(t)
	if err := os.MkdirAll(filepath.Join(root, "_content", "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../outside.md", filepath.Join(root, "_content", "a", "b", "esc.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root+"/_content/a/b/../../../../outside.md", filepath.Join(root, "_content", "a", "b", "abs.md")); err != nil {
		t.Fatal(err)
	}
	gitIn(t, root, "add", "-A")
	write(t, root, "_content/x/y/z/keep.md", "---\ntitle: k\n---\n")
	if err := os.Rename(filepath.Join(root, "_content", "a"), filepath.Join(root, "_content", "a.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("x/y/z", filepath.Join(root, "_content", "a")); err != nil {
		t.Fatal(err)
	}
	for name, check := range map[string]func(context.Context) (Result, error){
		"staged": New(root, Options{}).Staged, "pre-commit": New(root, Options{}).PreCommit} {
		res, err := check(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := codes(res.Findings), "/_content/a/b/abs.md:0:error:symlink-out /_content/a/b/esc.md:0:error:symlink-out"; !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// Pre-commit walks the box only for a delete or rename: a broken unstaged card elsewhere is silent.
func TestPreCommitNoWalk(t *testing.T) {
	root := newBox(t)
	write(t, root, "_content/old.md", "---\ntitle: [x\n---\n[[gone]]\n")
	write(t, root, "_content/new.md", "---\ntitle: new\n---\n")
	gitIn(t, root, "add", "_content/new.md")
	v := New(root, Options{})
	res, err := v.PreCommit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 {
		t.Errorf("clean staged set: %q", codes(res.Findings))
	}
	write(t, root, "_content/gone.md", "---\ntitle: gone\n---\n")
	write(t, root, "_content/linker.md", "---\ntitle: l\n---\n[[gone]] [g](/_content/gone.md)\n")
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-qm", "x", "--no-verify")
	gitIn(t, root, "rm", "-q", "_content/gone.md")
	res, err = v.PreCommit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := "/_content/linker.md:4:warning:dangling-ref /_content/linker.md:4:warning:dangling-ref /_content/old.md:4:warning:dangling-ref"
	if got := codes(res.Findings); got != want {
		t.Errorf("after a delete: %q\nwant %q", got, want)
	}
}

func TestAttachmentFiles(t *testing.T) {
	got := AttachmentFiles([]byte("---\nfiles:\n  - /_content/a.pdf\n  - _content/b.bin\n  - ../../etc/passwd\n---\n"))
	if strings.Join(got, ",") != "/_content/a.pdf,/_content/b.bin" {
		t.Errorf("AttachmentFiles = %q", got)
	}
}

// The URL pass: HEAD, GET on 405, timeouts, bounded concurrency, the cache.
func TestURLs(t *testing.T) {
	var inFlight, most atomic.Int32
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		hits[r.Method+" "+r.URL.Path]++
		if r.Header.Get("Authorization") != "" {
			hits["credentials sent"]++
		}
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		switch {
		case r.URL.Path == "/slow":
			// Answers only after the checker gave up: a timeout on any machine, however loaded.
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
		case r.URL.Path == "/nohead" && r.Method == http.MethodHead:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case strings.HasPrefix(r.URL.Path, "/dead"):
			w.WriteHeader(http.StatusGone)
		}
	}))
	defer srv.Close()
	root := newBox(t)
	// links.example is a public address (the egress rule lets it be asked) that reaches the test server;
	// inside.example names the cloud metadata address, and a link to the loopback is given by number:
	// neither is asked.
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	site := "http://links.example:" + port
	// The timeouts are far from the 20 ms the live links take, so a loaded machine never misses them.
	client := egress.New(egress.Options{Timeout: 2 * time.Second, TestNet: &egress.TestNet{
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if host == "inside.example" {
				return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		},
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, strings.TrimPrefix(srv.URL, "http://"))
		},
	}})
	var body strings.Builder
	for i := range 8 {
		fmt.Fprintf(&body, "- %s/ok%d\n", site, i)
	}
	fmt.Fprintf(&body, "- %[1]s/slow\n- %[1]s/nohead\n- %[1]s/dead\n- %[2]s/admin/reboot\n- http://inside.example/latest/meta-data\n", site, srv.URL)
	// Two dead links that carry a token where egress never repeats one: a user name, a path with an '@'.
	fmt.Fprintf(&body, "- http://ghp_Secret0Token@links.example:%[1]s/dead/a\n- %[2]s/dead/ghp_Secret1Token@x\n", port, site)
	write(t, root, "_content/links.md", "---\ntitle: l\n---\n"+body.String())
	v := New(root, Options{Timeout: 2 * time.Second, Concurrency: 3, Egress: client})
	res, err := v.URLs(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	got := codes(res.Findings)
	if got != "/_content/links.md:12:warning:dead-url /_content/links.md:14:warning:dead-url /_content/links.md:15:warning:unchecked-url /_content/links.md:16:warning:unchecked-url /_content/links.md:17:warning:dead-url /_content/links.md:18:warning:dead-url" {
		t.Errorf("URLs = %q %v", got, res.Findings)
	}
	for _, f := range res.Findings {
		if strings.Contains(f.Message, "Secret") || (f.Line >= 17 && !strings.Contains(f.Message, "links.example:"+port)) {
			t.Errorf("a finding repeats a token or names no host: %s", f.Message)
		}
	}
	if hits["credentials sent"] != 0 {
		t.Errorf("a link's user name was sent as a credential %d times", hits["credentials sent"])
	}
	if hits["GET /admin/reboot"]+hits["HEAD /admin/reboot"]+hits["HEAD /latest/meta-data"] != 0 {
		t.Errorf("a private address was asked: %v", hits)
	}
	if !strings.Contains(res.Findings[0].Message+res.Findings[1].Message, "timed out") {
		t.Errorf("no timeout verdict: %v", res.Findings)
	}
	if most.Load() > 3 {
		t.Errorf("%d requests at once, want at most 3", most.Load())
	}
	count := func(key string) int {
		mu.Lock()
		defer mu.Unlock()
		total := 0
		for k, n := range hits {
			if key == "" || k == key {
				total += n
			}
		}
		return total
	}
	if count("GET /nohead") != 1 {
		t.Errorf("no GET fallback after 405")
	}
	// A second full run within a week asks nothing: the cache answers.
	total := count("")
	if _, err := v.URLs(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if after := count(""); after != total {
		t.Errorf("the cache was not used: %d requests before, %d after", total, after)
	}
}

func TestParseHook(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"claude write", `{"tool_name":"Write","tool_input":{"file_path":"/b/x.md"},"cwd":"/b"}`, "/b/x.md"},
		{"claude relative", `{"tool_name":"Edit","tool_input":{"file_path":"x.md"},"cwd":"/b"}`, "/b/x.md"},
		{"default cwd", `{"tool_name":"Edit","tool_input":{"file_path":"x.md"}}`, "/cwd/x.md"},
		{"codex command", `{"tool_name":"apply_patch","tool_input":{"command":["apply_patch","*** Begin Patch\n*** Add File: a.md\n+x\n*** Update File: d/b.md\n*** Delete File: c.md\n*** End Patch"]},"cwd":"/b"}`, "/b/a.md /b/d/b.md -/b/c.md"},
		{"codex move", `{"tool_name":"apply_patch","tool_input":{"input":"*** Update File: a.md\r\n*** Move to: b.md\r\n"},"cwd":"/b"}`, "-/b/a.md /b/b.md"},
		{"no file", `{"tool_name":"Bash","tool_input":{"command":"ls"}}`, ""},
		{"null input", `{"tool_name":"Bash","tool_input":null}`, ""},
		{"garbage", `{"tool_input":`, "error"},
		{"relative cwd", `{"tool_name":"Edit","tool_input":{"file_path":"x.md"},"cwd":"b"}`, "error"},
		{"not an object", `[1,2]`, "error"},
		{"empty", ``, "error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParseHook([]byte(c.in), "/cwd")
			got := ""
			if err != nil {
				got = "error"
			} else {
				var parts []string
				for _, e := range p.Edits {
					s := filepath.ToSlash(e.Path)
					if e.Deleted {
						s = "-" + s
					}
					parts = append(parts, s)
				}
				got = strings.Join(parts, " ")
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// A path through a link is read both ways: as the kernel follows it (link/.. climbs from the link's
// target) and as a tool that cleans the path first writes it (link/.. is the link's folder).
func TestParseHookReadsBothWays(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(tmp, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tmp, "a", "b"), filepath.Join(tmp, "l")); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"tool_name": "Write", "cwd": tmp, "tool_input": map[string]any{"file_path": "l/../x.md"}})
	p, err := ParseHook(in, "/cwd")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Edits) != 1 || p.Edits[0].Path != filepath.Join(tmp, "a", "x.md") || p.Edits[0].Lexical != filepath.Join(tmp, "x.md") {
		t.Fatalf("got %+v, want the kernel's %s and the text's %s", p.Edits, filepath.Join(tmp, "a", "x.md"), filepath.Join(tmp, "x.md"))
	}
}

func FuzzHookPayload(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseHook(data, "/cwd")
		if err != nil {
			return
		}
		for _, e := range p.Edits {
			if e.Path == "" || !filepath.IsAbs(e.Path) || !filepath.IsAbs(e.Lexical) {
				t.Fatalf("edit path %q (lexically %q) is empty or relative", e.Path, e.Lexical)
			}
		}
		// Hook must never fail on a parsed payload, whatever the paths.
		if _, err := Hook(context.Background(), p, func(string) (string, error) { return "", os.ErrNotExist }); err != nil {
			t.Fatal(err)
		}
	})
}

// A named path through a linked folder, or a linked card, that leads out of the box is a finding; the
// file outside is never read (its malformed frontmatter would be reported with its line if it were).
func TestNamedPathsStayInTheBox(t *testing.T) {
	root := newBox(t)
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "secret.md"), []byte("---\ntitle: [the owner's secret\n---\n"), 0o644)
	os.Symlink(out, filepath.Join(root, "_content", "linked"))
	os.Symlink(filepath.Join(out, "secret.md"), filepath.Join(root, "_content", "leak.md"))
	v := New(root, Options{})
	for _, arg := range []string{"_content/linked/secret.md", "/_content/linked/secret.md", filepath.Join(root, "_content", "linked", "secret.md"),
		"_content/leak.md", "_content/linked"} {
		res, err := v.Files(context.Background(), root, []string{arg})
		if err != nil {
			t.Fatal(err)
		}
		// A host path is resolved first and is outside the box; a box path leads out through the link.
		if got := codes(res.Findings); !strings.Contains(got, ":error:symlink-out") && !strings.Contains(got, ":error:outside-box") || strings.Contains(got, "invalid-card") {
			t.Errorf("validate %s: %s", arg, got)
		}
	}
	if data, f := v.read("/_content/linked/secret.md"); f == nil || f.Code != CodeSymlinkOut || len(data) > 0 {
		t.Errorf("read through the linked folder: %q %+v", data, f)
	}
}

// A usage-ledger line the brain leaves out of its totals is named by box validate: file, line, why.
func TestDamagedLedgerLinesAreNamed(t *testing.T) {
	root := newBox(t)
	good := `{"time":"2026-03-05T14:02:00+01:00","turn":"t","provider":"openai","model":"m","tokensIn":1,"tokensOut":1,"cost":0,"costFrom":"unknown"}`
	write(t, root, "_bookkeeping/usage/2026-03.jsonl", good+"\n{\"time\": broken\n")
	res, err := New(root, Options{}).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range res.Findings {
		if f.Code == usage.CodeDamaged {
			found = f.Path == "/_bookkeeping/usage/2026-03.jsonl" && f.Line == 2 && strings.Contains(f.Message, "not a usage line")
		}
	}
	if !found {
		t.Fatalf("findings: %v", res.Findings)
	}
}
