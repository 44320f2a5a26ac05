package exports

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/note"
)

// The json export is one JSON document: every note (its frontmatter fields and sections, each fact
// with the id of the inbox line it came from), the router's core facts and cautions, every unfiled
// inbox line (who, via, trust, and an import's provenance), and every other card and Markdown document
// under /_content/ and /_config/ (its type, frontmatter and body). Each file carries its provenance from
// the diary: who changed it last, how, with what trust, when, and the diary entry. It is written as a
// stream, one element at a time. The shape is additive-only, like every --json shape.

// Provenance is the last diary entry that touched a file.
type Provenance struct {
	By    string `json:"by"`
	Via   string `json:"via,omitempty"`
	Trust string `json:"trust,omitempty"`
	At    string `json:"at"`
	Op    string `json:"op"`
	Entry string `json:"entry"`
}

type jsonNote struct {
	Path        string       `json:"path"`
	Name        string       `json:"name"`
	Kind        string       `json:"kind,omitempty"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	Aliases     []string     `json:"aliases,omitempty"`
	Maps        []string     `json:"maps,omitempty"`
	Source      string       `json:"source,omitempty"` // own, outside or mixed: who wrote it
	Updated     string       `json:"updated,omitempty"`
	Snapshot    string       `json:"snapshot,omitempty"`
	Facts       []jsonFact   `json:"facts"`
	Threads     []string     `json:"threads,omitempty"`
	Timeline    []note.Event `json:"timeline,omitempty"`
	Links       []string     `json:"links,omitempty"`
	Provenance  *Provenance  `json:"provenance,omitempty"`
}

type jsonFact struct {
	Text string `json:"text"`
	Line string `json:"line,omitempty"` // the inbox line it was filed from
}

type jsonLine struct {
	Day    string        `json:"day"` // the inbox day file, a box path
	ID     string        `json:"id"`
	Time   string        `json:"time"`
	Who    string        `json:"who"`
	Via    string        `json:"via"`
	Trust  string        `json:"trust"`
	Text   string        `json:"text"`
	Source *inbox.Source `json:"source,omitempty"` // an imported line's provenance
}

type jsonCard struct {
	Path       string      `json:"path"`
	Type       string      `json:"type,omitempty"`
	Front      any         `json:"frontmatter,omitempty"`
	Body       string      `json:"body"`
	Provenance *Provenance `json:"provenance,omitempty"`
}

func (b *box) json(ctx context.Context, out sink, opts Options) (Result, error) {
	res := Result{Kind: JSON, Path: out.name}
	prov, err := b.provenance()
	if err != nil {
		return res, err
	}
	notes, err := b.files(notesDir)
	if err != nil {
		return res, err
	}
	content, err := b.files("_content")
	if err != nil {
		return res, err
	}
	config, err := b.files("_config")
	if err != nil {
		return res, err
	}
	lines, err := b.inboxLines()
	if err != nil {
		return res, err
	}
	total := len(notes) + len(content) + len(config)
	done := 0
	n, err := out.write(func(w io.Writer) error {
		// w keeps its first write error and writeFile returns it, so the pieces below are not checked one by one.
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_, _ = io.WriteString(w, "{\n\"format\": \"box-export\",\n\"version\": 1,\n")
		_, _ = fmt.Fprintf(w, "\"exported\": %q,\n", opts.Now().UTC().Format(time.RFC3339))
		list := func(key string, items func(emit func(v any) error) error) error {
			_, _ = fmt.Fprintf(w, "%q: [", key)
			first := true
			err := items(func(v any) error {
				if !first {
					_, _ = io.WriteString(w, ",")
				}
				first = false
				return enc.Encode(v)
			})
			_, _ = io.WriteString(w, "]")
			return err
		}
		err := list("notes", func(emit func(any) error) error {
			for _, p := range notes {
				if err := ctx.Err(); err != nil {
					return err
				}
				done++
				opts.Progress(done, total)
				if !isNote(p) {
					continue
				}
				data, err := b.read(p)
				if err != nil {
					continue
				}
				jn := jsonNote{Path: "/" + p, Name: strings.TrimSuffix(path.Base(p), ".md"), Facts: []jsonFact{}, Provenance: prov["/"+p]}
				if n, err := note.ParseNote(data); err == nil {
					jn.Kind, jn.Title, jn.Description, jn.Aliases, jn.Maps = n.Kind, n.Title, n.Description, n.Aliases, n.Maps
					jn.Source, jn.Updated, jn.Snapshot, jn.Threads, jn.Timeline, jn.Links = n.Source, n.Updated, n.Snapshot, n.Threads, n.Timeline, n.Links
					for _, f := range n.Facts {
						jn.Facts = append(jn.Facts, jsonFact{Text: f.Text, Line: f.ID})
					}
				} else {
					jn.Snapshot = string(data) // broken frontmatter: its text whole, nothing lost
				}
				res.Notes++
				if err := emit(jn); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		_, _ = io.WriteString(w, ",\n\"router\": ")
		router := map[string]any{"coreFacts": []jsonFact{}, "cautions": []string{}}
		if data, err := b.read("_content/memory/MEMORY.md"); err == nil {
			if r, err := note.ParseRouter(data); err == nil {
				var core []jsonFact
				for _, f := range r.CoreFacts {
					core = append(core, jsonFact{Text: f.Text, Line: f.ID})
				}
				if core != nil {
					router["coreFacts"] = core
				}
				if r.Cautions != nil {
					router["cautions"] = r.Cautions
				}
			}
		}
		if err := enc.Encode(router); err != nil {
			return err
		}
		_, _ = io.WriteString(w, ",\n")
		err = list("inbox", func(emit func(any) error) error {
			for _, dl := range lines {
				res.Lines++
				l := dl.line
				jl := jsonLine{Day: "/" + dl.day, ID: l.ID, Time: l.Time, Who: l.Who, Via: l.Via, Trust: l.Trust, Text: l.Text}
				if !l.Source.IsZero() {
					jl.Source = &l.Source
				}
				if err := emit(jl); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		_, _ = io.WriteString(w, ",\n")
		err = list("cards", func(emit func(any) error) error {
			for _, p := range append(content, config...) {
				if err := ctx.Err(); err != nil {
					return err
				}
				done++
				opts.Progress(done, total)
				if isNote(p) || isInboxDay(p) || !(strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".card")) {
					continue
				}
				data, err := b.read(p)
				if err != nil {
					continue
				}
				jc := jsonCard{Path: "/" + p, Body: string(data), Provenance: prov["/"+p]}
				if c, err := card.Parse("/"+p, data); err == nil {
					jc.Type, jc.Body = c.Type, string(c.Body)
					var front any
					if c.Decode(&front) == nil {
						jc.Front = jsonable(front)
					}
				}
				res.Cards++
				if err := emit(jc); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		_, _ = io.WriteString(w, "\n}\n")
		return nil
	})
	if err != nil {
		return res, err
	}
	res.Bytes = n
	res.Text = fmt.Sprintf("Wrote %d notes, %d unfiled lines and %d cards and documents, each with its provenance, to %s.", res.Notes, res.Lines, res.Cards, out.name)
	return res, nil
}

func isInboxDay(p string) bool {
	_, _, ok := inbox.ParseFileName(path.Base(p))
	return ok && strings.HasPrefix(p, "_content/inbox/")
}

// jsonable turns YAML's map[any]any (from nested mappings) into maps JSON can encode.
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonable(x)
		}
		return t
	case map[any]any:
		out := map[string]any{}
		for k, x := range t {
			out[fmt.Sprint(k)] = jsonable(x)
		}
		return out
	case []any:
		for i, x := range t {
			t[i] = jsonable(x)
		}
		return t
	case time.Time:
		return t.Format(time.RFC3339)
	}
	return v
}

// provenance maps each box path to the newest diary entry that touched it.
func (b *box) provenance() (map[string]*Provenance, error) {
	days, err := b.files("_bookkeeping/diary")
	if err != nil {
		return nil, err
	}
	sort.Strings(days)
	out := map[string]*Provenance{}
	for _, d := range days {
		data, err := b.read(d)
		if err != nil {
			continue
		}
		entries, _ := diary.Parse(data)
		for _, e := range entries {
			p := &Provenance{By: e.Actor, Via: e.Via, Trust: e.Trust, At: e.Time, Op: e.Op, Entry: e.ID}
			for _, path := range e.Paths {
				out[path] = p
			}
		}
	}
	return out, nil
}
