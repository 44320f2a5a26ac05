package memory

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/validate"
)

// mergeSeed is the box of the merge tests: Leo and Leo Park are one boy under two names (both linked
// with Ana, the same swim practice), with a changed fact between them, both histories, and refs to Leo
// in a note, two maps, the router and a document (a wikilink with an alias, a root link, a relative link).
func mergeSeed() map[string]string {
	return map[string]string{
		"/_content/memory/notes/entity-leo.md": `---
type: note
kind: person
title: Leo
description: Son, 9, swims.
aliases: []
maps: [moc-people, moc-family]
updated: 2026-11-20
source: own
---
# Leo

## Snapshot
Son, 9.

## Key facts
- Leo has swim practice Thursdays at 5:30. ^oldswim1
- Leo is allergic to peanuts. ^peanut01

## Open threads
- New goggles before the gala.

## Timeline
- 2026-10-01 — Leo started year 4. ^year4aaa

## Links
- [[entity-ana]]
`,
		"/_content/memory/notes/entity-leo-park.md": `---
type: note
kind: person
title: Leo Park
description: ""
aliases: [Leozinho]
maps: [moc-people]
updated: 2026-11-25
source: own
---
# Leo Park

## Snapshot

## Key facts
- Leo Park has swim practice Wednesdays at 5:30. ^newswim1

## Open threads

## Timeline
- 2026-11-02 — Leo Park joined the swim team. ^team0001

## Links
- [[entity-ana]]
`,
		"/_content/memory/notes/entity-ana.md": `---
type: note
kind: person
title: Ana
maps: [moc-people]
updated: 2026-11-01
source: own
---
# Ana

## Key facts
- Ana is Leo's aunt, see [[entity-leo|Leo]] and [[entity-leo#Timeline]].

## Links
- [[entity-leo]]
- [[entity-leo-park]]
`,
		"/_content/memory/maps/moc-people.md": `---
type: map
title: People
---
# People

- [[entity-ana]] — Ana, aunt
- [[entity-leo]] — Son, 9, swims.
- [[entity-leo-park]] — Leo Park
`,
		"/_content/memory/maps/moc-family.md": `---
type: map
title: Family
---
# Family

- [[entity-leo]] — Son, 9, swims.
`,
		"/_content/memory/MEMORY.md": `---
title: Memory
description: The router, read first. Core facts, the maps, live cautions and the inbox count; at most 40 lines.
---
# Memory

## Core facts
- [core] The swim gala is for [[entity-leo]]. ^core0001

## Maps
- [[moc-people]] — People (3 notes)
- [[moc-family]] — Family (1 note)

## Cautions

## Inbox
Nothing waiting.
`,
		"/_content/docs/plan.md": "---\ntitle: Plan\nref: /_content/memory/notes/entity-leo.md\n---\n# Plan\n\nAsk [Leo](/_content/memory/notes/entity-leo.md) and [his note](../memory/notes/entity-leo.md#Timeline) about the gala; [[Entity-Leo]] knows.\n\n```\n[[entity-leo]] in code stays as written\n```\n",
	}
}

func TestMergeJoinsDuplicates(t *testing.T) {
	m := mustOpen(t, mergeSeed())
	ctx := context.Background()
	files := func() map[string]string { // the memory and the document that links it
		s := snapshot(t, m.root)
		s["/_content/docs/plan.md"] = read(t, m, "/_content/docs/plan.md")
		return s
	}
	before := files()
	head := headOf(t, m)

	dry, err := m.Merge(ctx, own, MergeOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Merged) != 1 || dry.Merged[0].Archived != "entity-leo" || dry.Merged[0].Kept != "entity-leo-park" || !dry.DryRun {
		t.Fatalf("dry run: %+v", dry)
	}
	if render(files()) != render(before) || headOf(t, m) != head {
		t.Fatal("a dry run wrote")
	}

	res, err := m.Merge(ctx, own, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Merged) != 1 || res.Entry == "" || res.Commit == "" {
		t.Fatalf("merge: %+v", res)
	}
	mp := res.Merged[0]
	if mp.Archive != "/_bookkeeping/archive/notes/entity-leo.md" || mp.Score < 0.7 || len(mp.Reasons) < 2 || !strings.Contains(mp.Reasons[0], "extension") {
		t.Errorf("the record of the pair: %+v", mp)
	}
	after := files()
	golden(t, "testdata/merge/golden.txt", render(after))

	// One commit, with its trailers, holding the whole pass.
	if n := commitsSince(t, m, head); n != 1 {
		t.Errorf("the merge made %d commits", n)
	}
	if cs, _ := m.box.Git().Log(ctx, git.LogOptions{Max: 1}); len(cs) != 1 || !slices.Contains(cs[0].Trailers, git.Trailer{Key: "Box-Op", Value: "merge"}) {
		t.Errorf("the merge commit: %+v", cs)
	}
	if _, err := os.Stat(m.host("/_content/memory/notes/entity-leo.md")); !os.IsNotExist(err) {
		t.Error("the merged note is still in notes/")
	}
	if after["/_bookkeeping/archive/notes/entity-leo.md"] != before["/_content/memory/notes/entity-leo.md"] {
		t.Error("the archive is not the merged note byte for byte")
	}

	kept, err := note.ParseNote([]byte(after["/_content/memory/notes/entity-leo-park.md"]))
	if err != nil {
		t.Fatal(err)
	}
	var timeline []string
	for _, e := range kept.Timeline {
		timeline = append(timeline, e.Date+" "+e.ID)
	}
	switch {
	case !slices.Contains(kept.Aliases, "Leo") || !slices.Contains(kept.Aliases, "Leozinho"):
		t.Errorf("aliases %v: the merged note's title becomes an alias", kept.Aliases)
	case !slices.Contains(kept.Maps, "moc-family"):
		t.Errorf("maps %v are not united", kept.Maps)
	case kept.Description != "Son, 9, swims." || kept.Snapshot != "Son, 9.":
		t.Errorf("description %q, snapshot %q", kept.Description, kept.Snapshot)
	case len(kept.Facts) != 2 || kept.Facts[0].ID != "newswim1" || kept.Facts[1].ID != "peanut01":
		t.Errorf("facts %+v: the newer swim fact wins, the peanut fact joins", kept.Facts)
	case !slices.Equal(timeline, []string{"2026-10-01 year4aaa", "2026-11-02 team0001", "2026-11-20 oldswim1"}):
		t.Errorf("timeline %v: both histories in date order, the older fact dated by its note", timeline)
	case !kept.Timeline[2].Replaced || !slices.Equal(kept.Threads, []string{"New goggles before the gala."}) || !slices.Equal(kept.Links, []string{"entity-ana"}):
		t.Errorf("timeline %+v, threads %v, links %v", kept.Timeline, kept.Threads, kept.Links)
	}
	// Every ref is repointed, in every form, and code is left as written.
	for p, want := range map[string][]string{
		"/_content/memory/notes/entity-ana.md": {"[[entity-leo-park|Leo]]", "[[entity-leo-park#Timeline]]", "- [[entity-leo-park]]\n"},
		"/_content/memory/maps/moc-people.md":  {"- [[entity-ana]] — Ana, aunt\n- [[entity-leo-park]] — Leo Park\n"},
		"/_content/memory/maps/moc-family.md":  {"- [[entity-leo-park]] — Son, 9, swims.\n"},
		"/_content/memory/MEMORY.md":           {"[[entity-leo-park]]. ^core0001", "- [[moc-people]] — People (2 notes)", "- [[moc-family]] — Family (1 note)"},
		"/_content/docs/plan.md":               {"ref: /_content/memory/notes/entity-leo-park.md\n", "(/_content/memory/notes/entity-leo-park.md)", "(../memory/notes/entity-leo-park.md#Timeline)", "[[entity-leo-park]] knows", "[[entity-leo]] in code stays"},
	} {
		for _, w := range want {
			if got := read(t, m, p); !strings.Contains(got, w) {
				t.Errorf("%s does not hold %q:\n%s", p, w, got)
			}
		}
	}
	if strings.Count(after["/_content/memory/notes/entity-ana.md"], "[[entity-leo-park]]") != 1 {
		t.Errorf("Ana links Leo Park twice:\n%s", after["/_content/memory/notes/entity-ana.md"])
	}

	// The box validates clean: no broken ref anywhere.
	vr, err := validate.New(m.root, validate.Options{}).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range vr.Findings {
		if f.Severity == finding.Error || strings.Contains(f.Message, "entity-leo") {
			t.Errorf("validate: %+v", f)
		}
	}

	// Search finds the joined note by either name, and no longer the archived one.
	for _, q := range []string{"Leo Park", "Leozinho", "peanuts", "goggles"} {
		hs := hits(t, m, SearchInput{Words: q, Kind: KindNote})
		if !slices.ContainsFunc(hs, func(h Hit) bool { return h.Name == "entity-leo-park" }) {
			t.Errorf("search %q: %+v", q, hs)
		}
		if slices.ContainsFunc(hs, func(h Hit) bool { return h.Name == "entity-leo" }) {
			t.Errorf("search %q still finds the archived note", q)
		}
	}
	if hs := hits(t, m, SearchInput{Words: "Leo", Kind: KindNote}); len(hs) == 0 || hs[0].Name != "entity-leo-park" {
		t.Errorf("search by the old title: %+v", hs)
	}

	// A second pass merges nothing and writes nothing.
	again, err := m.Merge(ctx, own, MergeOptions{})
	if err != nil || len(again.Merged) != 0 || again.Entry != "" {
		t.Fatalf("second pass: %+v, %v", again, err)
	}
	if commitsSince(t, m, head) != 1 {
		t.Error("the second pass committed")
	}

	// Undo brings every file back byte for byte, and the index follows.
	if _, err := m.Undo(ctx, own, res.Entry); err != nil {
		t.Fatal(err)
	}
	if got := files(); render(got) != render(before) {
		t.Errorf("undo of the merge left:\n%s\nwant:\n%s", render(got), render(before))
	}
	if hs := hits(t, m, SearchInput{Words: "Thursdays", Kind: KindNote}); len(hs) != 1 || hs[0].Name != "entity-leo" {
		t.Errorf("after undo: %+v", hs)
	}

	// The owner undid it: the pass holds the pair apart from now on.
	held, err := m.Merge(ctx, own, MergeOptions{})
	if err != nil || len(held.Merged) != 0 || len(held.Held) == 0 || !strings.Contains(held.Held[0].Held, "kept apart") {
		t.Fatalf("after undo: %+v, %v", held, err)
	}
}

// "Kept apart" follows undo as undo does: a merge undone, redone and undone again is undone, so the pass
// holds the pair apart; undone, then redone, it is merged and nothing is held.
func TestMergeKeptApartFollowsUndoOfUndo(t *testing.T) {
	m := mustOpen(t, mergeSeed())
	ctx := context.Background()
	res, err := m.Merge(ctx, own, MergeOptions{})
	if err != nil || len(res.Merged) != 1 {
		t.Fatalf("merge: %+v %v", res, err)
	}
	u1, err := m.Undo(ctx, own, res.Entry)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := m.Undo(ctx, own, u1.Entry) // redo: merged again
	if err != nil {
		t.Fatal(err)
	}
	if kept, err := m.keptApart(); err != nil || len(kept) != 0 {
		t.Fatalf("after undo and redo, kept apart: %v %v", kept, err)
	}
	if _, err := m.Undo(ctx, own, u2.Entry); err != nil { // the redo undone: apart again
		t.Fatal(err)
	}
	held, err := m.Merge(ctx, own, MergeOptions{})
	if err != nil || len(held.Merged) != 0 || len(held.Held) == 0 || !strings.Contains(held.Held[0].Held, "kept apart") {
		t.Fatalf("after undo, redo and undo, the pass: %+v, %v", held, err)
	}
}

func TestMergeLetterIndex(t *testing.T) {
	person := func(title, source, fact string) string {
		return "---\ntype: note\nkind: person\ntitle: " + title + "\nmaps: [moc-people]\nupdated: 2026-11-01\nsource: " + source + "\n---\n# " + title +
			"\n\n## Key facts\n- " + fact + "\n\n## Links\n- [[entity-acme]]\n"
	}
	m := mustOpen(t, map[string]string{
		"/_content/memory/notes/entity-bob-smith.md":      person("Bob Smith", "outside", "Bob Smith is the Acme account manager."),
		"/_content/memory/notes/entity-robert-smith.md":   person("Robert Smith", "own", "Robert Smith signed the contract."),
		"/_content/memory/notes/entity-acme.md":           "---\ntype: note\nkind: org\ntitle: Acme\n---\n# Acme\n",
		"/_content/memory/maps/moc-people.md":             "---\ntype: map\ntitle: People\n---\n# People\n\n- [[moc-people/b]] — B (1 note)\n- [[moc-people/r]] — R (1 note)\n",
		"/_content/memory/maps/moc-people/b.md":           "---\ntype: map\ntitle: People — B\n---\n# People — B\n\n- [[entity-bob-smith]] — Bob\n",
		"/_content/memory/maps/moc-people/r.md":           "---\ntype: map\ntitle: People — R\n---\n# People — R\n\n- [[entity-robert-smith]] — Robert\n",
		"/_content/memory/maps/moc-orgs.md":               "---\ntype: map\ntitle: Orgs\n---\n# Orgs\n\n- [[entity-acme]] — Acme\n",
		"/_content/memory/notes/entity-unrelated-note.md": "---\ntype: note\nkind: topic\ntitle: Unrelated note\n---\n# Unrelated note\n\nSee [[entity-bob-smith]].\n",
	})
	res, err := m.Merge(context.Background(), own, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Merged) != 1 || res.Merged[0].Archived != "entity-bob-smith" || res.Merged[0].Kept != "entity-robert-smith" {
		t.Fatalf("merged %+v", res)
	}
	if _, err := os.Stat(m.host("/_content/memory/maps/moc-people/b.md")); !os.IsNotExist(err) {
		t.Error("the emptied letter map is still there")
	}
	if idx := read(t, m, "/_content/memory/maps/moc-people.md"); strings.Contains(idx, "moc-people/b") || !strings.Contains(idx, "- [[moc-people/r]] — R (1 note)") {
		t.Errorf("letter index:\n%s", idx)
	}
	if r := read(t, m, "/_content/memory/maps/moc-people/r.md"); strings.Count(r, "[[entity-robert-smith]]") != 1 || strings.Contains(r, "bob") {
		t.Errorf("letter map:\n%s", r)
	}
	if n := read(t, m, "/_content/memory/notes/entity-robert-smith.md"); !strings.Contains(n, "source: mixed") || !strings.Contains(n, "- Bob Smith is the Acme account manager.") {
		t.Errorf("a note joined with another assistant's words is not mixed:\n%s", n)
	}
	if n := read(t, m, "/_content/memory/notes/entity-unrelated-note.md"); !strings.Contains(n, "See [[entity-robert-smith]].") {
		t.Errorf("body link:\n%s", n)
	}
	if r := read(t, m, "/_content/memory/MEMORY.md"); !strings.Contains(r, "- [[moc-people]] — People (1 note)") {
		t.Errorf("router:\n%s", r)
	}
}

// Two different Leos never merge: Leo Chen makes "Leo" ambiguous, and the pass says so.
func TestMergeHoldsAmbiguousPairs(t *testing.T) {
	files := mergeSeed()
	files["/_content/memory/notes/entity-leo-chen.md"] = "---\ntype: note\nkind: person\ntitle: Leo Chen\nmaps: [moc-people]\n---\n# Leo Chen\n\n## Key facts\n- Leo Chen is the plumber.\n"
	m := mustOpen(t, files)
	head := headOf(t, m)
	res, err := m.Merge(context.Background(), own, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Merged) != 0 || commitsSince(t, m, head) != 0 {
		t.Fatalf("merged %+v", res.Merged)
	}
	if !slices.ContainsFunc(res.Held, func(p MergePair) bool {
		return p.Archived == "entity-leo" && p.Kept == "entity-leo-park" && strings.Contains(p.Held, "ambiguous") && p.Score >= 0.7
	}) {
		t.Errorf("held %+v", res.Held)
	}
}

// A note changed after the pass weighed it and before the lock: the change is refused as a Conflict and
// writes nothing (Merge then weighs again).
func TestMergeStalePlanConflicts(t *testing.T) {
	m := mustOpen(t, mergeSeed())
	ctx := context.Background()
	pl, err := m.planMerge(ctx)
	if err != nil || len(pl.merges) != 1 {
		t.Fatalf("plan %+v, %v", pl, err)
	}
	if _, err := m.box.Do(ctx, box.Change{Actor: own, Op: "edit", Summary: "owner edited Leo", Apply: func(tx *box.Tx) error {
		data, err := tx.Read(notePath("entity-leo"))
		if err != nil {
			return err
		}
		data, err = note.AddFact(data, note.Fact{Text: "Leo likes chess."})
		if err != nil {
			return err
		}
		return tx.Write(notePath("entity-leo"), data)
	}}); err != nil {
		t.Fatal(err)
	}
	head := headOf(t, m)
	if _, err := m.applyMerge(ctx, own, pl, pl.result(own.Who, false), nil); !errs.Is(err, errs.Conflict) {
		t.Fatalf("a stale plan: %v", err)
	}
	if commitsSince(t, m, head) != 0 {
		t.Error("a refused merge committed")
	}
	res, err := m.Merge(ctx, own, MergeOptions{})
	if err != nil || len(res.Merged) != 1 {
		t.Fatalf("merge after the edit: %+v, %v", res, err)
	}
	if !strings.Contains(read(t, m, "/_content/memory/notes/entity-leo-park.md"), "- Leo likes chess.") {
		t.Error("the edit made meanwhile was not joined")
	}
}

func headOf(t *testing.T, m *Memory) string {
	t.Helper()
	cs, err := m.box.Git().Log(context.Background(), git.LogOptions{Max: 1})
	if err != nil || len(cs) == 0 {
		t.Fatalf("git log: %v", err)
	}
	return cs[0].Hash
}

func commitsSince(t *testing.T, m *Memory, head string) int {
	t.Helper()
	cs, err := m.box.Git().Log(context.Background(), git.LogOptions{Max: 50})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		if c.Hash == head {
			return i
		}
	}
	t.Fatalf("%s is not in the log", head)
	return -1
}

// A tidy plan (a brain's, say) cannot merge notes: only the merge pass joins them, by its own rules.
func TestTidyPlanCannotMerge(t *testing.T) {
	m := mustOpen(t, mergeSeed())
	head := headOf(t, m)
	_, err := m.ApplyPlan(context.Background(), own, Plan{Actions: []Action{{Op: ActMerge, Note: "entity-ana", Into: "entity-leo"}}})
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "merge pass") || commitsSince(t, m, head) != 0 {
		t.Fatalf("a tidy plan merging notes: %v", err)
	}
}
