package cli

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/providertest"
)

// runKeyed runs the real binary with stdin and the vault under data (XDG_DATA_HOME).
func runKeyed(t *testing.T, data, stdin string, args ...string) ran {
	t.Helper()
	cmd := exec.Command(boxBin, args...)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+data)
	cmd.Stdin = strings.NewReader(stdin)
	return runCmd(t, cmd)
}

// The owner's whole brain cycle at the command line, through the real binary: a wrong key refused
// (exit 4, nothing saved), the right one set, status with the key's last four only, a chat turn that
// remembers through a tool, the budget, a provider failure as one sentence, off. Then the key is
// looked for everywhere the box writes: the tree, every git object, the diary, .box (logs, state.db,
// caches), and everything the commands printed. It is only in the vault, sealed.
func TestBrainCycleAndTheKeyIsNowhere(t *testing.T) {
	const key = "sk-test-CYCLE-7f3a9c2e5b1d8f40"
	root := initBox(t)
	data := t.TempDir()
	srv := providertest.OpenAI(t, key,
		providertest.Reply{Model: "model-a", Calls: []providertest.Call{{ID: "c1", Name: "memory_remember", Args: []string{`{"text":"Leo swims on Thursdays."}`}}}, InputTokens: 900, OutputTokens: 20},
		providertest.Reply{Model: "model-a", Text: []string{"Saved: Leo ", "swims on Thursdays."}, InputTokens: 950, OutputTokens: 8},
		providertest.Reply{Fail: &providertest.Fail{Status: 401, Type: "invalid_request_error", Code: "invalid_api_key", Message: "Incorrect API key provided: " + key}},
	)
	var printed strings.Builder
	do := func(stdin string, wantCode int, args ...string) ran {
		t.Helper()
		got := runKeyed(t, data, stdin, append([]string{"--box", root}, args...)...)
		printed.WriteString(got.stdout + got.stderr)
		if got.code != wantCode {
			t.Fatalf("box %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got.code, wantCode, got.stdout, got.stderr)
		}
		return got
	}

	got := do("sk-wrong-00000000000000000", ExitRefused, "brain", "set", "--provider", "openai", "--base-url", srv.URL, "--model", "model-a", "--key-stdin")
	if !strings.Contains(got.stderr, "refused the key") {
		t.Fatalf("a wrong key: %s", got.stderr)
	}
	if st := do("", 0, "brain", "status", "--json"); !strings.Contains(st.stdout, `"on": false`) {
		t.Fatalf("a refused key saved a brain: %s", st.stdout)
	}
	do(key+"\n", 0, "brain", "set", "--provider", "openai", "--base-url", srv.URL, "--model", "model-a", "--key-stdin")
	var st struct {
		On  bool   `json:"on"`
		Key string `json:"key"`
	}
	if err := json.Unmarshal([]byte(do("", 0, "brain", "status", "--json").stdout), &st); err != nil || !st.On || !strings.HasSuffix(st.Key, "(…8f40)") {
		t.Fatalf("status: %+v %v", st, err)
	}
	got = do("", 0, "chat", "Leo", "has", "swim", "practice", "on", "Thursdays")
	if !strings.Contains(got.stdout, "Saved: Leo swims on Thursdays.") || !strings.Contains(got.stderr, "memory_remember") {
		t.Fatalf("chat: %q %q", got.stdout, got.stderr)
	}
	if s := do("", 0, "search", "leo", "swims", "--json"); !strings.Contains(s.stdout, `"who": "chat"`) {
		t.Fatalf("the chat's fact: %s", s.stdout)
	}
	do("", 0, "brain", "budget", "5")
	got = do("", ExitRefused, "chat", "hello", "--json")
	var res struct {
		Failed string `json:"failed"`
	}
	if err := json.Unmarshal([]byte(got.stdout), &res); err != nil || !strings.Contains(res.Failed, "refused the key") {
		t.Fatalf("a failure: %s %v", got.stdout, err)
	}
	if d := do("", 0, "diary", "--json"); !strings.Contains(d.stdout, "refused the key") {
		t.Fatalf("the failure is not in the diary: %s", d.stdout)
	}
	do("", 0, "brain", "off")

	// The key is nowhere but the vault.
	hits := grepTree(t, root, key)
	objects, err := exec.Command("git", "-C", root, "cat-file", "--batch-all-objects", "--batch").Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(objects, []byte(key)) {
		hits = append(hits, "a git object")
	}
	if strings.Contains(printed.String(), key) {
		hits = append(hits, "what the commands printed")
	}
	if vaultHits := grepTree(t, data, key); len(vaultHits) != 0 {
		hits = append(hits, vaultHits...) // not even the vault holds it in clear
	}
	if len(hits) != 0 {
		t.Fatalf("the key is in clear in: %v", hits)
	}
	if !strings.Contains(printed.String(), "…8f40") {
		t.Fatal("the last four never showed: the test would not see the key either")
	}
}

// grepTree lists the files under dir that hold needle.
func grepTree(t *testing.T, dir, needle string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(needle)) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
