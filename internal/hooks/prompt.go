package hooks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/index"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/memory"
)

// Brief is the located brief for one task prompt: which notes, files and lines matter and why, never
// their text. It is kept in the session folder and reused for the same prompt.
type Brief struct {
	Key     string   `json:"key"`
	Text    string   `json:"text"`
	Regions []Region `json:"regions,omitempty"`
	Scope   []string `json:"scope,omitempty"`
}

// Region is a range of lines the brief located in a file (host path), 1-based and inclusive.
type Region struct {
	File  string `json:"file"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Why   string `json:"why"`
}

// Brief sizes: searched words, files named, lines per region.
const (
	maxKeywords  = 6
	maxBriefRefs = 8
	regionSpan   = 12
)

var harnessTag = lazyregexp.New(`^\s*<(task-notification|command-name|command-message|command-args|local-command-stdout|local-command-stderr|system-reminder|bash-input|bash-stdout|bash-stderr|user-prompt-submit-hook)\b`)

// acks are replies that are never a task.
var acks = map[string]bool{"ok": true, "okay": true, "yes": true, "no": true, "y": true, "n": true, "thanks": true,
	"thank you": true, "continue": true, "go on": true, "go ahead": true, "proceed": true, "lgtm": true, "sure": true,
	"do it": true, "yes please": true, "sounds good": true, "great": true, "done": true, "next": true, "k": true}

// IsTask reports whether a prompt asks for work: not a harness message (<task-notification>,
// <command-name> …), not a slash command, not an acknowledgement, and at least two words that are not
// stopwords.
func IsTask(prompt string) bool {
	p := strings.TrimSpace(prompt)
	if p == "" || harnessTag.MatchString(p) || strings.HasPrefix(p, "/") {
		return false
	}
	if acks[strings.ToLower(strings.Trim(p, ".!? "))] {
		return false
	}
	return len(keywords(p, 100)) >= 2
}

// keywords picks the prompt's words worth searching: not stopwords, three to 64 letters (a longer run is a
// hash or a paste, not a word), those written like names (capitals, digits, underscores) first, then the
// longest.
func keywords(prompt string, n int) []string {
	type kw struct {
		w     string
		score int
	}
	var out []kw
	seen := map[string]bool{}
	add := func(raw string) {
		w := strings.ToLower(raw)
		letters := utf8.RuneCountInString(w)
		if letters < 3 || letters > 64 || seen[w] || index.IsStopword(w) || len(index.Words(w)) != 1 {
			return
		}
		seen[w] = true
		score := letters
		if raw != w || strings.ContainsAny(raw, "_0123456789") {
			score += 8
		}
		out = append(out, kw{w, score})
	}
	if len(prompt) > maxKeywordBytes { // a pasted log is not read whole for its key words
		prompt = strings.ToValidUTF8(prompt[:maxKeywordBytes], "")
	}
	for _, raw := range wordRe.FindAllString(norm.NFC.String(prompt), -1) {
		before, after, cut := strings.Cut(strings.ReplaceAll(raw, "’", "'"), "'")
		switch {
		case !cut:
			add(raw)
		case strings.EqualFold(after, "t") && strings.HasSuffix(strings.ToLower(before), "n"):
			// a negation: "won't" is not the word "won", "can't" not "can"
		case clitics[strings.ToLower(after)]: // "Leo's", "we'll"
			add(before)
		default: // "O'Brien", "D'Angelo"
			add(before)
			add(after)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	var words []string
	for _, k := range out[:min(n, len(out))] {
		words = append(words, k.w)
	}
	return words
}

var identRe = lazyregexp.New(`[A-Za-z_][A-Za-z0-9_]*`)

// clitics are the endings an apostrophe joins to a word ("Leo's", "we'll", "they're").
var clitics = map[string]bool{"s": true, "ll": true, "re": true, "ve": true, "d": true, "m": true}

// maxKeywordBytes is how much of a prompt keywords reads.
const maxKeywordBytes = 64 << 10

// wordRe is a word of letters and digits in any alphabet (José, Zürich, Ивану), with what follows an
// apostrophe kept on it ("won't", "Leo's", "O'Brien"). keywords reads the prompt composed (NFC), so a
// decomposed "é" is one letter; a mark that composes with nothing ends the word, as most marks end a word
// of the index (index.Words and FTS5's unicode61 drop 25 combining accents from a word instead: a keyword
// cut at one of those is a shorter word than the index holds, docs/SEARCH.md, "Words").
var wordRe = lazyregexp.New(`[\p{L}_][\p{L}\p{N}_]*(?:['’]\p{L}+)?`)

// promptSubmit answers a waiting compaction, then, for a task, gives the located brief.
func (s *session) promptSubmit(ctx context.Context) (Result, error) {
	var parts []string
	if r := s.restate(UserPromptSubmit, false); r != "" {
		parts = append(parts, r)
	}
	if IsTask(s.in.Prompt) {
		b, err := s.brief(ctx)
		if err != nil && len(parts) == 0 {
			return Result{}, err
		}
		if b.Text != "" {
			parts = append(parts, Trim(b.Text, CapPrompt))
		}
		_ = s.update(func(r *Record) {
			r.Task = recorded(s.in.Prompt, 2000)
			if b.Text != "" {
				r.Brief, r.Scope = b.Key, b.Scope
			}
		})
	}
	return addContext(UserPromptSubmit, strings.Join(parts, "\n\n")), nil
}

// brief returns the standing brief for this prompt, building it on first use.
func (s *session) brief(ctx context.Context) (Brief, error) {
	key := hash(s.root + "\x00" + s.project + "\x00" + strings.TrimSpace(s.in.Prompt))[:16]
	name := "brief-" + key + ".json"
	var b Brief
	if err := s.load(name, &b); err == nil && b.Key == key {
		return b, nil
	}
	b, err := s.buildBrief(ctx, key)
	if err != nil {
		return Brief{}, err
	}
	return b, s.save(name, b)
}

// buildBrief searches the memory for the prompt's words, one word at a time (the strict rule that most
// words must match would find nothing for a long prompt), and the project's declarations for the names
// the prompt spells out.
func (s *session) buildBrief(ctx context.Context, key string) (Brief, error) {
	words := keywords(s.in.Prompt, maxKeywords)
	code := make(chan []Region, 1)
	go func() { // the project's declarations are walked while the memory is searched
		defer func() {
			if r := recover(); r != nil { // a panic here would kill the process: fail open
				s.logf("panic in the name index: %v", r)
				code <- nil
			}
		}()
		if s.inBox {
			code <- nil
			return
		}
		code <- s.codeRegions()
	}()
	type agg struct {
		path, kind, title string
		outside           bool // a hit of it is others' words: its title is fenced
		score             float64
		words             []string
	}
	byPath := map[string]*agg{}
	if len(words) > 0 {
		sv, err := s.services(ctx)
		if err != nil {
			return Brief{}, err
		}
		for _, w := range words {
			res, err := sv.Memory.Search(ctx, memory.SearchInput{Words: w, Limit: 5})
			if err != nil {
				return Brief{}, errors.Join(err, sv.Close())
			}
			for _, h := range res.Hits {
				p, _, _ := strings.Cut(h.Path, "#")
				a := byPath[p]
				if a == nil {
					a = &agg{path: p, kind: h.Kind, title: h.Title}
					byPath[p] = a
				}
				a.outside = a.outside || h.Trust != inbox.Own
				if !slices.Contains(a.words, w) {
					a.score += h.Score + 1
					a.words = append(a.words, w)
				}
			}
		}
		if err := sv.Close(); err != nil {
			return Brief{}, err
		}
	}
	hits := make([]*agg, 0, len(byPath))
	for _, a := range byPath {
		hits = append(hits, a)
	}
	sort.Slice(hits, func(i, j int) bool {
		if len(hits[i].words) != len(hits[j].words) {
			return len(hits[i].words) > len(hits[j].words)
		}
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].path < hits[j].path
	})
	var regions []Region
	for _, a := range hits[:min(len(hits), maxBriefRefs)] {
		host, err := layout.Host(s.root, a.path)
		if err != nil {
			continue
		}
		start, end := locate(host, a.words)
		why := a.kind
		switch {
		case a.title != "" && a.outside: // a title others wrote is data, never an instruction
			why += " " + memory.Fence(fmt.Sprintf("%q", a.title))
		case a.title != "":
			why += fmt.Sprintf(" %q", a.title)
		}
		regions = append(regions, Region{File: host, Start: start, End: end, Why: why + ", matches " + strings.Join(a.words, ", ")})
	}
	regions = append(regions, <-code...)
	if len(regions) == 0 {
		return Brief{Key: key}, nil
	}
	var b strings.Builder
	b.WriteString("Box brief for this task: where to look, not the text. Read only these lines when you need them.\n")
	var scope []string
	for _, r := range regions {
		loc := fmt.Sprintf("%s:%d", s.display(r.File), r.Start)
		if r.End > r.Start {
			loc += fmt.Sprintf("-%d", r.End)
		}
		fmt.Fprintf(&b, "- %s — %s\n", loc, r.Why)
		scope = append(scope, filepath.Dir(r.File)+string(filepath.Separator))
	}
	scope = uniq(scope)
	fmt.Fprintf(&b, "Scope: %s\n", strings.Join(s.displayAll(scope), ", "))
	return Brief{Key: key, Text: b.String(), Regions: regions, Scope: scope}, nil
}

// codeRegions are the project's declarations of the names the prompt spells like code (ParseHook,
// open_memory): exact, case-sensitive matches only, so plain words never pull in code.
func (s *session) codeRegions() []Region {
	var names []string
	for _, w := range identRe.FindAllString(s.in.Prompt, -1) {
		if len(w) >= 4 && (strings.ToLower(w) != w || strings.Contains(w, "_")) {
			names = append(names, w)
		}
	}
	if len(names) == 0 {
		return nil
	}
	rows := s.codeRows()
	var out []Region
	for _, n := range uniq(names) {
		for _, r := range lookup(rows, n, false, "") {
			out = append(out, Region{File: r.File, Start: r.Line, End: r.Line, Why: r.Kind + " " + r.Name})
			if len(out) >= maxBriefRefs {
				return out
			}
		}
	}
	return out
}

// locate finds the lines of a file that hold the words: from the first such line to the last within
// regionSpan lines of it. A file where no line matches gives its first lines.
func locate(host string, words []string) (int, int) {
	f, err := os.Open(host)
	if err != nil {
		return 1, 1
	}
	defer func() { _ = f.Close() }() // hooks fail open: a close is not worth failing a session for
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	start, end, n := 0, 0, 0
	for sc.Scan() {
		n++
		if start > 0 && n > start+regionSpan {
			break
		}
		low := strings.ToLower(sc.Text())
		for _, w := range words {
			if strings.Contains(low, w) {
				if start == 0 {
					start = n
				}
				end = n
				break
			}
		}
	}
	if start == 0 {
		return 1, max(1, min(n, regionSpan))
	}
	return start, end
}
