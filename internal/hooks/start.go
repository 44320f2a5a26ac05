package hooks

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/note"
)

// errQuiet is a box that must not talk (frozen or locked): the hooks answer nothing, by design.
var errQuiet = errors.New("the box is frozen or locked")

// errNoServices is a hook run without the composition root's services (nothing to read the memory with).
var errNoServices = errors.New("no services to read the memory with")

// Services are what a hook reads and writes the owner's box through: the composition root opens them
// in its light mode (the memory's index as it stands, no reconcile walk, no watcher), only when a hook
// needs them.
type Services struct {
	Memory *memory.Memory
	// Quiet is nil when the box may talk, an error when it is frozen or locked (or the flags cannot be read).
	Quiet func(ctx context.Context) error
	Close func() error
}

// services opens the owner's box for a hook, unless the owner froze or locked it.
func (s *session) services(ctx context.Context) (*Services, error) {
	if s.env.Open == nil {
		return nil, errNoServices
	}
	sv, err := s.env.Open(ctx, s.root)
	if err != nil {
		return nil, err
	}
	if err := sv.Quiet(ctx); err != nil {
		return nil, errors.Join(errQuiet, err, sv.Close())
	}
	return sv, nil
}

// sessionStart says what the box holds and what no longer exists; after a compaction it restates the
// session record and the rules instead.
func (s *session) sessionStart(ctx context.Context) (res Result, err error) {
	if s.in.Source == "compact" {
		return addContext(SessionStart, s.restate(SessionStart, true)), nil
	}
	sv, err := s.services(ctx)
	if err != nil {
		return Result{}, err
	}
	defer func() { err = errors.Join(err, sv.Close()) }()
	sum, err := sv.Memory.Summary(ctx)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The owner's box (their memory) is at %s: %d notes, %d maps. %s.\n",
		s.root, sum.Notes, sum.Maps, note.WaitingLine(sum.Inbox))
	b.WriteString("Look things up with the box MCP tools (memory_search, memory_read_note) or `box search WORDS`; save a durable fact with memory_remember (one plain fact, never a secret).\n")
	if rot := s.rot(sv.Memory, sum.Router); len(rot) > 0 {
		b.WriteString("\nRot: these lines name paths that no longer exist; trust them less:\n")
		b.WriteString(Trim(strings.Join(rot, "\n"), 220) + "\n")
	}
	head := b.String()
	text := strings.TrimSpace(stripFrontmatter(sum.Router))
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
	_ = s.locked(func() error {
		_ = s.load(markerFile, &mk)
		if mk.Answered >= mk.Compactions {
			if !atStart {
				return nil
			}
			mk.Compactions = mk.Answered + 1 // a compaction PreCompact did not see
			_ = s.load(recordFile, &rec)
		} else if err := s.load(frozenFile, &rec); err != nil || rec.Updated.IsZero() {
			_ = s.load(recordFile, &rec)
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

// maxGuideBytes bounds how much of a project's agent guide (CLAUDE.md, AGENTS.md) a hook reads: a guide is
// pages, not megabytes, and what a hook says is trimmed to its budget anyway; a longer one is read this far.
const maxGuideBytes = 256 << 10

// rules is the agent guide of the project (CLAUDE.md, else AGENTS.md), verbatim, with its heading. The
// box's own guide is read under the box's escape check (docs/SECURITY.md, "Paths, symlinks and the box
// tree"): a guide linked out of the box is not read.
func (s *session) rules() string {
	read := func(name string) ([]byte, error) { return readHead(filepath.Join(s.project, name), maxGuideBytes) }
	if s.inBox {
		read = func(name string) ([]byte, error) { return layout.ReadFile(s.root, "/"+name) }
	}
	for _, name := range []string{"CLAUDE.md", "AGENTS.md"} {
		data, err := read(name)
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
	_, body, _ := card.Split([]byte(text))
	return string(body)
}
