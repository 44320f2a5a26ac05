package hooks

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/diary"
)

// Tokens shaped as the providers issue them, made up.
const (
	anthropicKey = "sk-ant-api03-Xq7vR2mK9pL4wT8nB3cF6hJ1sD5gA0zYeU2iO7kM4xN9bV6cQ3rW8tE1yH5uI0oP2aS7dF4gJ9kL3zX6cV1bN8mQ-AbCdEfAA"
	githubToken  = "ghp_R8xK2mQ7vN4pL9wT3bF6hJ1sD5gA0zYcE2iO"
)

// TestRecordKeepsNoSecrets: a key typed into a command or a prompt is not kept in the session record, so
// it is not restated to the model after a compaction; the rest of the command is.
func TestRecordKeepsNoSecrets(t *testing.T) {
	f := newFixture(t)
	run := texts(f.session("keys", f.project))
	run(UserPromptSubmit, map[string]any{"prompt": "Call the messages API for ParseThing with the key " + githubToken + " please"})
	run(PostToolUse, map[string]any{"tool_name": "Bash", "tool_response": map[string]any{"stdout": "{}"},
		"tool_input": map[string]any{"command": `curl -H "Authorization: Bearer ` + anthropicKey + `" https://api.anthropic.com/v1/messages`}})
	run(PostToolUse, map[string]any{"tool_name": "Bash", "tool_response": map[string]any{"stdout": ""},
		"tool_input": map[string]any{"command": "go vet ./..."}})
	got := run(SessionStart, map[string]any{"source": "compact"})
	for _, key := range []string{anthropicKey, githubToken, anthropicKey[:40], githubToken[:20]} {
		if strings.Contains(got, key) {
			t.Errorf("the restated record holds a key:\n%s", got)
		}
	}
	for _, want := range []string{"go vet ./...", "https://api.anthropic.com/v1/messages", "Call the messages API"} {
		if !strings.Contains(got, want) {
			t.Errorf("the restated record lost %q:\n%s", want, got)
		}
	}
}

// TestSessionEndCommitsOnlyWhatItKnows: SessionEnd in the box writes the diary and a commit whose text
// holds the session's safe id and a known reason only, whatever the payload carries.
func TestSessionEndCommitsOnlyWhatItKnows(t *testing.T) {
	f := newFixture(t)
	reason := "clear\nSigned-off-by: evil\n" + githubToken + "\n" + strings.Repeat("x", 300<<10)
	p, _ := json.Marshal(map[string]any{"session_id": "sess\n" + githubToken, "cwd": f.box, "hook_event_name": SessionEnd,
		"transcript_path": f.transcript, "reason": reason})
	Run(context.Background(), SessionEnd, p, f.env)
	entries, err := diary.Recent(f.box, 5, func(e diary.Entry) bool { return e.Op == "session" })
	if err != nil || len(entries) != 1 {
		t.Fatalf("no diary entry: %v %+v", err, entries)
	}
	msg, err := exec.Command("git", "-C", f.box, "log", "-1", "--format=%B").Output()
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"the diary line": entries[0].Summary, "the commit message": string(msg)} {
		if strings.Contains(text, githubToken) || strings.Contains(text, "Signed-off-by") || strings.Contains(text, "xxxx") || len(text) > 4096 {
			t.Errorf("%s carries the payload (%d bytes): %.300q", name, len(text), text)
		}
		if !strings.Contains(text, "ended (other)") {
			t.Errorf("%s does not give the reason as other: %.300q", name, text)
		}
	}
	if len(entries[0].Summary) > 300 {
		t.Errorf("the diary line is %d bytes", len(entries[0].Summary))
	}
}
