package memory

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/duplicate"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/ref"
	"github.com/boxmem/box/internal/say"
)

// The merge pass (docs/MERGE.md): the rules of package duplicate find likely duplicate notes; each pair
// is joined into the note kept, the other is archived under /_bookkeeping/archive/notes/, and every ref to
// it (wikilinks, Markdown links, map entries, the router) is pointed at the note kept. One pass is one
// change (one commit, one diary line), so undo reverses it byte for byte; a pair whose merge the owner
// undid is never merged again.

// mergeOp is the diary and commit op of a merge pass.
const mergeOp = "merge"

// maxHeld is how many pairs held back a result lists.
const maxHeld = 20

// MergeOptions tune a merge pass.
type MergeOptions struct {
	DryRun bool `json:"dryRun,omitempty"` // weigh and list, write nothing
}

// MergePair is one pair the pass weighed: Archived joined into Kept, or held back and why.
type MergePair struct {
	Kept     string   `json:"kept"`
	Archived string   `json:"archived"`
	Score    float64  `json:"score"`
	Reasons  []string `json:"reasons"`
	Archive  string   `json:"archive,omitempty"` // where the archived note went, a box path
	Held     string   `json:"held,omitempty"`    // why it was not merged
}

// MergeResult is what one merge pass did, or would do in a dry run. Held lists the best pairs the pass
// did not merge (at most 20), so a record says why a near miss stayed apart.
type MergeResult struct {
	DryRun  bool        `json:"dryRun,omitempty"`
	Merged  []MergePair `json:"merged"`
	Held    []MergePair `json:"held"`
	Skipped []string    `json:"skipped,omitempty"` // notes left alone, with why
	Entry   string      `json:"entry,omitempty"`
	Commit  string      `json:"commit,omitempty"`
	Text    string      `json:"text"`
}

// Merge runs the merge pass: it weighs every pair of notes whose names relate and joins the likely
// duplicates, as one change that undo reverses. A dry run writes nothing and lists what would merge.
// A note changed while the pass waited for the lock makes it weigh again.
func (m *Memory) Merge(ctx context.Context, a Actor, opts MergeOptions) (MergeResult, error) {
	return m.MergeWith(ctx, a, opts, nil)
}

// MergeWith is Merge committing also with the pass (Also); nil is Merge. A pass with nothing to merge
// commits nothing.
func (m *Memory) MergeWith(ctx context.Context, a Actor, opts MergeOptions, also *Also[MergeResult]) (MergeResult, error) {
	a = normalize(a)
	for attempt := 0; ; attempt++ {
		pl, err := m.planMerge(ctx)
		if err != nil {
			return MergeResult{}, err
		}
		res := pl.result(a.Who, opts.DryRun)
		if opts.DryRun || len(pl.merges) == 0 {
			return res, nil
		}
		res, err = m.applyMerge(ctx, a, pl, res, also)
		if errs.Is(err, errs.Conflict) && attempt < 2 {
			continue
		}
		return res, err
	}
}

// mergePlan is a pass weighed on the notes as they are on disk.
type mergePlan struct {
	merges  []duplicate.Pair
	held    []MergePair
	files   map[string][]byte // the notes of the merges, as weighed
	skipped []string
}

func (m *Memory) planMerge(ctx context.Context) (*mergePlan, error) {
	pl := &mergePlan{files: map[string][]byte{}}
	var subjects []duplicate.Subject
	data := map[string][]byte{}
	err := m.eachNote(func(name string, raw []byte, n *note.Note, err error) {
		if err != nil {
			pl.skipped = append(pl.skipped, fmt.Sprintf("%s: %s The merge pass leaves it alone until it is fixed by hand.", name, brokenMemoryFile(notePath(name), raw)))
			return
		}
		data[name] = raw
		subjects = append(subjects, duplicate.FromNote(name, n))
	})
	if err != nil {
		return nil, err
	}
	apart, err := m.keptApart()
	if err != nil {
		return nil, err
	}
	pairs := duplicate.Find(subjects)
	var may []duplicate.Pair
	for _, p := range pairs {
		if e, ok := apart[pairKey(p.Keep, p.Drop)]; ok && p.Merge() {
			pl.hold(p, "kept apart: the owner undid its merge (diary entry "+e+")")
			continue
		}
		may = append(may, p)
	}
	pl.merges = duplicate.Choose(may)
	for _, p := range may {
		switch {
		case slices.ContainsFunc(pl.merges, func(c duplicate.Pair) bool { return c.Keep == p.Keep && c.Drop == p.Drop }):
		case p.Block != "":
			pl.hold(p, p.Block)
		case !p.Merge():
			pl.hold(p, fmt.Sprintf("below the threshold %.2f", duplicate.Threshold))
		default:
			pl.hold(p, "waits for the next pass: one of the notes is joined in this one")
		}
	}
	for _, p := range pl.merges {
		pl.files[p.Keep], pl.files[p.Drop] = data[p.Keep], data[p.Drop]
	}
	sort.SliceStable(pl.held, func(i, j int) bool { return pl.held[i].Score > pl.held[j].Score })
	pl.held = pl.held[:min(len(pl.held), maxHeld)]
	return pl, ctx.Err()
}

func (pl *mergePlan) hold(p duplicate.Pair, why string) {
	pl.held = append(pl.held, MergePair{Kept: p.Keep, Archived: p.Drop, Score: p.Score, Reasons: p.Reasons, Held: why})
}

// result is the pass as planned; applyMerge fills in where each archived note went and the commit.
func (pl *mergePlan) result(who string, dry bool) MergeResult {
	res := MergeResult{DryRun: dry, Merged: []MergePair{}, Held: pl.held, Skipped: pl.skipped}
	if res.Held == nil {
		res.Held = []MergePair{}
	}
	var names []string
	for _, p := range pl.merges {
		res.Merged = append(res.Merged, MergePair{Kept: p.Keep, Archived: p.Drop, Score: p.Score, Reasons: p.Reasons})
		names = append(names, p.Drop+" into "+p.Keep)
	}
	n := len(pl.merges)
	switch {
	case n == 0:
		res.Text = "No likely duplicates: nothing to merge."
	case dry:
		res.Text = fmt.Sprintf("Would merge %d duplicate %s: %s.", n, say.Plural(n, "note", "notes"), strings.Join(names, ", "))
	default:
		res.Text = fmt.Sprintf("%s merged %d duplicate %s: %s.", who, n, say.Plural(n, "note", "notes"), strings.Join(names, ", "))
	}
	return res
}

// applyMerge joins the planned pairs as one change. A note that changed since it was weighed is a
// Conflict, and nothing is written.
func (m *Memory) applyMerge(ctx context.Context, a Actor, pl *mergePlan, res MergeResult, also *Also[MergeResult]) (MergeResult, error) {
	var p Plan
	var why []string
	for _, pr := range pl.merges {
		p.Actions = append(p.Actions, Action{Op: ActMerge, Note: pr.Drop, Into: pr.Keep, Reason: pr.Why()})
		why = append(why, fmt.Sprintf("%s → %s (%s)", pr.Drop, pr.Keep, pr.Why()))
	}
	unchanged := func(tx *box.Tx) error {
		for name, want := range pl.files {
			if got, err := readOr(tx, notePath(name), nil); err != nil || !bytes.Equal(got, want) {
				return errs.E("memory.merge", errs.Conflict, "The note %s changed while the merge pass weighed it; run the pass again.", name)
			}
		}
		return nil
	}
	c := box.Change{Op: mergeOp, Summary: res.Text, Reason: strings.Join(why, "; ")}
	fill := func(ap *applier, res MergeResult) MergeResult {
		res.Merged = slices.Clone(res.Merged)
		for i := range res.Merged {
			res.Merged[i].Archive = ap.archived[res.Merged[i].Archived]
		}
		res.Skipped = append(slices.Clone(res.Skipped), ap.res.Skipped[len(pl.skipped):]...)
		return res
	}
	with := withAlso(&c, also, m.now(), func(ap *applier) MergeResult {
		r := fill(ap, res)
		r.Entry = c.EntryID
		return r
	})
	ap, r, err := m.applyPlanAs(ctx, a, p, c, unchanged, with)
	if err != nil {
		return MergeResult{}, err
	}
	res = fill(ap, res)
	res.Entry, res.Commit = r.EntryID, r.Commit
	return res, nil
}

// pairRe reads the pairs back from a merge's diary reason: "entity-leo → entity-leo-park (0.85: …)".
var pairRe = lazyregexp.New(`(?:^|; )([^\s;]+) → ([^\s;]+) \(`)

// keptApart is the pairs whose merge the owner undid and did not redo, each with the undone diary entry:
// undo is the owner saying "these are two". Whether a merge is undone is box.Undone's answer, the one
// undo itself and the diary use (an undo of an undo is a redo, and so on down the chain).
func (m *Memory) keptApart() (map[[2]string]string, error) {
	es, err := diary.Recent(m.root, 0, func(e diary.Entry) bool { return e.Op == mergeOp || e.Op == "undo" })
	if err != nil {
		return nil, errs.Wrap("memory.merge", errs.Other, err, "The diary could not be read")
	}
	undone := box.Undone{}
	out := map[[2]string]string{}
	for _, e := range es { // newest first, as Undone reads them
		if undone.Saw(e) && e.Op == mergeOp {
			for _, mt := range pairRe.FindAllStringSubmatch(e.Reason, -1) {
				if _, ok := out[pairKey(mt[1], mt[2])]; !ok {
					out[pairKey(mt[1], mt[2])] = e.ID
				}
			}
		}
	}
	return out, nil
}

func pairKey(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// eachNote reads every note under notes/, in name order, parsed; a note that does not parse comes with
// its error.
func (m *Memory) eachNote(fn func(name string, data []byte, n *note.Note, err error)) error {
	ents, err := os.ReadDir(m.host(layout.NotesDir))
	if err != nil && !os.IsNotExist(err) {
		return errs.Wrap("memory.notes", errs.Other, err, "")
	}
	v := diskView{m}
	for _, d := range ents {
		name, ok := mdName(d)
		if !ok {
			continue
		}
		data, err := v.Read(notePath(name))
		if err != nil {
			continue
		}
		n, err := note.ParseNote(data)
		fn(name, data, n, err)
	}
	return nil
}

// merge joins a.Note into a.Into (docs/MERGE.md, "Joining"), archives a.Note and points every ref to it
// at a.Into.
func (ap *applier) merge(a Action) error {
	old, on, err := ap.parsedNote(a.Note)
	if err != nil {
		return err
	}
	kept, kn, err := ap.parsedNote(a.Into)
	if err != nil {
		return err
	}
	trust := inbox.Own
	if on.Source == note.SourceOutside || on.Source == note.SourceMixed {
		trust = inbox.Outside
	}
	joined, err := join(kept, kn, on, a)
	if err != nil {
		return err
	}
	if joined, err = note.Touch(joined, ap.date, trust); err != nil {
		return err
	}
	if err := ap.writeNote(a.Into, joined); err != nil {
		return err
	}
	archive := archivePath(ap.tx, a.Note, ap.date)
	if err := ap.tx.Write(archive, old); err != nil {
		return err
	}
	if err := ap.tx.Remove(notePath(a.Note)); err != nil {
		return err
	}
	delete(ap.written, notePath(a.Note))
	if ap.archived == nil {
		ap.archived = map[string]string{}
	}
	ap.archived[a.Note] = archive
	ap.res.Merged = append(ap.res.Merged, a.Note+" → "+a.Into)
	hook := hookOf(kn.Description)
	if hook == "" {
		hook = hookOf(on.Description)
	}
	if err := ap.repointMaps(a.Note, a.Into, hook); err != nil {
		return err
	}
	return ap.rewriteRefs(a.Note, a.Into)
}

func (ap *applier) parsedNote(name string) ([]byte, *note.Note, error) {
	data, err := ap.readNote(name)
	if err != nil {
		return nil, nil, err
	}
	n, err := note.ParseNote(data)
	return data, n, err
}

// join is the note kept with the archived note's frontmatter, snapshot, facts, timeline, threads and
// links added (docs/MERGE.md, "Joining"). Where two facts conflict (tidy's rule), the newer wins and the
// older goes to the Timeline with its note's date; when the dates do not tell, both stay facts.
func join(kept []byte, kn, on *note.Note, a Action) ([]byte, error) {
	var edits []func([]byte) ([]byte, error)
	do := func(fn func([]byte) ([]byte, error)) { edits = append(edits, fn) }
	for _, al := range append([]string{on.Title}, on.Aliases...) {
		if strings.TrimSpace(al) != "" {
			do(func(d []byte) ([]byte, error) { return note.AddAlias(d, al) })
		}
	}
	for _, mp := range on.Maps {
		do(func(d []byte) ([]byte, error) { return note.AddMap(d, mp) })
	}
	if strings.TrimSpace(kn.Description) == "" && strings.TrimSpace(on.Description) != "" {
		do(func(d []byte) ([]byte, error) { return note.SetDescription(d, on.Description) })
	}
	if s := strings.TrimSpace(on.Snapshot); s != "" && !strings.Contains(kn.Snapshot, s) {
		do(func(d []byte) ([]byte, error) { return note.SetSnapshot(d, strings.TrimSpace(kn.Snapshot+"\n\n"+s)) })
	}
	e := &entry{title: kn.Title, aliases: slices.Concat(kn.Aliases, []string{on.Title}, on.Aliases)}
	facts := slices.Clone(kn.Facts)
	for _, f := range on.Facts {
		if slices.ContainsFunc(facts, func(g note.Fact) bool { return sameFactText(g, f) }) {
			continue
		}
		i := slices.IndexFunc(facts, func(g note.Fact) bool { return changedFact(e, g.Text, f.Text) })
		switch {
		case i >= 0 && datesTell(kn.Updated, on.Updated) && on.Updated > kn.Updated:
			g := facts[i]
			facts[i] = f
			do(func(d []byte) ([]byte, error) { return note.ReplaceFact(d, factRef(g), f, kn.Updated) })
		case i >= 0 && datesTell(kn.Updated, on.Updated):
			do(func(d []byte) ([]byte, error) {
				return note.AddEvent(d, note.Event{Date: on.Updated, Text: f.Text, Replaced: true, ID: f.ID})
			})
		default:
			facts = append(facts, f)
			do(func(d []byte) ([]byte, error) { return note.AddFact(d, f) })
		}
	}
	for _, ev := range on.Timeline {
		do(func(d []byte) ([]byte, error) { return note.AddEvent(d, ev) })
	}
	for _, th := range on.Threads {
		if strings.TrimSpace(th) != "" {
			do(func(d []byte) ([]byte, error) { return note.AddThread(d, th) })
		}
	}
	for _, t := range on.Links {
		if t != a.Into && t != a.Note {
			do(func(d []byte) ([]byte, error) { return note.AddLink(d, t) })
		}
	}
	out := kept
	for _, fn := range edits {
		var err error
		if out, err = fn(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sameFactText: the same inbox line, or the same words.
func sameFactText(a, b note.Fact) bool {
	return (a.ID != "" && a.ID == b.ID) || slices.Equal(toks(a.Text), toks(b.Text))
}

// factRef names a fact for note.ReplaceFact: its id when it has one (the text may repeat).
func factRef(f note.Fact) string {
	if f.ID != "" {
		return f.ID
	}
	return f.Text
}

func datesTell(a, b string) bool { return a != "" && b != "" && a != b }

// repointMaps takes old's entry out of every map (or letter map) that lists it and lists kept there
// instead, unless kept is listed already.
func (ap *applier) repointMaps(old, kept, hook string) error {
	return ap.eachMap(func(name string, data []byte, mp *note.Map) error {
		var was *note.MapEntry
		var err error
		if mp.IsIndex() {
			if was, err = ap.unlistLetter(name, data, mp, old); err != nil {
				return err
			}
		} else if i := slices.IndexFunc(mp.Entries, func(e note.MapEntry) bool { return e.Target == old }); i >= 0 {
			was = &mp.Entries[i]
			data, _ = note.RemoveEntry(data, old)
			if err := ap.tx.Write(mapPath(name), data); err != nil {
				return err
			}
		}
		if was == nil {
			return nil
		}
		listed, err := ap.listed(name, kept)
		if err != nil || listed {
			return err
		}
		h := hook
		if h == "" {
			h = was.Hook
		}
		return addToMap(ap.tx, name, note.MapEntry{Target: kept, Hook: h})
	})
}

// unlistLetter takes target out of its letter map under the index name, and sets that letter's count;
// a letter map left empty goes with its index line.
func (ap *applier) unlistLetter(name string, index []byte, idx *note.Map, target string) (*note.MapEntry, error) {
	for _, le := range idx.Entries {
		p := mapPath(le.Target)
		ld, err := readOr(ap.tx, p, nil)
		if err != nil || ld == nil {
			continue
		}
		lm, err := note.ParseMap(ld)
		if err != nil {
			continue
		}
		i := slices.IndexFunc(lm.Entries, func(e note.MapEntry) bool { return e.Target == target })
		if i < 0 {
			continue
		}
		was := lm.Entries[i]
		ld, _ = note.RemoveEntry(ld, target)
		n := len(lm.Entries) - 1
		if n == 0 {
			index, _ = note.RemoveEntry(index, le.Target)
			err = ap.tx.Remove(p)
		} else {
			index, err = note.AddEntry(index, note.MapEntry{Target: le.Target, Hook: note.LetterHook(path.Base(le.Target), n)})
			if err == nil {
				err = ap.tx.Write(p, ld)
			}
		}
		if err != nil {
			return nil, err
		}
		return &was, ap.tx.Write(mapPath(name), index)
	}
	return nil, nil
}

// listed reports whether the map name (or, for a letter index, the letter map target belongs in) lists target.
func (ap *applier) listed(name, target string) (bool, error) {
	data, err := readOr(ap.tx, mapPath(name), nil)
	if err != nil || data == nil {
		return false, err
	}
	mp, err := note.ParseMap(data)
	if err != nil {
		return false, nil
	}
	if mp.IsIndex() {
		return ap.listed(name+"/"+note.Letter(target), target)
	}
	return slices.ContainsFunc(mp.Entries, func(e note.MapEntry) bool { return e.Target == target }), nil
}

// rewriteRefs points every ref that leads to old's file — wikilinks by any spelling, Markdown links,
// frontmatter and Markdoc refs, in any Markdown file or card under /_content/ — at kept, keeping each
// ref's form, heading and alias. A ref that cannot be rewritten in place is reported in Skipped.
func (ap *applier) rewriteRefs(old, kept string) error {
	if ap.router != nil { // a router this plan already changed is written first, so the rewrite sees it
		if err := writeRouter(ap.tx, ap.router, ap.date); err != nil {
			return err
		}
		ap.router = nil
	}
	rv := ref.NewResolver(ap.m.root)
	needle := []byte(strings.ToLower(old))
	for _, p := range ap.mentioning(old) {
		data, err := readOr(ap.tx, p, nil)
		if err != nil || data == nil || !bytes.Contains(bytes.ToLower(data), needle) {
			continue
		}
		out := slices.Clone(data)
		if n, err := note.ParseNote(out); err == nil && strings.HasPrefix(p, layout.NotesDir+"/") && slices.Contains(n.Links, kept) {
			out, _ = note.RemoveLink(out, old) // it links both: one Links line for kept is enough
		}
		refs, _ := ref.Extract(p, out)
		for i := len(refs) - 1; i >= 0; i-- {
			r := refs[i]
			res, err := rv.ResolveRef(p, r)
			if err != nil || res.Target != notePath(old) {
				continue
			}
			if !r.Verbatim {
				ap.res.Skipped = append(ap.res.Skipped, fmt.Sprintf("%s:%d: a ref to %s is written in a form the merge cannot rewrite in place; point it at %s by hand.", p, r.Line, old, kept))
				continue
			}
			out = slices.Concat(out[:r.Start], []byte(retarget(r, old, kept)), out[r.End:])
		}
		if p == notePath(kept) {
			out, _ = note.RemoveLink(out, kept) // a note never links itself
		}
		if !bytes.Equal(out, data) {
			if err := ap.tx.Write(p, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// retarget is r written for kept instead of old: the last path segment swapped, the rest as written;
// a segment not spelled as old's name (percent-escaped) becomes kept's box path.
func retarget(r ref.Ref, old, kept string) string {
	dir, base := path.Split(r.Path)
	ext := ""
	if strings.HasSuffix(strings.ToLower(base), ".md") {
		base, ext = base[:len(base)-3], base[len(base)-3:]
	}
	if !strings.EqualFold(base, old) {
		return notePath(kept) + r.Query + r.Fragment
	}
	return dir + kept + ext + r.Query + r.Fragment
}

// mentioning is the files that may ref old: those under /_content/ (Markdown files and cards) whose
// text named it, case aside, when the change began, and the notes this change wrote. The files are read
// once per change, for every note the plan merges away: a ref to one of them can only appear meanwhile
// in a note the change writes (a joined note takes the other's links).
func (ap *applier) mentioning(old string) []string {
	if ap.mentions == nil {
		ap.mentions = map[string][]string{}
		_ = filepath.WalkDir(ap.m.host("/_content"), func(h string, d fs.DirEntry, err error) error { // its callback stops on nothing: a file it cannot read mentions no one
			switch p := ap.m.boxPath(h); {
			case err != nil:
			case d.IsDir() && hidden(d.Name()):
				return filepath.SkipDir
			case !d.IsDir() && linkable(p):
				data, err := diskView{ap.m}.Read(p) // only to pick the files; each is read again through the change
				if err != nil {
					return nil
				}
				low := bytes.ToLower(data)
				for _, n := range ap.merging {
					if bytes.Contains(low, []byte(strings.ToLower(n))) {
						ap.mentions[n] = append(ap.mentions[n], p)
					}
				}
			}
			return nil
		})
	}
	seen := map[string]bool{}
	for _, p := range ap.mentions[old] {
		seen[p] = true
	}
	for p := range ap.written {
		seen[p] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// linkable reports the files whose refs a merge rewrites: Markdown files and cards under /_content/.
func linkable(p string) bool {
	if !strings.HasPrefix(p, "/_content/") || !(strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".card")) {
		return false
	}
	return !slices.ContainsFunc(strings.Split(p[1:], "/"), hidden)
}
