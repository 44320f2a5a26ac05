package imports

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/boxmem/box/internal/lazyregexp"
)

// Claude's data export (Settings → Privacy → Export data) is a zip holding conversations.json (a list
// of {uuid, name, created_at, updated_at, chat_messages}), users.json, projects.json and, since Claude
// has memory, memories.json: a list of {conversations_memory, project_memories: {project uuid: text},
// account_uuid}, each memory a Markdown text. A message is {uuid, sender (human or assistant), text,
// content: [{type: text|thinking|tool_use|tool_result, …}], created_at, attachments: [{file_name,
// extracted_content}], files: [{file_name}]}. Messages are in order; the text of attachments Claude
// extracted is kept in the document (quoted), other files are named.
//
// The memories become lines, one per sentence of each bullet or paragraph; headings are left out.

type claudeConversation struct {
	UUID      string          `json:"uuid"`
	Name      *string         `json:"name"`
	CreatedAt any             `json:"created_at"`
	Messages  []claudeMessage `json:"chat_messages"`
}

type claudeMessage struct {
	Sender    string `json:"sender"`
	Text      string `json:"text"`
	CreatedAt any    `json:"created_at"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
		Name string `json:"name"`
	} `json:"content"`
	Attachments []struct {
		FileName         string `json:"file_name"`
		ExtractedContent string `json:"extracted_content"`
	} `json:"attachments"`
	Files []struct {
		FileName string `json:"file_name"`
	} `json:"files"`
}

func (r *reader) claude() error {
	return r.export("Settings → Privacy", r.claudeMemories, func(file, where string, raw json.RawMessage) error {
		var c claudeConversation
		if err := json.Unmarshal(raw, &c); err != nil {
			return r.bad(where, "a conversation is an object with chat_messages (%v)", jsonErr(err))
		}
		if c.UUID == "" {
			return r.bad(where, "the conversation has no uuid")
		}
		title := ""
		if c.Name != nil {
			title = *c.Name
		}
		doc := &convDoc{r: r, file: file, id: c.UUID, title: title, at: parseTime(c.CreatedAt), where: where}
		for _, m := range c.Messages {
			if msg, ok := claudeRender(m); ok {
				doc.msgs = append(doc.msgs, msg)
			}
		}
		return doc.emit()
	})
}

func claudeRender(m claudeMessage) (message, bool) {
	who := "You"
	switch m.Sender {
	case "human":
	case "assistant":
		who = "Claude"
	default:
		return message{}, false
	}
	var parts []string
	for _, c := range m.Content {
		switch c.Type {
		case "text":
			if strings.TrimSpace(c.Text) != "" {
				parts = append(parts, c.Text)
			}
		case "tool_use":
			parts = append(parts, fmt.Sprintf("*[used the tool %s]*", c.Name))
		}
	}
	if len(parts) == 0 && strings.TrimSpace(m.Text) != "" {
		parts = append(parts, m.Text)
	}
	for _, at := range m.Attachments {
		s := fmt.Sprintf("*[attachment: %s]*", at.FileName)
		if t := strings.TrimSpace(at.ExtractedContent); t != "" {
			s += "\n\n> " + strings.ReplaceAll(t, "\n", "\n> ")
		}
		parts = append(parts, s)
	}
	for _, f := range m.Files {
		parts = append(parts, fmt.Sprintf("*[file: %s — not in this document]*", f.FileName))
	}
	if len(parts) == 0 {
		return message{}, false
	}
	return message{who: who, at: parseTime(m.CreatedAt), text: strings.Join(parts, "\n\n")}, true
}

func (r *reader) claudeMemories(a *archive) error {
	p := a.find("memories.json")
	if p == "" {
		return nil
	}
	f, err := a.open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = r.eachElement(f, p, nil, func(at string, i int, raw json.RawMessage) error {
		where := fmt.Sprintf("%s entry %d", at, i+1)
		var m struct {
			Conversations string            `json:"conversations_memory"`
			Projects      map[string]string `json:"project_memories"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return r.bad(where, "a memory entry holds conversations_memory and project_memories (%v)", jsonErr(err))
		}
		if err := r.memoryText(p, where, "conversations_memory", m.Conversations); err != nil {
			return err
		}
		for _, uuid := range slices.Sorted(maps.Keys(m.Projects)) {
			if err := r.memoryText(p, where, "project "+uuid, m.Projects[uuid]); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

var (
	sentenceEnd = lazyregexp.New(`([.!?])\s+(\p{Lu}|\d)`)
	listMark    = lazyregexp.New(`^\s*(?:[-*+•]|\d+[.)])\s+`)
)

// memoryText turns a Markdown memory into lines: each bullet or paragraph (with the lines that continue
// it) split into sentences; headings and bold-only lines ("**Work context**") are labels, not facts.
// Every sentence carries its whole block, which the import checks for secrets as one.
func (r *reader) memoryText(file, where, part, text string) error {
	n := 0
	var block []string
	first := 0
	flush := func() error {
		if len(block) == 0 {
			return nil
		}
		whole := strings.Join(block, " ")
		block = nil
		for _, sent := range splitSentences(whole) {
			n++
			if err := r.line(Line{Text: sent, File: file, Where: fmt.Sprintf("%s, %s line %d", where, part, first+1), Block: whole,
				ID: fmt.Sprintf("%s, sentence %d", part, n), Key: "memory\x00" + part + "\x00" + sent}); err != nil {
				return err
			}
		}
		return nil
	}
	for i, raw := range strings.Split(text, "\n") {
		s := strings.TrimSpace(raw)
		label := strings.HasPrefix(s, "#") || strings.HasPrefix(s, "**") && strings.HasSuffix(s, "**") && strings.Count(s, "**") == 2
		if s == "" || label || listMark.MatchString(s) {
			if err := flush(); err != nil {
				return err
			}
		}
		if s == "" || label {
			continue
		}
		if len(block) == 0 {
			first = i
		}
		block = append(block, strings.ReplaceAll(listMark.ReplaceAllString(s, ""), "**", ""))
	}
	return flush()
}

func splitSentences(s string) []string {
	marked := sentenceEnd.ReplaceAllString(s, "$1\x00$2")
	var out []string
	for _, p := range strings.Split(marked, "\x00") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
