package box

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/layout"
)

// Status is what `box status` reports about the tree.
type Status struct {
	Root        string            `json:"root"`
	Areas       map[string]int    `json:"areas"`       // files per area
	Strays      []finding.Finding `json:"strays"`      // root names outside the vocabulary
	Reserved    []finding.Finding `json:"reserved"`    // nested reserved names, shallowest only
	Linked      []finding.Finding `json:"linked"`      // folders that are links: the box writes nothing through them
	Uncommitted []git.StatusEntry `json:"uncommitted"` // git status, untracked included
}

// Status walks the areas once and asks git for uncommitted changes.
func (b *Box) Status(ctx context.Context) (Status, error) {
	s := Status{Root: b.Root, Areas: map[string]int{}, Strays: []finding.Finding{}, Reserved: []finding.Finding{}, Linked: []finding.Finding{}}
	ents, err := os.ReadDir(b.Root)
	if err != nil {
		return s, errs.Wrap("box.status", errs.Other, err, "cannot read the box root")
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	s.Strays = append(s.Strays, layout.CheckRoot(names)...)
	for _, area := range layout.Areas {
		s.Areas[area] = 0
		if area == "_tmp" {
			continue
		}
		err := filepath.WalkDir(filepath.Join(b.Root, area), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // vanished while walking, or unreadable: not ours to report here
			}
			rel, _ := filepath.Rel(b.Root, p)
			bp := "/" + filepath.ToSlash(rel)
			if off, bad := layout.ReservedOffender(bp); bad && off == bp {
				s.Reserved = append(s.Reserved, finding.Errorf(bp, 0, "reserved-name",
					"%s uses a reserved area name below the root: rename it", bp))
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					s.Linked = append(s.Linked, finding.Warnf(bp, 0, "linked-folder",
						"%s is a link to a folder: the box writes nothing through it (git keeps no file beyond a link); replace it with the folder it points to", bp))
					return nil
				}
			}
			if d.IsDir() && d.Name() == "_tmp" {
				return fs.SkipDir
			}
			if !d.IsDir() && d.Name() != ".gitkeep" {
				s.Areas[area]++
			}
			return nil
		})
		if err != nil {
			return s, errs.Wrap("box.status", errs.Other, err, "cannot walk "+area)
		}
	}
	st, err := b.git.Status(ctx)
	if err != nil {
		return s, errs.Wrap("box.status", errs.Other, err, "git status failed")
	}
	s.Uncommitted = st
	if s.Uncommitted == nil {
		s.Uncommitted = []git.StatusEntry{}
	}
	return s, nil
}
