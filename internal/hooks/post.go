package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/validate"
)

// postToolUse validates the cards an edit touched and sieves an oversized command output.
//
// What the protocol allows: a PostToolUse hook runs after the tool, so the model has already received the
// tool's result. Claude Code lets the hook add hookSpecificOutput.additionalContext, or answer
// decision "block" with a reason (or exit 2 with stderr), which is shown to the model beside the result;
// it can replace the output only of MCP tools (updatedMCPToolOutput), never of Bash, Read or the edit
// tools. So the sieve cannot shrink a Bash result already in the window: it keeps the full text and a
// head/tail/error-lines digest on disk under .box/sieve/, and adds at most 300 tokens naming those files,
// the error lines, and whether the same output was already seen in this session — so the model greps the
// file instead of re-running the command, and the session record can point at it after a compaction.
func (s *session) postToolUse(ctx context.Context) (Result, error) {
	switch t := s.in.ToolName; {
	case writeTools[t]:
		return s.postEdit(ctx)
	case t == "Bash" || t == "shell":
		cmd := string(s.in.toolArgs().Command)
		if cmd != "" {
			_ = s.update(func(r *Record) {
				r.Commands = append(r.Commands, recorded(cmd, 300))
				if len(r.Commands) > maxCommands {
					r.Commands = r.Commands[len(r.Commands)-maxCommands:]
				}
			})
		}
		return s.sieve(responseText(s.in.ToolResponse))
	}
	return Result{}, nil
}

// postEdit records the edited files and answers as `box validate --hook` does: warnings as context,
// errors on stderr with exit 2 (the edit stands; the pre-commit hook refuses the commit until fixed).
func (s *session) postEdit(ctx context.Context) (Result, error) {
	p, err := validate.ParseHook(s.in.raw, s.in.Cwd)
	if err != nil {
		return Result{}, err
	}
	var edited []string
	for _, e := range p.Edits {
		if !e.Deleted {
			edited = append(edited, e.Path)
		}
	}
	if len(edited) > 0 {
		_ = s.update(func(r *Record) { r.Edited = uniq(append(r.Edited, edited...)) })
	}
	res, err := validate.Hook(ctx, p, box.Find)
	if err != nil {
		return Result{}, err
	}
	if res.HasErrors() {
		var b strings.Builder
		for _, f := range res.Findings {
			b.WriteString(f.String() + "\n")
		}
		b.WriteString("Fix the errors above in the file you just edited; the commit will be refused until then.\n")
		return Result{Stderr: Trim(b.String(), CapPost) + "\n", Code: 2}, nil
	}
	if len(res.Findings) > 0 {
		return addContext(PostToolUse, Trim(validate.HookContext(res.Findings), CapPost)), nil
	}
	return Result{}, nil
}

// responseText is a tool's output as text: Claude Code's Bash {stdout, stderr}, a plain string (Codex),
// or the raw JSON.
func responseText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var r struct {
		Stdout string `json:"stdout"`
		Stderr string `json:"stderr"`
		Output string `json:"output"`
	}
	if json.Unmarshal(raw, &r) == nil && r.Stdout+r.Stderr+r.Output != "" {
		return strings.TrimRight(strings.Join(nonEmpty(r.Stdout, r.Output, r.Stderr), "\n"), "\n")
	}
	return string(raw)
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// The sieve keeps this much of an oversized output in its digest.
const (
	sieveHead   = 60
	sieveTail   = 40
	sieveErrors = 12
	// sieveMinLines: an output this long is sieved even under the token threshold.
	sieveMinLines = 2 * (sieveHead + sieveTail)
)

var (
	ansiRe  = lazyregexp.New(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*(?:\x07|\x1b\\)|\r`)
	errorRe = lazyregexp.New(`(?i)\b(error|fail(ed|ure)?|panic|fatal|exception|traceback|undefined|cannot|denied)\b`)
)

// Sieved is an oversized output reduced: ANSI scrubbed, repeated lines collapsed, then the head, the
// error lines of the middle and the tail.
type Sieved struct {
	Lines  int      // lines after scrubbing and collapsing
	Clean  string   // the scrubbed, collapsed text
	Digest string   // head, middle error lines, tail
	Errors []string // error lines of the middle
}

// Sieve reduces text (pure: no files).
func Sieve(text string) Sieved {
	clean := ansiRe.ReplaceAllString(text, "")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(clean, "\n"), "\n") {
		if n := len(lines); n > 0 && strings.TrimSuffix(lines[n-1], repeatMark(lines[n-1])) == l {
			count := 2
			if m := repeatRe.FindStringSubmatch(lines[n-1]); m != nil {
				c, _ := strconv.Atoi(m[1])
				count = c + 1
			}
			lines[n-1] = l + fmt.Sprintf("  [×%d]", count)
			continue
		}
		lines = append(lines, l)
	}
	sv := Sieved{Lines: len(lines), Clean: strings.Join(lines, "\n")}
	if len(lines) <= sieveHead+sieveTail {
		sv.Digest = sv.Clean
		return sv
	}
	middle := lines[sieveHead : len(lines)-sieveTail]
	for _, l := range middle {
		if errorRe.MatchString(l) && len(sv.Errors) < sieveErrors {
			sv.Errors = append(sv.Errors, l)
		}
	}
	var b strings.Builder
	b.WriteString(strings.Join(lines[:sieveHead], "\n"))
	fmt.Fprintf(&b, "\n… %d lines omitted", len(middle))
	if len(sv.Errors) > 0 {
		b.WriteString("; their error lines:\n" + strings.Join(sv.Errors, "\n"))
	}
	b.WriteString("\n…\n" + strings.Join(lines[len(lines)-sieveTail:], "\n"))
	sv.Digest = b.String()
	return sv
}

var repeatRe = lazyregexp.New(`  \[×(\d+)\]$`)

func repeatMark(l string) string { return repeatRe.FindString(l) }

// sieve keeps an oversized output on disk and tells the model where, what failed, and whether it has
// seen the same output already in this session.
func (s *session) sieve(text string) (Result, error) {
	if Tokens(text) < s.settings.SieveMinTokens && strings.Count(text, "\n") < sieveMinLines {
		return Result{}, nil
	}
	sv := Sieve(text)
	dir := filepath.Join(s.root, ".box", "sieve")
	base := filepath.Join(dir, s.id+"-"+hash(sv.Clean)[:12])
	full, digest := base+".txt", base+".digest.txt"
	if _, err := os.Stat(full); err == nil {
		return addContext(PostToolUse, fmt.Sprintf("Sieve: this output is identical to an earlier one in this session (%d lines, kept at %s); there is no need to read or re-run it.", sv.Lines, full)), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, err
	}
	if err := writeFile(full, []byte(sv.Clean+"\n")); err != nil {
		return Result{}, err
	}
	if err := writeFile(digest, []byte(sv.Digest+"\n")); err != nil {
		return Result{}, err
	}
	head := Trim(fmt.Sprintf("Sieve: that output was %d lines (about %d tokens). Full text: %s; head %d, tail %d and error lines: %s. Grep those files rather than re-running the command.",
		sv.Lines, Tokens(text), full, sieveHead, sieveTail, digest), CapPost)
	if len(sv.Errors) == 0 {
		return addContext(PostToolUse, head), nil
	}
	// The error lines are the command's output: whoever wrote it (a test, a fetched page, a file read)
	// is not the owner, so they reach the model fenced as data. They are cut before the fence, never the
	// fence itself; fenceTokens covers its two tags.
	label := "\nError lines from the middle (the command's output):\n"
	for left := CapPost - Tokens(head) - Tokens(label) - fenceTokens; left >= 8; left -= left/4 + 1 {
		// a line spelling the fence's tag grows when Fence defuses it: cut more until it fits
		if out := head + label + memory.Fence(Trim(strings.Join(sv.Errors, "\n"), left)); Tokens(out) <= CapPost {
			return addContext(PostToolUse, out), nil
		}
	}
	return addContext(PostToolUse, head), nil
}

// fenceTokens is what memory.Fence's two tags add to a text's Tokens.
const fenceTokens = 10
