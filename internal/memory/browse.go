package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
)

// Maps lists the maps and letter maps by name (moc-people, moc-people/a), in name order.
func (m *Memory) Maps(ctx context.Context) ([]string, error) {
	dir := m.host(layout.MapsDir)
	out := []string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || ctx.Err() != nil {
			return errors.Join(err, ctx.Err())
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out = append(out, strings.TrimSuffix(filepath.ToSlash(rel), ".md"))
		}
		return nil
	})
	if err != nil {
		return nil, errs.Wrap("memory.maps", errs.Other, err, "The maps could not be listed")
	}
	sort.Strings(out)
	return out, nil
}

// InboxDay is one inbox file's unfiled lines; Label names the day ("2026-11-29", or "2026-11-29 (part 2)"
// for a busy day's later part).
type InboxDay struct {
	Label string       `json:"label"`
	Lines []inbox.Line `json:"lines"`
}

// InboxDays returns the newest n inbox files that hold lines, newest first. A file that does not parse is
// skipped (box status names it).
func (m *Memory) InboxDays(ctx context.Context, n int) ([]InboxDay, error) {
	ents, err := os.ReadDir(m.host(layout.InboxDir))
	if errors.Is(err, fs.ErrNotExist) {
		return []InboxDay{}, nil
	}
	if err != nil {
		return nil, errs.Wrap("memory.inbox", errs.Other, err, "The inbox could not be read")
	}
	out := []InboxDay{}
	for i := len(ents) - 1; i >= 0 && len(out) < n && ctx.Err() == nil; i-- {
		name := ents[i].Name()
		date, part, ok := inbox.ParseFileName(name)
		if !ok {
			continue
		}
		data, err := m.read(layout.InboxDir + "/" + name)
		if err != nil {
			return nil, errs.Wrap("memory.inbox", errs.Other, err, "The inbox could not be read")
		}
		d, err := inbox.ParseDay(data)
		if err != nil || len(d.Lines()) == 0 {
			continue
		}
		label := date
		if part > 1 {
			label = fmt.Sprintf("%s (part %d)", date, part) // a busy day goes on in parts
		}
		out = append(out, InboxDay{Label: label, Lines: d.Lines()})
	}
	return out, ctx.Err()
}

// Waiting counts the unfiled inbox lines, read from the inbox files themselves (not the index), of the
// files tidy reads (an editor's hidden lock or backup file beside a day is none); a file that does not
// parse counts nothing (box status names it).
func (m *Memory) Waiting(ctx context.Context) (int, error) {
	ents, err := os.ReadDir(m.host(layout.InboxDir))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, errs.Wrap("memory.inbox", errs.Other, err, "The inbox could not be read")
	}
	n := 0
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if _, ok := mdName(e); !ok {
			continue
		}
		data, err := m.read(layout.InboxDir + "/" + e.Name())
		if err != nil {
			return n, errs.Wrap("memory.inbox", errs.Other, err, "The inbox could not be read")
		}
		if d, err := inbox.ParseDay(data); err == nil {
			n += len(d.Lines())
		}
	}
	return n, nil
}
