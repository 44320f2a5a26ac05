package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/goldenfile"
	"github.com/boxmem/box/internal/testbin"
)

// boxBin is the box binary built once for the tests that need a real process (git hooks).
var boxBin string

func TestMain(m *testing.M) { testbin.Main(m, &boxBin) }

// run is one in-process CLI run.
type run struct {
	args  []string
	stdin string
	cwd   string
}

type ran struct {
	stdout, stderr string
	code           int
}

func runCLI(t *testing.T, r run) ran {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{}
	code := Main(r.args, IO{In: strings.NewReader(r.stdin), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }, Cwd: r.cwd})
	return ran{out.String(), errb.String(), code}
}

// transcript renders runs for a golden file, with the box root written $BOX.
type transcript struct {
	b    strings.Builder
	root string
	srv  string
	out  string // a folder outside the box, written $OUT
}

func (tr *transcript) add(r run, got ran) {
	norm := func(s string) string {
		if tr.srv != "" {
			s = strings.ReplaceAll(s, tr.srv, "$SERVER")
		}
		if tr.root != "" {
			s = strings.ReplaceAll(s, tr.root, "$BOX")
		}
		if tr.out != "" {
			s = strings.ReplaceAll(s, tr.out, "$OUT")
		}
		return s
	}
	fmt.Fprintf(&tr.b, "$ box %s\n", norm(strings.Join(r.args, " ")))
	if r.stdin != "" {
		fmt.Fprintf(&tr.b, "-- stdin --\n%s\n", strings.TrimRight(norm(r.stdin), "\n"))
	}
	fmt.Fprintf(&tr.b, "-- exit %d --\n-- stdout --\n%s-- stderr --\n%s\n", got.code, norm(got.stdout), norm(got.stderr))
}

func (tr *transcript) text(s string) { tr.b.WriteString(s) }

func golden(t *testing.T, name string, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "validate", "golden", name+".txt"), []byte(got))
}

// initBox makes a real box with `box init` run in-process and returns its root.
func initBox(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "box")
	if got := runCLI(t, run{args: []string{"init", dir}, cwd: t.TempDir()}); got.code != 0 {
		t.Fatalf("box init: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// bareBox is a folder with only a box marker: enough for the modes that need no git.
func bareBox(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, ".box/box.json", `{"shapeVersion": 1, "id": "test", "created": "2026-01-01T00:00:00Z"}`+"\n")
	return root
}

func write(t *testing.T, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// overlay copies a testdata tree into root.
func overlay(t *testing.T, root, src string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		write(t, root, filepath.ToSlash(rel), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// gitIn runs git in a test box as a person would: hooks on, no user config.
func gitIn(t *testing.T, root string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustGit(t *testing.T, root string, args ...string) {
	t.Helper()
	if out, err := gitIn(t, root, args...); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestInitThenValidateClean(t *testing.T) {
	root := initBox(t)
	got := runCLI(t, run{args: []string{"validate", "--all", "--json", "--box", root}, cwd: root})
	var res struct {
		Findings []json.RawMessage `json:"findings"`
		Errors   int               `json:"errors"`
		Warnings int               `json:"warnings"`
		Files    int               `json:"files"`
	}
	if err := json.Unmarshal([]byte(got.stdout), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got.stdout)
	}
	if got.code != 0 || res.Errors != 0 || res.Warnings != 0 || res.Files == 0 {
		t.Fatalf("a new box is not clean: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
	// Nothing is uncommitted and status agrees.
	st := runCLI(t, run{args: []string{"status", "--json"}, cwd: root})
	if st.code != 0 || !strings.Contains(st.stdout, `"uncommitted": []`) {
		t.Fatalf("status after init: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
}

func TestInitGolden(t *testing.T) {
	parent, _ := filepath.EvalSymlinks(t.TempDir())
	tr := &transcript{root: parent}
	dir := filepath.Join(parent, "mybox")
	for _, r := range []run{
		{args: []string{"init", "mybox"}, cwd: parent},
		{args: []string{"init", "mybox"}, cwd: parent},
		{args: []string{"init"}, cwd: dir},
	} {
		tr.add(r, runCLI(t, r))
	}
	write(t, parent, "notabox/file.txt", "x")
	r := run{args: []string{"init", "notabox", "--json"}, cwd: parent}
	tr.add(r, runCLI(t, r))
	r = run{args: []string{"validate"}, cwd: filepath.Join(dir, "_content")}
	tr.add(r, runCLI(t, r))
	golden(t, "init", tr.b.String())
}

// allFixture is a box with one of every whole-box problem.
func allFixture(t *testing.T) string {
	root := initBox(t)
	overlay(t, root, filepath.Join("testdata", "validate", "all"))
	write(t, root, "_content/docs/plan.md", "---\ntitle: plan\n---\nThe other plan.\n")           // collides with Plan.md
	write(t, root, "_tmp/deep/ignored.card", "---\ntitle: [broken\n---\n")                        // _tmp is never checked
	write(t, root, "_content/docs/_tmp/ignored.card", "---\ntitle: [broken\n---\n")               // nor a nested _tmp
	write(t, root, "_content/docs/nul.md", "---\ntitle: Nul\n---\nA\x00B\n")                      // NUL byte
	write(t, root, "_content/docs/latin1.md", "---\ntitle: Caf\xe9\n---\n")                       // invalid UTF-8
	write(t, root, "_content/docs/huge.md", "---\ntitle: Huge\n---\n"+strings.Repeat("x", 1<<20)) // over 1 MiB
	write(t, root, "_content/a/_publish", "a file named like an area")
	if err := os.Symlink("/etc/hostname", filepath.Join(root, "_content", "docs", "out.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "_content", "docs", "Plan.md"), filepath.Join(root, "_content", "docs", "in.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "_config", "interface", "browse.card")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestValidateAllGolden(t *testing.T) {
	root := allFixture(t)
	tr := &transcript{root: root}
	for _, r := range []run{
		{args: []string{"validate"}, cwd: root},
		{args: []string{"validate", "--all", "--json"}, cwd: filepath.Join(root, "_content", "docs")},
	} {
		tr.add(r, runCLI(t, r))
	}
	golden(t, "all", tr.b.String())
}

func TestValidatePathsGolden(t *testing.T) {
	root := allFixture(t)
	tr := &transcript{root: root}
	docs := filepath.Join(root, "_content", "docs")
	for _, r := range []run{
		{args: []string{"validate", "/_content/docs/refs.md"}, cwd: root},
		{args: []string{"validate", "refs.md", "bad-yaml.md", "--json"}, cwd: docs},
		{args: []string{"validate", filepath.Join(docs, "Foo.Bar.card"), "/_content/memory/notes"}, cwd: root},
		{args: []string{"validate", "../../../outside.md", "missing.md", "/etc/hosts"}, cwd: docs},
		{args: []string{"validate", "out.md", "in.md", "_config/inner.md"}, cwd: docs},
		{args: []string{"validate", "/_content/todos/chores.todo.card", "/_content/docs/stray.png"}, cwd: root},
	} {
		tr.add(r, runCLI(t, r))
	}
	golden(t, "paths", tr.b.String())
}

func TestValidateStagedGolden(t *testing.T) {
	root := initBox(t)
	tr := &transcript{root: root}
	write(t, root, "_content/docs/a.md", "---\ntitle: [broken\n---\n")
	write(t, root, "_content/docs/b.note.card", "---\ntitle: B\n---\nSee [x](/_content/docs/nowhere.md).\n")
	mustGit(t, root, "add", "_content/docs")
	// The working tree is fixed after staging: --staged checks what the commit would hold.
	write(t, root, "_content/docs/a.md", "---\ntitle: Fixed\n---\n")
	// An unstaged broken card is not --staged's business.
	write(t, root, "_content/docs/c.md", "---\ntitle: [broken\n---\n")
	for _, r := range []run{
		{args: []string{"validate", "--staged"}, cwd: root},
		{args: []string{"validate", "--staged", "--json"}, cwd: root},
	} {
		tr.add(r, runCLI(t, r))
	}
	golden(t, "staged", tr.b.String())
}

func TestValidateLinksGolden(t *testing.T) {
	root := bareBox(t)
	write(t, root, "_content/docs/a.md", "---\ntitle: A\n---\n[b](b.md) [c](/_content/docs/c.md) [[entity-ghost]] [up](../../../x.md)\n")
	write(t, root, "_content/docs/b.md", "---\ntitle: B\n---\n```\n[not a link](nowhere.md)\n```\n")
	write(t, root, "_content/people/Leo.person.card", "---\ntitle: Leo\nref: /_content/docs/gone.md\n---\n")
	tr := &transcript{root: root}
	for _, r := range []run{
		{args: []string{"validate", "--links"}, cwd: root},
		{args: []string{"validate", "--links", "--json"}, cwd: root},
	} {
		tr.add(r, runCLI(t, r))
	}
	golden(t, "links", tr.b.String())
}

// TestValidateURLsGolden: the test server is on the loopback, which the link check never asks (the egress
// rule, docs/SECURITY.md): every link is reported unchecked and no request reaches it. How answers are
// judged (HEAD, GET after 405, dead, timeouts) is validate's TestURLs, over a public test address.
func TestValidateURLsGolden(t *testing.T) {
	var hits []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/ok":
		case "/gone", "/gone-too":
			w.WriteHeader(http.StatusNotFound)
		case "/nohead":
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
			}
		case "/private":
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	defer srv.Close()
	root := initBox(t)
	tr := &transcript{root: root, srv: srv.URL}
	write(t, root, "_content/docs/links.md", fmt.Sprintf("---\ntitle: Links\n---\n[ok](%[1]s/ok) [gone](%[1]s/gone)\n<%[1]s/nohead> and %[1]s/private\n\n```\n%[1]s/in-code\n```\n", srv.URL))
	mustGit(t, root, "add", "-A")
	mustGit(t, root, "commit", "-qm", "links", "--no-verify")
	r := run{args: []string{"validate", "--urls"}, cwd: root}
	tr.add(r, runCLI(t, r))
	tr.text(fmt.Sprintf("requests: %s\n\n", strings.Join(sorted(hits), ", ")))

	// Since the last commit only URLs never seen are checked: the cache answers for the rest.
	hits = nil
	write(t, root, "_content/docs/more.md", fmt.Sprintf("---\ntitle: More\n---\n[ok](%[1]s/ok) [new](%[1]s/gone-too)\n", srv.URL))
	mustGit(t, root, "add", "-A")
	mustGit(t, root, "commit", "-qm", "more", "--no-verify")
	r = run{args: []string{"validate", "--urls", "--urls-since", "HEAD~1", "--json"}, cwd: root}
	tr.add(r, runCLI(t, r))
	tr.text(fmt.Sprintf("requests: %s\n\n", strings.Join(sorted(hits), ", ")))
	r = run{args: []string{"validate", "--urls", "--urls-since", "no-such-rev"}, cwd: root}
	tr.add(r, runCLI(t, r))
	golden(t, "urls", tr.b.String())
	if _, err := os.Stat(filepath.Join(root, ".box", "url-checks.json")); err != nil {
		t.Errorf("no verdict cache: %v", err)
	}
}

func sorted(ss []string) []string {
	out := append([]string(nil), ss...)
	sort.Strings(out)
	return out
}

// Each canonical case of ref's testdata, through the CLI: the report, the fix, a second run.
func TestValidateCanonicalGolden(t *testing.T) {
	cases, err := os.ReadDir(filepath.Join("testdata", "validate", "canonical"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			root := bareBox(t)
			overlay(t, root, filepath.Join("testdata", "validate", "canonical", c.Name()))
			commitAll(t, root) // --fix commits through the box: the fixture is a git repository like any box
			before := tree(t, root)
			tr := &transcript{root: root}
			r := run{args: []string{"validate", "--canonical"}, cwd: root}
			tr.add(r, runCLI(t, r))
			if after := tree(t, root); after != before {
				t.Errorf("report mode changed files")
			}
			r = run{args: []string{"validate", "--canonical", "--fix", "--json"}, cwd: root}
			tr.add(r, runCLI(t, r))
			tr.text("-- tree after --fix --\n" + tree(t, root) + "\n")
			fixed := tree(t, root)
			r = run{args: []string{"validate", "--canonical", "--fix"}, cwd: root}
			second := runCLI(t, r)
			tr.add(r, second)
			if tree(t, root) != fixed || !strings.Contains(second.stderr, "0 files changed") {
				t.Errorf("a second --fix changed something:\n%s", second.stderr)
			}
			if st := gitOut(t, root, "status", "--porcelain"); st != "" {
				t.Errorf("--fix left uncommitted changes (it must commit through the box):\n%s", st)
			}
			golden(t, "canonical-"+c.Name(), tr.b.String())
		})
	}
}

// tree renders the Markdown and card files under _content/ for a golden file.
func tree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(filepath.Join(root, "_content"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".card")) {
			return nil
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(&b, "== /%s\n%s", filepath.ToSlash(rel), data)
		return nil
	})
	return b.String()
}

func TestValidateFlagClashes(t *testing.T) {
	root := bareBox(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--canonical", "x.md"}, "--canonical cannot be combined with paths"},
		{[]string{"--canonical", "--staged"}, "--canonical cannot be combined with --staged"},
		{[]string{"--canonical", "--hook"}, "--canonical cannot be combined with --hook"},
		{[]string{"--canonical", "--links"}, "--canonical cannot be combined with --links"},
		{[]string{"--canonical", "--urls"}, "--canonical cannot be combined with --urls"},
		{[]string{"--canonical", "--pre-commit"}, "--canonical cannot be combined with --pre-commit"},
		{[]string{"--canonical", "--all"}, "--canonical cannot be combined with --all"},
		{[]string{"--fix"}, "--fix works only with --canonical"},
		{[]string{"--fix", "--all"}, "--fix works only with --canonical"},
		{[]string{"--hook", "x.md"}, "--hook cannot be combined with paths"},
		{[]string{"--hook", "--json"}, "--hook cannot be combined with --json"},
		{[]string{"--urls-since", "HEAD~1"}, "--urls-since works only with --urls"},
		{[]string{"--staged", "--links"}, "--staged and --links cannot be combined"},
		{[]string{"--pre-commit", "--hook"}, "--hook and --pre-commit cannot be combined"},
		{[]string{"--staged", "x.md"}, "--staged cannot be combined with paths"},
		{[]string{"--urls", "x.md"}, "--urls cannot be combined with paths"},
		{[]string{"--all", "x.md"}, "--all cannot be combined with paths"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			got := runCLI(t, run{args: append([]string{"validate"}, c.args...), cwd: root})
			if got.code != ExitUsage || !strings.Contains(got.stderr, c.want) || (got.stdout != "") != slices.Contains(c.args, "--json") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", got.code, got.stdout, got.stderr, ExitUsage, c.want)
			}
		})
	}
}

func TestStatusGolden(t *testing.T) {
	root := initBox(t)
	tr := &transcript{root: root}
	r := run{args: []string{"status"}, cwd: root}
	tr.add(r, runCLI(t, r))
	write(t, root, "_content/inbox/2026-01-02.md", "---\ntype: inbox-day\ndate: 2026-01-02\n---\n# Inbox 2026-01-02\n\n- 10:00:00 · owner · cli · own · Leo likes tea ^aaaaaaaa\n- 10:01:00 · owner · cli · own · Mia likes coffee ^bbbbbbbb\n")
	write(t, root, "stray.txt", "x")
	write(t, root, "_content/x/_config/y.md", "---\ntitle: Y\n---\n")
	r = run{args: []string{"status", "--json"}, cwd: root}
	tr.add(r, runCLI(t, r))
	golden(t, "status", tr.b.String())
}

// The pre-commit hook through a real `git commit` in a box made by the real binary.
func TestPreCommitRealGit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "box")
	if out, err := exec.Command(boxBin, "init", dir).CombinedOutput(); err != nil {
		t.Fatalf("box init: %v\n%s", err, out)
	}
	root, _ := filepath.EvalSymlinks(dir)
	hook, err := os.ReadFile(filepath.Join(root, ".git", "hooks", "pre-commit"))
	if err != nil || !strings.Contains(string(hook), boxBin) {
		t.Fatalf("the pre-commit hook does not call the built binary: %v\n%s", err, hook)
	}
	tr := &transcript{root: root}
	step := func(name string, wantOK bool) {
		t.Helper()
		out, err := gitIn(t, root, "commit", "-q", "-m", name)
		if (err == nil) != wantOK {
			t.Fatalf("%s: commit ok=%v, want %v\n%s", name, err == nil, wantOK, out)
		}
		fmt.Fprintf(&tr.b, "$ git commit  # %s\n-- ok %v --\n%s\n", name, err == nil, strings.ReplaceAll(out, root, "$BOX"))
	}
	// A clean card: silent, committed.
	write(t, root, "_content/docs/plan.md", "---\ntitle: Plan\n---\nSee [guide](/_content/docs/guide.md) and [[plan]].\n")
	write(t, root, "_content/docs/guide.md", "---\ntitle: Guide\n---\nThe guide.\n")
	mustGit(t, root, "add", "-A")
	step("clean cards", true)
	// A broken card blocks the commit.
	write(t, root, "_content/docs/bad.note.card", "---\ntitle: [broken\n---\n")
	mustGit(t, root, "add", "-A")
	step("a broken card", false)
	mustGit(t, root, "rm", "-q", "--cached", "_content/docs/bad.note.card")
	os.Remove(filepath.Join(root, "_content", "docs", "bad.note.card"))
	// Deleting a file others link to: a warning, the commit goes through.
	mustGit(t, root, "rm", "-q", "_content/docs/guide.md")
	step("delete a linked file", true)
	// A 2 MiB binary no attachments card lists blocks; listing it lets it in.
	write(t, root, "_content/docs/scan.bin", strings.Repeat("\x00\x01", 1<<20))
	mustGit(t, root, "add", "-A")
	step("an unlisted big binary", false)
	write(t, root, "_content/docs/files.attachments.card", "---\ntitle: Files\nfiles:\n  - /_content/docs/scan.bin\n---\n")
	mustGit(t, root, "add", "-A")
	step("the binary listed in an attachments card", true)
	golden(t, "pre-commit-git", tr.b.String())
	waitPostCommitChecks(t, root, 3)
}

// waitPostCommitChecks waits until the post-commit hook's background link checks of n commits have ended
// (each ends its log with box.LinkCheckEnded once its process is done): they outlive the commit, and must
// not outlive the test.
func waitPostCommitChecks(t *testing.T, root string, n int) {
	t.Helper()
	log := filepath.Join(root, ".box", "logs", "post-commit.log")
	var b []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ = os.ReadFile(log)
		if bytes.Count(b, []byte(box.LinkCheckEnded+"\n")) >= n {
			return
		}
	}
	t.Fatalf("the post-commit link checks of %d commits did not end within 30 s; %s holds:\n%s", n, log, b)
}

func TestPreCommitInProcess(t *testing.T) {
	root := initBox(t)
	tr := &transcript{root: root}
	r := run{args: []string{"validate", "--pre-commit"}, cwd: root}
	tr.add(r, runCLI(t, r)) // nothing staged: silent
	write(t, root, "_content/docs/a.md", "---\ntitle: A\n---\n[m](/_content/memory/MEMORY.md) [[MEMORY]]\n")
	mustGit(t, root, "add", "-A")
	mustGit(t, root, "commit", "-qm", "a", "--no-verify")
	mustGit(t, root, "mv", "_content/memory/MEMORY.md", "_content/memory/ROUTER.md")
	write(t, root, "_content/docs/b.md", "---\ntitle: B\nkind: [x\n---\n")
	mustGit(t, root, "add", "-A")
	tr.add(r, runCLI(t, r))
	r = run{args: []string{"validate", "--pre-commit", "--json"}, cwd: root}
	tr.add(r, runCLI(t, r))
	golden(t, "pre-commit", tr.b.String())
}

// hookCases are agent payloads; $BOX is the box root, $OUT a folder outside any box.
var hookCases = []struct{ name, payload string }{
	{"claude-write-clean", `{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"$BOX/_content/docs/clean.md","content":"x"},"cwd":"$BOX"}`},
	{"claude-write-warning", `{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"$BOX/_content/docs/warn.md"},"cwd":"$BOX"}`},
	{"claude-edit-error", `{"hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"$BOX/_content/docs/bad.note.card","old_string":"a","new_string":"b"},"cwd":"$BOX"}`},
	{"claude-multiedit-relative", `{"hook_event_name":"PostToolUse","tool_name":"MultiEdit","tool_input":{"file_path":"_content/docs/warn.md","edits":[]},"cwd":"$BOX"}`},
	{"claude-reserved", `{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"$BOX/_content/x/_config/y.md"},"cwd":"$BOX"}`},
	{"claude-non-card", `{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"$BOX/_content/docs/pic.png"},"cwd":"$BOX"}`},
	{"claude-outside-box", `{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"$OUT/bad.note.card"},"cwd":"$OUT"}`},
	{"codex-add", `{"hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{"command":["apply_patch","*** Begin Patch\n*** Add File: _content/docs/bad.note.card\n+---\n*** End Patch\n"]},"cwd":"$BOX"}`},
	{"codex-update", `{"hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{"input":"*** Begin Patch\n*** Update File: _content/docs/warn.md\n@@\n-a\n+b\n*** Update File: _content/docs/clean.md\n*** End Patch"},"cwd":"$BOX/_content/.."}`},
	{"codex-delete", `{"hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{"command":["apply_patch","*** Begin Patch\n*** Delete File: _content/docs/gone.md\n*** End Patch\n"]},"cwd":"$BOX"}`},
	{"codex-move", `{"hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{"patch":"*** Begin Patch\n*** Update File: _content/docs/old.md\n*** Move to: _content/docs/warn.md\n*** End Patch"},"cwd":"$BOX"}`},
	{"no-file", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`},
	{"garbage", `not json {`},
	{"empty", ``},
}

func TestHookGolden(t *testing.T) {
	root := bareBox(t)
	out, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, root, "_content/docs/clean.md", "---\ntitle: Clean\n---\nFine.\n")
	write(t, root, "_content/docs/warn.md", "---\ntitle: Warn\n---\n[x](/_content/docs/nowhere.md)\n")
	write(t, root, "_content/docs/bad.note.card", "---\ntitle: [broken\n---\n")
	write(t, root, "_content/docs/pic.png", "\x89PNG")
	write(t, root, "_content/x/_config/y.md", "---\ntitle: Y\n---\n")
	write(t, out, "bad.note.card", "---\ntitle: [broken\n---\n")
	for _, c := range hookCases {
		t.Run(c.name, func(t *testing.T) {
			tr := &transcript{root: root, out: out}
			payload := strings.ReplaceAll(strings.ReplaceAll(c.payload, "$BOX", root), "$OUT", out)
			r := run{args: []string{"validate", "--hook"}, stdin: payload, cwd: out}
			got := runCLI(t, r)
			tr.add(r, got)
			if got.code == 0 && got.stdout != "" {
				var v hookOutput
				if err := json.Unmarshal([]byte(got.stdout), &v); err != nil || v.HookSpecificOutput.HookEventName != "PostToolUse" {
					t.Errorf("stdout is not a PostToolUse answer: %v\n%s", err, got.stdout)
				}
			}
			golden(t, "hook-"+c.name, tr.b.String())
		})
	}
}

// commitAll makes root a git repository with everything in one commit.
func commitAll(t *testing.T, root string) {
	t.Helper()
	write(t, root, ".gitignore", box.Gitignore)
	gitOut(t, root, "init", "-q")
	gitOut(t, root, "add", "-A")
	gitOut(t, root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture")
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
