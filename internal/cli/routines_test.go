package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/providertest"
)

// The owner's routines at the command line, through the real binary: add (a bad time refused, exit 4,
// nothing written; a taken name exit 6), the starter offered and added off, list --json, on and off, run
// now without a brain (exit 5), with one (the report printed, kept for Today, in the diary, never in the
// memory), a provider failure (exit 7, its sentence), remove.
func TestRoutinesCycle(t *testing.T) {
	const key = "sk-test-ROUTINES-CLI-3b9d"
	root := initBox(t)
	data := t.TempDir()
	do := func(wantCode int, args ...string) ran {
		t.Helper()
		got := runKeyed(t, data, "", append([]string{"--box", root}, args...)...)
		if got.code != wantCode {
			t.Fatalf("box %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got.code, wantCode, got.stdout, got.stderr)
		}
		return got
	}
	got := do(ExitRefused, "routines", "add", "evening", "--at", "9pm", "--prompt", "What did I do today?")
	if !strings.Contains(got.stderr, "HH:MM") {
		t.Fatalf("a bad time: %s", got.stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "_config/routines/evening.md")); !os.IsNotExist(err) {
		t.Fatal("a refused routine was written")
	}
	do(ExitRefused, "routines", "add", "evening", "--at", "21:00", "--days", "mon,funday", "--prompt", "x")
	do(ExitUsage, "routines", "add", "evening", "--at", "21:00")
	do(0, "routines", "add", "evening", "--at", "21:00", "--days", "fri,mon", "--prompt", "What did I do today?")
	do(ExitConflict, "routines", "add", "evening", "--at", "20:00", "--prompt", "again")

	var list struct {
		Routines []struct {
			Name string   `json:"name"`
			At   string   `json:"at"`
			Days []string `json:"days"`
			On   bool     `json:"on"`
		} `json:"routines"`
		Starters []struct {
			Name string `json:"name"`
		} `json:"starters"`
	}
	if err := json.Unmarshal([]byte(do(0, "routines", "list", "--json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Routines) != 1 || strings.Join(list.Routines[0].Days, ",") != "mon,fri" || !list.Routines[0].On ||
		len(list.Starters) != 1 || list.Starters[0].Name != "morning-paper" {
		t.Fatalf("list: %+v", list)
	}
	got = do(0, "routines", "add", "morning-paper", "--starter")
	if !strings.Contains(got.stdout, "off (turn it on with box routines on morning-paper)") {
		t.Fatalf("the starter: %s", got.stdout)
	}
	if got = do(0, "routines", "list"); !strings.Contains(got.stdout, "morning-paper") || strings.Contains(got.stdout, "Starter offered") {
		t.Fatalf("list after the starter: %s", got.stdout)
	}
	do(0, "routines", "on", "morning-paper")
	do(0, "routines", "off", "evening")
	do(ExitNotFound, "routines", "on", "nothing-here")

	got = do(ExitNotFound, "routines", "run", "evening")
	if !strings.Contains(got.stderr, "No brain") {
		t.Fatalf("run without a brain: %s", got.stderr)
	}
	srv := providertest.OpenAI(t, key)
	got = runKeyed(t, data, key+"\n", "--box", root, "brain", "set", "--provider", "openai", "--base-url", srv.URL, "--model", "model-a", "--key-stdin")
	if got.code != 0 {
		t.Fatalf("brain set: %s", got.stderr)
	}
	srv.Push(providertest.Reply{Model: "model-a", Text: []string{"You had a quiet day: ", "Quokkaline."}, InputTokens: 300, OutputTokens: 9})
	got = do(0, "routines", "run", "evening")
	if !strings.Contains(got.stdout, "You had a quiet day: Quokkaline.") || !strings.Contains(got.stderr, "routine evening · model-a · 1 call") {
		t.Fatalf("run: %q %q", got.stdout, got.stderr)
	}
	if d := do(0, "diary", "--json"); !strings.Contains(d.stdout, "routine evening reported") {
		t.Fatalf("the diary: %s", d.stdout)
	}
	if s := do(0, "search", "Quokkaline", "--json"); strings.Contains(s.stdout, "Quokkaline") {
		t.Fatalf("the report reached the memory: %s", s.stdout)
	}
	srv.Push(providertest.Reply{Fail: &providertest.Fail{Status: 503, Type: "server_error", Message: "down"}})
	got = do(ExitBusy, "routines", "run", "evening", "--json")
	var rep struct {
		Failed string `json:"failed"`
		Path   string `json:"path"`
	}
	if err := json.Unmarshal([]byte(got.stdout), &rep); err != nil || !strings.Contains(rep.Failed, "not answering") || rep.Path == "" {
		t.Fatalf("a failure: %s %v", got.stdout, err)
	}
	do(0, "routines", "remove", "evening")
	do(ExitNotFound, "routines", "remove", "evening")
	if got = do(0, "routines", "list", "--json"); strings.Contains(got.stdout, `"evening"`) {
		t.Fatalf("removed but listed: %s", got.stdout)
	}
}
