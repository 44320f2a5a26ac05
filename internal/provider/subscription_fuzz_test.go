package provider

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzToolScanner: any reply, split anywhere, gives the same text and calls as whole; the text
// emitted is the reply's text; every call's Input is a JSON object.
func FuzzToolScanner(f *testing.F) {
	f.Add([]byte("Saving.\n\n```box-tool\n{\"name\":\"memory_remember\",\"input\":{\"text\":\"a\"}}\n```\nDone."), uint(12))
	f.Add([]byte("````box-tool\n{\"name\":\"t\"}\n```\n````\n``"), uint(3))
	f.Fuzz(func(t *testing.T, data []byte, split uint) {
		text := string(data)
		at := int(split % uint(len(text)+1))
		whole, shownWhole := scanAll(text)
		parts, shownParts := scanAll(text[:at], text[at:])
		if whole.Text != shownWhole || parts.Text != shownParts {
			t.Errorf("emitted %q / %q, reply text %q / %q", shownWhole, shownParts, whole.Text, parts.Text)
		}
		if whole.Text != parts.Text || !reflect.DeepEqual(whole.Calls != nil, parts.Calls != nil) || len(whole.Calls) != len(parts.Calls) {
			t.Errorf("split at %d changed the reply: %+v vs %+v", at, whole, parts)
		}
		for i := range whole.Calls {
			a, b := whole.Calls[i], parts.Calls[i]
			if a.Name != b.Name || string(a.Input) != string(b.Input) || a.BadInput != b.BadInput {
				t.Errorf("call %d: %+v vs %+v", i, a, b)
			}
		}
		checkObjects(t, whole)
	})
}

func checkObjects(t *testing.T, r Reply) {
	for _, c := range r.Calls {
		var obj map[string]json.RawMessage
		if json.Unmarshal(c.Input, &obj) != nil || obj == nil {
			t.Errorf("call %+v: Input is not a JSON object", c)
		}
	}
	if len(r.Calls) > maxCalls {
		t.Errorf("%d calls", len(r.Calls))
	}
}

func fuzzSub(cli CLI) *Subscription {
	s, _ := NewSubscription(SubscriptionConfig{CLI: cli, Dir: "/nonexistent", Now: func() time.Time { return time.Unix(1767225600, 0) }})
	return s
}

// feedLines runs output lines through a CLI stream the way run does.
func feedLines(st cliStream, data []byte) (Reply, error) {
	var err error
	for _, l := range bytes.Split(data, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) == 0 {
			continue
		}
		more, e := st.line(l)
		if e != nil {
			err = e
			break
		}
		if !more {
			break
		}
	}
	return st.finish(exitInfo{code: 1}, err)
}

// FuzzClaudeEvents: any output gives a reply or a Failure, never a panic; calls are objects.
func FuzzClaudeEvents(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fuzzSub(ClaudeCode)
		reply, err := feedLines(s.spec.parser(s, Request{Model: "m"}, func(Delta) {}), data)
		if err != nil && FailureOf(err) == nil {
			t.Errorf("err %v is not a Failure", err)
		}
		checkObjects(t, reply)
	})
}

// FuzzCodexEvents: the same for Codex's JSON lines.
func FuzzCodexEvents(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fuzzSub(Codex)
		reply, err := feedLines(s.spec.parser(s, Request{Model: "m"}, func(Delta) {}), data)
		if err != nil && FailureOf(err) == nil {
			t.Errorf("err %v is not a Failure", err)
		}
		checkObjects(t, reply)
	})
}

// FuzzCLIAnswers: the status and model-list answers of both CLIs never panic, and what they keep is
// clean: models have ids, sign-in words are short labels.
func FuzzCLIAnswers(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, _, _ := parseClaudeModels(data)
		cs, _ := parseCodexModels(data)
		for _, m := range append(ms, cs...) {
			if m.ID == "" || m.ContextTokens < 0 {
				t.Errorf("model %+v", m)
			}
		}
		for _, st := range []SignIn{parseClaudeStatus(data), parseCodexStatus(string(data), 0)} {
			if label(st.Method) != st.Method || label(st.Plan) != st.Plan || !st.SignedIn && st != (SignIn{}) {
				t.Errorf("sign-in %+v", st)
			}
		}
	})
}

// seedData reads the []byte of a corpus file in testdata/fuzz.
func seedData(t *testing.T, fuzz, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", fuzz, name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(raw), "\n", 3)
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}

// TestRealOutputs: output captured from the pinned CLIs themselves (not signed in, offline) reads as
// the failures they are, and their status and model answers read as they should.
func TestRealOutputs(t *testing.T) {
	s := fuzzSub(ClaudeCode)
	_, err := feedLines(s.spec.parser(s, Request{}, func(Delta) {}), seedData(t, "FuzzClaudeEvents", "real-not-signed-in"))
	if f := FailureOf(err); f == nil || f.Reason != SignedOut || !strings.Contains(f.Detail, "Not logged in") {
		t.Errorf("claude not signed in: %v %+v", err, f)
	}
	for _, name := range []string{"real-locked-flags-not-signed-in", "real-ui-invalidate-not-signed-in"} {
		_, err = feedLines(s.spec.parser(s, Request{}, func(Delta) {}), seedData(t, "FuzzClaudeEvents", name))
		if f := FailureOf(err); f == nil || f.Reason != SignedOut {
			t.Errorf("%s: %v, want SignedOut", name, err)
		}
	}
	c := fuzzSub(Codex)
	_, err = feedLines(c.spec.parser(c, Request{}, func(Delta) {}), seedData(t, "FuzzCodexEvents", "real-offline-reconnecting"))
	if f := FailureOf(err); f == nil || f.Reason != Down || !strings.Contains(err.Error(), "offline") {
		t.Errorf("codex offline: %v", err)
	}
	if st := parseClaudeStatus(seedData(t, "FuzzCLIAnswers", "real-claude-auth-status")); st.SignedIn {
		t.Errorf("claude status %+v", st)
	}
	var line []byte
	for _, l := range bytes.Split(seedData(t, "FuzzCLIAnswers", "real-claude-initialize"), []byte("\n")) {
		if bytes.Contains(l, []byte("control_response")) {
			line = l
		}
	}
	ms, ok, err := parseClaudeModels(line)
	if !ok || err != nil || len(ms) < 3 || ms[0].ID != "default" {
		t.Errorf("claude models %+v %v %v", ms, ok, err)
	}
	cms, ok := parseCodexModels(seedData(t, "FuzzCLIAnswers", "real-codex-debug-models-trimmed"))
	if !ok || len(cms) < 3 {
		t.Errorf("codex models %+v", cms)
	}
	for _, m := range cms {
		if strings.Contains(m.ID, "daybreak") || m.ContextTokens == 0 {
			t.Errorf("codex model %+v: hidden ones are left out, each has its window", m)
		}
	}
}
