package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/index"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/note"
)

// Search runs words through the index with the rules of docs/SEARCH.md and the input's filters: the
// documents that match, then, when fewer than the limit do, the best partial matches.
func (m *Memory) Search(ctx context.Context, in SearchInput) (SearchResult, error) {
	k, ok := searchKinds[in.Kind]
	if !ok {
		return SearchResult{}, errs.E("memory.search", errs.Invalid, "The kind %q is not one the box has; use one of %s, or leave it out to search every kind", in.Kind, strings.Join(SearchKinds, ", "))
	}
	m.ensureFresh(ctx)
	q := index.Query{Text: in.Words, Limit: min(in.Limit, index.MaxLimit), Kind: k.kind, Prefix: k.prefix, Map: in.Map, Who: unfenced(in.Who),
		Trust: in.Trust, Since: in.Since, Until: in.Until, Partial: true}
	if q.Limit < 0 {
		q.Limit = 0
	}
	if !in.Until.IsZero() && in.Until.Hour() == 0 && in.Until.Minute() == 0 && in.Until.Second() == 0 {
		q.Until = in.Until.AddDate(0, 0, 1).Add(-1) // a day given as until includes that whole day
	}
	var hits []index.Hit
	err := m.withIndex(func(ix *index.Index) (err error) {
		hits, err = ix.Search(ctx, q)
		return err
	})
	if err != nil {
		return SearchResult{}, err
	}
	res := SearchResult{Hits: make([]Hit, 0, len(hits)), Indexing: m.indexing.Load()}
	for _, h := range hits {
		hit := Hit{Path: h.Path, Name: nameOf(h.Path), Kind: h.Kind, Title: h.Title, Snippet: h.Snippet, Text: h.Text,
			Partial: h.Partial, Score: h.Score, Who: h.Who, Trust: h.Trust}
		if !h.Date.IsZero() {
			hit.Date = h.Date.Local().Format("2006-01-02")
		}
		if hit.Kind == KindDoc || hit.Kind == KindInbox {
			hit.Name = ""
		}
		res.Hits = append(res.Hits, hit)
	}
	return res, nil
}

// SearchKinds are the kinds a search may be narrowed to: the index's kinds, and a note's own kind (entity
// or topic) as the overview shows it.
var SearchKinds = []string{KindNote, "entity", "topic", KindMap, KindRouter, KindCore, KindInbox, KindDoc}

// searchKinds maps a search kind to the index's kind and a path prefix; "" is every kind.
var searchKinds = map[string]struct{ kind, prefix string }{
	"": {}, KindNote: {KindNote, ""}, "entity": {KindNote, layout.NotesDir + "/entity-"}, "topic": {KindNote, layout.NotesDir + "/topic-"},
	KindMap: {KindMap, ""}, KindRouter: {KindRouter, ""}, KindCore: {KindCore, ""}, KindInbox: {KindInbox, ""}, KindDoc: {KindDoc, ""},
}

// Read returns a note, map or the router by name: entity-leo, moc-people, moc-people/a, MEMORY.
// A box path of another Markdown file under /_content/ is read too. The router's inbox line says the
// lines waiting now, as on every surface (ReadForEdit gives the file as it is).
func (m *Memory) Read(ctx context.Context, name string) (Note, error) {
	n, err := m.readNote(ctx, name)
	if err != nil || n.Path != layout.Router {
		return n, err
	}
	m.ensureFresh(ctx)
	var waiting int
	if err := m.withIndex(func(ix *index.Index) (err error) { waiting, err = inboxCount(ctx, ix); return err }); err != nil {
		return Note{}, err
	}
	n.Text = m.liveRouter([]byte(n.Text), waiting)
	return n, nil
}

// readNote is Read with the file's text as it is.
func (m *Memory) readNote(ctx context.Context, name string) (Note, error) {
	const op = "memory.read"
	p, err := resolveName(name)
	if err != nil {
		return Note{}, err
	}
	data, err := m.read(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Note{}, errs.E(op, errs.NotFound, "There is no note %s; box search finds notes by their words.", strings.TrimSpace(name))
	}
	if errors.Is(err, layout.ErrOutside) {
		return Note{}, errs.E(op, errs.Refused, "%s is a link that leads outside the box, and the box reads nothing outside itself; the owner can replace the link with the file (%s).", strings.TrimSpace(name), p)
	}
	if errors.Is(err, layout.ErrNotRegular) {
		return Note{}, errs.E(op, errs.Invalid, "%s is not a file the box can read (%s is a folder, pipe or device).", strings.TrimSpace(name), p)
	}
	if err != nil {
		return Note{}, errs.Wrap(op, errs.Other, err, "")
	}
	n := Note{Name: nameOf(p), Path: p, Text: string(data)}
	if n.Name == "" {
		n.Name = p
	}
	docs := docsOf(p, data)
	if len(docs) > 0 {
		n.Kind, n.Title = docs[0].Kind, docs[0].Title
		n.Outside = (docs[0].Kind == KindNote || docs[0].Kind == KindDoc) && docs[0].Trust == inbox.Outside
	}
	switch {
	case isDay(p): // an inbox day: outside when any of its lines is, or when its lines cannot be read
		n.Kind = KindInbox
		day, err := inbox.ParseDay(data)
		n.Outside = err != nil
		for _, l := range dayLines(day) {
			n.Outside = n.Outside || l.Trust != inbox.Own
		}
	case n.Kind == KindMap: // a map's hooks are its notes' descriptions: outside when any linked note is
		n.Outside = m.linksOutside(data)
	}
	return n, nil
}

func dayLines(d *inbox.Day) []inbox.Line {
	if d == nil {
		return nil
	}
	return d.Lines()
}

// linksOutside reports whether a map links a note written mostly by others (or one it cannot read).
func (m *Memory) linksOutside(data []byte) bool {
	for _, match := range wikiLink.FindAllSubmatch(data, -1) {
		note, err := m.read(notePath(string(match[1])))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return true
		}
		if d := docsOf(notePath(string(match[1])), note); len(d) == 0 || d[0].Trust == inbox.Outside {
			return true
		}
	}
	return false
}

var wikiLink = lazyregexp.New(`\[\[([a-z0-9][a-z0-9-]*)\]\]`)

// resolveName maps a name to its file, refusing anything that would leave /_content/.
func resolveName(name string) (string, error) {
	const op = "memory.read"
	name = strings.TrimSuffix(strings.TrimSpace(name), ".md")
	bad := errs.E(op, errs.Invalid, "%q is not a note name; use a name like entity-leo, moc-people, moc-people/a or MEMORY.", name)
	switch {
	case name == "":
		return "", bad
	case strings.EqualFold(name, "MEMORY"):
		return layout.Router, nil
	case strings.HasPrefix(name, "/"):
		p, err := layout.Clean(name + ".md")
		if err != nil || !strings.HasPrefix(p, "/_content/") {
			return "", bad
		}
		return p, nil
	}
	if strings.Contains(name, "..") || strings.ContainsAny(name, `\:`) {
		return "", bad
	}
	if strings.HasPrefix(name, "moc-") {
		return mapPath(name), nil
	}
	if strings.Contains(name, "/") {
		return "", bad
	}
	return notePath(name), nil
}

// maxHooks bounds the overview's note index, whatever the memory holds.
const maxHooks = 200

// Overview is the router plus the newest notes' one-line hooks, read from the index (not the tree),
// so it costs the same at a hundred notes or a hundred thousand.
func (m *Memory) Overview(ctx context.Context) (Overview, error) {
	m.ensureFresh(ctx)
	data, err := m.read(layout.Router)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Overview{}, errs.Wrap("memory.overview", errs.Other, err, "")
	}
	o := Overview{Router: string(data), Notes: []NoteHook{}, Indexing: m.indexing.Load()}
	var listed []index.Listed
	var total int
	err = m.withIndex(func(ix *index.Index) (err error) {
		if listed, total, err = ix.List(ctx, []string{KindNote}, maxHooks); err != nil {
			return err
		}
		o.Inbox, err = inboxCount(ctx, ix)
		return err
	})
	if err != nil {
		return Overview{}, err
	}
	for _, l := range listed {
		hook := l.Description
		if hook == "" {
			hook = l.Title
		}
		o.Notes = append(o.Notes, NoteHook{Name: nameOf(l.Path), Kind: noteKind(l.Path), Hook: hook, Outside: l.Trust == inbox.Outside})
	}
	sort.SliceStable(o.Notes, func(i, j int) bool { return o.Notes[i].Name < o.Notes[j].Name })
	o.MoreNotes = total - len(listed)
	o.Router = m.liveRouter(data, o.Inbox)
	return o, nil
}

// inboxCount is how many unfiled inbox lines the index holds: the number every surface shows.
func inboxCount(ctx context.Context, ix *index.Index) (int, error) {
	_, n, err := ix.List(ctx, []string{KindInbox}, 0)
	return n, err
}

// liveRouter is the router text as every surface shows it: its inbox line says the lines waiting now,
// not at the last tidy (docs/MEMORY.md).
func (m *Memory) liveRouter(data []byte, waiting int) string {
	if len(data) == 0 {
		return ""
	}
	return string(note.WithWaiting(data, waiting))
}

// Summary is what the memory holds, in a few numbers and the router: what an agent session is told at
// its start. It reads the router file and counts from the index, so it costs the same at any size.
type Summary struct {
	Router string `json:"router"`
	Notes  int    `json:"notes"`
	Maps   int    `json:"maps"`
	Inbox  int    `json:"inbox"`
}

// Summary counts the notes, maps and unfiled inbox lines and reads the router.
func (m *Memory) Summary(ctx context.Context) (Summary, error) {
	m.ensureFresh(ctx)
	data, err := m.read(layout.Router)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Summary{}, errs.Wrap("memory.summary", errs.Other, err, "")
	}
	s := Summary{Router: string(data)}
	err = m.withIndex(func(ix *index.Index) (err error) {
		if _, s.Notes, err = ix.List(ctx, []string{KindNote}, 0); err != nil {
			return err
		}
		if _, s.Maps, err = ix.List(ctx, []string{KindMap}, 0); err != nil {
			return err
		}
		s.Inbox, err = inboxCount(ctx, ix)
		return err
	})
	s.Router = m.liveRouter(data, s.Inbox)
	return s, err
}

// Has reports whether a name a wikilink or a reader would use (entity-leo, moc-people, moc-people/a,
// MEMORY) names a note, map, letter map or the router that exists.
func (m *Memory) Has(name string) bool {
	p, err := resolveName(name)
	if err != nil {
		return false
	}
	if _, err := m.stat(p); err == nil {
		return true
	}
	fi, err := m.stat(strings.TrimSuffix(p, ".md")) // a split map's letter folder
	return err == nil && fi.IsDir()
}

// noteKind is entity or topic, from the note's name.
func noteKind(p string) string {
	if strings.HasPrefix(filepath.Base(p), "entity-") {
		return "entity"
	}
	return "topic"
}

// memoryOps are the diary ops the memory log shows.
var memoryOps = map[string]bool{"remember": true, "forget": true, "tidy": true, "undo": true, "import": true}

// Recent is the memory log: who remembered, forgot, tidied, imported or undid what, newest first.
func (m *Memory) Recent(ctx context.Context, n int) ([]RecentItem, error) {
	if n <= 0 {
		n = 20
	}
	es, err := m.box.Diary(ctx, n, func(e diary.Entry) bool { return memoryOps[e.Op] })
	if err != nil {
		return nil, err
	}
	out := make([]RecentItem, 0, len(es))
	for _, e := range es {
		out = append(out, recentItem(e))
	}
	return out, nil
}

func recentItem(e diary.Entry) RecentItem {
	it := RecentItem{Who: e.Actor, Via: e.Via, Op: e.Op, Summary: e.Summary, Entry: e.ID, Outside: e.Trust != "own"}
	if e.Trust == "" {
		it.Outside = !ownVias[e.Via] // an entry written before the diary kept its trust
	}
	it.Time, _ = time.Parse(time.RFC3339Nano, e.Time)
	return it
}

// Undo reverses a diary entry (empty: the newest undoable one) as its own change with its own diary
// line; the index follows through the commit hook.
func (m *Memory) Undo(ctx context.Context, a Actor, entry string) (UndoResult, error) {
	res, err := m.box.Undo(ctx, strings.TrimSpace(entry), normalize(a))
	if err != nil {
		return UndoResult{}, err
	}
	out := UndoResult{Entry: res.EntryID, Commit: res.Commit, UndoOf: entry}
	if e, err := diary.Find(m.root, res.EntryID); err == nil {
		out.UndoOf, out.Summary = e.UndoOf, e.Summary
	}
	if out.Summary == "" {
		out.Summary = "Undone."
	}
	return out, nil
}

// Problem is a memory file the engine cannot read as its format: it is still searched by its text,
// and tidy leaves it alone.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Problems lists the memory files (router, maps, notes, inbox days) whose frontmatter is broken.
func (m *Memory) Problems(ctx context.Context) ([]Problem, error) { return Problems(ctx, m.root) }

// Problems is the same list for a box that is not open as a memory (box status): it reads every
// Markdown file under /_content/ once, so it is for status and checks, not for hot paths.
func Problems(ctx context.Context, root string) ([]Problem, error) {
	var out []Problem
	err := filepath.WalkDir(filepath.Join(root, "_content"), func(h string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(root, h)
		p := "/" + filepath.ToSlash(rel)
		if d.IsDir() || !indexable(p) {
			return nil
		}
		data, err := layout.ReadFile(root, p)
		if err != nil {
			return nil
		}
		if msg := brokenMemoryFile(p, data); msg != "" {
			out = append(out, Problem{Path: p, Message: msg})
		}
		return nil
	})
	return out, err
}

// brokenMemoryFile says why a memory file cannot be read in its format, or "".
func brokenMemoryFile(p string, data []byte) string {
	typ, _, _ := typeOf(p, data)
	var err error
	switch typ {
	case "router":
		_, err = note.ParseRouter(data)
	case "map":
		_, err = note.ParseMap(data)
	case "note":
		_, err = note.ParseNote(data)
	case "inbox-day":
		_, err = inbox.ParseDay(data)
	default:
		return ""
	}
	var e *errs.Error
	if errors.As(err, &e) && e.Msg != "" {
		return e.Msg
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// MapNotes are the notes a map lists, a letter index's letter maps followed (docs/MEMORY.md, "Maps"): what
// a page granted the map may read. A map that is not there lists nothing; one that does not parse is an
// error naming it.
func (m *Memory) MapNotes(ctx context.Context, name string) ([]note.MapEntry, error) {
	const op = "memory.mapnotes"
	n, err := m.Read(ctx, name)
	if errs.Is(err, errs.NotFound) {
		return []note.MapEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	mp, err := note.ParseMap([]byte(n.Text))
	if err != nil {
		return nil, errs.Wrap(op, errs.Invalid, err, fmt.Sprintf("The map %s cannot be read; fix it by hand or run box validate", name))
	}
	letter := func(e note.MapEntry) bool { // one of this map's own letter maps, one level down
		l, ok := strings.CutPrefix(e.Target, name+"/")
		return ok && l != "" && !strings.Contains(l, "/")
	}
	if !mp.IsIndex() || !slices.ContainsFunc(mp.Entries, letter) {
		return append([]note.MapEntry{}, mp.Entries...), nil // a page's map lists box paths, which hold "/" too
	}
	out := []note.MapEntry{}
	for _, e := range mp.Entries {
		if !letter(e) {
			continue
		}
		sub, err := m.MapNotes(ctx, e.Target)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}
