package provider

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// The text protocol carries the box's tools to a model that has no tool API of its own here: the
// subscription CLIs, run with their built-in tools off (docs/BRAIN.md, "Tools through a text
// protocol"). The system prompt lists the tools; the model calls one with a fenced block whose info
// string is toolFence; the box answers with fenced result blocks in the next part of the transcript.

const (
	toolFence   = "box-tool"
	resultFence = "box-result"
)

// toolsSection is the part of the system prompt that teaches the protocol and lists the tools.
func toolsSection(tools []Tool) string {
	if len(tools) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n## Tools\n\n")
	b.WriteString("You have no tools of your own here, but the box has the tools listed below. To call one, end your " +
		"message with one fenced block per call, in exactly this form, and write nothing after the blocks:\n\n")
	b.WriteString("```" + toolFence + "\n{\"name\": \"TOOL_NAME\", \"input\": {ARGUMENTS}}\n```\n\n")
	b.WriteString("The input is a JSON object that follows the tool's schema. The box runs the calls and sends their " +
		"results in the next part of the conversation, each in a fenced `" + resultFence + "` block; then you go on. " +
		"Never write a result block yourself, and never say a tool ran before its result came.\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "\n### %s\n\n", t.Name)
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString(d + "\n\n")
		}
		var schema bytes.Buffer
		if json.Compact(&schema, schemaOrEmpty(t.Schema)) != nil {
			schema.Reset()
			schema.Write(schemaOrEmpty(nil))
		}
		b.WriteString("Input schema: " + schema.String() + "\n")
	}
	return b.String()
}

// transcript renders the conversation for a one-shot CLI call. Every part opens with a marker line
// carrying a boundary made for this call, so no text inside the conversation (a note, a tool result)
// can forge the start of another part; fenced blocks use a fence longer than any backtick run inside.
func transcript(msgs []Message, tools bool) string {
	boundary := newBoundary()
	var b strings.Builder
	fmt.Fprintf(&b, "Below is the conversation so far, oldest first. Each part starts with a line \"=== who · %s ===\". "+
		"Write the box's next message.", boundary)
	if tools {
		b.WriteString(" Call tools only with " + toolFence + " blocks, as the system prompt says.")
	}
	b.WriteString("\n")
	part := func(who string) { fmt.Fprintf(&b, "\n=== %s · %s ===\n", who, boundary) }
	for _, m := range msgs {
		if len(m.Results) > 0 {
			part("tool results")
			for _, r := range m.Results {
				status := "ok"
				if r.IsError {
					status = "error"
				}
				writeFenced(&b, fmt.Sprintf("%s id=%q status=%q", resultFence, r.CallID, status), r.Content)
			}
		}
		if m.Role == Assistant {
			if strings.TrimSpace(m.Text) == "" && len(m.Calls) == 0 {
				continue
			}
			part("box")
			if t := strings.TrimSpace(m.Text); t != "" {
				b.WriteString(t + "\n")
			}
			for _, c := range m.Calls {
				call, _ := json.Marshal(struct {
					ID    string          `json:"id"`
					Name  string          `json:"name"`
					Input json.RawMessage `json:"input"`
				}{c.ID, c.Name, inputOrEmpty(c.Input)})
				writeFenced(&b, toolFence, string(call))
			}
			continue
		}
		if strings.TrimSpace(m.Text) != "" {
			part("owner")
			b.WriteString(strings.TrimRight(m.Text, "\n") + "\n")
		}
	}
	part("end")
	return b.String()
}

// writeFenced writes body in a fenced block whose fence is longer than any backtick run in body.
func writeFenced(b *strings.Builder, info, body string) {
	fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	b.WriteString(fence + info + "\n")
	b.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(fence + "\n")
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

func newBoundary() string {
	var b [6]byte
	rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// toolScanner reads a model's reply as it streams: plain text goes on to emit, minus the tool blocks,
// which become calls. A line is held back only while it could still open a tool block (it starts with
// backticks), and trailing white space only until more text follows, so the text the owner sees never
// shows a half-written block or the blank lines before one. Reply text = everything emitted.
type toolScanner struct {
	emit func(string)      // plain text
	call func(body string) // one tool block's body, when its fence closes (or the reply ends)
	cand strings.Builder   // the start of the current line while it could still open a block
	mid  bool              // the current line is known to be plain text
	in   bool              // inside a tool block
	n    int               // the open block's fence length
	line strings.Builder   // the current line inside a block
	body strings.Builder   // the open block's body
	held string            // trailing white space not yet emitted
	out  strings.Builder   // plain text decided during one write
	size int               // bytes of the open block's body, bounded by maxArgs
	over bool              // the open block passed maxArgs
}

func (s *toolScanner) write(text string) {
	for i := 0; i < len(text); i++ {
		s.byte(text[i])
	}
	s.flush()
}

func (s *toolScanner) byte(c byte) {
	switch {
	case s.in:
		if c != '\n' {
			s.line.WriteByte(c)
			return
		}
		if closesFence(s.line.String(), s.n) {
			s.endBlock()
			return
		}
		s.add(s.line.String() + "\n")
		s.line.Reset()
	case s.mid:
		s.out.WriteByte(c)
		s.mid = c != '\n'
	case c == '\n':
		if n := opensFence(s.cand.String()); n > 0 {
			s.flush()
			s.in, s.n = true, n
		} else {
			s.out.WriteString(s.cand.String())
			s.out.WriteByte('\n')
		}
		s.cand.Reset()
	default:
		s.cand.WriteByte(c)
		if !couldOpen(s.cand.String()) {
			s.out.WriteString(s.cand.String())
			s.cand.Reset()
			s.mid = true
		}
	}
}

func (s *toolScanner) add(line string) {
	if s.size += len(line); s.size > maxArgs {
		s.over = true
		return
	}
	s.body.WriteString(line)
}

func (s *toolScanner) endBlock() {
	body := s.body.String()
	if s.over {
		body = "(a tool call longer than the box accepts)"
	}
	s.call(body)
	s.in, s.n, s.size, s.over = false, 0, 0, false
	s.body.Reset()
	s.line.Reset()
}

// flush passes on the text decided so far, holding back its trailing white space.
func (s *toolScanner) flush() {
	text := s.held + s.out.String()
	s.out.Reset()
	end := len(strings.TrimRight(text, " \t\r\n"))
	s.held = text[end:]
	if end > 0 {
		s.emit(text[:end])
	}
}

// finish ends the reply: an unclosed block still counts as a call, a held line is plain text, and
// trailing white space is dropped.
func (s *toolScanner) finish() {
	switch {
	case s.in:
		if s.line.Len() > 0 && !closesFence(s.line.String(), s.n) {
			s.add(s.line.String())
		}
		s.endBlock()
	case opensFence(s.cand.String()) > 0:
		s.call("")
	default:
		s.out.WriteString(s.cand.String())
	}
	s.cand.Reset()
	s.flush()
	s.held = ""
}

// opensFence returns the fence length when line opens a tool block: up to three spaces, three or more
// backticks, the info string box-tool, nothing else but white space. 0 otherwise.
func opensFence(line string) int {
	rest := strings.TrimLeft(line, " ")
	if len(line)-len(rest) > 3 {
		return 0
	}
	n := len(rest) - len(strings.TrimLeft(rest, "`"))
	if n < 3 || strings.TrimRight(rest[n:], " \t\r") != toolFence {
		return 0
	}
	return n
}

// couldOpen reports whether a line that starts with cand may still turn out to open a tool block.
func couldOpen(cand string) bool {
	rest := strings.TrimLeft(cand, " ")
	if len(cand)-len(rest) > 3 {
		return false
	}
	n := len(rest) - len(strings.TrimLeft(rest, "`"))
	if n < len(rest) && n < 3 {
		return false
	}
	info := rest[n:]
	if len(info) <= len(toolFence) {
		return strings.HasPrefix(toolFence, info)
	}
	return strings.HasPrefix(info, toolFence) && strings.Trim(info[len(toolFence):], " \t\r") == ""
}

// closesFence reports whether line closes a block opened with n backticks.
func closesFence(line string, n int) bool {
	rest := strings.TrimLeft(line, " ")
	if len(line)-len(rest) > 3 {
		return false
	}
	rest = strings.TrimRight(rest, " \t\r")
	return len(rest) >= n && strings.Trim(rest, "`") == ""
}

// parseToolBlock reads one block's body: {"name": …, "input": {…}}. Whatever the model wrote, Input
// is a JSON object; a body that is not one keeps what was sent in BadInput (and the name, when it
// can be read), so the caller answers with an error instead of running a tool on a guess.
func parseToolBlock(body string) ToolCall {
	raw := strings.TrimSpace(body)
	var v struct {
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return ToolCall{Input: json.RawMessage("{}"), BadInput: raw}
	}
	tc := ToolCall{Name: v.Name, Input: json.RawMessage("{}")}
	in := bytes.TrimSpace(v.Input)
	var obj map[string]json.RawMessage
	switch {
	case len(in) == 0 || bytes.Equal(in, []byte("null")):
	case json.Unmarshal(in, &obj) == nil && obj != nil:
		var c bytes.Buffer
		_ = json.Compact(&c, in) // cannot fail: in was just parsed as JSON
		tc.Input = json.RawMessage(c.Bytes())
	default:
		tc.BadInput = raw
	}
	if tc.Name == "" {
		tc.BadInput = raw
	}
	return tc
}

// textReply is what both CLIs' streams build: the text through the tool scanner, the calls it finds.
type textReply struct {
	name    string
	emit    func(Delta)
	scan    *toolScanner
	reply   Reply
	nextID  func() string
	tooMany bool
}

func newTextReply(name string, emit func(Delta)) *textReply {
	r := &textReply{name: name, emit: emit}
	prefix := newBoundary()
	n := 0
	r.nextID = func() string { n++; return fmt.Sprintf("call_%s_%d", prefix, n) }
	r.scan = &toolScanner{
		emit: func(t string) { r.reply.Text += t; emit(Delta{Text: t}) },
		call: func(body string) {
			if len(r.reply.Calls) >= maxCalls {
				r.tooMany = true
				return
			}
			tc := parseToolBlock(body)
			tc.ID = r.nextID()
			r.reply.Calls = append(r.reply.Calls, tc)
			if tc.Name != "" {
				emit(Delta{Tool: tc.Name})
			}
		},
	}
	return r
}

// text feeds a piece of the model's text.
func (r *textReply) text(t string) { r.scan.write(t) }

// end closes the text; with calls, the reply stops for them.
func (r *textReply) end() {
	r.scan.finish()
	if len(r.reply.Calls) > 0 {
		r.reply.Stop = StopToolUse
	}
}
