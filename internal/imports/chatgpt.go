package imports

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// ChatGPT's data export (Settings → Data controls → Export) is a zip holding conversations.json: a list
// of conversations, each {id, title, create_time, update_time, mapping, current_node}. mapping is a
// tree of nodes {id, message, parent, children}; a message has author.role (user, assistant, system,
// tool), create_time and content ({content_type, parts} for text, {text} for code). Editing a message
// or regenerating an answer makes a fork; current_node is the leaf of the branch the app shows.
//
// Our choice: the document follows current_node back to the root, which is the conversation as the
// owner last saw it; every other branch is kept after it, under "Other branches", each marked with the
// message it forked from. System and tool messages, and messages the app hides, are left out.
// Exports that carry saved memories (memory.json beside conversations.json) give one line each.

type gptConversation struct {
	ID             string             `json:"id"`
	ConversationID string             `json:"conversation_id"`
	Title          *string            `json:"title"`
	CreateTime     any                `json:"create_time"`
	UpdateTime     any                `json:"update_time"`
	Mapping        map[string]gptNode `json:"mapping"`
	CurrentNode    string             `json:"current_node"`
}

type gptNode struct {
	ID       string      `json:"id"`
	Message  *gptMessage `json:"message"`
	Parent   *string     `json:"parent"`
	Children []string    `json:"children"`
}

type gptMessage struct {
	Author struct {
		Role string `json:"role"`
	} `json:"author"`
	CreateTime any `json:"create_time"`
	Content    struct {
		ContentType string            `json:"content_type"`
		Parts       []json.RawMessage `json:"parts"`
		Text        string            `json:"text"`
		Language    string            `json:"language"`
	} `json:"content"`
	Metadata struct {
		Hidden bool `json:"is_visually_hidden_from_conversation"`
	} `json:"metadata"`
}

func (r *reader) chatGPT() error {
	return r.export("Settings → Data controls", func(a *archive) error { return r.savedMemories(a, "memory.json", "memories.json") },
		func(file, where string, raw json.RawMessage) error {
			var c gptConversation
			if err := json.Unmarshal(raw, &c); err != nil {
				return r.bad(where, "a conversation is an object with a mapping of messages (%v)", jsonErr(err))
			}
			return r.gptConversation(file, where, c)
		})
}

// export reads a chat export (a zip or its folder): first its memories, then each conversation of its
// conversations.json, streamed.
func (r *reader) export(from string, memories func(a *archive) error, conversation func(file, where string, raw json.RawMessage) error) error {
	a, err := r.openArchive()
	if err != nil {
		return err
	}
	defer func() { _ = a.Close() }() // read only
	if err := memories(a); err != nil {
		return err
	}
	p := a.find("conversations.json")
	if p == "" {
		return r.bad(r.src.Name, "there is no conversations.json in it (the export zip from %s has one)", from)
	}
	f, err := a.open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	found, err := r.eachElement(f, p, nil, func(at string, i int, raw json.RawMessage) error {
		return conversation(p, fmt.Sprintf("%s conversation %d", at, i+1), raw)
	})
	if err == nil && !found {
		return r.bad(p, "it should be a list of conversations")
	}
	return err
}

func (r *reader) gptConversation(file, where string, c gptConversation) error {
	id := c.ID
	if id == "" {
		id = c.ConversationID
	}
	if id == "" {
		return r.bad(where, "the conversation has no id")
	}
	title := ""
	if c.Title != nil {
		title = *c.Title
	}
	// The shown branch: from current_node up through the parents (a cycle or a missing node ends it).
	onPath := map[string]bool{}
	var path []string
	for n := c.CurrentNode; n != "" && !onPath[n]; {
		node, ok := c.Mapping[n]
		if !ok {
			break
		}
		onPath[n] = true
		path = append(path, n)
		if node.Parent == nil {
			break
		}
		n = *node.Parent
	}
	if len(path) == 0 { // no current_node: take the first child at every fork, from the root
		for n := gptRoot(c.Mapping); n != "" && !onPath[n]; {
			onPath[n] = true
			path = append(path, n)
			kids := c.Mapping[n].Children
			n = ""
			if len(kids) > 0 {
				n = kids[0]
			}
		}
	} else {
		for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
			path[i], path[j] = path[j], path[i]
		}
	}
	doc := &convDoc{r: r, file: file, id: id, title: title, at: parseTime(c.CreateTime), where: where}
	for _, n := range path {
		if m, ok := gptRender(c.Mapping[n].Message); ok {
			doc.msgs = append(doc.msgs, m)
		}
	}
	doc.trailer = gptBranches(c.Mapping, onPath)
	return doc.emit()
}

// gptRoot is the node without a parent (the first by id when a broken export has several).
func gptRoot(m map[string]gptNode) string {
	var roots []string
	for id, n := range m {
		if n.Parent == nil || *n.Parent == "" {
			roots = append(roots, id)
		}
	}
	sort.Strings(roots)
	if len(roots) == 0 {
		return ""
	}
	return roots[0]
}

// gptBranches renders the branches off the shown path: each starts at a child not on the path (of a
// path node, or a later fork inside another branch) and follows first children.
func gptBranches(m map[string]gptNode, onPath map[string]bool) string {
	type branch struct {
		start, from string
	}
	var starts []branch
	seen := map[string]bool{}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		kids := m[id].Children
		for i, k := range kids {
			if onPath[k] || !onPath[id] && i == 0 {
				continue
			}
			if _, ok := m[k]; ok {
				starts = append(starts, branch{start: k, from: id})
			}
		}
	}
	var b strings.Builder
	n := 0
	for _, br := range starts {
		var msgs []message
		for cur := br.start; cur != "" && !seen[cur]; {
			seen[cur] = true
			node := m[cur]
			if msg, ok := gptRender(node.Message); ok {
				msgs = append(msgs, msg)
			}
			cur = ""
			if len(node.Children) > 0 {
				cur = node.Children[0]
			}
		}
		if len(msgs) == 0 {
			continue
		}
		if n == 0 {
			b.WriteString("## Other branches\n\n> Not shown in ChatGPT: earlier versions of an edited message or a regenerated answer, kept as they were.\n\n")
		}
		n++
		fmt.Fprintf(&b, "### Branch %d (forks after %s)\n\n", n, gptLabel(m, br.from))
		for _, msg := range msgs {
			fmt.Fprintf(&b, "**%s**\n\n%s\n\n", msg.who, strings.TrimRight(msg.text, "\n "))
		}
	}
	return b.String()
}

// gptLabel names the message a branch forks after by its first words.
func gptLabel(m map[string]gptNode, id string) string {
	if msg, ok := gptRender(m[id].Message); ok {
		t := oneLine(msg.text)
		if r := []rune(t); len(r) > 60 {
			t = string(r[:60]) + "…"
		}
		return fmt.Sprintf("%s: “%s”", msg.who, t)
	}
	return "the start"
}

// gptRender gives the speaker and text of a message the app shows, or false.
func gptRender(msg *gptMessage) (message, bool) {
	if msg == nil || msg.Metadata.Hidden {
		return message{}, false
	}
	who := ""
	switch msg.Author.Role {
	case "user":
		who = "You"
	case "assistant":
		who = "ChatGPT"
	default:
		return message{}, false
	}
	var parts []string
	switch msg.Content.ContentType {
	case "text", "multimodal_text", "":
		for _, p := range msg.Content.Parts {
			var s string
			if json.Unmarshal(p, &s) == nil {
				if strings.TrimSpace(s) != "" {
					parts = append(parts, s)
				}
				continue
			}
			var obj struct {
				ContentType  string `json:"content_type"`
				AssetPointer string `json:"asset_pointer"`
			}
			if json.Unmarshal(p, &obj) == nil && obj.ContentType != "" {
				ref := obj.AssetPointer
				if i := strings.LastIndex(ref, "://"); i >= 0 {
					ref = ref[i+3:]
				}
				parts = append(parts, fmt.Sprintf("*[attachment: %s %s — not in this document]*", strings.TrimSuffix(obj.ContentType, "_asset_pointer"), ref))
			}
		}
	case "code":
		parts = append(parts, "```"+msg.Content.Language+"\n"+msg.Content.Text+"\n```")
	default:
		if strings.TrimSpace(msg.Content.Text) != "" {
			parts = append(parts, msg.Content.Text)
		}
	}
	if len(parts) == 0 {
		return message{}, false
	}
	return message{who: who, at: parseTime(msg.CreateTime), text: strings.Join(parts, "\n\n")}, true
}

// savedMemories reads the first of names that the export holds, as a list of saved memories: objects
// with their text (content, memory or text) and maybe an id and a time. The export may hold none.
func (r *reader) savedMemories(a *archive, names ...string) error {
	for _, name := range names {
		p := a.find(name)
		if p == "" {
			continue
		}
		f, err := a.open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		found, err := r.eachElement(f, p, []string{"memories", "results"}, func(at string, i int, raw json.RawMessage) error {
			where := fmt.Sprintf("%s entry %d", at, i+1)
			var m struct {
				mem0Memory
				CreateTime any   `json:"create_time"`
				UpdateTime any   `json:"update_time"`
				Enabled    *bool `json:"enabled"`
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return r.line(Line{Text: s, File: p, ID: fmt.Sprintf("saved memory %d", i+1), Key: "memory\x00" + s, Where: where})
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				return r.bad(where, "a saved memory is its text or an object holding it (%v)", jsonErr(err))
			}
			text := first(m.Content, m.Memory, m.Text)
			if text == nil {
				return r.bad(where, "a saved memory needs its text (content)")
			}
			if m.Enabled != nil && !*m.Enabled {
				r.skip(where, "the saved memory is switched off")
				return nil
			}
			when := parseTime(m.UpdatedAt)
			for _, t := range []any{m.UpdateTime, m.CreatedAt, m.CreateTime} {
				if when.IsZero() {
					when = parseTime(t)
				}
			}
			id := strings.Trim(string(m.ID), `"`)
			l := Line{Text: *text, Time: when, File: p, ID: fmt.Sprintf("saved memory %d", i+1), Key: "memory\x00" + *text, Where: where}
			if id != "" && id != "null" {
				l.ID, l.Key = "saved memory "+id, "memory\x00"+id
			}
			return r.line(l)
		})
		if err == nil && !found {
			return r.bad(p, "it should be a list of saved memories")
		}
		return err
	}
	return nil
}
