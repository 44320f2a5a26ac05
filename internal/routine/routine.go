// Package routine owns routines: prompts the owner schedules (a time of day, some days of the week),
// kept in the box as _config/routines/<name>.md, run by the brain with read-only tools; each run's
// report goes to Today and the diary, never into the memory. It owns the file format, the schedule
// (which routines are due at an instant, a missed run never run twice) and the run; the job runner
// calls RunDue (docs/ROUTINES.md).
package routine

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
)

// Where routines and their reports live in the box.
const (
	Dir        = "/_config/routines"      // <name>.md: one routine
	ReportsDir = "/_bookkeeping/routines" // YYYY-MM-DD/<name>.md: a day's reports
)

// Limits of a routine.
const (
	MaxPrompt = 4000 // characters of a prompt
	maxName   = 40
)

// Days are the days of the week as a routine names them, Sunday first as time.Weekday counts.
var Days = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Routine is one scheduled prompt. Days empty means every day.
type Routine struct {
	Name   string   `json:"name"`
	At     string   `json:"at"`   // HH:MM, the owner's local time
	Days   []string `json:"days"` // mon … sun, in week order; empty: every day
	Prompt string   `json:"prompt"`
	On     bool     `json:"on"`
	// Problem says why a routine file cannot be read (List shows it; it never runs until fixed).
	Problem string `json:"problem,omitempty"`
}

var (
	nameRe = lazyregexp.New(`^[a-z0-9][a-z0-9-]*$`)
	atRe   = lazyregexp.New(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
)

// CheckName says why name cannot name a routine (it is the file's name), or nil.
func CheckName(name string) error {
	if !nameRe.MatchString(name) || len(name) > maxName || strings.HasSuffix(name, "-") {
		return errs.E("routine.name", errs.Invalid, "%q is not a routine name: use lowercase letters, digits and dashes, at most %d characters, like morning-paper.", name, maxName)
	}
	return nil
}

// Check says what is wrong with r, in one sentence naming the field, or nil. It puts Days in week order.
func (r *Routine) Check() error {
	const op = "routine.check"
	if err := CheckName(r.Name); err != nil {
		return err
	}
	if !atRe.MatchString(r.At) {
		return errs.E(op, errs.Invalid, "at: %q is not a time of day: write it HH:MM on a 24-hour clock, like 07:30.", r.At)
	}
	days, err := ParseDays(strings.Join(r.Days, ","))
	if err != nil {
		return err
	}
	r.Days = days
	p := strings.TrimSpace(r.Prompt)
	switch {
	case p == "":
		return errs.E(op, errs.Invalid, "The routine %s has no prompt: say what it should do, like \"List today's to-dos and cautions\".", r.Name)
	case utf8.RuneCountInString(p) > MaxPrompt:
		return errs.E(op, errs.Invalid, "The routine %s's prompt is longer than %d characters; shorten it.", r.Name, MaxPrompt)
	case strings.ContainsRune(p, 0):
		return errs.E(op, errs.Invalid, "The routine %s's prompt holds a NUL byte; write it as plain text.", r.Name)
	}
	r.Prompt = p
	return nil
}

// ParseDays reads a comma-separated list of days (mon,tue …; "" is every day) into week order, Monday
// first. A day named twice, or a word that is not a day, is refused.
func ParseDays(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return []string{}, nil
	}
	seen := map[string]bool{}
	for _, d := range strings.Split(s, ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		if !slices.Contains(Days, d) {
			return nil, errs.E("routine.days", errs.Invalid, "days: %q is not a day: use mon, tue, wed, thu, fri, sat, sun, separated by commas.", d)
		}
		if seen[d] {
			return nil, errs.E("routine.days", errs.Invalid, "days: %s is named twice.", d)
		}
		seen[d] = true
	}
	out := []string{}
	for _, d := range append(Days[1:], Days[0]) {
		if seen[d] {
			out = append(out, d)
		}
	}
	if len(out) == len(Days) {
		return []string{}, nil // every day
	}
	return out, nil
}

// EveryDay says whether r runs every day of the week.
func (r Routine) EveryDay() bool { return len(r.Days) == 0 }

// When is the schedule in words: "07:00 every day", "07:00 on mon, tue".
func (r Routine) When() string {
	if r.EveryDay() {
		return r.At + " every day"
	}
	return r.At + " on " + strings.Join(r.Days, ", ")
}

// front is a routine file's frontmatter.
type front struct {
	At   string   `yaml:"at"`
	Days []string `yaml:"days,flow"`
	On   bool     `yaml:"on"`
}

var frontKeys = []string{"at", "days", "on"}

// Path is the box path of a routine's file.
func Path(name string) string { return Dir + "/" + name + ".md" }

// Parse reads a routine file: frontmatter with at (HH:MM), days (a list, optional) and on (true or
// false), then the prompt as the body. The name is the file's. Anything else is refused with a
// sentence naming the file and what to fix.
func Parse(name string, data []byte) (Routine, error) {
	const op = "routine.parse"
	p := Path(name)
	if err := CheckName(name); err != nil {
		return Routine{}, err
	}
	c, err := card.Parse(p, data)
	if err != nil {
		return Routine{}, err
	}
	if !c.HasFront {
		return Routine{}, errs.E(op, errs.Invalid, "%s: a routine starts with frontmatter (--- at: \"07:00\" ---), then its prompt.", p)
	}
	if c.Type != "" {
		return Routine{}, errs.E(op, errs.Invalid, "%s: a routine has no type: key.", p)
	}
	if c.Node.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(c.Node.Content); i += 2 {
			if k := c.Node.Content[i].Value; !slices.Contains(frontKeys, k) {
				return Routine{}, errs.E(op, errs.Invalid, "%s:%d: %q is not a routine field; the fields are at, days and on.", p, c.Node.Content[i].Line, k)
			}
		}
	}
	if n := c.Get("on"); n != nil && (n.Kind != yaml.ScalarNode || n.Tag != "!!bool") {
		return Routine{}, errs.E(op, errs.Invalid, "%s:%d: on is true or false.", p, n.Line)
	}
	if n := c.Get("at"); n != nil && (n.Kind != yaml.ScalarNode || n.Tag == "!!int") {
		return Routine{}, errs.E(op, errs.Invalid, "%s:%d: at is a time written in quotes, like at: \"07:30\".", p, n.Line)
	}
	var f front
	if err := c.Decode(&f); err != nil {
		return Routine{}, errs.E(op, errs.Invalid, "%s: at is \"HH:MM\", days a list like [mon, fri], on true or false.", p)
	}
	r := Routine{Name: name, At: f.At, Days: f.Days, On: f.On, Prompt: string(c.Body)}
	if err := r.Check(); err != nil {
		return Routine{}, errs.E(op, errs.Invalid, "%s: %s", p, errs.Sentence(err))
	}
	return r, nil
}

// Format writes r as its file; Parse reads it back as r.
func (r Routine) Format() []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	fmt.Fprintf(&b, "at: %q\n", r.At)
	if !r.EveryDay() {
		fmt.Fprintf(&b, "days: [%s]\n", strings.Join(r.Days, ", "))
	}
	fmt.Fprintf(&b, "on: %t\n", r.On)
	b.WriteString("---\n")
	b.WriteString(strings.TrimSpace(r.Prompt))
	b.WriteString("\n")
	return b.Bytes()
}

// Slot is when r is due on t's local day: its time that day, and whether that day is one of its days.
func (r Routine) Slot(t time.Time) (time.Time, bool) {
	var h, m int
	if _, err := fmt.Sscanf(r.At, "%d:%d", &h, &m); err != nil {
		return time.Time{}, false
	}
	s := time.Date(t.Year(), t.Month(), t.Day(), h, m, 0, 0, t.Location())
	if !r.EveryDay() && !slices.Contains(r.Days, Days[s.Weekday()]) {
		return s, false
	}
	return s, true
}

// DueSlot is the slot of r that now falls in (at or after it, less than Late past it): today's, or
// yesterday's when a late-evening slot's window runs past midnight (22:30 is still due at 00:30).
func (r Routine) DueSlot(now time.Time) (time.Time, bool) {
	for _, day := range []time.Time{now, now.AddDate(0, 0, -1)} {
		if s, ok := r.Slot(day); ok && !now.Before(s) && now.Before(s.Add(Late)) {
			return s, true
		}
	}
	return time.Time{}, false
}

// MorningPaper is the starter routine the box offers, off until the owner turns it on.
var MorningPaper = Routine{
	Name: "morning-paper",
	At:   "07:00",
	Days: []string{},
	On:   false,
	Prompt: "Write my morning paper for today, short and plain: first the to-dos still open (todos_list), then the " +
		"cautions in force (memory_overview shows them), then what changed in my memory since yesterday morning " +
		"(memory_recent), in a few lines each. Say \"nothing\" for a part with nothing in it.",
}

// Starters are the routines the box offers ready-made.
func Starters() []Routine { return []Routine{MorningPaper} }

// Starter returns the starter named name.
func Starter(name string) (Routine, bool) {
	for _, s := range Starters() {
		if s.Name == name {
			s.Days = append([]string{}, s.Days...)
			return s, true
		}
	}
	return Routine{}, false
}
