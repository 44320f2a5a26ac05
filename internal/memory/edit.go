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
	n, err := m.Read(ctx, name)
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
	const op = "memory.edit"
	a = normalize(a)
	p, err := resolveName(in.Name)
	if err != nil || !editable(p) {
		return EditResult{}, errs.E(op, errs.NotFound, "There is no note %q to edit.", in.Name)
	}
	text := strings.ReplaceAll(in.Text, "\r\n", "\n")
	r, err := m.box.Do(ctx, box.Change{Actor: a, Op: "edit", Switch: gate.Change,
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
		}})
	if err != nil {
		return EditResult{}, err
	}
	return EditResult{Path: p, Entry: r.EntryID, Text: "Saved. Undo brings the old text back."}, nil
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
