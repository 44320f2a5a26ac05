// Package duplicate owns the rules that find likely duplicate notes (one person, place or topic under two
// names) and score them, as pure functions over notes as values (docs/MERGE.md). It reads no files and
// merges nothing: the memory does that, through the box's write transaction.
package duplicate

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/note"
)

// Threshold is the score a pair needs to merge, when nothing blocks it (docs/MERGE.md, "Threshold").
const Threshold = 0.70

// threshold is Threshold in points (hundredths): scores add up as integers.
const threshold = 70

// Subject is one note as the rules see it.
type Subject struct {
	Name    string   `json:"name"` // entity-leo
	Kind    string   `json:"kind,omitempty"`
	Title   string   `json:"title"`
	Aliases []string `json:"aliases,omitempty"`
	Maps    []string `json:"maps,omitempty"`
	Links   []string `json:"links,omitempty"` // the notes it links to, by name
	Facts   []string `json:"facts,omitempty"` // its Key facts
	Text    []string `json:"text,omitempty"`  // its description, snapshot, open threads and timeline
	IDs     []string `json:"ids,omitempty"`   // the block ids of its facts and timeline lines
	Updated string   `json:"updated,omitempty"`
	Source  string   `json:"source,omitempty"` // own, outside or mixed ("" is own: written by hand)
}

// FromNote is the subject of a parsed note named name.
func FromNote(name string, n *note.Note) Subject {
	s := Subject{Name: name, Kind: n.Kind, Title: n.Title, Aliases: n.Aliases, Maps: n.Maps, Updated: n.Updated, Source: n.Source}
	text := []string{n.Description, n.Snapshot}
	text = append(text, n.Threads...)
	for _, f := range n.Facts {
		s.Facts = append(s.Facts, f.Text)
		if f.ID != "" {
			s.IDs = append(s.IDs, f.ID)
		}
	}
	for _, e := range n.Timeline {
		text = append(text, e.Text)
		if e.ID != "" {
			s.IDs = append(s.IDs, e.ID)
		}
	}
	for _, t := range text {
		if strings.TrimSpace(t) != "" {
			s.Text = append(s.Text, t)
		}
	}
	seen := map[string]bool{}
	for _, t := range append(slices.Clone(n.Links), note.Wikilinks(strings.Join(append(slices.Clone(s.Facts), s.Text...), "\n"))...) {
		t = strings.TrimSuffix(path.Base(t), ".md")
		if t != name && !seen[t] {
			seen[t] = true
			s.Links = append(s.Links, t)
		}
	}
	return s
}

// Pair is two notes the rules weighed: Drop would be joined into Keep. Reasons say why, with the points
// each rule gave; Block, when set, is why the pair may never merge whatever its score.
type Pair struct {
	Keep    string   `json:"keep"`
	Drop    string   `json:"drop"`
	Score   float64  `json:"score"`
	Reasons []string `json:"reasons"`
	Block   string   `json:"block,omitempty"`
}

// Merge reports whether the pair merges: nothing blocks it and its score reaches Threshold.
func (p Pair) Merge() bool { return p.Block == "" && p.Score >= Threshold }

// Why is the pair's reasons in one line, for a diary line or a job record.
func (p Pair) Why() string {
	s := fmt.Sprintf("%.2f: %s", p.Score, strings.Join(p.Reasons, "; "))
	if p.Block != "" {
		s += "; blocked: " + p.Block
	}
	return s
}

// Find weighs every pair of subjects whose names relate (docs/MERGE.md, "Names"), and returns them
// best first: the pairs that merge, then the others, each by score. Names must be unique.
func Find(subjects []Subject) []Pair {
	c := newCatalogue(subjects)
	var out []Pair
	for _, pr := range c.candidates() {
		if p, ok := c.weigh(pr[0], pr[1]); ok {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Merge() != b.Merge() {
			return a.Merge()
		}
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Drop, b.Drop), cmp.Compare(a.Keep, b.Keep)) < 0
	})
	return out
}

// Choose picks the merges of one pass from Find's pairs: those that merge, best first, skipping a pair
// whose Drop is already joined or kept, or whose Keep is already joined, by a better pair. What it skips
// is weighed again on the next pass, against the joined notes.
func Choose(pairs []Pair) []Pair {
	dropped, kept := map[string]bool{}, map[string]bool{}
	var out []Pair
	for _, p := range pairs {
		if !p.Merge() || dropped[p.Drop] || kept[p.Drop] || dropped[p.Keep] {
			continue
		}
		dropped[p.Drop], kept[p.Keep] = true, true
		out = append(out, p)
	}
	return out
}
