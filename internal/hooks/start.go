package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxmem/box/internal/index"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
)

// errQuiet is a box that must not talk (frozen or locked): the hooks answer nothing, by design.
var errQuiet = errors.New("the box is frozen or locked")

// reader is the memory as the hooks read it. Normally the index as it stands (.box/index.db): the box's
// own writes, the server's file watcher and every CLI read keep it current, and a hook must not pay the
// reconcile walk (100–300 ms on 10k notes) on every prompt. An index that is missing or unusable is
// rebuilt through memory.Open, once, in the hook's time.
type reader struct {
	ix *index.Index
	m  *memory.Memory
}

// hit is one search result, from either source.
type hit struct {
	path, kind, title string
	score             float64
}

// openReader opens the owner's memory for reading, unless the owner froze or locked the box.
func (s *session) openReader(ctx context.Context) (*reader, error) {
	if _, err := os.Stat(filepath.Join(s.root, ".box", "state.db")); err == nil {
		st, err := keys.Open(s.root, s.now)
		if err != nil {
			return nil, err
		}
		frozen, ferr := st.Frozen(ctx)
		locked, lerr := st.Flag(ctx, keys.FlagLocked)
		st.Close()
		if err := errors.Join(ferr, lerr); err != nil {
			return nil, err
		}
		if frozen || locked {
			return nil, errQuiet
		}
	}
	if ix, err := index.Open(filepath.Join(s.root, ".box", "index.db")); err == nil {
		if !ix.NeedsRebuild() {
			return &reader{ix: ix}, nil
		}
		ix.Close()
	}
	m, err := memory.Open(ctx, s.root, memory.Options{Now: s.now})
	if err != nil {
		return nil, err
	}
	return &reader{m: m}, nil
}

func (r *reader) Close() error {
	if r.m != nil {
		return r.m.Close()
	}
	return r.ix.Close()
}

// counts returns how many notes and unfiled inbox lines the memory holds.
func (r *reader) counts(ctx context.Context) (notes, inbox int, err error) {
	if r.m != nil {
		ov, err := r.m.Overview(ctx)
		return len(ov.Notes) + ov.MoreNotes, ov.Inbox, err
	}
	if _, notes, err = r.ix.List(ctx, []string{memory.KindNote}, 1); err != nil {
		return 0, 0, err
	}
	_, inbox, err = r.ix.List(ctx, []string{memory.KindInbox}, 1)
	return notes, inbox, err
}

// search runs one query with the rules of DESIGN §5.
func (r *reader) search(ctx context.Context, words string, limit int) ([]hit, error) {
	var out []hit
	if r.m != nil {
		res, err := r.m.Search(ctx, memory.SearchInput{Words: words, Limit: limit})
		for _, h := range res.Hits {
			out = append(out, hit{h.Path, h.Kind, h.Title, h.Score})
		}
		return out, err
	}
	hits, err := r.ix.Search(ctx, index.Query{Text: words, Limit: limit})
	for _, h := range hits {
		out = append(out, hit{h.Path, h.Kind, h.Title, h.Score})
	}
	return out, err
}

// sessionStart says what the box holds and what no longer exists; after a compaction it restates the
// session record and the rules instead.
func (s *session) sessionStart(ctx context.Context) (Result, error) {
	if s.in.Source == "compact" {
		return addContext(SessionStart, s.restate(SessionStart, true)), nil
	}
	r, err := s.openReader(ctx)
	if err != nil {
		return Result{}, err
	}
	defer r.Close()
	notes, inbox, err := r.counts(ctx)
	if err != nil {
		return Result{}, err
	}
	maps := countFiles(s.host(layout.MapsDir), ".md")
	router, _ := layout.ReadFile(s.root, layout.Router)
	var b strings.Builder
	fmt.Fprintf(&b, "The owner's box (their memory) is at %s: %d notes, %d maps, %d inbox lines not yet filed.\n",
		s.root, notes, maps, inbox)
	b.WriteString("Look things up with the box MCP tools (memory_search, memory_read_note) or `box search WORDS`; save a durable fact with memory_remember (one plain fact, never a secret).\n")
	if rot := s.rot(); len(rot) > 0 {
		b.WriteString("\nRot: these lines name paths that no longer exist; trust them less:\n")
		b.WriteString(Trim(strings.Join(rot, "\n"), 220) + "\n")
	}
	head := b.String()
	text := strings.TrimSpace(stripFrontmatter(string(router)))
	if left := CapStart - Tokens(head) - 12; text != "" && left > 20 {
		head += "\nRouter " + layout.Router + ":\n" + Trim(text, left)
	}
	return addContext(SessionStart, Trim(head, CapStart)), nil
}

// restate answers a compaction once: the session record (≤1200 tokens), then the rules (≤700). It is
// empty when no compaction is waiting. atStart is true for SessionStart with source compact, which may
// answer a compaction PreCompact never saw.
func (s *session) restate(by string, atStart bool) string {
	var mk Marker
	var rec Record
	answer := false
	s.locked(func() error {
		s.load(markerFile, &mk)
		if mk.Answered >= mk.Compactions {
			if !atStart {
				return nil
			}
			mk.Compactions = mk.Answered + 1 // a compaction PreCompact did not see
			s.load(recordFile, &rec)
		} else if err := s.load(frozenFile, &rec); err != nil || rec.Updated.IsZero() {
			s.load(recordFile, &rec)
		}
		answer = true
		mk.Answered, mk.By = mk.Compactions, by
		return s.save(markerFile, mk)
	})
	if !answer {
		return ""
	}
	if rec.Gates == nil {
		rec.Gates = s.openGates() // no PreCompact froze them
	}
	out := Trim(s.recordText(rec, mk.Compactions), CapRecord)
	if rules := s.rules(); rules != "" {
		out += "\n\n" + Trim(rules, CapRules)
	}
	return out
}

// recordText renders the record for the window.
func (s *session) recordText(r Record, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Session record after compaction %d (kept by the box hooks, not the summary):\n", n)
	if r.Task != "" {
		fmt.Fprintf(&b, "Task: %s\n", oneLine(r.Task, 600))
	}
	if len(r.Scope) > 0 {
		fmt.Fprintf(&b, "Scope: %s\n", strings.Join(s.displayAll(r.Scope), ", "))
	}
	if len(r.Edited) > 0 {
		fmt.Fprintf(&b, "Files edited: %s\n", strings.Join(s.displayAll(r.Edited), ", "))
	}
	if len(r.Commands) > 0 {
		b.WriteString("Last commands:\n")
		for _, c := range r.Commands {
			fmt.Fprintf(&b, "- %s\n", oneLine(c, 200))
		}
	}
	if len(r.Gates) > 0 {
		b.WriteString("Open gates (GATES.md):\n")
		for _, g := range r.Gates {
			fmt.Fprintf(&b, "- %s\n", g)
		}
	}
	if r.Task == "" && len(r.Edited) == 0 && len(r.Commands) == 0 {
		b.WriteString("Nothing recorded yet in this session.\n")
	}
	return b.String()
}

// rules is the agent guide of the project (CLAUDE.md, else AGENTS.md), verbatim, with its heading.
func (s *session) rules() string {
	for _, name := range []string{"CLAUDE.md", "AGENTS.md"} {
		data, err := os.ReadFile(filepath.Join(s.project, name))
		if err == nil && len(strings.TrimSpace(string(data))) > 0 {
			return "Rules (" + name + ", verbatim):\n" + strings.TrimSpace(string(data))
		}
	}
	return ""
}

func (s *session) displayAll(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = s.display(p)
	}
	return out
}

// oneLine folds text to one line of at most n runes.
func oneLine(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > n {
		return string(r[:n]) + ellipsis
	}
	return text
}

// stripFrontmatter drops a leading YAML frontmatter block.
func stripFrontmatter(text string) string {
	if !strings.HasPrefix(text, "---\n") {
		return text
	}
	if i := strings.Index(text[4:], "\n---"); i >= 0 {
		rest := text[4+i+4:]
		return strings.TrimPrefix(rest, "\n")
	}
	return text
}

// countFiles counts the files with the suffix directly in dir.
func countFiles(dir, suffix string) int {
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), suffix) {
			n++
		}
	}
	return n
}

// host is the host path of a box path in the owner's box.
func (s *session) host(boxPath string) string {
	return filepath.Join(s.root, filepath.FromSlash(strings.TrimPrefix(boxPath, "/")))
}
