package imports

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/boxmem/box/internal/secret"
)

// A conversation becomes one document: frontmatter (title, date, where it came from, its id), a
// heading, then each message as a bold speaker line with its time and the text as written. A
// conversation longer than MaxDoc goes on in "-part-2.md", "-part-3.md" …, split between messages
// (a single message longer than that is split inside its text, between lines where it can be).

type message struct {
	who  string
	at   time.Time
	text string
}

// convDoc renders and emits one conversation.
type convDoc struct {
	r       *reader
	file    string // conversations.json, as found
	id      string
	title   string
	at      time.Time
	where   string
	msgs    []message
	trailer string // appended after the messages (other branches)
}

func (c *convDoc) emit() error {
	title := strings.TrimSpace(oneLine(c.title))
	if title == "" {
		title = "Untitled conversation"
	}
	zone := c.r.opts.zone()
	date := "undated"
	if !c.at.IsZero() {
		date = c.at.In(zone).Format("2006-01-02")
	}
	slug := Slug(title)
	if _, found := secret.Stored(title); found || slug == "" {
		slug = "untitled" // a title that reads like a secret never becomes a file name (git and the diary keep those)
	}
	base := fmt.Sprintf("%s-%s-%s", date, slug, shortID(c.id))
	var parts []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, cur.String())
			cur.Reset()
		}
	}
	add := func(s string) {
		for len(s) > 0 {
			if cur.Len() > 0 && cur.Len()+len(s) > c.r.opts.MaxDoc {
				flush()
			}
			room := c.r.opts.MaxDoc - cur.Len()
			if len(s) <= room {
				cur.WriteString(s)
				return
			}
			cut := cutAt(s, room)
			cur.WriteString(s[:cut])
			s = s[cut:]
			flush()
		}
	}
	for _, m := range c.msgs {
		head := "**" + m.who + "**"
		if !m.at.IsZero() {
			head += " · " + m.at.In(zone).Format("2006-01-02 15:04")
		}
		add(head + "\n\n" + strings.TrimRight(m.text, "\n ") + "\n\n")
	}
	if c.trailer != "" {
		add(c.trailer)
	}
	flush()
	if len(parts) == 0 {
		parts = []string{"*(no messages)*\n"}
	}
	for i, body := range parts {
		name, t, key := base+".md", title, c.id
		if i > 0 {
			name = fmt.Sprintf("%s-part-%d.md", base, i+1)
			t = fmt.Sprintf("%s (part %d of %d)", title, i+1, len(parts))
			key = fmt.Sprintf("%s#%d", c.id, i+1)
		}
		var b strings.Builder
		b.WriteString("---\n")
		fmt.Fprintf(&b, "title: %s\n", yamlString(t))
		if !c.at.IsZero() {
			fmt.Fprintf(&b, "date: %s\n", c.at.In(zone).Format("2006-01-02"))
		}
		fmt.Fprintf(&b, "imported-from: %s\n", yamlString(c.r.src.Kind+" "+c.file))
		fmt.Fprintf(&b, "conversation: %s\n", yamlString(c.id))
		b.WriteString("---\n")
		fmt.Fprintf(&b, "# %s\n\n", t)
		b.WriteString(body)
		if err := c.r.doc(Doc{Path: name, Data: []byte(b.String()), File: c.file, ID: "conversation " + c.id, Key: key, Where: c.where}); err != nil {
			return err
		}
	}
	return nil
}

// cutAt is where to cut s to fit n bytes: the last line break before n, else a rune boundary.
func cutAt(s string, n int) int {
	if n <= 0 {
		n = 1
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i > 0 {
		return i + 1
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	if n == 0 {
		return min(len(s), 4)
	}
	return n
}

// yamlString quotes s as a YAML double-quoted scalar (JSON's escapes are YAML's).
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
