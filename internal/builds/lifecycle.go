package builds

import (
	"context"
	"errors"
	"fmt"
	"github.com/boxmem/box/internal/secret"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/layout"
)

// OpPageNotes is the "Delete for good" action of a removed page's notes and data.
const OpPageNotes = "page-notes"

// pageActor is who a page is in the diary: a page writes as outside content, never as the owner.
func pageActor(slug string) box.Actor {
	return box.Actor{Who: "page " + slug, Via: "page", Conn: "page:" + slug, Trust: "outside"}
}

// PageActor is the actor of a page's own writes through its bridge.
func PageActor(slug string) box.Actor { return pageActor(slug) }

// Heartbeat is a page's first clean load of version n: a pending version turns on. It answers the
// status after.
func (r *Builds) Heartbeat(ctx context.Context, slug string, n int) (string, error) {
	return r.firstLoad(ctx, slug, n, func(b *Build) (string, string) {
		b.Status, b.Previous = StatusOn, 0
		return "page-on", fmt.Sprintf("The page %s loaded cleanly: version %d is on", b.Name, n)
	})
}

// Failed is an error a page reported before its heartbeat: a first version goes off (broken), an
// update puts the previous version back. The page's message is kept for the owner, never for the
// assistant that built it (it may carry the owner's notes).
func (r *Builds) Failed(ctx context.Context, slug string, n int, message string) (string, error) {
	return r.firstLoad(ctx, slug, n, func(b *Build) (string, string) {
		for i := range b.Versions {
			if b.Versions[i].N == n {
				problem := clip(oneLine(message), 500)
				if reason, found := secret.Stored(problem); found { // build.json is in git
					problem = "the page's message was not kept: " + reason
				}
				b.Versions[i].Failed, b.Versions[i].Problem = true, problem
			}
		}
		if b.Previous > 0 {
			summary := fmt.Sprintf("Version %d of the page %s did not load cleanly, so version %d is back", n, b.Name, b.Previous)
			b.Version, b.Previous, b.Status = b.Previous, 0, StatusOn
			return "page-failed", summary
		}
		b.Status = StatusBroken
		return "page-failed", fmt.Sprintf("The page %s did not load cleanly (version %d), so it is off", b.Name, n)
	})
}

// firstLoad applies what a page's first load of version n says, if that version is still pending,
// and answers the page's status after.
func (r *Builds) firstLoad(ctx context.Context, slug string, n int, apply func(b *Build) (op, summary string)) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := r.Page(ctx, slug)
	if err != nil {
		return "", err
	}
	if b.Version != n || b.Status != StatusPending {
		return b.Status, nil
	}
	was := clone(b)
	op, summary := apply(&b)
	return b.Status, r.change(ctx, pageActor(slug), op, summary, was, b, nil)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// SetOn switches a build on or off for the owner. A page switched on waits for its heartbeat again
// only if it never loaded cleanly.
func (r *Builds) SetOn(ctx context.Context, actor box.Actor, id string, on bool) (Build, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := r.Get(ctx, id)
	if err != nil {
		return b, err
	}
	if b.Kind == KindConnector && on {
		if r.SafeMode(ctx) {
			return b, errs.E("builds.on", errs.Refused, "%s Nothing was switched on.", safeModeSentence(b))
		}
		return r.retest(ctx, actor, b, b.Version, "build-on", "Switching on "+describe(b)+": its tests run first")
	}
	was := clone(b)
	verb := "Switched off"
	switch {
	case !on:
		b.Status = StatusOff
	case b.Current().Failed || (b.Kind == KindPage && b.Status == StatusBroken):
		b.Status = StatusPending
		verb = "Switched on (pending its first clean load)"
	default:
		b.Status = StatusOn
		verb = "Switched on"
	}
	b.Previous = 0
	return b, r.change(ctx, actor, "build-"+map[bool]string{true: "on", false: "off"}[on], verb+" "+describe(b), was, b, nil)
}

func describe(b Build) string {
	switch b.Kind {
	case KindPage:
		return "the page " + b.Name
	case KindLook:
		return "the look " + b.Name
	case KindLayout:
		return "the layout"
	case KindConnector:
		return "the connector " + b.Name
	}
	return b.Kind + " " + b.Name
}

// Undo puts an earlier version of a build back (n, or the one before the version served when n is 0).
func (r *Builds) Undo(ctx context.Context, actor box.Actor, id string, n int) (Build, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := r.Get(ctx, id)
	if err != nil {
		return b, err
	}
	if n == 0 {
		for _, v := range b.Versions {
			if v.N < b.Version && v.N > n {
				n = v.N
			}
		}
		if n == 0 {
			return b, errs.E("builds.undo", errs.Invalid, "%s has no version before %d to go back to.", describe(b), b.Version)
		}
	}
	if n == b.Version {
		return b, errs.E("builds.undo", errs.Invalid, "Version %d of %s is the one in use already.", n, describe(b))
	}
	var v Version
	for _, x := range b.Versions {
		if x.N == n {
			v = x
		}
	}
	if v.N == 0 {
		return b, errs.E("builds.undo", errs.NotFound, "%s has no version %d.", describe(b), n)
	}
	if _, err := r.Source(b, n); err != nil {
		return b, err
	}
	from, was := b.Version, clone(b)
	summary := fmt.Sprintf("Went back from version %d to version %d of %s", from, n, describe(b))
	if b.Kind == KindConnector {
		if b.Status != StatusOff {
			if r.SafeMode(ctx) {
				return b, errs.E("builds.undo", errs.Refused, "%s Nothing was changed.", safeModeSentence(b))
			}
			return r.retest(ctx, actor, b, n, "build-undo", summary+"; its tests run first")
		}
		bundle, err := r.Bundle(b, n)
		if err != nil {
			return b, err
		}
		env := bundle.Envelope
		b.Envelope = &env
	}
	b.Version, b.Previous = n, 0
	switch {
	case b.Kind == KindConnector:
		// An off connector (one in use was tested above) stays off, whatever its version did: switching it
		// on runs the tests.
	case v.Failed:
		b.Status = StatusPending // a page waits for its first clean load again
	case b.Status != StatusOff:
		b.Status = StatusOn
	}
	return b, r.change(ctx, actor, "build-undo", summary, was, b, nil)
}

// Removed is what removing a build did.
type Removed struct {
	Build Build              `json:"build"`
	Card  *gate.ApprovalCard `json:"card,omitempty"` // the Delete for good card of a page's notes or a connector's keys and data, if any
	Text  string             `json:"text"`
}

// Remove takes a build out of the box as one change the owner can undo. A page's notes and data are
// not touched: if it has any, they wait on a "Delete for good" card.
func (r *Builds) Remove(ctx context.Context, actor box.Actor, id string, who gate.Asker) (Removed, error) {
	r.mu.Lock()
	b, err := r.Get(ctx, id)
	if err != nil {
		r.mu.Unlock()
		return Removed{}, err
	}
	files, err := r.files(Dir(b.Kind, b.ID))
	if err != nil {
		r.mu.Unlock()
		return Removed{}, err
	}
	_, err = r.b.Do(ctx, box.Change{Actor: actor, Op: "build-remove", Switch: gate.Change, Summary: "Removed " + describe(b),
		Apply: func(tx *box.Tx) error {
			for _, p := range files {
				if err := tx.Remove(p); err != nil {
					return err
				}
			}
			return nil
		}})
	r.mu.Unlock()
	if err != nil {
		return Removed{}, err
	}
	out := Removed{Build: b, Text: "Removed " + describe(b) + "; undo brings it back."}
	if b.Kind == KindConnector {
		return r.removeConnector(ctx, b, who, out)
	}
	if b.Kind != KindPage {
		return out, nil
	}
	notes, err := r.notes(b.ID)
	if err != nil || len(notes) == 0 {
		return out, err
	}
	return r.offerForGood(ctx, notesAction(b, notes), who, "Its notes and data", out)
}

// offerForGood proposes the Delete for good card of what a removed build leaves (what, as the owner
// reads it) and says on out what became of it: a card waits, or the switch refused and it stays.
func (r *Builds) offerForGood(ctx context.Context, a gate.Action, who gate.Asker, what string, out Removed) (Removed, error) {
	prop, err := r.gate.Propose(ctx, a, who)
	if err != nil {
		return out, err
	}
	if prop.Card != nil {
		out.Card = prop.Card
		out.Text += " " + what + " wait on a Delete for good card."
	} else if prop.Decision.Verdict == gate.Refuse {
		out.Text += " " + what + " stay: " + prop.Decision.Reason
	}
	return out, nil
}

// files lists every file under dir (a box path), sorted.
func (r *Builds) files(dir string) ([]string, error) {
	var out []string
	host := filepath.Join(r.b.Root, filepath.FromSlash(dir))
	err := filepath.WalkDir(host, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return errs.E("builds.files", errs.Invalid, "%s holds a link; nothing was removed.", dir)
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(r.b.Root, p)
			out = append(out, "/"+filepath.ToSlash(rel))
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errs.Wrap("builds.files", errs.KindOf(err), err, "The files of "+dir+" cannot be listed")
	}
	sort.Strings(out)
	return out, nil
}

type noteFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

func (r *Builds) notes(slug string) ([]noteFile, error) {
	paths, err := r.files(NotesDir(slug))
	if err != nil {
		return nil, err
	}
	var out []noteFile
	for _, p := range paths {
		data, err := layout.ReadFile(r.b.Root, p)
		if err != nil {
			return nil, errs.Wrap("builds.notes", errs.Other, err, "The page's notes cannot be read")
		}
		out = append(out, noteFile{Path: p, SHA256: Sum(data)})
	}
	return out, nil
}

func notesAction(b Build, notes []noteFile) gate.Action {
	files := make([]any, len(notes))
	for i, n := range notes {
		files[i] = map[string]any{"path": n.Path, "sha256": n.SHA256}
	}
	return gate.Action{Kind: "delete", Switch: gate.Delete,
		Summary: fmt.Sprintf("The notes and data of the removed page %s (%d files)", b.Name, len(notes)),
		Payload: map[string]any{"op": OpPageNotes, "slug": b.ID, "name": b.Name, "files": files}}
}

// NotesOp deletes a removed page's notes for good: exactly the files the card listed, unchanged.
func (r *Builds) NotesOp() gate.Op {
	return gate.Op{
		Current: func(ctx context.Context, stored gate.Action) (gate.Action, error) {
			p, _ := stored.Payload.(map[string]any)
			slug, _ := p["slug"].(string)
			name, _ := p["name"].(string)
			notes, err := r.notes(slug)
			if err != nil {
				return stored, err
			}
			return notesAction(Build{ID: slug, Name: name}, notes), nil
		},
		Run: func(ctx context.Context, c gate.ApprovalCard, a gate.Action) (gate.Effect, error) {
			p, _ := a.Payload.(map[string]any)
			list, _ := p["files"].([]any)
			var paths, sums []string
			for _, f := range list {
				m, _ := f.(map[string]any)
				if s, _ := m["path"].(string); strings.HasPrefix(s, "/_content/pages/") {
					sum, _ := m["sha256"].(string)
					paths, sums = append(paths, s), append(sums, sum)
				}
			}
			name, _ := p["name"].(string)
			ch := box.Change{Actor: c.Proposer(), Op: "page-notes-delete", Switch: gate.Delete,
				Summary: fmt.Sprintf("Deleted for good the notes and data of the page %s", name),
				Apply: func(tx *box.Tx) error {
					for i, p := range paths {
						// Checked again inside the change: a file written since the approval's own check is
						// not the one the owner saw.
						data, err := tx.Read(p)
						if err != nil || Sum(data) != sums[i] {
							return errs.E("builds.notes", errs.Conflict, "%s changed since the card listed it; nothing was deleted.", p)
						}
						if err := tx.Remove(p); err != nil {
							return err
						}
					}
					return nil
				}}
			return gate.Effect{Change: &ch, Text: func() string { return ch.Summary + "." }}, nil
		},
	}
}
