package exports

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/imports"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/note"
)

// The server-memory export writes the reference MCP memory server's JSONL graph, which it loads as
// it is (MEMORY_FILE_PATH): every note becomes an entity (its title, its kind as entityType, its Key
// facts as observations), the owner's core facts join the owner's own entity ("Owner"), each pair of
// linked notes one relation "relates_to", and the unfiled inbox lines become the observations of one
// entity of type "inbox" (InboxEntity), which `box import server-memory` reads back as plain lines.
// A note's timeline (facts that were replaced) stays behind: the graph has no place for dates.

type smEntity struct {
	Type         string   `json:"type"`
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

type smRelation struct {
	Type         string `json:"type"`
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

const notesDir = "_content/memory/notes"

func isNote(p string) bool {
	return strings.HasPrefix(p, notesDir+"/") && strings.HasSuffix(p, ".md") && !strings.Contains(strings.TrimPrefix(p, notesDir+"/"), "/")
}

func (b *box) serverMemory(ctx context.Context, out sink, opts Options) (Result, error) {
	res := Result{Kind: ServerMemory, Path: out.name}
	files, err := b.files(notesDir)
	if err != nil {
		return res, err
	}
	// Entities keep the notes' order; a title two notes share is one entity (the server keys by name).
	var order []string
	entities := map[string]*smEntity{}
	titleOf := map[string]string{} // note name → entity name
	links := map[string][]string{}
	for i, p := range files {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		opts.Progress(i, len(files))
		if !isNote(p) {
			continue
		}
		data, err := b.read(p)
		if err != nil {
			continue
		}
		n, err := note.ParseNote(data)
		if err != nil {
			continue // a broken note is reported by validate; its text is still in the markdown export
		}
		name := strings.TrimSuffix(path.Base(p), ".md")
		title := strings.TrimSpace(n.Title)
		if title == "" {
			title = name
		}
		e := entities[title]
		if e == nil {
			e = &smEntity{Type: "entity", Name: title, EntityType: entityType(n.Kind), Observations: []string{}}
			entities[title] = e
			order = append(order, title)
		}
		for _, f := range n.Facts {
			e.Observations = append(e.Observations, f.Text)
		}
		titleOf[name] = title
		links[name] = n.Links
		res.Notes++
	}
	if data, err := b.read("_content/memory/MEMORY.md"); err == nil {
		if r, err := note.ParseRouter(data); err == nil && len(r.CoreFacts) > 0 {
			me := titleOf[note.OwnerName]
			if me == "" {
				me = note.OwnerTitle
				entities[me] = &smEntity{Type: "entity", Name: me, EntityType: "person", Observations: []string{}}
				order = append(order, me)
			}
			for _, f := range r.CoreFacts {
				entities[me].Observations = append(entities[me].Observations, f.Text)
			}
		}
	}
	lines, err := b.inboxLines()
	if err != nil {
		return res, err
	}
	if len(lines) > 0 {
		e := &smEntity{Type: "entity", Name: InboxEntity, EntityType: imports.InboxType}
		for _, l := range lines {
			e.Observations = append(e.Observations, l.line.Text)
		}
		entities[InboxEntity] = e
		order = append(order, InboxEntity)
		res.Lines = len(lines)
	}
	// Links are both ways in the box; one relation per pair.
	var rels []smRelation
	seen := map[[2]string]bool{}
	names := make([]string, 0, len(links))
	for n := range links {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, from := range names {
		for _, to := range links[from] {
			a, b := titleOf[from], titleOf[to]
			if a == "" || b == "" || a == b || seen[[2]string{a, b}] || seen[[2]string{b, a}] {
				continue
			}
			seen[[2]string{a, b}] = true
			rels = append(rels, smRelation{Type: "relation", From: a, To: b, RelationType: "relates_to"})
		}
	}
	res.Relations = len(rels)
	n, err := out.write(func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, name := range order {
			res.Facts += len(entities[name].Observations)
			if err := enc.Encode(entities[name]); err != nil {
				return err
			}
		}
		for _, r := range rels {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	opts.Progress(len(files), len(files))
	res.Bytes = n
	res.Text = fmt.Sprintf("Wrote %d entities (%d notes, %d facts, %d unfiled lines) and %d relations to %s.", len(order), res.Notes, res.Facts, res.Lines, res.Relations, out.name)
	return res, nil
}

// entityType is a note kind as an entity type: organisations read as "organization", as the
// reference server's own examples write it; other kinds as they are.
func entityType(kind string) string {
	switch kind {
	case "org":
		return "organization"
	case "":
		return "topic"
	}
	return kind
}

// dayLine is an unfiled line and its day file.
type dayLine struct {
	day  string
	line inbox.Line
}

// inboxLines reads every unfiled line, oldest day first.
func (b *box) inboxLines() ([]dayLine, error) {
	files, err := b.files("_content/inbox")
	if err != nil {
		return nil, err
	}
	sort.SliceStable(files, func(i, j int) bool {
		di, ni, _ := inbox.ParseFileName(path.Base(files[i]))
		dj, nj, _ := inbox.ParseFileName(path.Base(files[j]))
		if di != dj {
			return di < dj
		}
		return ni < nj
	})
	var out []dayLine
	for _, p := range files {
		if _, _, ok := inbox.ParseFileName(path.Base(p)); !ok {
			continue
		}
		data, err := b.read(p)
		if err != nil {
			continue
		}
		for _, l := range inbox.LinesOf(data) {
			out = append(out, dayLine{day: p, line: l})
		}
	}
	return out, nil
}
