package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The generated box: 80% notes (people and topics), 15% documents, 5% to-do cards, and a map per 100
// notes. Every ref resolves, so `validate --all` is clean and every card is fully checked.

func noteName(i int) string {
	if i%4 == 3 {
		return fmt.Sprintf("topic-subject-%05d", i)
	}
	return fmt.Sprintf("entity-person-%05d", i)
}

func generate(bin, root string, n int) error {
	if out, err := exec.Command(bin, "init", root).CombinedOutput(); err != nil {
		return fmt.Errorf("box init: %v\n%s", err, out)
	}
	notes := n * 80 / 100
	docs := n * 15 / 100
	todos := n - notes - docs
	maps := (notes + 99) / 100
	put := func(rel, data string) error {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(data), 0o644)
	}
	for i := range notes {
		if err := put("_content/memory/notes/"+noteName(i)+".md", noteText(i, notes)); err != nil {
			return err
		}
	}
	for m := range maps {
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntitle: Group %d\ndescription: People and subjects of group %d.\n---\n# Group %d\n\n", m, m, m)
		for i := m * 100; i < min(notes, (m+1)*100); i++ {
			fmt.Fprintf(&b, "- [[%s]] — someone from group %d, met in %d\n", noteName(i), m, 2000+i%25)
		}
		if err := put(fmt.Sprintf("_content/memory/maps/moc-group-%03d.md", m), b.String()); err != nil {
			return err
		}
	}
	for i := range docs {
		j, k := (i+1)%docs, (i+7)%docs
		body := fmt.Sprintf("---\ntitle: Document %d\ndescription: Notes on project %d.\ntags: [project, p%d]\n---\n"+
			"# Document %d\n\nThis follows [the previous one](/_content/docs/doc-%05d.md) and [a sibling](doc-%05d.md).\n"+
			"It concerns [[%s]] and links out to https://example.com/p/%d for the background.\n\n"+
			"```\n[not a link](nowhere.md)\n```\n\n## Steps\n\n1. Read the brief.\n2. Call [[%s]].\n3. Write it up in `notes.md`.\n",
			i, i%50, i%50, i, j, k, noteName(i%notes), i, noteName((i*3)%notes))
		if err := put(fmt.Sprintf("_content/docs/doc-%05d.md", i), body); err != nil {
			return err
		}
	}
	for i := range todos {
		body := fmt.Sprintf("---\ntitle: List %d\nupdated: 2026-01-%02d\n---\n- [ ] call {%% ref \"/_content/memory/notes/%s.md\" %%}Person{%% /ref %%}\n- [x] buy milk\n- [ ] read /_content/docs/doc-%05d.md\n",
			i, i%28+1, noteName(i%notes), i%max(docs, 1))
		if err := put(fmt.Sprintf("_content/todos/list-%05d.todo.card", i), body); err != nil {
			return err
		}
	}
	if err := git(root, "add", "-A"); err != nil {
		return err
	}
	return git(root, "commit", "-q", "--no-verify", "-m", "generated")
}

func noteText(i, notes int) string {
	kind, title := "person", fmt.Sprintf("Person %d", i)
	if i%4 == 3 {
		kind, title = "topic", fmt.Sprintf("Subject %d", i)
	}
	a, b := noteName((i+1)%notes), noteName((i*7+3)%notes)
	return fmt.Sprintf(`---
title: %s
description: Someone the owner knows from group %d.
kind: %s
aliases: [P%d]
maps: [moc-group-%03d]
updated: 2026-01-%02d
---
# %s

## Snapshot
%s works with [[%s]] on the garden project and writes to [[%s|them]] often.

## Key facts
- Likes tea, not coffee. ^k%d
- Lives in City %d; moved there in %d.
- Birthday in month %d.

## Open threads
- Ask about the trip to City %d.

## Timeline
- 2026-01-%02d: met at the market.
- 2025-11-%02d: first call about the garden.

## Links
- [[%s]]
- [[%s]]
`, title, i/100, kind, i, i/100, i%28+1, title, title, a, b, i, i%40, 2010+i%15, i%12+1, i%30, i%28+1, i%28+1, a, b)
}
