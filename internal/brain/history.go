package brain

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
)

// ChatsDir is where the chat history lives: one Markdown file per conversation, under _content so the
// memory's search finds it like any other document (docs/BRAIN.md, "The chat's history").
const ChatsDir = "/_content/chats"

// chatIDPattern is a conversation's id: the day it started and six random hex characters.
var chatIDPattern = lazyregexp.New(`^\d{4}-\d{2}-\d{2}-[0-9a-f]{6}$`)

// ValidChatID reports whether id names a conversation.
func ValidChatID(id string) bool { return chatIDPattern.MatchString(id) }

func chatPath(id string) string { return ChatsDir + "/" + id + ".md" }

func newChatID(now time.Time) string { return now.Format("2006-01-02") + "-" + randomHex(3) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// Message is one message of a conversation as the history keeps it: who said it, when, and for the
// box's answers the model and what the turn cost.
type Message struct {
	Owner bool   `json:"owner"`
	Time  string `json:"time"`            // HH:MM, the owner's local time
	Model string `json:"model,omitempty"` // the box's answers: the model that answered
	Cost  string `json:"cost,omitempty"`  // the box's answers: "$0.0012", as the heading shows it
	Text  string `json:"text"`
}

// A conversation file:
//
//	# Chat · Thursday 5 March 2026
//
//	### You · 14:02
//	When does Leo swim?
//
//	### Box · 14:02 · claude-haiku-4-5 · $0.0012
//	On Thursdays at 5:30.
//
// A message line that starts with "###" or a backslash gets a backslash in front, so no message can
// forge a heading; reading takes it off again. The format round-trips exactly (FuzzHistory).
var headingPattern = lazyregexp.New(`^### (You|Box) · (\d{2}:\d{2})((?: · [^\n]*)?)$`)

// headingClock is a heading's time.
var headingClock = lazyregexp.New(`^\d{2}:\d{2}$`)

// outsideFront marks a conversation in which the box's answers were made after reading what others
// wrote: its answers may quote them, so search and reads give the file the trust of others' words
// (fenced for every assistant), never the owner's (docs/BRAIN.md, "History").
const outsideFront = "---\ntrust: outside\n---\n"

// readsOutside reports whether a conversation file has the trust of others' words: its frontmatter's
// trust, read as the memory's index reads it (card.Parse), so a file saved with a byte-order mark, CRLF
// or other keys counts as search counts it. A frontmatter that cannot be read may say outside, so it is
// taken to.
func readsOutside(path string, data []byte) bool {
	c, err := card.Parse(path, data)
	if err == nil {
		return c.String("trust") == "outside"
	}
	_, _, front := card.Split(data)
	return front
}

// markOutside gives a conversation file the trust of others' words, once, keeping its frontmatter's
// other keys; a frontmatter that cannot be edited gets the mark in a new one before it.
func markOutside(path string, data []byte) []byte {
	if c, err := card.Parse(path, data); err == nil && c.String("trust") == "outside" {
		return data
	}
	if out, err := card.SetField(data, []string{"trust"}, "outside"); err == nil {
		return out
	}
	return append([]byte(outsideFront), data...)
}

// chatHeader is the first line of a new conversation file.
func chatHeader(now time.Time) string {
	return "# Chat · " + now.Format("Monday 2 January 2006") + "\n"
}

// formatMessage is one message as it is appended to the file.
func formatMessage(m Message) string {
	var b strings.Builder
	b.WriteString("\n### ")
	if m.Owner {
		b.WriteString("You · " + m.Time)
	} else {
		b.WriteString("Box · " + m.Time)
		for _, extra := range []string{m.Model, m.Cost} {
			if extra = oneLine(extra); extra != "" {
				b.WriteString(" · " + extra)
			}
		}
	}
	b.WriteString("\n")
	for _, l := range strings.Split(strings.TrimRight(m.Text, "\n"), "\n") {
		if strings.HasPrefix(l, "###") || strings.HasPrefix(l, `\`) {
			l = `\` + l
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// parseHistory reads a conversation file back into its messages. Text before the first heading (the
// title) is not a message. It never fails: a file edited by hand reads as what its headings say.
func parseHistory(data []byte) []Message {
	var out []Message
	var cur *Message
	var lines []string
	flush := func() {
		if cur != nil {
			for len(lines) > 0 && lines[len(lines)-1] == "" {
				lines = lines[:len(lines)-1]
			}
			cur.Text = strings.Join(lines, "\n")
			out = append(out, *cur)
		}
		lines = nil
	}
	for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		if m := headingPattern.FindStringSubmatch(l); m != nil {
			flush()
			cur = &Message{Owner: m[1] == "You", Time: m[2]}
			if !cur.Owner {
				extra := strings.Split(strings.TrimPrefix(m[3], " · "), " · ")
				if len(extra) > 0 && m[3] != "" {
					cur.Model = extra[0]
				}
				if len(extra) > 1 {
					cur.Cost = strings.Join(extra[1:], " · ")
				}
			}
			continue
		}
		if cur == nil {
			continue
		}
		if strings.HasPrefix(l, `\`) {
			l = l[1:]
		}
		lines = append(lines, l)
	}
	flush()
	return out
}

// checkChatID refuses an id that is not a conversation's.
func checkChatID(id string) error {
	if !ValidChatID(id) {
		return errs.E("brain.chat", errs.Invalid, "%q is not a conversation id (like 2026-03-05-a1b2c3); start a new one instead.", id)
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// recent keeps the last messages of a conversation that fit in limit characters, oldest first, so a
// long conversation never grows the prompt past its bound.
func recent(ms []Message, most, limit int) []Message {
	n := 0
	i := len(ms)
	for i > 0 && len(ms)-i < most && n+len(ms[i-1].Text) <= limit {
		n += len(ms[i-1].Text)
		i--
	}
	return ms[i:]
}
