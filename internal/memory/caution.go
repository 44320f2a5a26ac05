package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/diary"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/say"
)

// Cautions (docs/MEMORY.md, "Core facts and cautions"): a live warning of the router with the last day
// it holds, "Leo's school is closed for works (until 2026-12-24)". Only the owner's own words make one;
// the nightly job moves each caution whose day has passed to the timeline of the note it names.

const spoolCaution = "memory.caution"

type cautionArgs struct {
	Text  string `json:"text"`
	Until string `json:"until"`
	Date  string `json:"date"`
}

// cautionChange checks a caution and returns the change that adds it to the router.
func (m *Memory) cautionChange(a Actor, text string, in RememberInput) (box.Change, RememberResult, error) {
	const op = "memory.remember"
	if a.Trust != inbox.Own {
		return box.Change{}, RememberResult{}, errs.E(op, errs.Refused, "Only the owner's own words can be a caution; save it as a plain fact instead, and the owner can make it a caution.")
	}
	until, err := time.ParseInLocation("2006-01-02", strings.TrimSpace(in.Until), m.now().Location())
	if err != nil {
		return box.Change{}, RememberResult{}, errs.E(op, errs.Usage, "A caution needs the last day it holds, as YYYY-MM-DD (like %s).", m.now().AddDate(0, 0, 7).Format("2006-01-02"))
	}
	today := m.now().Format("2006-01-02")
	if u := until.Format("2006-01-02"); u < today {
		return box.Change{}, RememberResult{}, errs.E(op, errs.Invalid, "The caution's last day %s has passed (today is %s); give a day from today on.", u, today)
	}
	args, err := json.Marshal(cautionArgs{Text: text, Until: until.Format("2006-01-02"), Date: today})
	if err != nil {
		return box.Change{}, RememberResult{}, errs.Wrap(op, errs.Other, err, "")
	}
	line := note.CautionLine(text, until.Format("2006-01-02"))
	return box.Change{Actor: a, Op: "remember", Switch: gate.Change, Summary: a.Who + " added a caution: " + short(line),
			Spool: &box.SpoolOp{Name: spoolCaution, Args: args}},
		RememberResult{ID: inbox.NewID(), Path: layout.Router, Text: "Added a caution, shown until " + until.Format("Monday 2 January 2006") + ": " + text}, nil
}

func addCaution(tx *box.Tx, a cautionArgs) error {
	r, err := readRouter(tx)
	if err != nil {
		return err
	}
	r.SetCautions(append(r.Cautions, note.CautionLine(a.Text, a.Until)))
	return writeRouter(tx, r, a.Date)
}

// CautionsResult is what one caution expiry did.
type CautionsResult struct {
	Ended []EndedCaution `json:"ended"`
	Live  int            `json:"live"` // cautions still shown
	Entry string         `json:"entry,omitempty"`
	Text  string         `json:"text"`
}

// EndedCaution is one caution moved to a note's timeline.
type EndedCaution struct {
	Text  string `json:"text"`
	Until string `json:"until"`
	Note  string `json:"note"`
}

// ExpireCautions moves every caution whose last day is before today (on the memory's clock) from the
// router, or from the note of what a full router left out (keptCautionPrefix), to the timeline of the
// note it names (the owner's own note when it names none), as one change committed with also (nil: none). The router's inbox line is made true in the same change. No caution
// ended: nothing is written.
func (m *Memory) ExpireCautions(ctx context.Context, a Actor, also *Also[CautionsResult]) (CautionsResult, error) {
	a = normalize(a)
	cat, _, err := m.loadCatalogue()
	if err != nil {
		return CautionsResult{}, err
	}
	today := m.now().Format("2006-01-02")
	var res CautionsResult
	c := box.Change{Actor: a, Op: "cautions", Switch: gate.Change}
	c.Apply = func(tx *box.Tx) error {
		ap := &applier{date: today, now: m.now().UTC().Format("2006-01-02T15:04:05Z"), who: a.Who, m: m, tx: tx,
			written: map[string]bool{}, lineOf: map[string]inbox.Line{}, leaving: map[string][]string{}, res: TidyResult{Created: []string{}}}
		r, err := ap.routerNow()
		if err != nil {
			return err
		}
		res = CautionsResult{Ended: []EndedCaution{}}
		ended := func(text, until string) {
			target := ownerName
			if hits := cat.find(toks(text)); len(hits) > 0 {
				target = hits[0].name
			}
			res.Ended = append(res.Ended, EndedCaution{Text: text, Until: until, Note: target})
		}
		var keep []string
		for _, cs := range r.Cautions {
			text, until := note.ParseCaution(cs)
			if until == "" || until >= today {
				keep = append(keep, cs)
				continue
			}
			ended(text, until)
		}
		res.Live = len(keep)
		// The cautions a full router left out wait in the note of what it keeps; they end there too.
		if data, err := readOr(tx, notePath(overflowNote), nil); err != nil {
			return err
		} else if rest, gone := note.RemoveFactsMatching(data, keptEnded(today)); len(gone) > 0 {
			if err := ap.edit(overflowNote, func([]byte) ([]byte, error) { return rest, nil }, ap.touch(inbox.Own)); err != nil {
				return err
			}
			for _, g := range gone {
				text, until, _ := keptCaution(g.Fact.Text)
				ended(text, until)
			}
		}
		if len(res.Ended) == 0 {
			return errNothing
		}
		r.SetCautions(keep)
		for _, e := range res.Ended {
			if !tx.Exists(notePath(e.Note)) {
				stub := Action{Op: ActCreate, Note: e.Note, Kind: "person", Title: ownerTitle, Map: mapOfKind("person")}
				if err := ap.one(stub); err != nil {
					return err
				}
			}
			ev := note.Event{Date: e.Until, Text: "Caution, until " + e.Until + ": " + e.Text}
			if err := ap.edit(e.Note, func(d []byte) ([]byte, error) { return note.AddEvent(d, ev) }, ap.touch(inbox.Own)); err != nil {
				return err
			}
		}
		for _, s := range ap.stubs {
			if err := ap.listInMap(s); err != nil {
				return err
			}
		}
		n := len(res.Ended)
		res.Text = fmt.Sprintf("%s moved %d ended %s to the timeline.", a.Who, n, say.Plural(n, "caution", "cautions"))
		if err := ap.refreshRouter(); err != nil {
			return err
		}
		if also != nil {
			res.Entry = c.EntryID
		}
		return nil
	}
	if also != nil {
		c.EntryID = diary.NewID(m.now().UTC())
	}
	// The summary names what ended, so the change is weighed first outside the lock (a dry read).
	dry, err := m.endedNow(cat, today)
	if err != nil {
		return CautionsResult{}, err
	}
	if len(dry) == 0 {
		return CautionsResult{Ended: []EndedCaution{}, Text: "No caution has ended."}, nil
	}
	c.Summary = fmt.Sprintf("%s moved %d ended %s to the timeline: %s", a.Who, len(dry), say.Plural(len(dry), "caution", "cautions"), short(strings.Join(dry, "; ")))
	var err2 error
	if also != nil {
		x := also.Change
		x.Apply = func(tx *box.Tx) error { return also.Write(tx, res) }
		var rs []box.Result
		rs, err2 = m.box.DoAll(ctx, c, x)
		if err2 == nil {
			res.Entry = rs[0].EntryID
		}
	} else {
		var r box.Result
		r, err2 = m.box.Do(ctx, c)
		res.Entry = r.EntryID
	}
	if errors.Is(err2, errNothing) {
		return CautionsResult{Ended: []EndedCaution{}, Text: "No caution has ended."}, nil
	}
	return res, err2
}

// errNothing stops a change that found nothing to do (another process did it first).
var errNothing = errs.E("memory.cautions", errs.Conflict, "No caution has ended.")

// endedNow lists the cautions of the router on disk, and those it left out, whose last day has passed.
func (m *Memory) endedNow(_ *catalogue, today string) ([]string, error) {
	r, err := readRouter(diskView{m})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, cs := range r.Cautions {
		if text, until := note.ParseCaution(cs); until != "" && until < today {
			out = append(out, text)
		}
	}
	data, err := readOr(diskView{m}, notePath(overflowNote), nil)
	if err != nil {
		return nil, err
	}
	_, gone := note.RemoveFactsMatching(data, keptEnded(today))
	for _, g := range gone {
		text, _, _ := keptCaution(g.Fact.Text)
		out = append(out, text)
	}
	return out, nil
}

// keptCautionPrefix marks a caution the router left out, kept as a fact of overflowNote until its day.
const keptCautionPrefix = "[caution] "

// keptCaution reads a fact of overflowNote as a caution kept there: its text and last day.
func keptCaution(fact string) (text, until string, ok bool) {
	line, ok := strings.CutPrefix(fact, keptCautionPrefix)
	if !ok {
		return "", "", false
	}
	text, until = note.ParseCaution(line)
	return text, until, until != ""
}

// keptEnded matches the kept cautions whose last day is before today.
func keptEnded(today string) func(note.Fact) bool {
	return func(f note.Fact) bool {
		_, until, ok := keptCaution(f.Text)
		return ok && until < today
	}
}
