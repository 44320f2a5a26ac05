package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/say"
	"github.com/boxmem/box/internal/secret"
)

// Forget removes the inbox lines, note facts (Key facts and Timeline) and core facts that contain every
// word as a whole word. A query of stopwords alone matches nothing; more than MaxForgetUnconfirmed
// matches need Confirm. It removes exactly the lines it listed, by id: a line that arrives meanwhile is
// left alone. What is removed goes to the trash in the same commit, and undo restores it.
func (m *Memory) Forget(ctx context.Context, a Actor, in ForgetInput) (ForgetResult, error) {
	matched, err := m.ForgetPreview(ctx, in.Words) // no words: none, and ForgetMatched says so
	if err != nil {
		return ForgetResult{}, err
	}
	return m.ForgetMatched(ctx, a, in, matched)
}

// ForgetMatched is Forget of the lines a ForgetPreview of in.Words listed, without reading the memory
// again: exactly those lines are removed (by id), under the same rules (none, or more than
// MaxForgetUnconfirmed without Confirm, removes nothing).
func (m *Memory) ForgetMatched(ctx context.Context, a Actor, in ForgetInput, matched []Match) (ForgetResult, error) {
	a = normalize(a)
	words := secret.Words(in.Words)
	if len(words) == 0 {
		return ForgetResult{Matched: []Match{}, Text: fmt.Sprintf("Nothing was forgotten: %q names no line; say which words the line contains (like \"Leo swim\").", strings.TrimSpace(in.Words))}, nil
	}
	res := ForgetResult{Matched: matched}
	q := strings.Join(words, " ")
	switch {
	case len(matched) == 0:
		res.Text = fmt.Sprintf("Nothing matches %q; nothing was forgotten.", q)
		return res, nil
	case len(matched) > MaxForgetUnconfirmed && !in.Confirm:
		res.NeedsConfirm = true
		res.Text = fmt.Sprintf("%d lines match %q; nothing was removed. Confirm to remove them all (box forget --yes), or use more words.", len(matched), q)
		return res, nil
	}
	c := m.forgetChange(a, q, matched, &res.Removed)
	r, err := m.box.Do(ctx, c)
	if err != nil {
		return ForgetResult{}, err
	}
	res.Entry = r.EntryID
	res.Text = forgotText(res.Removed, q)
	return res, nil
}

func forgotText(n int, q string) string {
	return fmt.Sprintf("Forgot %d %s matching %q; they are in the trash, and box undo brings them back.", n, say.Plural(n, "line", "lines"), q)
}

// ForgetPreview lists the lines forget would remove for words, each with its file and id, and removes
// nothing: an approval card binds exactly these.
func (m *Memory) ForgetPreview(ctx context.Context, words string) ([]Match, error) {
	ws := secret.Words(words)
	if len(ws) == 0 {
		return []Match{}, nil
	}
	out := []Match{}
	err := filepath.WalkDir(m.host("/_content"), func(h string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return ctx.Err()
		}
		p := m.boxPath(h)
		if d.IsDir() || !indexable(p) {
			return nil
		}
		data, err := m.read(p)
		if err != nil || !mayMatch(data, ws) {
			return nil
		}
		out = append(out, linesOf(p, data, func(f note.Fact) bool { return secret.MatchesAll(f.Text, ws) })...)
		return nil
	})
	if err != nil {
		return nil, errs.Wrap("memory.forget", errs.Other, err, "The memory could not be read to find the lines")
	}
	sortMatches(out)
	return out, nil
}

// Present returns the lines of ms that are still in the memory exactly as listed (same file, id and
// text): what a forget card can still remove. A line removed or changed since is left out.
func (m *Memory) Present(ctx context.Context, ms []Match) ([]Match, error) {
	want := matchSet(ms)
	out := []Match{}
	for _, p := range want.paths() {
		data, err := m.read(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, errs.Wrap("memory.forget", errs.Other, err, "The memory could not be read to check the lines")
		}
		out = append(out, linesOf(p, data, want.has(p))...)
	}
	sortMatches(out)
	return out, nil
}

// ForgetAction is the exact action "forget these lines": the words and every line they matched, by file
// and id. A card binds its hash; approving it removes those lines and no other, so a line that arrived
// after the card was made stays. Forgetting is a change to memory (switch change), shown as Delete for good.
func ForgetAction(words string, ms []Match) gate.Action {
	ms = append([]Match(nil), ms...)
	sortMatches(ms)
	lines := make([]any, 0, len(ms))
	for _, mt := range ms {
		lines = append(lines, map[string]any{"path": mt.Path, "id": mt.ID, "text": mt.Text})
	}
	q := strings.Join(secret.Words(words), " ")
	return gate.Action{Kind: "delete", Switch: gate.Change,
		Summary: fmt.Sprintf("forget %d %s matching %q (they go to the trash; Undo brings them back)", len(ms), say.Plural(len(ms), "line", "lines"), q),
		Payload: map[string]any{"op": "forget", "words": q, "lines": lines}}
}

// ForgetPayload reads the words and the lines back from a forget action as a card stores it (what the
// web UI shows on the card, and what approving it removes); nothing for an action of another op.
func ForgetPayload(a gate.Action) (string, []Match) {
	if gate.OpOf(a) != "forget" {
		return "", nil
	}
	p, _ := a.Payload.(map[string]any)
	words, _ := p["words"].(string)
	var ms []Match
	ls, _ := p["lines"].([]any)
	for _, l := range ls {
		if lm, ok := l.(map[string]any); ok {
			path, _ := lm["path"].(string)
			id, _ := lm["id"].(string)
			text, _ := lm["text"].(string)
			ms = append(ms, Match{Path: path, ID: id, Text: text})
		}
	}
	return words, ms
}

// ForgetOp is how an approved forget card runs (the gate calls it): the card's lines still present are
// the action now, and running it removes exactly those.
func (m *Memory) ForgetOp() gate.Op {
	return gate.Op{
		Current: func(ctx context.Context, stored gate.Action) (gate.Action, error) {
			words, ms := ForgetPayload(stored)
			now, err := m.Present(ctx, ms)
			if err != nil {
				return gate.Action{}, err
			}
			return ForgetAction(words, now), nil
		},
		Run: func(_ context.Context, c gate.ApprovalCard, a gate.Action) (gate.Effect, error) {
			words, ms := ForgetPayload(a)
			n := 0
			ch := m.forgetChange(normalize(c.Proposer()), words, ms, &n)
			return gate.Effect{Change: &ch, Text: func() string { return forgotText(n, words) }}, nil
		},
	}
}

// matchKeys is a set of lines by file, then "id\x00text".
type matchKeys map[string]map[string]bool

func matchSet(ms []Match) matchKeys {
	k := matchKeys{}
	for _, mt := range ms {
		if k[mt.Path] == nil {
			k[mt.Path] = map[string]bool{}
		}
		k[mt.Path][mt.ID+"\x00"+mt.Text] = true
	}
	return k
}

func (k matchKeys) paths() []string {
	ps := make([]string, 0, len(k))
	for p := range k {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// has matches a line of file p that is in the set with the same id and text.
func (k matchKeys) has(p string) func(note.Fact) bool {
	return func(f note.Fact) bool { return k[p][f.ID+"\x00"+f.Text] }
}

// without lists the lines of k that are not in got, as "path ^id" (at most three, then how many more).
func (k matchKeys) without(got matchKeys) []string {
	var out []string
	n := 0
	for _, p := range k.paths() {
		keys := make([]string, 0, len(k[p]))
		for key := range k[p] {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			if got[p][key] {
				continue
			}
			n++
			if len(out) < 3 {
				id, _, _ := strings.Cut(key, "\x00")
				out = append(out, p+" ^"+id)
			}
		}
	}
	if n > len(out) {
		out = append(out, fmt.Sprintf("and %d more", n-len(out)))
	}
	return out
}

func sortMatches(ms []Match) {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Path != ms[j].Path {
			return ms[i].Path < ms[j].Path
		}
		if ms[i].ID != ms[j].ID {
			return ms[i].ID < ms[j].ID
		}
		return ms[i].Text < ms[j].Text
	})
}

// mayMatch is a cheap filter: every word appears somewhere in the folded text.
func mayMatch(data []byte, words []string) bool {
	t := strings.ToLower(secret.Fold(string(data)))
	for _, w := range words {
		if !strings.Contains(t, w) {
			return false
		}
	}
	return true
}

// linesOf lists the lines of one memory file (inbox lines, note facts, core facts) that match.
func linesOf(p string, data []byte, match func(note.Fact) bool) []Match {
	var out []Match
	typ, _, _ := typeOf(p, data)
	switch typ {
	case "inbox-day":
		for _, l := range inbox.LinesOf(data) {
			if match(note.Fact{ID: l.ID, Text: l.Text}) {
				out = append(out, Match{Path: p, ID: l.ID, Text: l.Text})
			}
		}
	case "note":
		_, removed := note.RemoveFactsMatching(data, match)
		for _, r := range removed {
			out = append(out, Match{Path: p, ID: r.Fact.ID, Text: r.Fact.Text})
		}
	case "router":
		if r, err := note.ParseRouter(data); err == nil {
			for _, f := range r.CoreFacts {
				if match(f) {
					out = append(out, Match{Path: p, ID: f.ID, Text: f.Text})
				}
			}
		}
	}
	return out
}

// trashRecord is one line of _bookkeeping/trash/YYYY-MM-DD.jsonl: what was removed and where from.
type trashRecord struct {
	Time    string `json:"time"`
	Op      string `json:"op"` // forget, tidy
	By      string `json:"by"`
	Path    string `json:"path"`
	Section string `json:"section,omitempty"`
	ID      string `json:"id,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Line    string `json:"line"`
}

func trashPath(date string) string { return layout.TrashDir + "/" + date + ".jsonl" }

// addTrash appends records to the day's trash file.
func addTrash(tx *box.Tx, date string, recs []trashRecord) error {
	if len(recs) == 0 {
		return nil
	}
	p := trashPath(date)
	data, err := readOr(tx, p, nil)
	if err != nil {
		return err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return errs.Wrap("memory.trash", errs.Other, err, "")
		}
		data = append(append(data, line...), '\n')
	}
	return tx.Write(p, data)
}

// forgetChange is the change that removes exactly the lines listed (by file, id and text), and trashes
// them; *removed counts them once it has run. It is all or nothing: if any listed line is gone or changed
// by the time the change runs, it refuses with Conflict, names the line and removes none.
func (m *Memory) forgetChange(a Actor, q string, ms []Match, removed *int) box.Change {
	return box.Change{Actor: a, Op: "forget", Switch: gate.Change,
		Summary: fmt.Sprintf("%s forgot %d %s matching %q", a.Who, len(ms), say.Plural(len(ms), "line", "lines"), q),
		Apply: func(tx *box.Tx) error {
			if len(ms) == 0 {
				return errs.E("memory.forget", errs.Conflict, "No line was listed to forget; nothing was removed.")
			}
			n, err := forgetApply(tx, matchSet(ms), m.now().Format("2006-01-02"), a, m.now().UTC().Format("2006-01-02T15:04:05Z"))
			*removed = n
			return err
		}}
}

// forgetApply removes, inside the change, exactly the lines in want, and trashes them. A line of want
// that is no longer there as listed fails the whole change (the transaction writes nothing).
func forgetApply(tx *box.Tx, want matchKeys, date string, a Actor, now string) (int, error) {
	var trash []trashRecord
	got := matchKeys{}
	rec := func(p, section string, f note.Fact, line string) {
		trash = append(trash, trashRecord{Time: now, Op: "forget", By: a.Who, Path: p, Section: section, ID: f.ID, Line: line})
		if got[p] == nil {
			got[p] = map[string]bool{}
		}
		got[p][f.ID+"\x00"+f.Text] = true
	}
	for _, p := range want.paths() {
		data, err := readOr(tx, p, nil)
		if err != nil {
			return 0, err
		}
		if data == nil {
			continue
		}
		planned := want.has(p)
		typ, _, _ := typeOf(p, data)
		var out []byte
		switch typ {
		case "inbox-day":
			var removed []inbox.Line
			out, removed = inbox.RemoveLinesFunc(data, func(l inbox.Line) bool { return planned(note.Fact{ID: l.ID, Text: l.Text}) })
			for _, l := range removed {
				rec(p, "inbox", note.Fact{ID: l.ID, Text: l.Text}, l.String())
			}
		case "note":
			var removed []note.Removed
			out, removed = note.RemoveFactsMatching(data, planned)
			for _, r := range removed {
				rec(p, r.Section, r.Fact, r.Line)
			}
		case "router":
			r, err := note.ParseRouter(data)
			if err != nil {
				continue
			}
			var kept []note.Fact
			for _, f := range r.CoreFacts {
				if planned(f) {
					rec(p, "Core facts", f, "- [core] "+f.Text)
					continue
				}
				kept = append(kept, f)
			}
			if len(kept) == len(r.CoreFacts) {
				continue
			}
			r.SetCoreFacts(kept)
			if err := writeRouter(tx, r, date); err != nil {
				return 0, err
			}
			continue
		default:
			continue
		}
		if string(out) != string(data) {
			if err := tx.Write(p, out); err != nil {
				return 0, err
			}
		}
	}
	if missing := want.without(got); len(missing) > 0 {
		return 0, errs.E("memory.forget", errs.Conflict, "%d of the lines to forget %s gone or changed since they were listed (%s); nothing was removed, so list them again.",
			len(missing), say.Plural(len(missing), "is", "are"), strings.Join(missing, "; "))
	}
	return len(trash), addTrash(tx, date, trash)
}
