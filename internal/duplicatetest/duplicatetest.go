// Package duplicatetest holds the labelled set of note pairs the duplicate rules are measured on: its
// format, each stub written as a real note file and read back, and precision and recall over the set.
// Tests and bench/merge only; it writes no files.
package duplicatetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/boxmem/box/internal/duplicate"
	"github.com/boxmem/box/internal/note"
)

// Labels.
const (
	Merge     = "merge"      // one subject under two names: the pass should join them
	KeepApart = "keep-apart" // two subjects: the pass must never join them
)

// Stub is a note as the set writes it: enough of a note to be told apart.
type Stub struct {
	Name        string   `json:"name"`
	Kind        string   `json:"kind"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Aliases     []string `json:"aliases,omitempty"`
	Maps        []string `json:"maps,omitempty"`
	Facts       []string `json:"facts,omitempty"` // "text" or "text ^id"
	Links       []string `json:"links,omitempty"`
	Updated     string   `json:"updated,omitempty"`
	Source      string   `json:"source,omitempty"`
}

// Case is one labelled pair, in a box that holds A, B and Others.
type Case struct {
	ID     string `json:"id"`
	Group  string `json:"group"` // what the pair tests: alias, namesake, parent-child, …
	Label  string `json:"label"` // Merge or KeepApart
	Why    string `json:"why"`   // why a person reading the notes would label it so
	A      Stub   `json:"a"`
	B      Stub   `json:"b"`
	Others []Stub `json:"others,omitempty"`
}

// Load reads a labelled set and checks its shape.
func Load(file string) ([]Case, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var set struct {
		Cases []Case `json:"cases"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	ids := map[string]bool{}
	for _, c := range set.Cases {
		switch {
		case ids[c.ID]:
			return nil, fmt.Errorf("%s: case %s appears twice", file, c.ID)
		case c.Label != Merge && c.Label != KeepApart:
			return nil, fmt.Errorf("%s: case %s has label %q", file, c.ID, c.Label)
		case c.A.Name == c.B.Name || c.A.Name == "" || c.B.Name == "":
			return nil, fmt.Errorf("%s: case %s needs two notes with names", file, c.ID)
		}
		ids[c.ID] = true
	}
	return set.Cases, nil
}

var factID = regexp.MustCompile(` \^([A-Za-z0-9-]+)$`)

// Note writes a stub as a note file, with the note package's own edits.
func Note(s Stub) ([]byte, error) {
	data := note.NewNote(s.Kind, s.Title, s.Aliases, s.Maps)
	var err error
	if s.Description != "" {
		if data, err = note.SetDescription(data, s.Description); err != nil {
			return nil, err
		}
	}
	for _, f := range s.Facts {
		fact := note.Fact{Text: f}
		if m := factID.FindStringSubmatchIndex(f); m != nil {
			fact = note.Fact{Text: f[:m[0]], ID: f[m[2]:m[3]]}
		}
		if data, err = note.AddFact(data, fact); err != nil {
			return nil, err
		}
	}
	for _, l := range s.Links {
		if data, err = note.AddLink(data, l); err != nil {
			return nil, err
		}
	}
	if s.Updated != "" || s.Source != "" {
		if data, err = note.Touch(data, or(s.Updated, "2026-01-01"), or(s.Source, note.SourceOwn)); err != nil {
			return nil, err
		}
	}
	return data, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Subjects is the case's box as the rules see it: each stub written as a note and parsed back.
func (c Case) Subjects() ([]duplicate.Subject, error) {
	var out []duplicate.Subject
	for _, s := range append([]Stub{c.A, c.B}, c.Others...) {
		data, err := Note(s)
		if err != nil {
			return nil, fmt.Errorf("case %s: %s: %w", c.ID, s.Name, err)
		}
		n, err := note.ParseNote(data)
		if err != nil {
			return nil, fmt.Errorf("case %s: %s: %w", c.ID, s.Name, err)
		}
		out = append(out, duplicate.FromNote(s.Name, n))
	}
	return out, nil
}

// Outcome is what the rules made of one case.
type Outcome struct {
	Case   Case
	Merged bool
	Pair   *duplicate.Pair // nil when the names do not relate
}

// Right reports whether the rules agreed with the label.
func (o Outcome) Right() bool { return o.Merged == (o.Case.Label == Merge) }

// Quality is the set's confusion counts.
type Quality struct {
	TP, FP, FN, TN int
}

// Precision is TP / (TP + FP): of the pairs merged, how many should have been; 1 when none merged.
func (q Quality) Precision() float64 {
	if q.TP+q.FP == 0 {
		return 1
	}
	return float64(q.TP) / float64(q.TP+q.FP)
}

// Recall is TP / (TP + FN): of the pairs that should merge, how many did.
func (q Quality) Recall() float64 {
	if q.TP+q.FN == 0 {
		return 1
	}
	return float64(q.TP) / float64(q.TP+q.FN)
}

func (q *Quality) add(o Outcome) {
	switch {
	case o.Merged && o.Case.Label == Merge:
		q.TP++
	case o.Merged:
		q.FP++
	case o.Case.Label == Merge:
		q.FN++
	default:
		q.TN++
	}
}

// Evaluate runs the rules on every case, each in its own box, and counts the outcomes overall and by group.
func Evaluate(cases []Case) (all Quality, byGroup map[string]Quality, outcomes []Outcome, err error) {
	byGroup = map[string]Quality{}
	for _, c := range cases {
		subs, err := c.Subjects()
		if err != nil {
			return all, nil, nil, err
		}
		o := Outcome{Case: c}
		for _, p := range duplicate.Find(subs) {
			if (p.Keep == c.A.Name && p.Drop == c.B.Name) || (p.Keep == c.B.Name && p.Drop == c.A.Name) {
				o.Pair = &p
				o.Merged = p.Merge()
				break
			}
		}
		all.add(o)
		g := byGroup[c.Group]
		g.add(o)
		byGroup[c.Group] = g
		outcomes = append(outcomes, o)
	}
	return all, byGroup, outcomes, nil
}

// Groups lists the groups of a result in name order.
func Groups(byGroup map[string]Quality) []string { return slices.Sorted(maps.Keys(byGroup)) }

// Describe is an outcome in one line, for a failing test or a harness.
func (o Outcome) Describe() string {
	got := "not related"
	if o.Pair != nil {
		got = o.Pair.Why()
	}
	return fmt.Sprintf("%s (%s, %s: %s): %s vs %s → %s", o.Case.ID, o.Case.Group, o.Case.Label, strings.TrimSuffix(o.Case.Why, "."), o.Case.A.Name, o.Case.B.Name, got)
}
