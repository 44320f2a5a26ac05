package memory

import (
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/index"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
)

// What the index holds, one document each: the router (kind router) and each of its core facts (core),
// every map and letter map (map), every note (note), every inbox line (inbox, with who, trust and its
// time), and every other Markdown file under /_content/ (doc). A file whose frontmatter is broken is
// still indexed by its text, so search never loses it; Problems names it.

// Kinds of indexed documents.
const (
	KindRouter = "router"
	KindCore   = "core"
	KindMap    = "map"
	KindNote   = "note"
	KindInbox  = "inbox"
	KindDoc    = "doc"
)

// load reads a file for Reconcile.
func (m *Memory) load(p string) ([]index.Doc, error) {
	if day, _, ok := strings.Cut(p, "#"); ok { // an inbox line the walk did not read
		data, _ := m.read(day)
		for _, d := range inboxDocs(day, data) {
			if d.Path == p {
				return []index.Doc{d}, nil
			}
		}
		return nil, nil
	}
	fi, err := m.stat(p)
	if err != nil {
		return nil, nil // gone since the walk: nothing to index
	}
	return m.loadStamped(p, stampOf(fi))
}

func (m *Memory) loadStamped(p string, st index.FileStamp) ([]index.Doc, error) {
	data, err := m.read(p)
	if err != nil {
		return nil, nil
	}
	docs := docsOf(p, data)
	for i := range docs {
		docs[i].ModTime, docs[i].Size = st.ModTime, st.Size
	}
	return docs, nil
}

// typeOf is a file's card type from its frontmatter, else its name; ok is false when the frontmatter
// is broken (the type then comes from the name alone).
func typeOf(p string, data []byte) (typ string, c *card.Card, ok bool) {
	c, err := card.Parse(p, data)
	if err == nil {
		return c.Type, c, true
	}
	typ, _ = card.TypeOf(p, "")
	return typ, nil, false
}

// docsOf turns one file into its documents. Memory files (router, maps, notes) are typed by their
// name, which saves parsing their YAML twice; other files by their frontmatter.
func docsOf(p string, data []byte) []index.Doc {
	switch typ, _ := card.TypeOf(p, ""); {
	case typ == "router" && p == layout.Router:
		return routerDocs(p, data, bodyOf(data))
	case typ == "map" && strings.HasPrefix(p, layout.MapsDir+"/"):
		d := index.Doc{Path: p, Kind: KindMap, Body: bodyOf(data), Title: nameOf(p)}
		if mp, err := note.ParseMap(data); err == nil && mp.Title != "" {
			d.Title = mp.Title
		}
		return []index.Doc{d}
	case typ == "note" && strings.HasPrefix(p, layout.NotesDir+"/"):
		return []index.Doc{noteDoc(p, data, bodyOf(data))}
	case isDay(p):
		return nil // its lines are documents of their own (see stamps)
	}
	typ, c, ok := typeOf(p, data)
	body := string(data)
	if ok {
		body = string(c.Body)
	}
	switch typ {
	case "router":
		return routerDocs(p, data, body)
	case "note":
		return []index.Doc{noteDoc(p, data, body)}
	case "map":
		d := index.Doc{Path: p, Kind: KindMap, Body: body}
		if ok {
			d.Title = c.String("title")
		}
		return []index.Doc{d}
	}
	d := index.Doc{Path: p, Kind: KindDoc, Body: body}
	if ok {
		d.Title, d.Description = c.String("title"), c.String("description")
		if c.String("trust") == inbox.Outside {
			d.Trust = inbox.Outside // a document may mark itself as others' words (a chat that read them); never the reverse
		}
	} else if front, _, has := card.Split(data); has && saysOutside(front) {
		d.Trust = inbox.Outside // a frontmatter too long or too broken to parse still keeps that mark
	}
	if d.Title == "" {
		d.Title = firstHeading(body)
	}
	return []index.Doc{d}
}

// saysOutside reports whether frontmatter text holds a top-level line marking the document as others'
// words, read line by line for a frontmatter card.Parse refuses.
func saysOutside(front []byte) bool {
	for _, l := range strings.Split(string(front), "\n") {
		k, v, found := strings.Cut(strings.TrimRight(l, " \t\r"), ":")
		if found && k == "trust" && strings.Trim(strings.TrimSpace(v), `"'`) == inbox.Outside {
			return true
		}
	}
	return false
}

// bodyOf is a Markdown file's text after its frontmatter (all of it when the frontmatter is missing
// or unterminated, so a broken file is still searched by every word).
func bodyOf(data []byte) string {
	_, body, _ := card.Split(data)
	return string(body)
}

func routerDocs(p string, data []byte, body string) []index.Doc {
	docs := []index.Doc{{Path: p, Kind: KindRouter, Title: "Memory", Body: body, Trust: inbox.Own}}
	r, err := note.ParseRouter(data)
	if err != nil {
		return docs
	}
	for i, f := range r.CoreFacts {
		id := f.ID
		if id == "" {
			id = "core-" + strconv.Itoa(i+1)
		}
		docs = append(docs, index.Doc{Path: p + "#" + id, Kind: KindCore, Title: "Core fact", Body: f.Text, Trust: inbox.Own})
	}
	return docs
}

func noteDoc(p string, data []byte, body string) index.Doc {
	d := index.Doc{Path: p, Kind: KindNote, Body: body, Title: strings.TrimSuffix(path.Base(p), ".md")}
	n, err := note.ParseNote(data)
	if err != nil {
		// Broken frontmatter: every word of the file stays searchable, and its source cannot be read, so
		// it may carry others' words (closed, never open: as an inbox day that cannot be read).
		d.Body, d.Trust = string(data), inbox.Outside
		return d
	}
	if n.Title != "" {
		d.Title = n.Title
	}
	d.Aliases, d.Description, d.Trust = n.Aliases, n.Description, trustOfSource(n.Source)
	if len(n.Maps) > 0 {
		d.Map = n.Maps[0]
	}
	if t, err := time.ParseInLocation("2006-01-02", n.Updated, time.Local); err == nil {
		d.Date = t
	}
	return d
}

// trustOfSource: a note any outside writer touched counts as outside, since its text may carry their words.
func trustOfSource(src string) string {
	if src == note.SourceOutside || src == note.SourceMixed {
		return inbox.Outside
	}
	return inbox.Own
}

func inboxDocs(p string, data []byte) []index.Doc {
	date := dayOf(p)
	var docs []index.Doc
	seen := map[string]int{}
	for _, l := range inbox.LinesOf(data) {
		key := p + "#" + l.ID
		// Two lines of a day with one id (a file edited by hand, which tidy leaves) are two documents:
		// found, and counted as waiting, as the file holds them.
		if seen[l.ID]++; seen[l.ID] > 1 {
			key += "~" + strconv.Itoa(seen[l.ID])
		}
		d := index.Doc{Path: key, Kind: KindInbox, Body: l.Text, Who: l.Who, Trust: l.Trust, Title: "Inbox " + date}
		if t, err := time.ParseInLocation("2006-01-02 15:04:05", date+" "+l.Time, time.Local); err == nil {
			d.Date = t
		}
		docs = append(docs, d)
	}
	return docs
}

// dayOf is the date an inbox day file (or a later part of the day) is named for.
func dayOf(p string) string {
	if date, _, ok := inbox.ParseFileName(path.Base(p)); ok {
		return date
	}
	return strings.TrimSuffix(path.Base(p), ".md")
}

func firstHeading(body string) string {
	for _, l := range strings.Split(body, "\n") {
		if t, ok := strings.CutPrefix(l, "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// nameOf is the name read takes for a memory file ("entity-leo", "moc-people/a", "MEMORY"), or "".
func nameOf(p string) string {
	p, _, _ = strings.Cut(p, "#")
	switch {
	case p == layout.Router:
		return "MEMORY"
	case strings.HasPrefix(p, layout.MapsDir+"/"):
		return strings.TrimSuffix(strings.TrimPrefix(p, layout.MapsDir+"/"), ".md")
	case strings.HasPrefix(p, layout.NotesDir+"/"):
		return strings.TrimSuffix(strings.TrimPrefix(p, layout.NotesDir+"/"), ".md")
	}
	return ""
}

// notePath is the file of a note name.
func notePath(name string) string { return layout.NotesDir + "/" + name + ".md" }

// mapPath is the file of a map name (moc-people, moc-people/a).
func mapPath(name string) string { return layout.MapsDir + "/" + name + ".md" }
