package provider

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// scanAll runs text through a textReply in the given pieces and returns the reply and what was
// emitted as text.
func scanAll(pieces ...string) (Reply, string) {
	var shown strings.Builder
	r := newTextReply("X", func(d Delta) { shown.WriteString(d.Text) })
	for _, p := range pieces {
		r.text(p)
	}
	r.end()
	return r.reply, shown.String()
}

type wantCall struct{ name, input, bad string }

func calls(r Reply) []wantCall {
	var out []wantCall
	for _, c := range r.Calls {
		out = append(out, wantCall{c.Name, string(c.Input), c.BadInput})
	}
	return out
}

func TestToolScanner(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		text  string
		calls []wantCall
	}{
		{"plain", "Leo swims on Thursdays.", "Leo swims on Thursdays.", nil},
		{"trailing white space dropped", "Done.\n\n  \n", "Done.", nil},
		{"other fences stay text", "Try:\n```python\nprint(1)\n```\n``\n`x`", "Try:\n```python\nprint(1)\n```\n``\n`x`", nil},
		{"a call", "Saving.\n\n```box-tool\n{\"name\": \"memory_remember\", \"input\": {\"text\": \"a\"}}\n```\n",
			"Saving.", []wantCall{{"memory_remember", `{"text":"a"}`, ""}}},
		{"text after the block", "A\n```box-tool\n{\"name\":\"t\",\"input\":{}}\n```\nB", "A\nB", []wantCall{{"t", "{}", ""}}},
		{"indent up to three, info with trailing space", "   ```box-tool  \n{\"name\":\"t\"}\n   ```", "", []wantCall{{"t", "{}", ""}}},
		{"four spaces is code", "    ```box-tool\n{\"name\":\"t\"}\n    ```", "    ```box-tool\n{\"name\":\"t\"}\n    ```", nil},
		{"longer fence closes only with as many", "````box-tool\n{\"name\":\"t\",\"input\":{\"q\":\"```\"}}\n```\n````", "",
			[]wantCall{{"", "", `{"name":"t","input":{"q":"` + "```" + `"}}` + "\n```"}}}, // the inner ``` did not close it
		{"unclosed block", "```box-tool\n{\"name\":\"t\",\"input\":{\"a\":1}}", "", []wantCall{{"t", `{"a":1}`, ""}}},
		{"opener alone at the end", "Hm\n```box-tool", "Hm", []wantCall{{"", "{}", ""}}},
		{"not JSON", "```box-tool\n{\"name\": \"t\", \"input\": {\"text\": \"unfinished\n```", "",
			[]wantCall{{"", "{}", "{\"name\": \"t\", \"input\": {\"text\": \"unfinished"}}},
		{"input not an object", "```box-tool\n{\"name\":\"t\",\"input\":\"text\"}\n```", "", []wantCall{{"t", "{}", `{"name":"t","input":"text"}`}}},
		{"no name", "```box-tool\n{\"input\":{}}\n```", "", []wantCall{{"", "{}", `{"input":{}}`}}},
		{"tilde fences are text", "~~~box-tool\n{}\n~~~", "~~~box-tool\n{}\n~~~", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.calls
			for i := range want {
				if want[i].input == "" {
					want[i].input = "{}"
				}
			}
			// Whole, byte by byte, and split at every point: the same reply.
			splits := [][]string{{c.in}, strings.Split(c.in, "")}
			for i := 1; i < len(c.in); i++ {
				splits = append(splits, []string{c.in[:i], c.in[i:]})
			}
			for _, pieces := range splits {
				r, shown := scanAll(pieces...)
				if r.Text != c.text || shown != c.text || !reflect.DeepEqual(calls(r), want) {
					t.Fatalf("pieces %q: text %q shown %q calls %+v, want %q %+v", pieces, r.Text, shown, calls(r), c.text, want)
				}
				if (len(want) > 0) != (r.Stop == StopToolUse) {
					t.Fatalf("stop %q with %d calls", r.Stop, len(want))
				}
			}
		})
	}
}

func TestToolScannerHoldsOnlyFenceLines(t *testing.T) {
	var shown []string
	r := newTextReply("X", func(d Delta) { shown = append(shown, d.Text) })
	r.text("Hello")
	r.text(" world")
	if !reflect.DeepEqual(shown, []string{"Hello", " world"}) {
		t.Errorf("shown %q: plain text must pass at once", shown)
	}
	r.text("\n``")
	if len(shown) != 2 {
		t.Errorf("shown %q: a line of backticks is held until it is known", shown)
	}
	r.text("`json\n")
	if got := strings.Join(shown, ""); got != "Hello world\n```json" {
		t.Errorf("shown %q after the line turned out plain", got)
	}
}

func TestToolScannerLimits(t *testing.T) {
	var b strings.Builder
	for range maxCalls + 1 {
		b.WriteString("```box-tool\n{\"name\":\"t\"}\n```\n")
	}
	r := newTextReply("X", func(Delta) {})
	r.text(b.String())
	r.end()
	if len(r.reply.Calls) != maxCalls || !r.tooMany {
		t.Errorf("%d calls, tooMany %v", len(r.reply.Calls), r.tooMany)
	}
	huge := "```box-tool\n{\"name\":\"t\",\"input\":{\"x\":\"" + strings.Repeat("a", maxArgs) + "\"}}\n```"
	reply, _ := scanAll(huge)
	if c := reply.Calls[0]; string(c.Input) != "{}" || c.BadInput == "" || len(c.BadInput) > 100 {
		t.Errorf("an oversized call: %q / %d bytes of BadInput", c.Input, len(c.BadInput))
	}
}

func TestTranscriptFences(t *testing.T) {
	out := transcript([]Message{
		{Role: User, Text: "hi"},
		{Role: Assistant, Calls: []ToolCall{{ID: "c1", Name: "t", Input: json.RawMessage(`{"a":1}`)}}},
		{Role: User, Results: []ToolResult{{CallID: "c1", Content: "has ````` five"}}},
	}, true)
	if !strings.Contains(out, "``````box-result id=\"c1\" status=\"ok\"\nhas ````` five\n``````\n") {
		t.Errorf("the result's fence must outrun its backticks:\n%s", out)
	}
	if toolsSection(nil) != "" {
		t.Errorf("no tools, no section")
	}
}

func TestHideSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"Not logged in · Please run /login":                         "Not logged in · Please run /login",
		"Your refresh token was already used; sign in again":        "Your refresh token was already used; sign in again",
		"Authorization: Bearer sk-ant-oat01-Zq3xW9vB2nK8mL4pR7tY1u": "Authorization: [hidden] [hidden]",
		"api_key=abc password: \"hunter2\" for owner@example.com":   "api_key=[hidden] password: \"[hidden]\" for [email]",
		"session 01a22ff9-9f5f-7041-bb2d-2cfc211d4abe failed":       "session [hidden] failed",
		"unexpected status 401 Unauthorized":                        "unexpected status 401 Unauthorized",
	} {
		if got := hideSecrets(in); got != want {
			t.Errorf("hideSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}
