package imports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The reference MCP memory server (@modelcontextprotocol/server-memory) keeps its knowledge graph as
// JSONL, one object a line: {"type":"entity","name","entityType","observations":[…]} and
// {"type":"relation","from","to","relationType"}; entities first. It skips blank lines and ignores
// other types, and so does this reader (reported). Each observation becomes one line naming its entity,
// each relation one readable sentence ("Leo is the son of Mira"), an entity without observations the
// line of what it is ("St Mary's Hospital is an organization."); the entity type travels as tidy's hint.

// InboxType is the entity type a box's server-memory export keeps its unfiled inbox lines under; its
// observations come back as plain lines, not as facts about an entity named like the inbox.
const InboxType = "inbox"

type smEntry struct {
	Type         string   `json:"type"`
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
	From         string   `json:"from"`
	To           string   `json:"to"`
	RelationType string   `json:"relationType"`
}

func (r *reader) serverMemory() error {
	f, err := r.openFile()
	if err != nil {
		return err
	}
	defer f.Close()
	types := map[string]string{} // entity name → type, for the relations after them
	return r.eachLine(f, r.src.Name, func(n int, raw []byte) error {
		where := fmt.Sprintf("%s line %d", r.src.Name, n)
		var e smEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return r.bad(where, "it is not a JSON object with the graph's fields (%v)", jsonErr(err))
		}
		switch e.Type {
		case "entity":
			if strings.TrimSpace(e.Name) == "" {
				return r.bad(where, "an entity needs a name")
			}
			types[e.Name] = e.EntityType
			if e.EntityType == InboxType { // a box's unfiled lines: plain lines, for tidy to place
				for i, o := range e.Observations {
					if err := r.line(Line{Text: o, File: r.src.Name, Where: where, ID: fmt.Sprintf("%s, line %d", e.Name, i+1),
						Key: "inbox\x00" + o}); err != nil {
						return err
					}
				}
				return nil
			}
			name := Readable(e.Name)
			if len(e.Observations) == 0 && strings.TrimSpace(e.EntityType) != "" { // the entity itself is the fact
				return r.line(Line{Text: name + " is " + article(Readable(e.EntityType)) + ".", File: r.src.Name, Where: where,
					ID: "entity " + e.Name, Key: "entity\x00" + e.Name, Entity: name, Type: e.EntityType})
			}
			for i, o := range e.Observations {
				if err := r.line(Line{
					Text: naming(name, o), File: r.src.Name, Where: where,
					ID:     fmt.Sprintf("entity %s, observation %d", e.Name, i+1),
					Key:    "entity\x00" + e.Name + "\x00" + o, // the server tells observations apart by their text
					Entity: name, Type: e.EntityType,
				}); err != nil {
					return err
				}
			}
		case "relation":
			if strings.TrimSpace(e.From) == "" || strings.TrimSpace(e.To) == "" || strings.TrimSpace(e.RelationType) == "" {
				return r.bad(where, "a relation needs from, to and relationType")
			}
			from := Readable(e.From)
			return r.line(Line{
				Text: from + " " + relationPhrase(e.RelationType) + " " + Readable(e.To) + ".", File: r.src.Name, Where: where,
				ID:     fmt.Sprintf("relation %s → %s (%s)", e.From, e.To, e.RelationType),
				Key:    "relation\x00" + e.From + "\x00" + e.RelationType + "\x00" + e.To,
				Entity: from, Type: types[e.From],
			})
		default:
			r.skip(where, "an entry of type %q is neither an entity nor a relation", e.Type)
		}
		return nil
	})
}

// eachLine calls fn with each non-blank line of a JSONL stream and its number, refusing lines past MaxLine.
func (r *reader) eachLine(rd io.Reader, name string, fn func(n int, raw []byte) error) error {
	br := bufio.NewReaderSize(rd, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		for {
			chunk, err := br.ReadSlice('\n')
			buf = append(buf, chunk...)
			if int64(len(buf)) > r.opts.MaxLine {
				return r.limit(fmt.Sprintf("%s line %d", name, n), "the line is longer than %d MiB", r.opts.MaxLine>>20)
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				if t := bytes.TrimSpace(buf); len(t) > 0 {
					return fn(n, t)
				}
				return nil
			}
			if err != nil {
				return err
			}
			break
		}
		if t := bytes.TrimSpace(buf); len(t) > 0 {
			if err := fn(n, t); err != nil {
				return err
			}
		}
	}
}

// article puts "a" or "an" before a noun phrase.
func article(noun string) string {
	noun = strings.ToLower(noun)
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// naming makes an observation name its entity: as it is when it already does, else "Entity: text".
func naming(entity, text string) string {
	text = oneLine(text)
	if entity == "" || text == "" || containsWords(text, entity) {
		return text
	}
	return entity + ": " + text
}

// containsWords reports whether phrase appears in text as whole words, ignoring case.
func containsWords(text, phrase string) bool {
	t, p := strings.ToLower(text), strings.ToLower(phrase)
	for i := 0; ; {
		j := strings.Index(t[i:], p)
		if j < 0 {
			return false
		}
		s, e := i+j, i+j+len(p)
		if (s == 0 || !isWordByte(t[s-1])) && (e == len(t) || !isWordByte(t[e])) {
			return true
		}
		i = s + 1
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
}

// relationPhrase renders a relation type as the words between its two ends: "works_at" → "works at",
// "son_of" → "is the son of" (a noun ending in "of" reads as what the first end is), "isSonOf" → "is son of".
func relationPhrase(rt string) string {
	p := strings.ToLower(Readable(rt))
	ws := strings.Fields(p)
	if len(ws) == 0 {
		return "relates to"
	}
	switch ws[0] {
	case "is", "was", "are", "were", "has", "had", "have":
		return p
	}
	if last := ws[len(ws)-1]; (last == "of" || last == "to" && len(ws) == 3) && len(ws) >= 2 && !verbish(ws[0]) {
		return "is the " + p
	}
	return p
}

// verbish guesses a verb in the third person or past tense ("works", "lived", "manages"), which an
// active-voice relation starts with and a noun phrase ("son of", "member of") does not.
func verbish(w string) bool {
	return strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "es") || strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss")
}

// jsonErr shortens a decoding error to what a person can act on.
func jsonErr(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "json: ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
