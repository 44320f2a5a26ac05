package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// project is a code project holding the user's own settings, MCP servers and guide.
func project(t *testing.T, settings string) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, "testdata/"+settings, filepath.Join(dir, ClaudeSettings))
	copyFile(t, "testdata/mcp-user.json", filepath.Join(dir, MCPFile))
	copyFile(t, "testdata/CLAUDE-user.md", filepath.Join(dir, "CLAUDE.md"))
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o755)
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot reads every file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(data)
		}
		return nil
	})
	return out
}

func apply(t *testing.T, o Options, on bool) Plan {
	t.Helper()
	p, err := plan(o, on)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(o.Dir); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWireKeepsTheUsersOwnAndIsIdempotent(t *testing.T) {
	dir := project(t, "settings-user.json")
	before := snapshot(t, dir)
	o := Options{Dir: dir, Bin: "/opt/box bin/box", Box: "/home/me/my box"}
	first := apply(t, o, true)
	if len(first.Changes) != 6 || len(first.Warnings) != 0 {
		t.Fatalf("first wire: %d changes %q", len(first.Changes), first.Warnings)
	}
	if again := apply(t, o, true); len(again.Changes) != 0 {
		t.Fatalf("second wire changed %d files: %s", len(again.Changes), Diff(again.Changes[0]))
	}
	var s struct {
		Permissions map[string]any `json:"permissions"`
		Model       string         `json:"model"`
		Hooks       map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, ClaudeSettings))
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Model != "opus" || s.Permissions == nil {
		t.Error("the user's other settings were lost")
	}
	if pre := s.Hooks["PreToolUse"]; len(pre) != 4 || pre[0].Hooks[0].Command != "./scripts/guard.sh" {
		t.Errorf("PreToolUse groups = %+v", pre)
	}
	want := map[string]int{"SessionStart": 30, "UserPromptSubmit": 15, "PostToolUse": 15, "PreCompact": 30, "Stop": 30, "SessionEnd": 120}
	for ev, timeout := range want {
		groups := s.Hooks[ev]
		last := groups[len(groups)-1].Hooks[0]
		if last.Timeout != timeout || last.Command != `'/opt/box bin/box' --box '/home/me/my box' hook `+ev {
			t.Errorf("%s: %+v", ev, last)
		}
	}
	if !strings.Contains(string(data), "notify-send done") {
		t.Error("the user's Stop hook was lost")
	}
	mcp, _ := os.ReadFile(filepath.Join(dir, MCPFile))
	if !strings.Contains(string(mcp), `"github"`) || !strings.Contains(string(mcp), `"--box"`) {
		t.Errorf(".mcp.json = %s", mcp)
	}
	guide, _ := os.ReadFile(filepath.Join(dir, "CLAUDE.md"))
	if !strings.HasPrefix(string(guide), before["CLAUDE.md"]) || strings.Count(string(guide), Begin) != 1 {
		t.Errorf("CLAUDE.md = %s", guide)
	}

	// unwire takes out exactly what wire put in
	apply(t, o, false)
	after := snapshot(t, dir)
	for name, text := range before {
		if name == ClaudeSettings || name == MCPFile {
			if !sameJSON(text, after[name]) {
				t.Errorf("%s after unwire:\n%s\nwant the same JSON as\n%s", name, after[name], text)
			}
			continue
		}
		if after[name] != text {
			t.Errorf("%s after unwire:\n%q\nwant\n%q", name, after[name], text)
		}
	}
	if len(after) != len(before) {
		t.Errorf("unwire left files behind: %v", keysOf(after))
	}
	if again := apply(t, o, false); len(again.Changes) != 0 {
		t.Errorf("second unwire changed %d files", len(again.Changes))
	}
}

func TestWireLeavesAnUnparseableFileAlone(t *testing.T) {
	dir := project(t, "settings-broken.json")
	broken, _ := os.ReadFile(filepath.Join(dir, ClaudeSettings))
	p := apply(t, Options{Dir: dir, Bin: "/usr/local/bin/box", InBox: true}, true)
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], ClaudeSettings) {
		t.Fatalf("warnings = %q", p.Warnings)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, ClaudeSettings)); !bytes.Equal(now, broken) {
		t.Error("the unparseable file was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, CodexHooks)); err != nil {
		t.Error("the other files were not written")
	}
	if p := apply(t, Options{Dir: dir, Bin: "/usr/local/bin/box", InBox: true}, false); len(p.Warnings) != 1 {
		t.Errorf("unwire warnings = %q", p.Warnings)
	}
}

// TestWireReplacesAMovedBinary: wiring again with a new binary path rewrites our entries in place of
// the old ones, never beside them.
func TestWireReplacesAMovedBinary(t *testing.T) {
	dir := t.TempDir()
	apply(t, Options{Dir: dir, Bin: "/old/box", InBox: true}, true)
	apply(t, Options{Dir: dir, Bin: "/new/box", InBox: true}, true)
	data, _ := os.ReadFile(filepath.Join(dir, ClaudeSettings))
	if strings.Contains(string(data), "/old/box") || strings.Count(string(data), "/new/box hook SessionStart") != 1 {
		t.Errorf("settings after a move:\n%s", data)
	}
	codex, _ := os.ReadFile(filepath.Join(dir, CodexHooks))
	if strings.Contains(string(codex), "SessionEnd") || !strings.Contains(string(codex), `"apply_patch"`) {
		t.Errorf("codex hooks:\n%s", codex)
	}
	apply(t, Options{Dir: dir, Bin: "/new/box", InBox: true}, false)
	if left := snapshot(t, dir); len(left) != 0 {
		t.Errorf("unwire of a folder wire filled left %v", keysOf(left))
	}
}

func TestSetBlock(t *testing.T) {
	for _, c := range []struct{ in, body, want string }{
		{"", "x", Begin + "\nx\n" + End + "\n"},
		{"# T\n", "x", "# T\n\n" + Begin + "\nx\n" + End + "\n"},
		{"# T\n\n" + Begin + "\nold\n" + End + "\ntail\n", "new", "# T\n\n" + Begin + "\nnew\n" + End + "\ntail\n"},
	} {
		if got := string(setBlock([]byte(c.in), Begin, End, c.body, true)); got != c.want {
			t.Errorf("setBlock(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := setBlock([]byte("# T\n\n"+Begin+"\nx\n"+End+"\ntail\n"), Begin, End, "", false); string(got) != "# T\n\ntail\n" {
		t.Errorf("remove = %q", got)
	}
	if got := setBlock([]byte(Begin+"\nx\n"+End+"\n"), Begin, End, "", false); got != nil {
		t.Errorf("a file holding only the block should go: %q", got)
	}
}

func TestDiff(t *testing.T) {
	d := Diff(Change{Path: "a.txt", Old: []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"), New: []byte("1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n")})
	want := "--- a/a.txt\n+++ b/a.txt\n@@ -2,9 +2,10 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n+11\n"
	if d != want {
		t.Errorf("Diff =\n%s\nwant\n%s", d, want)
	}
	if d := Diff(Change{Path: "n", New: []byte("x\n")}); !strings.HasPrefix(d, "--- /dev/null\n+++ b/n\n@@ -0,0 +1,1 @@\n+x\n") {
		t.Errorf("new file diff = %q", d)
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestWireKeepsTheUsersCodexServer(t *testing.T) {
	dir := t.TempDir()
	own := "[mcp_servers.box]\ncommand = \"my-box\"\n"
	os.MkdirAll(filepath.Join(dir, ".codex"), 0o755)
	os.WriteFile(filepath.Join(dir, CodexConfig), []byte(own), 0o644)
	p := apply(t, Options{Dir: dir, Bin: "/usr/bin/box", InBox: true}, true)
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], CodexConfig) {
		t.Errorf("warnings = %q", p.Warnings)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, CodexConfig)); string(data) != own {
		t.Errorf("the user's config.toml changed:\n%s", data)
	}
	os.WriteFile(filepath.Join(dir, CodexConfig), []byte("model = \"o3\"\n"), 0o644)
	apply(t, Options{Dir: dir, Bin: "/usr/bin/box", InBox: true}, true)
	data, _ := os.ReadFile(filepath.Join(dir, CodexConfig))
	if !strings.HasPrefix(string(data), "model = \"o3\"\n\n"+tomlBegin) || !strings.Contains(string(data), `command = "/usr/bin/box"`) {
		t.Errorf("config.toml = %s", data)
	}
	apply(t, Options{Dir: dir, Bin: "/usr/bin/box", InBox: true}, false)
	if data, _ := os.ReadFile(filepath.Join(dir, CodexConfig)); string(data) != "model = \"o3\"\n" {
		t.Errorf("unwire left config.toml = %q", data)
	}
}

func TestTimeouts(t *testing.T) {
	for ev, want := range map[string]int{"SessionStart": 30, "UserPromptSubmit": 15, "PreToolUse": 10, "PostToolUse": 15, "PreCompact": 30, "Stop": 30, "SessionEnd": 120} {
		if got := Timeout(ev); got.Seconds() != float64(want) {
			t.Errorf("Timeout(%s) = %v, want %ds", ev, got, want)
		}
	}
}

// box wire --apply keeps an agent file's own permission bits (a 0600 .mcp.json that holds other servers'
// tokens stays 0600; a new file is 0644), and never replaces a file that is a symbolic link, nor writes
// through it: it is left alone with a warning, the link and what it points to unchanged.
func TestWireKeepsModesAndLeavesLinksAlone(t *testing.T) {
	dir := project(t, "settings-user.json")
	mcp := filepath.Join(dir, MCPFile)
	if err := os.Chmod(mcp, 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "dotfiles-CLAUDE.md")
	if err := os.WriteFile(target, []byte("# Mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	guide := filepath.Join(dir, "CLAUDE.md")
	if err := os.Remove(guide); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, guide); err != nil {
		t.Fatal(err)
	}
	p := apply(t, Options{Dir: dir, Bin: "/usr/local/bin/box", InBox: true}, true)
	if fi, err := os.Stat(mcp); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf(".mcp.json after wire: %v %v, want 0600", fi.Mode(), err)
	}
	if data, _ := os.ReadFile(mcp); !strings.Contains(string(data), "box") {
		t.Error(".mcp.json was not wired")
	}
	if fi, err := os.Stat(filepath.Join(dir, CodexHooks)); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a new file: %v %v, want 0644", fi, err)
	}
	if fi, err := os.Lstat(guide); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("CLAUDE.md is no longer a link: %v", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "# Mine\n" {
		t.Errorf("the link's target was written: %q", data)
	}
	if !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "CLAUDE.md") && strings.Contains(w, "symbolic link") }) {
		t.Errorf("warnings = %q", p.Warnings)
	}
}
