package memory

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/index"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
)

// EraseResult says what an erase removed.
type EraseResult struct {
	Files int    `json:"files"`
	Entry string `json:"entry"`
}

// erased are the folders erase empties (docs/MEMORY.md, "Erase"): everything authored, the lists, pages,
// connectors, looks and what was published, and the paper trail that quotes them (trash, archive,
// approvals, usage, jobs). The diary is the box's: Restart starts it again.
var erased = []string{"/_content", layout.PagesDir, layout.Connectors, layout.LooksDir, "/_config/routines", "/_publish", "/_bookkeeping", "/README.md"}

// Erase removes the memory and everything authored in the box for good: the files go, git's history is
// restarted from the box as it is left (so no removed text can be read back from any git object), the
// diary starts again with this one line, and the search index is rebuilt from the empty memory and
// rewritten so that none of the old text stays in its file. The router is left as a new box has it.
// The switches, the brain's settings, schemas and agent guides stay; the settings card is otherwise left
// as a new box has it, since the owner may have written in it. Connections are not the memory's: the
// composition root ends them.
func (m *Memory) Erase(ctx context.Context, a Actor) (EraseResult, error) {
	const op = "memory.erase"
	a = normalize(a)
	// A box that cannot be read is refused before the lock is waited for.
	if _, _, err := m.erasable(); err != nil {
		return EraseResult{}, err
	}
	var paths, scratch []string
	// The diary line names no count: its summary is fixed before the files are listed under the lock,
	// and only that listing's count (the result's) is true.
	r, err := m.box.Restart(ctx, box.Change{Actor: a, Op: "erase", Switch: gate.Delete,
		Summary: a.Who + " erased the box",
		Apply: func(tx *box.Tx) error {
			// Listed under the box's lock: a file another process wrote since the check above is erased too.
			var err error
			if paths, scratch, err = m.erasable(); err != nil {
				return err
			}
			for _, p := range paths {
				if err := tx.Remove(p); err != nil && !errs.Is(err, errs.NotFound) {
					return err
				}
			}
			settings, err := freshSettings(tx)
			if err != nil {
				return err
			}
			if err := tx.Write(layout.Settings, settings); err != nil {
				return err
			}
			return tx.Write(layout.Router, []byte(note.RouterSkeleton))
		}})
	if err != nil {
		return EraseResult{}, err
	}
	res := EraseResult{Files: len(paths), Entry: r.EntryID}
	var all []error             // every step runs even when one fails: a stuck folder must not keep the index
	for _, h := range scratch { // never committed, so not the transaction's to remove
		if err := os.RemoveAll(h); err != nil {
			all = append(all, errs.Wrap(op, errs.Other, err, "The files were erased, but a scratch folder could not be removed: "+h))
		}
	}
	if err := m.eraseIndex(ctx); err != nil {
		all = append(all, errs.Wrap(op, errs.Other, err, "The files and their history were erased, but the search index could not be rebuilt; run box reindex"))
	}
	return res, errors.Join(all...)
}

// erasable lists the files erase removes (the diary aside), and the scratch folders (_tmp) among them.
func (m *Memory) erasable() (files, scratch []string, err error) {
	for _, dir := range erased {
		err := filepath.WalkDir(m.host(dir), func(h string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			p := m.boxPath(h)
			if d.IsDir() {
				if d.Name() == "_tmp" {
					scratch = append(scratch, h)
				}
				if p == layout.DiaryDir || d.Name() == "_tmp" {
					return fs.SkipDir
				}
				return nil
			}
			files = append(files, p)
			return nil
		})
		if err != nil {
			return nil, nil, errs.Wrap("memory.erase", errs.Other, err, "The box could not be read to erase it; nothing was erased")
		}
	}
	return files, scratch, nil
}

// eraseIndex empties the index, reads the (now small) memory into it again and rewrites its file.
func (m *Memory) eraseIndex(ctx context.Context) error {
	if err := m.withIndex(func(ix *index.Index) error { return ix.Clear(ctx) }); err != nil {
		return err
	}
	if _, err := m.reconcile(ctx, nil); err != nil {
		return err
	}
	return m.withIndex(func(ix *index.Index) error { return ix.Compact(ctx) })
}

// freshSettings is the settings card as a new box has it, with the brain's block (the box's own fields:
// provider, model, budget, prices; its key is in the vault) kept as it was. Anything else the card held
// (the owner's words) goes.
func freshSettings(tx *box.Tx) ([]byte, error) {
	fresh := box.SeedSettings()
	data, err := tx.Read(layout.Settings)
	if errors.Is(err, fs.ErrNotExist) {
		return fresh, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := card.Parse(layout.Settings, data)
	if err != nil {
		return fresh, nil // unreadable: nothing of it is kept
	}
	n := c.Get("brain")
	if n == nil || n.Kind != yaml.MappingNode {
		return fresh, nil
	}
	return card.SetField(fresh, []string{"brain"}, fieldsOf(n))
}

// fieldsOf is a frontmatter mapping as card fields, to write it again: nested mappings, lists of text and
// scalars (a scalar as the type YAML reads it).
func fieldsOf(n *yaml.Node) any {
	switch n.Kind {
	case yaml.MappingNode:
		out := []card.Field{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, card.Field{Key: n.Content[i].Value, Value: fieldsOf(n.Content[i+1])})
		}
		return out
	case yaml.SequenceNode:
		out := []string{}
		for _, c := range n.Content {
			out = append(out, c.Value)
		}
		return out
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	switch v.(type) {
	case string, bool, int, float64, nil:
		return v
	}
	return n.Value
}
