package gate

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/secret"
)

// Line is one memory line an action would touch.
type Line struct {
	Path string `json:"path"`
	ID   string `json:"id,omitempty"`
	Text string `json:"text"`
}

// ForgetAction is the exact action "forget these words", bound to the lines they match now: if any line
// is added, changed or removed before the owner says yes, the hash differs and nothing runs. Forgetting is
// a change to memory (switch change); a card shows it as Delete for good.
func ForgetAction(words string, lines []Line) Action {
	sorted := append([]Line(nil), lines...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Path != sorted[j].Path {
			return sorted[i].Path < sorted[j].Path
		}
		return sorted[i].Text < sorted[j].Text
	})
	q := strings.Join(secret.Words(words), " ")
	return Action{Kind: "delete", Switch: Change,
		Summary: fmt.Sprintf("forget %d %s matching %q (they go to the trash; Undo brings them back)", len(sorted), plural(len(sorted), "line", "lines"), q),
		Payload: map[string]any{"op": "forget", "words": q, "lines": sorted}}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ForgetLines lists the lines forget would remove for words, read from the box at root: inbox lines, note
// facts and core facts containing every word as a whole word. It is the read-only twin of memory's forget,
// so a card can be made and checked again without removing anything.
func ForgetLines(ctx context.Context, root, words string) ([]Line, error) {
	ws := secret.Words(words)
	if len(ws) == 0 {
		return nil, nil
	}
	var out []Line
	base := filepath.Join(root, "_content")
	err := filepath.WalkDir(base, func(h string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return ctx.Err()
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~") || name == "_tmp" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(name, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(root, h)
		p := "/" + filepath.ToSlash(rel)
		data, err := layout.ReadFile(root, p)
		if err != nil {
			return nil
		}
		out = append(out, matchLines(p, data, ws)...)
		return nil
	})
	return out, err
}

func matchLines(p string, data []byte, ws []string) []Line {
	var typ string
	if c, err := card.Parse(p, data); err == nil {
		typ = c.Type
	} else {
		typ, _ = card.TypeOf(p, "")
	}
	match := func(t string) bool { return secret.MatchesAll(t, ws) }
	var out []Line
	switch typ {
	case "inbox-day":
		for _, l := range inbox.LinesOf(data) {
			if match(l.Text) {
				out = append(out, Line{Path: p, ID: l.ID, Text: l.Text})
			}
		}
	case "note":
		_, removed := note.RemoveFactsMatching(data, match)
		for _, r := range removed {
			out = append(out, Line{Path: p, ID: r.Fact.ID, Text: r.Fact.Text})
		}
	case "router":
		if r, err := note.ParseRouter(data); err == nil {
			for _, f := range r.CoreFacts {
				if match(f.Text) {
					out = append(out, Line{Path: p, ID: f.ID, Text: f.Text})
				}
			}
		}
	}
	return out
}
