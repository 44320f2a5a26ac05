package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/note"
)

// A tidy with a planner (docs/BRAIN.md, "Tidy with a model"): the rules plan every line as always;
// the planner (the brain) proposes a filing for batches of lines, own lines and outside lines never in
// the same batch; each line's proposal is taken only when it passes the same CheckPlan as the rules'
// plan (with everything taken before it) and, for an outside line, touches no core fact or caution;
// otherwise the rules' filing of that line is taken. One commit applies the whole.

// Planner proposes the filing of one batch of inbox lines. A planner that cannot plan (no brain, the
// budget spent, the provider failing) returns a Proposal with no actions and its Note; the rules file
// those lines.
type Planner interface {
	// Ready says whether the planner would plan now (a brain is set); when not, Tidy is the rules' alone.
	Ready(ctx context.Context) bool
	PlanBatch(ctx context.Context, b Batch) (Proposal, error)
}

// Batch is what a planner sees: lines of one trust and the notes they may be about.
type Batch struct {
	Trust string // inbox.Own or inbox.Outside: a batch never mixes them
	Today string // YYYY-MM-DD, the owner's day
	Lines []BatchLine
	Notes []BatchNote
}

// BatchLine is one inbox line of a batch.
type BatchLine struct {
	ID   string `json:"id"`
	Day  string `json:"-"`
	Who  string `json:"who"`
	Text string `json:"text"`
}

// BatchNote is a note a batch's lines may be about: its name, title, aliases, kind and latest facts.
// Outside is set when others wrote in it (its facts are then outside content).
type BatchNote struct {
	Name    string   `json:"name"`
	Title   string   `json:"title"`
	Kind    string   `json:"kind"`
	Aliases []string `json:"aliases,omitempty"`
	Facts   []string `json:"facts,omitempty"`
	Outside bool     `json:"-"`
}

// Proposal is a planner's answer for a batch: actions in the Plan's own terms (creates before the line
// action that needs them), the model that planned, or why there is no plan.
type Proposal struct {
	Actions []Action
	Model   string
	Note    string
}

// PlanRefusal is a line whose proposed filing the checks refused, with why; the rules filed it.
type PlanRefusal struct {
	Line   string `json:"line"`
	Reason string `json:"reason"`
}

// Batch limits: lines per planner call, notes shown with a batch, facts shown per note.
const (
	batchLines = 30
	batchNotes = 60
	batchFacts = 12
)

// SetPlanner makes every later Tidy ask p for a plan (the composition root sets the brain's). nil
// goes back to the rules alone.
func (m *Memory) SetPlanner(p Planner) { m.planner.Store(&p) }

func (m *Memory) currentPlanner() Planner {
	if p := m.planner.Load(); p != nil {
		return *p
	}
	return nil
}

// lineGroup is one line's part of a plan: the stubs it creates, then its own action.
type lineGroup struct {
	key   string // day#id
	trust string
	acts  []Action
}

// groups splits a plan into line groups, in order; stubs go with the line after them.
func groups(p Plan, trustOf map[string]string) []lineGroup {
	var out []lineGroup
	var pending []Action
	for _, a := range p.Actions {
		if a.Line == "" {
			pending = append(pending, a)
			continue
		}
		key := a.Day + "#" + a.Line
		out = append(out, lineGroup{key: key, trust: trustOf[key], acts: append(pending, a)})
		pending = nil
	}
	return out
}

// tidyPlanned is Tidy with a planner: the proposals are asked for once, the plan assembled and applied;
// a plan the box changed under is assembled again from the same proposals.
func (m *Memory) tidyPlanned(ctx context.Context, a Actor, pl Planner, also *Also[TidyResult]) (TidyResult, error) {
	var props map[string][]Action
	var models []string
	var notes []string
	for attempt := 0; ; attempt++ {
		rules, err := m.PlanTidy(ctx)
		if err != nil {
			return TidyResult{}, err
		}
		lines, _, err := m.inboxNow() // the lines it leaves out are in the rules' Skipped
		if err != nil {
			return TidyResult{}, err
		}
		if props == nil {
			if props, models, notes, err = m.propose(ctx, pl, rules, lines); err != nil {
				return TidyResult{}, err
			}
		}
		if len(props) == 0 { // the planner proposed nothing: the rules' plan as a whole, as without one
			brain := strings.Join(append(models, notes...), " ")
			res, err := m.applyPlan(ctx, a, rules, planning{brain: brain}, also)
			if errs.Is(err, errs.Conflict) && attempt < 2 {
				continue
			}
			res.Brain = brain
			return res, err
		}
		plan, planned, refused := m.assemble(rules, lines, props)
		note := ""
		if len(planned) > 0 {
			note = fmt.Sprintf("the brain (%s) planned %d of %d lines", strings.Join(models, ", "), len(planned), len(groups(plan, nil)))
		}
		brain := strings.Join(models, ", ")
		if brain == "" {
			brain = strings.Join(notes, " ")
		}
		res, err := m.applyPlan(ctx, a, plan, planning{note: note, planned: planned, refused: refused, brain: brain}, also)
		if errs.Is(err, errs.Conflict) && attempt < 2 {
			continue
		}
		if err != nil {
			return res, err
		}
		res.Planned, res.Refused, res.Brain = planned, refused, brain
		return res, nil
	}
}

// propose asks the planner for the lines the rules would file, in batches of one trust each, and
// returns its actions by line (day#id), the models that planned and why a batch had no plan.
func (m *Memory) propose(ctx context.Context, pl Planner, rules Plan, lines []pendingLine) (map[string][]Action, []string, []string, error) {
	cat, _, err := m.loadCatalogue()
	if err != nil {
		return nil, nil, nil, err
	}
	trustOf := map[string]string{}
	byKey := map[string]pendingLine{}
	for _, l := range lines {
		key := l.day + "#" + l.ID
		trustOf[key], byKey[key] = trustClass(l.Trust), l
	}
	gs := groups(rules, trustOf)
	props := map[string][]Action{}
	var models, notes []string
	for _, trust := range []string{inbox.Own, inbox.Outside} {
		var batch []lineGroup
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			b := m.batch(cat, trust, batch, byKey)
			batch = nil
			p, err := pl.PlanBatch(ctx, b)
			if err != nil {
				return err
			}
			if p.Model != "" && !slices.Contains(models, p.Model) {
				models = append(models, p.Model)
			}
			if p.Note != "" && !slices.Contains(notes, p.Note) {
				notes = append(notes, p.Note)
			}
			ids := map[string]string{}
			for _, l := range b.Lines {
				ids[l.ID] = l.Day
			}
			for _, g := range groups(Plan{Actions: p.Actions}, nil) {
				last := g.acts[len(g.acts)-1]
				if day, ok := ids[last.Line]; ok && props[day+"#"+last.Line] == nil {
					props[day+"#"+last.Line] = g.acts // a line outside the batch is never taken from it
				}
			}
			return nil
		}
		for _, g := range gs {
			if g.trust != trust {
				continue
			}
			if batch = append(batch, g); len(batch) == batchLines {
				if err := flush(); err != nil {
					return nil, nil, nil, err
				}
			}
		}
		if err := flush(); err != nil {
			return nil, nil, nil, err
		}
	}
	return props, models, notes, nil
}

func trustClass(t string) string {
	if t == inbox.Own {
		return inbox.Own
	}
	return inbox.Outside
}

// batch builds what the planner sees of some line groups: the lines, and the notes they name or the
// rules would file them in (at most batchNotes, each with its latest batchFacts facts).
func (m *Memory) batch(cat *catalogue, trust string, gs []lineGroup, byKey map[string]pendingLine) Batch {
	b := Batch{Trust: trust, Today: m.now().Format("2006-01-02")}
	seen := map[string]bool{}
	addNote := func(name string) {
		e, ok := cat.notes[name]
		if !ok || seen[name] || len(b.Notes) == batchNotes || (trust != inbox.Own && name == overflowNote) {
			return
		}
		seen[name] = true
		bn := BatchNote{Name: name, Title: e.title, Kind: e.kind, Aliases: e.aliases, Outside: e.source == note.SourceOutside || e.source == note.SourceMixed}
		facts := e.facts
		if len(facts) > batchFacts {
			facts = facts[len(facts)-batchFacts:]
		}
		for _, f := range facts {
			bn.Facts = append(bn.Facts, f.Text)
		}
		b.Notes = append(b.Notes, bn)
	}
	for _, g := range gs {
		l := byKey[g.key]
		b.Lines = append(b.Lines, BatchLine{ID: l.ID, Day: l.day, Who: l.Who, Text: l.Text})
		for _, h := range cat.find(toks(l.Text)) {
			addNote(h.name)
		}
		for _, a := range g.acts {
			addNote(a.Note)
			for _, t := range a.Links {
				addNote(t)
			}
		}
	}
	return b
}

// assemble takes, line by line in the rules' order, the planner's filing when it passes the checks,
// else the rules' own; a line neither can file stays in the inbox (Skipped, with why).
func (m *Memory) assemble(rules Plan, lines []pendingLine, props map[string][]Action) (Plan, []string, []PlanRefusal) {
	view := &cachedView{v: diskView{m}, data: map[string][]byte{}, errs: map[string]error{}}
	cat, _, _ := m.loadCatalogue()
	trustOf := map[string]string{}
	byKey := map[string]pendingLine{}
	for _, l := range lines {
		key := l.day + "#" + l.ID
		trustOf[key], byKey[key] = trustClass(l.Trust), l
	}
	ruleCreates := map[string]Action{}
	for _, a := range rules.Actions {
		if a.Op == ActCreate {
			ruleCreates[a.Note] = a
		}
	}
	out := Plan{Actions: []Action{}, Skipped: rules.Skipped}
	created := map[string]bool{}
	try := func(cand []Action) error {
		var keep []Action
		for _, a := range cand {
			if a.Op == ActCreate && created[a.Note] {
				continue // a stub an earlier line already made
			}
			keep = append(keep, a)
		}
		if err := CheckPlan(view, Plan{Actions: append(slices.Clip(out.Actions), keep...)}); err != nil {
			return err
		}
		for _, a := range keep {
			if a.Op == ActCreate {
				created[a.Note] = true
			}
		}
		out.Actions = append(out.Actions, keep...)
		return nil
	}
	var planned []string
	var refused []PlanRefusal
	for _, g := range groups(rules, trustOf) {
		l := byKey[g.key]
		if prop, ok := props[g.key]; ok {
			cand := ownWords(prop, l, cat, m.now().Format("2006-01-02"))
			reason := ""
			if g.trust != inbox.Own {
				reason = touchesCore(cand)
			} else {
				reason = makesCore(cand)
			}
			if reason == "" {
				if err := try(cand); err != nil {
					reason = errs.Sentence(err)
				} else {
					planned = append(planned, l.ID)
					continue
				}
			}
			refused = append(refused, PlanRefusal{Line: l.ID, Reason: reason})
		}
		// The rules' filing of this line, with the stubs it needs that no line made yet.
		last := g.acts[len(g.acts)-1]
		var cand []Action
		for _, name := range append([]string{last.Note}, last.Links...) {
			if c, ok := ruleCreates[name]; ok && !created[name] {
				cand = append(cand, c)
			}
		}
		if err := try(append(cand, last)); err != nil {
			out.Skipped = append(out.Skipped, fmt.Sprintf("line %s stays in the inbox: %s", l.ID, errs.Sentence(err)))
		}
	}
	return out, planned, refused
}

// ownWords makes a proposal's actions the line's: its day, its own words as the fact (a model never
// rewrites what is filed), the old fact's date from its note.
func ownWords(prop []Action, l pendingLine, cat *catalogue, today string) []Action {
	out := make([]Action, 0, len(prop))
	for _, a := range prop {
		if a.Op == ActCreate {
			if _, ok := cat.notes[a.Note]; ok {
				continue // the note is there already: the line is filed into it
			}
			a.Line, a.Day = "", ""
			if a.Map == "" {
				a.Map = mapOfKind(a.Kind)
			}
			out = append(out, a)
			continue
		}
		a.Day, a.Line = l.day, l.ID
		if a.Op != ActDrop {
			a.Text = l.Text
		}
		if a.Op == ActReplace && a.OldDate == "" {
			a.OldDate = today
			if e, ok := cat.notes[a.Note]; ok && e.updated != "" {
				a.OldDate = e.updated
			}
		}
		out = append(out, a)
	}
	return out
}

// touchesCore says why an outside line's proposal may not be taken: it would make a core fact or a
// caution, or file, replace or link in the note that keeps the core facts and cautions the router
// leaves out; "" when it touches neither.
func touchesCore(acts []Action) string {
	for _, a := range acts {
		switch {
		case a.Op == ActCore || a.Op == ActCaution:
			return "an outside line never becomes a core fact or a caution"
		case a.Op == ActMerge:
			return "a tidy files lines; joining notes is the merge pass's"
		case a.Note == overflowNote || slices.Contains(a.Links, overflowNote):
			return "an outside line never touches " + overflowNote + ", which keeps core facts and cautions"
		}
	}
	return ""
}

// makesCore says why an own line's proposal may not be taken: core facts and cautions come only from
// the owner's explicit words (remember --core, --caution), never from a planner's judgement.
func makesCore(acts []Action) string {
	for _, a := range acts {
		switch a.Op {
		case ActCore, ActCaution:
			return "core facts and cautions come only from the owner's explicit words, never from a tidy"
		case ActMerge:
			return "a tidy files lines; joining notes is the merge pass's"
		}
	}
	return ""
}

// cachedView reads each file once during an assembly: CheckPlan runs once per line.
type cachedView struct {
	v    View
	data map[string][]byte
	errs map[string]error
}

func (c *cachedView) Read(p string) ([]byte, error) {
	if d, ok := c.data[p]; ok {
		return d, c.errs[p]
	}
	d, err := c.v.Read(p)
	c.data[p], c.errs[p] = d, err
	return d, err
}

func (c *cachedView) Exists(p string) bool {
	if _, ok := c.data[p]; ok {
		return c.errs[p] == nil
	}
	return c.v.Exists(p)
}
