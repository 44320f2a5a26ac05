package memory

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/say"
)

// Tidy files the inbox by the deterministic rules: plan, check, apply, as one commit that undo
// reverses. A plan the box changed under is planned again. With a planner set (a brain), the
// planner proposes and the same checks decide, line by line (planner.go).
func (m *Memory) Tidy(ctx context.Context, a Actor) (TidyResult, error) {
	return m.TidyWith(ctx, a, nil)
}

// Also is a change committed with a tidy or merge pass, after it and in the same commit, as a change
// of its own (its own diary line; undoing the pass does not take it back): the job runner's record of
// the run (docs/JOBS.md). Write runs inside the write lock with what the pass did, its Entry set.
type Also[T any] struct {
	Change box.Change // its Apply is Write
	Write  func(tx *box.Tx, res T) error
}

// TidyWith is Tidy committing also with the tidy; nil is Tidy. An empty inbox commits nothing.
func (m *Memory) TidyWith(ctx context.Context, a Actor, also *Also[TidyResult]) (TidyResult, error) {
	if pl := m.currentPlanner(); pl != nil && pl.Ready(ctx) {
		return m.tidyPlanned(ctx, a, pl, also)
	}
	for attempt := 0; ; attempt++ {
		p, err := m.PlanTidy(ctx)
		if err != nil {
			return TidyResult{}, err
		}
		res, err := m.applyPlan(ctx, a, p, planning{}, also)
		if errs.Is(err, errs.Conflict) && attempt < 2 {
			continue
		}
		return res, err
	}
}

// ApplyPlan checks p against the memory and applies it as one change. A plan that fails the check is
// refused (Invalid) before anything is written; one that stops fitting while it waits for the lock is
// a Conflict, and nothing is written either. A tidy plan files lines: joining notes is the merge pass's,
// which weighs each pair by its own rules (docs/MERGE.md), so a plan that merges is refused.
func (m *Memory) ApplyPlan(ctx context.Context, a Actor, p Plan) (TidyResult, error) {
	return m.applyPlan(ctx, a, p, planning{}, nil)
}

// planning says who planned a tidy's lines, for its diary line and its result (planner.go).
type planning struct {
	note    string // added to the diary line: "the brain (model) planned 3 of 5 lines"
	planned []string
	refused []PlanRefusal
	brain   string
}

func (m *Memory) applyPlan(ctx context.Context, a Actor, p Plan, pg planning, also *Also[TidyResult]) (TidyResult, error) {
	a = normalize(a)
	res := TidyResult{Created: []string{}, Skipped: p.Skipped}
	if len(p.Actions) == 0 {
		res.Text = "Nothing to tidy: the inbox is empty."
		return res, nil
	}
	if i := slices.IndexFunc(p.Actions, func(act Action) bool { return act.Op == ActMerge }); i >= 0 {
		return TidyResult{}, errs.E("memory.tidy", errs.Invalid, "tidy action %d (merge): a tidy files lines; joining notes is the merge pass's (box merge).", i+1)
	}
	if err := CheckPlan(diskView{m}, p); err != nil {
		return TidyResult{}, err
	}
	summary := counts(p).summary(a.Who)
	if pg.note != "" {
		summary = strings.TrimSuffix(summary, ".") + "; " + pg.note + "."
	}
	c := box.Change{Op: "tidy", Summary: summary, Reason: dropReasons(p)}
	with := withAlso(&c, also, m.now(), func(ap *applier) TidyResult {
		res := ap.res
		res.Entry, res.Text = c.EntryID, summary
		res.Planned, res.Refused, res.Brain = pg.planned, pg.refused, pg.brain
		return res
	})
	ap, r, err := m.applyPlanAs(ctx, a, p, c, nil, with)
	if err != nil {
		return TidyResult{}, err
	}
	res = ap.res
	res.Entry = r.EntryID
	res.Text = summary
	return res, nil
}

// withAlso gives c its diary entry id in advance and returns the change committed after it (also, writing
// what fill says the pass did); nil when there is no also.
func withAlso[T any](c *box.Change, also *Also[T], now time.Time, fill func(ap *applier) T) func(ap *applier) *box.Change {
	if also == nil {
		return nil
	}
	c.EntryID = diary.NewID(now.UTC())
	return func(ap *applier) *box.Change {
		x := also.Change
		x.Apply = func(tx *box.Tx) error { return also.Write(tx, fill(ap)) }
		return &x
	}
}

// applyPlanAs applies p as the change c (its actor and switch set here) under the box's write lock:
// first check, when given, then CheckPlan against the box as it is now; either failing writes nothing.
// with, when given, makes a change committed after c in the same commit (Also).
func (m *Memory) applyPlanAs(ctx context.Context, a Actor, p Plan, c box.Change, check func(tx *box.Tx) error, with func(ap *applier) *box.Change) (*applier, box.Result, error) {
	ap := &applier{date: m.now().Format("2006-01-02"), now: m.now().UTC().Format("2006-01-02T15:04:05Z"), who: a.Who, m: m}
	c.Actor, c.Switch = a, "change"
	c.Apply = func(tx *box.Tx) error {
		if check != nil {
			if err := check(tx); err != nil {
				return err
			}
		}
		if err := CheckPlan(tx, p); err != nil {
			return errs.Wrap("memory."+c.Op, errs.Conflict, err, fmt.Sprintf("The memory changed during the %s; run it again.", c.Op))
		}
		ap.tx, ap.res = tx, TidyResult{Created: []string{}, Skipped: p.Skipped}
		return ap.apply(p)
	}
	if with != nil {
		rs, err := m.box.DoAll(ctx, c, *with(ap))
		if err != nil {
			return ap, box.Result{}, err
		}
		return ap, rs[0], nil
	}
	r, err := m.box.Do(ctx, c)
	return ap, r, err
}

// counts is what a plan will do, for the diary line written with the change.
func counts(p Plan) TidyResult {
	var r TidyResult
	for _, a := range p.Actions {
		switch a.Op {
		case ActFile, ActCore, ActCaution:
			r.Filed++
		case ActReplace:
			r.Filed++
			r.Replaced++
		case ActDrop:
			r.Dropped++
		case ActCreate:
			r.Created = append(r.Created, a.Note)
		case ActMerge:
			r.Merged = append(r.Merged, a.Note+" → "+a.Into)
		}
	}
	return r
}

// dropReasons says in the diary why lines went to the trash, without quoting them (one may be a secret).
func dropReasons(p Plan) string {
	n := map[string]int{}
	for _, a := range p.Actions {
		if a.Op == ActDrop {
			n[a.Reason]++
		}
	}
	var parts []string
	for _, r := range dropReason {
		if n[r] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[r], strings.ReplaceAll(r, "-", " ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "dropped to the trash: " + strings.Join(parts, ", ")
}

func (r TidyResult) summary(who string) string {
	parts := []string{fmt.Sprintf("%d filed", r.Filed)}
	if len(r.Created) > 0 {
		parts = append(parts, fmt.Sprintf("%d new %s (%s)", len(r.Created), say.Plural(len(r.Created), "note", "notes"), strings.Join(r.Created, ", ")))
	}
	if r.Replaced > 0 {
		parts = append(parts, fmt.Sprintf("%d changed %s moved to the timeline", r.Replaced, say.Plural(r.Replaced, "fact", "facts")))
	}
	if r.Dropped > 0 {
		parts = append(parts, fmt.Sprintf("%d dropped to the trash", r.Dropped))
	}
	if len(r.Merged) > 0 {
		parts = append(parts, fmt.Sprintf("%d merged (%s)", len(r.Merged), strings.Join(r.Merged, ", ")))
	}
	return who + " tidied the inbox: " + strings.Join(parts, ", ") + "."
}

// diskView reads the box's files outside a change.
type diskView struct{ m *Memory }

func (d diskView) Read(p string) ([]byte, error) {
	data, err := d.m.read(p)
	if err != nil {
		return nil, errs.Wrap("memory.read", errs.Other, err, "cannot read "+p)
	}
	return data, nil
}

func (d diskView) Exists(p string) bool {
	_, err := d.m.stat(p)
	return err == nil
}

// withheld stands in the trash for the text of a line dropped as secret-like.
const withheld = "(secret-like text withheld)"

// applier carries one plan's application inside the change.
type applier struct {
	m        *Memory
	tx       *box.Tx
	date     string
	now, who string
	res      TidyResult
	leaving  map[string][]string // day file → line ids filed or dropped
	trash    []trashRecord
	stubs    []Action
	router   *note.Router
	written  map[string]bool // note paths this tidy wrote (for link rewriting)
	lineOf   map[string]inbox.Line
	archived map[string]string   // merged-away note → where it is archived
	merging  []string            // the notes this plan merges away
	mentions map[string][]string // merged-away note → the files that name it (merge.go's mentioning)
}

func (ap *applier) apply(p Plan) error {
	ap.leaving, ap.written, ap.lineOf, ap.stubs, ap.trash = map[string][]string{}, map[string]bool{}, map[string]inbox.Line{}, nil, nil
	for _, a := range p.Actions {
		if a.Op == ActMerge {
			ap.merging = append(ap.merging, a.Note)
		}
	}
	for _, a := range p.Actions {
		if a.Day != "" {
			if _, ok := ap.lineOf[a.Day+"#"+a.Line]; !ok {
				data, _ := readOr(ap.tx, a.Day, nil)
				for _, l := range inbox.LinesOf(data) {
					ap.lineOf[a.Day+"#"+l.ID] = l
				}
			}
			ap.leaving[a.Day] = append(ap.leaving[a.Day], a.Line)
		}
		if err := ap.one(a); err != nil {
			return err
		}
	}
	for _, s := range ap.stubs {
		if err := ap.listInMap(s); err != nil {
			return err
		}
	}
	if err := ap.clearInbox(); err != nil {
		return err
	}
	if err := addTrash(ap.tx, ap.date, ap.trash); err != nil {
		return err
	}
	return ap.refreshRouter()
}

func (ap *applier) one(a Action) error {
	l := ap.lineOf[a.Day+"#"+a.Line]
	switch a.Op {
	case ActCreate:
		var maps []string
		if a.Map != "" {
			maps = []string{a.Map}
		}
		ap.res.Created = append(ap.res.Created, a.Note)
		ap.stubs = append(ap.stubs, a)
		return ap.writeNote(a.Note, note.NewNote(a.Kind, a.Title, nil, maps))
	case ActDrop:
		ap.res.Dropped++
		kept := l
		if a.Reason == DropSecret {
			kept.Text = withheld // a secret leaves the tree; undo brings the line back from git
		}
		ap.trash = append(ap.trash, trashRecord{Time: ap.now, Op: "tidy", By: ap.who, Path: a.Day, Section: "inbox", ID: l.ID, Reason: a.Reason, Line: kept.String()})
		return nil
	case ActCore, ActCaution:
		r, err := ap.routerNow()
		if err != nil {
			return err
		}
		if a.Op == ActCore {
			r.SetCoreFacts(append(r.CoreFacts, note.Fact{Text: a.Text, ID: l.ID}))
		} else {
			r.SetCautions(append(r.Cautions, a.Text))
		}
		ap.res.Filed++
		return nil
	case ActFile, ActReplace:
		if !slices.Contains(ap.res.Into, a.Note) {
			ap.res.Into = append(ap.res.Into, a.Note)
		}
		return ap.file(a, l)
	case ActMerge:
		return ap.merge(a)
	}
	return errs.E("memory.tidy", errs.Invalid, "unknown tidy action %q", a.Op)
}

func (ap *applier) readNote(name string) ([]byte, error) { return ap.tx.Read(notePath(name)) }

func (ap *applier) writeNote(name string, data []byte) error {
	ap.written[notePath(name)] = true
	return ap.tx.Write(notePath(name), data)
}

// edit applies fns to a note in turn and writes it.
func (ap *applier) edit(name string, fns ...func([]byte) ([]byte, error)) error {
	data, err := ap.readNote(name)
	if err != nil {
		return err
	}
	for _, fn := range fns {
		if data, err = fn(data); err != nil {
			return err
		}
	}
	return ap.writeNote(name, data)
}

func (ap *applier) touch(trust string) func([]byte) ([]byte, error) {
	return func(d []byte) ([]byte, error) { return note.Touch(d, ap.date, trust) }
}

func (ap *applier) file(a Action, l inbox.Line) error {
	f := note.Fact{Text: a.Text, ID: l.ID}
	add := func(d []byte) ([]byte, error) { return note.AddFact(d, f) }
	if a.Op == ActReplace {
		add = func(d []byte) ([]byte, error) {
			out, err := note.ReplaceFact(d, a.Old, f, a.OldDate)
			if errs.Is(err, errs.NotFound) {
				return note.AddFact(d, f) // the old fact went meanwhile: file the new one plainly
			}
			ap.res.Replaced++
			return out, err
		}
	}
	// The description is the note's hook (in its maps too): set it when empty, and follow a replaced fact
	// it was made from.
	var rehook []string
	describe := func(d []byte) ([]byte, error) {
		n, err := note.ParseNote(d)
		if err != nil {
			return d, err
		}
		desc := strings.TrimSpace(n.Description)
		stale := desc == ""
		for _, ev := range n.Timeline {
			if a.Op == ActReplace && ev.Replaced && (ev.ID == a.Old || ev.Text == a.Old) && desc == hookOf(ev.Text) {
				stale = true
			}
		}
		if !stale {
			return d, nil
		}
		if desc != "" {
			rehook = n.Maps
		}
		return note.SetDescription(d, hookOf(a.Text))
	}
	fns := []func([]byte) ([]byte, error){add, describe}
	for _, t := range a.Links {
		fns = append(fns, func(d []byte) ([]byte, error) { return note.AddLink(d, t) })
	}
	if err := ap.edit(a.Note, append(fns, ap.touch(l.Trust))...); err != nil {
		return err
	}
	for _, m := range rehook {
		if err := addToMap(ap.tx, m, note.MapEntry{Target: a.Note, Hook: hookOf(a.Text)}); err != nil {
			return err
		}
	}
	for _, t := range a.Links {
		if err := ap.edit(t, func(d []byte) ([]byte, error) { return note.AddLink(d, a.Note) }, ap.touch(l.Trust)); err != nil {
			return err
		}
	}
	ap.res.Filed++
	return nil
}

// hookOf makes a one-line hook from a fact.
func hookOf(text string) string {
	text = strings.TrimSpace(text)
	if r := []rune(text); len(r) > 100 {
		text = string(r[:99]) + "…"
	}
	return text
}

// listInMap adds a new stub to its map (a letter map when the map is split; splitting past 120).
func (ap *applier) listInMap(s Action) error {
	if s.Map == "" || !ap.tx.Exists(notePath(s.Note)) {
		return nil
	}
	data, err := ap.readNote(s.Note)
	if err != nil {
		return err
	}
	hook := s.Title
	if n, err := note.ParseNote(data); err == nil && n.Description != "" {
		hook = n.Description
	}
	return addToMap(ap.tx, s.Map, note.MapEntry{Target: s.Note, Hook: hook})
}

func addToMap(tx *box.Tx, mapName string, e note.MapEntry) error {
	p := mapPath(mapName)
	data, err := readOr(tx, p, nil)
	if err != nil {
		return err
	}
	if data == nil {
		data = note.NewMap(note.MapTitle(strings.TrimPrefix(mapName, "moc-")))
	}
	mp, err := note.ParseMap(data)
	if err != nil {
		return nil // a broken map is left alone; the note still lists the map, and validate names it
	}
	if mp.IsIndex() {
		l := note.Letter(e.Target)
		lp := mapPath(mapName + "/" + l)
		ld, err := readOr(tx, lp, nil)
		if err != nil {
			return err
		}
		if ld == nil {
			ld = note.NewLetterMap(mp.Title, l)
		}
		if ld, err = note.AddEntry(ld, e); err != nil {
			return err
		}
		lm, err := note.ParseMap(ld)
		if err != nil {
			return err
		}
		n := len(lm.Entries)
		if data, err = note.AddEntry(data, note.MapEntry{Target: mapName + "/" + l, Hook: note.LetterHook(l, n)}); err != nil {
			return err
		}
		if err := tx.Write(lp, ld); err != nil {
			return err
		}
		return tx.Write(p, data)
	}
	if data, err = note.AddEntry(data, e); err != nil {
		return err
	}
	if mp, err = note.ParseMap(data); err == nil && len(mp.Entries) > note.MaxMapEntries {
		idx, letters, err := note.SplitMap(mapName, data)
		if err != nil {
			return err
		}
		for l, ld := range letters {
			if err := tx.Write(mapPath(mapName+"/"+l), ld); err != nil {
				return err
			}
		}
		data = idx
	}
	return tx.Write(p, data)
}

// clearInbox takes the filed and dropped lines out of their day files; a day left empty is removed.
func (ap *applier) clearInbox() error {
	days := make([]string, 0, len(ap.leaving))
	for d := range ap.leaving {
		days = append(days, d)
	}
	sort.Strings(days)
	for _, d := range days {
		data, err := ap.tx.Read(d)
		if err != nil {
			return err
		}
		out, _ := inbox.RemoveLines(data, ap.leaving[d])
		if string(out) == inbox.Header(dayOf(d)) {
			if err := ap.tx.Remove(d); err != nil {
				return err
			}
			continue
		}
		if err := ap.tx.Write(d, out); err != nil {
			return err
		}
	}
	return nil
}

func (ap *applier) routerNow() (*note.Router, error) {
	if ap.router == nil {
		r, err := readRouter(ap.tx)
		if err != nil {
			return nil, err
		}
		ap.router = r
	}
	return ap.router, nil
}

// refreshRouter sets the maps with their counts (biggest first) and the inbox count; core facts and
// cautions stay as they are (plus any the plan added). A broken router is left alone.
func (ap *applier) refreshRouter() error {
	r, err := ap.routerNow()
	if err != nil {
		ap.res.Skipped = append(ap.res.Skipped, "MEMORY: "+errs.KindOf(err).String()+": the router's frontmatter is broken, so its counts were not refreshed.")
		return nil
	}
	var links []note.MapLink
	if err := ap.eachMap(func(name string, _ []byte, mp *note.Map) error {
		n := len(mp.Entries)
		if mp.IsIndex() {
			n = 0
			for _, e := range mp.Entries {
				if ld, _ := readOr(ap.tx, mapPath(e.Target), nil); ld != nil {
					if lm, err := note.ParseMap(ld); err == nil {
						n += len(lm.Entries)
					}
				}
			}
		}
		title := mp.Title
		if title == "" {
			title = note.MapTitle(strings.TrimPrefix(name, "moc-"))
		}
		links = append(links, note.MapLink{Name: name, Title: title, Count: n})
		return nil
	}); err != nil {
		return err
	}
	sort.SliceStable(links, func(i, j int) bool {
		if links[i].Count != links[j].Count {
			return links[i].Count > links[j].Count
		}
		return links[i].Name < links[j].Name
	})
	waiting := 0
	for _, name := range ap.listNames(layout.InboxDir) {
		if data, _ := readOr(ap.tx, layout.InboxDir+"/"+name+".md", nil); data != nil {
			waiting += len(inbox.LinesOf(data))
		}
	}
	r.SetMaps(links)
	r.SetWaiting(waiting)
	return writeRouter(ap.tx, r, ap.date)
}

// eachMap calls fn with every top-level map as this change sees it, in name order; a broken map is left
// alone (validate names it). fn's error stops the walk.
func (ap *applier) eachMap(fn func(name string, data []byte, mp *note.Map) error) error {
	for _, name := range ap.listNames(layout.MapsDir) {
		data, err := readOr(ap.tx, mapPath(name), nil)
		if err != nil || data == nil {
			continue
		}
		mp, err := note.ParseMap(data)
		if err != nil {
			continue
		}
		if err := fn(name, data, mp); err != nil {
			return err
		}
	}
	return nil
}

// listNames lists the .md files of a folder (without .md), on disk and written by this change.
func (ap *applier) listNames(dir string) []string {
	seen := map[string]bool{}
	if ents, err := os.ReadDir(ap.m.host(dir)); err == nil {
		for _, e := range ents {
			if n, ok := mdName(e); ok {
				seen[n] = true
			}
		}
	}
	for _, s := range ap.stubs {
		if s.Map != "" && dir == layout.MapsDir {
			seen[s.Map] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
