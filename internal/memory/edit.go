package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/secret"
)

// Editable is a memory file as the owner edits it by hand: its text and the hash an edit must start from.
type Editable struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Text string `json:"text"`
	Base string `json:"base"` // SHA-256 of Text: an edit made from another version is refused
}

// EditInput is the owner's new text for a file, and the Base it was made from.
type EditInput struct {
	Name string `json:"name"`
	Text string `json:"text"`
	Base string `json:"base"`
}

// EditResult says where the edit went.
type EditResult struct {
	Path  string `json:"path"`
	Entry string `json:"entry"`
	Text  string `json:"text"`
}

// ReadForEdit returns a note, map, router or other Markdown file under /_content/ by name, for editing.
func (m *Memory) ReadForEdit(ctx context.Context, name string) (Editable, error) {
	n, err := m.readNote(ctx, name)
	if err != nil {
		return Editable{}, err
	}
	if !editable(n.Path) {
		return Editable{}, errs.E("memory.edit", errs.NotFound, "There is no note %q to edit.", name)
	}
	return Editable{Name: name, Path: n.Path, Text: n.Text, Base: Base([]byte(n.Text))}, nil
}

// Base is the hash an edit of data starts from.
func Base(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func editable(p string) bool {
	return strings.HasPrefix(p, "/_content/") && strings.HasSuffix(p, ".md")
}

// Edit saves the owner's hand edit of a memory file, checked like every write (the box validates the
// card), only if nobody changed the file since the edit began (in.Base), and only if it adds no secret:
// lines that were there before are the owner's to clean up, and do not refuse the edit.
func (m *Memory) Edit(ctx context.Context, a Actor, in EditInput) (EditResult, error) {
	ch, p, err := m.editChange(a, in)
	if err != nil {
		return EditResult{}, err
	}
	r, err := m.box.Do(ctx, ch)
	if err != nil {
		return EditResult{}, err
	}
	return EditResult{Path: p, Entry: r.EntryID, Text: "Saved. Undo brings the old text back."}, nil
}

// editChange is the change an edit makes, and the file it edits.
func (m *Memory) editChange(a Actor, in EditInput) (box.Change, string, error) {
	const op = "memory.edit"
	a = normalize(a)
	p, err := resolveName(in.Name)
	if err != nil || !editable(p) {
		return box.Change{}, "", errs.E(op, errs.NotFound, "There is no note %q to edit.", in.Name)
	}
	text := strings.ReplaceAll(in.Text, "\r\n", "\n")
	return box.Change{Actor: a, Op: "edit", Switch: gate.Change,
		Summary: fmt.Sprintf("%s edited %s", a.Who, p),
		Apply: func(tx *box.Tx) error {
			cur, err := tx.Read(p)
			if errors.Is(err, fs.ErrNotExist) {
				return errs.E(op, errs.NotFound, "There is no note %q to edit.", in.Name)
			}
			if err != nil {
				return err
			}
			if Base(cur) != in.Base {
				return errs.E(op, errs.Conflict, "The note changed since you opened it (a tidy or an assistant wrote to it); nothing was saved, so open it again.")
			}
			if string(cur) == text {
				return errs.E(op, errs.Invalid, "Nothing changed, so nothing was saved.")
			}
			if err := addedSecret(cur, text); err != nil {
				return err
			}
			out, err := provenance(a, p, []byte(text), m.now().Format("2006-01-02"))
			if err != nil {
				return err
			}
			return tx.Write(p, out)
		}}, p, nil
}

// EditAction is the exact action "replace this note's text", for a "Save this?" card: bound to the
// text it replaces (in.Base), so a note changed since the card was made is not overwritten. It is
// checked first as Edit checks it, so a card never holds a secret.
func (m *Memory) EditAction(ctx context.Context, a Actor, in EditInput) (gate.Action, error) {
	e, err := m.ReadForEdit(ctx, in.Name)
	if err != nil {
		return gate.Action{}, err
	}
	text := strings.ReplaceAll(in.Text, "\r\n", "\n")
	switch {
	case e.Base != in.Base:
		return gate.Action{}, errs.E("memory.edit", errs.Conflict, "The note changed since you opened it (a tidy or an assistant wrote to it); nothing was saved, so open it again.")
	case e.Text == text:
		return gate.Action{}, errs.E("memory.edit", errs.Invalid, "Nothing changed, so nothing was saved.")
	}
	if err := addedSecret([]byte(e.Text), text); err != nil {
		return gate.Action{}, err
	}
	if _, err := provenance(normalize(a), e.Path, []byte(text), m.now().Format("2006-01-02")); err != nil {
		return gate.Action{}, err
	}
	return editAction(in.Name, e.Path, in.Base, text), nil
}

func editAction(name, p, base, text string) gate.Action {
	return gate.Action{Kind: "save", Switch: gate.Change, Summary: "replace the text of " + p,
		Payload: map[string]any{"op": "edit", "name": name, "path": p, "base": base, "text": text}}
}

// EditOp is how an approved edit card runs (the gate calls it): only while the note still holds the text
// the card was made from, under the name of whoever proposed it.
func (m *Memory) EditOp() gate.Op {
	field := func(a gate.Action, k string) string {
		p, _ := a.Payload.(map[string]any)
		v, _ := p[k].(string)
		return v
	}
	return gate.Op{
		Current: func(ctx context.Context, stored gate.Action) (gate.Action, error) {
			base := ""
			if e, err := m.ReadForEdit(ctx, field(stored, "name")); err == nil && e.Path == field(stored, "path") {
				base = e.Base
			} else if err != nil && !errs.Is(err, errs.NotFound) {
				return gate.Action{}, err
			}
			return editAction(field(stored, "name"), field(stored, "path"), base, field(stored, "text")), nil
		},
		Run: func(_ context.Context, c gate.ApprovalCard, a gate.Action) (gate.Effect, error) {
			ch, _, err := m.editChange(c.Proposer(), EditInput{Name: field(a, "name"), Text: field(a, "text"), Base: field(a, "base")})
			if err != nil {
				return gate.Effect{}, err
			}
			return gate.Effect{Change: &ch, Text: func() string { return "Saved the new text of " + field(a, "path") + "." }}, nil
		},
	}
}

// provenance marks a note edited by anyone but the owner as written by others (source outside, or mixed
// once the owner wrote too: note.Touch), so its text is fenced wherever it is served (docs/MEMORY.md). Only
// a note carries that mark: anyone else's edit of a file that cannot carry it is refused.
func provenance(a Actor, p string, text []byte, date string) ([]byte, error) {
	if a.Trust == inbox.Own {
		return text, nil
	}
	if typ, _, _ := typeOf(p, text); typ == "note" {
		if out, err := note.Touch(text, date, note.SourceOutside); err == nil {
			return out, nil
		}
	}
	return nil, errs.E("memory.edit", errs.Refused, "Nothing was saved: %s may edit only a note that keeps its frontmatter (type: note), so the box can mark who wrote it.", a.Who)
}

// addedSecret refuses an edit whose new lines look like a secret: the box never holds one.
func addedSecret(before []byte, after string) error {
	had := map[string]bool{}
	for _, l := range strings.Split(string(before), "\n") {
		had[l] = true
	}
	for _, l := range strings.Split(after, "\n") {
		if had[l] {
			continue
		}
		if reason, found := secret.Secret(l); found {
			return errs.E("memory.edit", errs.Refused, "Nothing was saved: %s", reason)
		}
	}
	return nil
}
