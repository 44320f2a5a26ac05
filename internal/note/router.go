package note

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/say"
)

// RouterSkeleton is the router box init writes.
const RouterSkeleton = `---
title: Memory
description: The router, read first. Core facts, the maps, live cautions and the inbox count; at most 40 lines.
---
# Memory

## Core facts

## Maps

## Cautions

## Inbox
Inbox: nothing waiting
`

// MaxRouterLines is the router's budget: it is loaded on every turn of every assistant.
const MaxRouterLines = 40

// RouterSections are the router's sections in order.
var RouterSections = []string{"Core facts", "Maps", "Cautions", "Inbox"}

// MapLink is one line of the router's Maps: "- [[moc-people]] — People (12 notes)".
type MapLink struct {
	Name  string // moc-people
	Title string // People
	Count int
}

func (m MapLink) line() string {
	unit := "notes"
	if m.Count == 1 {
		unit = "note"
	}
	return fmt.Sprintf("- [[%s]] — %s (%d %s)", m.Name, m.Title, m.Count, unit)
}

// Router is a parsed MEMORY.md. Its setters change only their section; Render gives back the parsed
// bytes when nothing was set, and otherwise fits the router into MaxRouterLines (see fit).
type Router struct {
	CoreFacts []Fact    // "- [core] Lives in Lisbon. ^id"
	Maps      []MapLink // "- [[moc-people]] — People (12 notes)"
	Cautions  []string  // "- Leo is allergic to peanuts."
	Waiting   int       // inbox lines waiting; -1 when the Inbox line is missing or hand-edited
	Dropped   []string  // core facts the last fit had to leave out, for the caller to keep
	// DroppedCautions are the cautions the last fit had to leave out (only when leaving out every core
	// fact but the newest could not make room), for the caller to keep and end on their day.
	DroppedCautions []string

	doc   *doc
	dirty bool
}

var (
	coreRe    = lazyregexp.New(`^- \[core\] (.+)$`)
	mapLineRe = lazyregexp.New(`^- \[\[([^\]|]+)\]\] — (.+) \((\d+) notes?\)$`)
	waitingRe = lazyregexp.New(`^(\d+) lines? waiting\.$`)              // an older router's line
	inboxRe   = lazyregexp.New(`^Inbox: (nothing|\d+ lines?) waiting$`) // "Inbox: 3 lines waiting"
	untilRe   = lazyregexp.New(` \(until (\d{4}-\d{2}-\d{2})\)$`)
)

// WaitingLine is the router's inbox line, the same on every surface that shows the router (docs/MEMORY.md):
// "Inbox: nothing waiting", "Inbox: 1 line waiting", "Inbox: 12 lines waiting".
func WaitingLine(n int) string {
	if n <= 0 {
		return "Inbox: nothing waiting"
	}
	return fmt.Sprintf("Inbox: %d %s waiting", n, say.Plural(n, "line", "lines"))
}

// isWaitingLine reports whether l is an inbox count line, in this form or an older one.
func isWaitingLine(l string) bool {
	return l == "Nothing waiting." || waitingRe.MatchString(l) || inboxRe.MatchString(l)
}

// parseWaiting reads an inbox count line; -1 when l is not one.
func parseWaiting(l string) int {
	if l == "Nothing waiting." || l == "Inbox: nothing waiting" {
		return 0
	}
	if m := waitingRe.FindStringSubmatch(l); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if m := inboxRe.FindStringSubmatch(l); m != nil {
		n, _ := strconv.Atoi(strings.Fields(m[1])[0])
		return n
	}
	return -1
}

// WithWaiting is the router text data with its inbox line saying n, and nothing else changed: what a
// surface shows between two tidies, so the count it shows is the true one. A router with no Inbox
// section gets the line at its end.
func WithWaiting(data []byte, n int) []byte {
	lines := strings.Split(string(data), "\n")
	in := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "## "):
			in = strings.TrimSpace(strings.TrimPrefix(l, "## ")) == "Inbox"
		case in && isWaitingLine(l):
			lines[i] = WaitingLine(n)
			return []byte(strings.Join(lines, "\n"))
		}
	}
	out := strings.TrimRight(string(data), "\n")
	if out != "" {
		out += "\n"
	}
	return []byte(out + WaitingLine(n) + "\n")
}

// CautionLine is a caution as the router lists it: its text, and the last day it holds.
func CautionLine(text, until string) string {
	if until == "" {
		return text
	}
	return text + " (until " + until + ")"
}

// ParseCaution splits a router caution into its text and its last day ("" when it has none).
func ParseCaution(s string) (text, until string) {
	if m := untilRe.FindStringSubmatchIndex(s); m != nil {
		return s[:m[0]], s[m[2]:m[3]]
	}
	return s, ""
}

// ParseRouter parses MEMORY.md; only broken frontmatter is an error.
func ParseRouter(data []byte) (*Router, error) {
	d, err := parseDoc("note.parseRouter", data)
	if err != nil {
		return nil, err
	}
	r := &Router{doc: d, Waiting: -1}
	if s := d.section("Core facts"); s != nil {
		for _, l := range s.body {
			if m := coreRe.FindStringSubmatch(l); m != nil {
				f, _ := parseFact("- " + m[1])
				r.CoreFacts = append(r.CoreFacts, f)
			}
		}
	}
	if s := d.section("Maps"); s != nil {
		for _, l := range s.body {
			if m := mapLineRe.FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[3])
				r.Maps = append(r.Maps, MapLink{Name: m[1], Title: m[2], Count: n})
			}
		}
	}
	if s := d.section("Cautions"); s != nil {
		for _, l := range s.body {
			if t, ok := strings.CutPrefix(l, "- "); ok && !strings.HasPrefix(t, "… ") {
				r.Cautions = append(r.Cautions, t)
			}
		}
	}
	if s := d.section("Inbox"); s != nil {
		for _, l := range s.body {
			if n := parseWaiting(l); n >= 0 {
				r.Waiting = n
			}
		}
	}
	return r, nil
}

// SetCoreFacts, SetMaps, SetCautions and SetWaiting replace one section's content; lines in it that
// are not in the format (a hand-written remark) are dropped with it.
func (r *Router) SetCoreFacts(fs []Fact) { r.CoreFacts, r.dirty = fs, true }
func (r *Router) SetMaps(ms []MapLink)   { r.Maps, r.dirty = ms, true }
func (r *Router) SetCautions(cs []string) {
	r.Cautions, r.dirty = cs, true
}
func (r *Router) SetWaiting(n int) { r.Waiting, r.dirty = n, true }

// Render returns the router. Unchanged, it is the parsed bytes. Changed, it is rebuilt section by
// section and fitted into MaxRouterLines, in this order until it fits:
//  1. maps beyond the first three (the caller lists them biggest first) fold into "- … and N more maps";
//  2. core facts beyond the newest (the last listed) are left out: cautions are live warnings, shown
//     until their day ends, and go before none but the newest core fact;
//  3. cautions beyond the newest three (the last listed) fold into "- … and N older cautions";
//  4. the newest core fact is left out.
//
// What 2–4 left out is in r.Dropped and r.DroppedCautions: the router is the only home of core facts and
// cautions, so the caller must keep them elsewhere (a note) before writing. Other sections are never
// touched.
func (r *Router) Render() []byte {
	if !r.dirty {
		return r.doc.render()
	}
	r.Dropped, r.DroppedCautions = nil, nil
	maps, cautions, core := len(r.Maps), len(r.Cautions), len(r.CoreFacts)
	r.build(maps, cautions, core)
	for over := len(r.doc.lines()) - MaxRouterLines; over > 0; over = len(r.doc.lines()) - MaxRouterLines {
		switch {
		case maps > 3:
			maps = max(3, maps-over-1)
		case core > 1:
			core = max(1, core-over)
		case cautions > 3:
			cautions = max(3, cautions-over-1)
		case core > 0:
			core = 0
		default:
			return r.doc.render() // only hand-written lines are left over; validate reports it
		}
		r.build(maps, cautions, core)
	}
	r.DroppedCautions = append(r.DroppedCautions, r.Cautions[:len(r.Cautions)-cautions]...)
	for _, f := range r.CoreFacts[:len(r.CoreFacts)-core] {
		r.Dropped = append(r.Dropped, f.Text)
	}
	return r.doc.render()
}

// build writes the sections keeping the first nMaps maps and the last nCautions cautions and nCore
// core facts.
func (r *Router) build(nMaps, nCautions, nCore int) {
	var core, maps, cautions []string
	for _, f := range r.CoreFacts[len(r.CoreFacts)-nCore:] {
		core = append(core, "- [core] "+strings.TrimPrefix(f.line(), "- "))
	}
	for _, m := range r.Maps[:nMaps] {
		maps = append(maps, m.line())
	}
	if n := len(r.Maps) - nMaps; n > 0 {
		maps = append(maps, fmt.Sprintf("- … and %d more %s (see the overview)", n, say.Plural(n, "map", "maps")))
	}
	if n := len(r.Cautions) - nCautions; n > 0 {
		cautions = append(cautions, fmt.Sprintf("- … and %d older %s", n, say.Plural(n, "caution", "cautions")))
	}
	for _, c := range r.Cautions[len(r.Cautions)-nCautions:] {
		cautions = append(cautions, "- "+c)
	}
	inbox := []string{WaitingLine(r.Waiting)}
	d := r.doc
	set := func(name string, lines []string) {
		s := d.ensure(name, RouterSections)
		s.setContent(lines, s == d.secs[len(d.secs)-1])
	}
	set("Core facts", core)
	set("Maps", maps)
	set("Cautions", cautions)
	if r.Waiting >= 0 {
		s := d.ensure("Inbox", RouterSections)
		s.setContent(replaceInboxLine(s.body[:contentEnd(s.body)], inbox[0]), s == d.secs[len(d.secs)-1])
	}
}

// replaceInboxLine swaps the count line of the Inbox section, keeping anything else written there.
func replaceInboxLine(body []string, line string) []string {
	out := append([]string{}, body...)
	for i, l := range out {
		if isWaitingLine(l) {
			out[i] = line
			return out
		}
	}
	return append(out, line)
}
