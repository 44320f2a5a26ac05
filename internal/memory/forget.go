package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/secret"
)

// Forget removes the inbox lines, note facts (Key facts and Timeline) and core facts that contain every
// word as a whole word. A query of stopwords alone matches nothing; more than MaxForgetUnconfirmed
// matches need Confirm; what is removed goes to the trash in the same commit, and undo restores it.
func (m *Memory) Forget(ctx context.Context, a Actor, in ForgetInput) (ForgetResult, error) {
	a = normalize(a)
	words := secret.Words(in.Words)
	if len(words) == 0 {
		return ForgetResult{Matched: []Match{}, Text: fmt.Sprintf("Nothing was forgotten: %q names no line; say which words the line contains (like \"Leo swim\").", strings.TrimSpace(in.Words))}, nil
	}
	matched, err := m.findForget(ctx, words)
	if err != nil {
		return ForgetResult{}, err
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
	date := m.now().Format("2006-01-02")
	r, err := m.box.Do(ctx, box.Change{Actor: a, Op: "forget", Switch: "change",
		Summary: fmt.Sprintf("%s forgot %d %s matching %q", a.Who, len(matched), plural(len(matched), "line", "lines"), q),
		Apply: func(tx *box.Tx) error {
			n, err := forgetApply(tx, words, matched, date, a, m.now().UTC().Format("2006-01-02T15:04:05Z"))
			if err == nil && n == 0 {
				err = errs.E("memory.forget", errs.Conflict, "The matching lines changed while forgetting; nothing was removed, so try again.")
			}
			res.Removed = n
			return err
		}})
	if err != nil {
		return ForgetResult{}, err
	}
	res.Entry = r.EntryID
	res.Text = fmt.Sprintf("Forgot %d %s matching %q; they are in the trash, and box undo brings them back.", res.Removed, plural(res.Removed, "line", "lines"), q)
	return res, nil
}

// findForget reads every memory file that could hold all the words and lists the matching lines.
func (m *Memory) findForget(ctx context.Context, words []string) ([]Match, error) {
	var out []Match
	err := filepath.WalkDir(m.host("/_content"), func(h string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return ctx.Err()
		}
		p := m.boxPath(h)
		if d.IsDir() || !indexable(p) {
			return nil
		}
		data, err := m.read(p)
		if err != nil || !mayMatch(data, words) {
			return nil
		}
		out = append(out, forgetMatches(p, data, words)...)
		return nil
	})
	return out, err
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

// forgetMatches lists the lines of one file that forget would remove.
func forgetMatches(p string, data []byte, words []string) []Match {
	var out []Match
	typ, _, _ := typeOf(p, data)
	switch typ {
	case "inbox-day":
		for _, l := range inbox.LinesOf(data) {
			if secret.MatchesAll(l.Text, words) {
				out = append(out, Match{Path: p, ID: l.ID, Text: l.Text})
			}
		}
	case "note":
		_, removed := note.RemoveFactsMatching(data, func(t string) bool { return secret.MatchesAll(t, words) })
		for _, r := range removed {
			out = append(out, Match{Path: p, ID: r.Fact.ID, Text: r.Fact.Text})
		}
	case "router":
		if r, err := note.ParseRouter(data); err == nil {
			for _, f := range r.CoreFacts {
				if secret.MatchesAll(f.Text, words) {
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
		line, _ := json.Marshal(r)
		data = append(append(data, line...), '\n')
	}
	return tx.Write(p, data)
}

// forgetApply removes, inside the change, exactly the matches found (those still there) and trashes them.
func forgetApply(tx *box.Tx, words []string, matched []Match, date string, a Actor, now string) (int, error) {
	want := map[string]map[string]bool{} // path → text → planned
	wantID := map[string]bool{}          // path#id of the inbox lines planned: a line that arrived since with the same text stays
	for _, mt := range matched {
		if want[mt.Path] == nil {
			want[mt.Path] = map[string]bool{}
		}
		want[mt.Path][mt.Text] = true
		if mt.ID != "" {
			wantID[mt.Path+"#"+mt.ID] = true
		}
	}
	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var trash []trashRecord
	rec := func(p, section, id, line string) {
		trash = append(trash, trashRecord{Time: now, Op: "forget", By: a.Who, Path: p, Section: section, ID: id, Line: line})
	}
	for _, p := range paths {
		data, err := readOr(tx, p, nil)
		if err != nil || data == nil {
			continue
		}
		planned := func(text string) bool { return want[p][text] && secret.MatchesAll(text, words) }
		typ, _, _ := typeOf(p, data)
		var out []byte
		switch typ {
		case "inbox-day":
			var ids []string
			for _, l := range inbox.LinesOf(data) {
				if wantID[p+"#"+l.ID] && planned(l.Text) {
					ids = append(ids, l.ID)
				}
			}
			var removed []inbox.Line
			out, removed = inbox.RemoveLines(data, ids)
			for _, l := range removed {
				rec(p, "inbox", l.ID, l.String())
			}
		case "note":
			var removed []note.Removed
			out, removed = note.RemoveFactsMatching(data, func(t string) bool { return planned(t) })
			for _, r := range removed {
				rec(p, r.Section, r.Fact.ID, r.Line)
			}
		case "router":
			r, err := note.ParseRouter(data)
			if err != nil {
				continue
			}
			var kept []note.Fact
			for _, f := range r.CoreFacts {
				if planned(f.Text) {
					rec(p, "Core facts", f.ID, "- [core] "+f.Text)
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
	return len(trash), addTrash(tx, date, trash)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
