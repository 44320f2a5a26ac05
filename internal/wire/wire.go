// Package wire owns `box wire` and `box unwire`: the agent configuration a box writes into a folder
// (.claude/settings.json hooks, .codex/hooks.json, .mcp.json, the CLAUDE.md/AGENTS.md block); files only.
package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"time"

	"github.com/boxmem/box/internal/atomicfile"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
)

// Options say what to wire: the folder, the binary the hooks call, and the owner's box.
type Options struct {
	Dir string // the folder to wire, absolute
	Bin string // the box binary the hooks call, absolute
	// Box is the owner's box when Dir is not a box: it is baked into every command as --box, so a code
	// project finds the memory without BOX_DIR. Empty: the hooks find it through BOX_DIR at run time.
	Box   string
	InBox bool // Dir is the root of a box: the hooks find it by walking up from the session's cwd
}

// Change is one file wire would write: Old and New bytes, nil for a file that is absent.
type Change struct {
	Path string `json:"path"` // relative to Dir, slash-separated
	Old  []byte `json:"-"`
	New  []byte `json:"-"`
	// Mode is the file's permission bits: an existing file keeps its own (a 0600 .mcp.json that holds
	// other servers' tokens stays 0600); a new one is 0644.
	Mode fs.FileMode `json:"-"`
}

// Plan is everything wire or unwire would do.
type Plan struct {
	Changes  []Change `json:"changes"`
	Warnings []string `json:"warnings,omitempty"` // files left alone, and why
}

// A hook entry wire installs: the event, its matcher and its timeout (docs/HOOKS.md).
type entry struct {
	event, matcher string
	timeout        int
}

// The hook events, as Claude Code and Codex name them (`box hook EVENT` answers them).
const (
	sessionStart     = "SessionStart"
	userPromptSubmit = "UserPromptSubmit"
	preToolUse       = "PreToolUse"
	postToolUse      = "PostToolUse"
	preCompact       = "PreCompact"
	stop             = "Stop"
	sessionEnd       = "SessionEnd"
)

// claudeHooks are the Claude Code hooks; every PreToolUse matcher calls the same `box hook PreToolUse`,
// which dispatches on tool_name.
var claudeHooks = []entry{
	{sessionStart, "", 30},
	{userPromptSubmit, "", 15},
	{preToolUse, "Read", 10},
	{preToolUse, "Grep|Glob|Bash", 10},
	{preToolUse, "Write|Edit|MultiEdit", 10},
	{postToolUse, "Bash|Write|Edit|MultiEdit", 15},
	{preCompact, "", 30},
	{stop, "", 30},
	{sessionEnd, "", 120},
}

// codexHooks are the Codex hooks (.codex/hooks.json, the same shape as Claude Code's). Codex names its
// tools Bash and apply_patch and has no SessionEnd event.
var codexHooks = []entry{
	{sessionStart, "", 30},
	{userPromptSubmit, "", 15},
	{preToolUse, "Bash", 10},
	{preToolUse, "apply_patch", 10},
	{postToolUse, "Bash|apply_patch", 15},
	{preCompact, "", 30},
	{stop, "", 30},
}

// Timeout is the time the agent gives a hook of this event, as wire installs it (the longest of its
// matchers); `box hook` answers within it.
func Timeout(event string) time.Duration {
	var t int
	for _, e := range claudeHooks {
		if e.event == event {
			t = max(t, e.timeout)
		}
	}
	return time.Duration(t) * time.Second
}

// The files wire writes, relative to Dir.
const (
	ClaudeSettings = ".claude/settings.json"
	CodexHooks     = ".codex/hooks.json"
	CodexConfig    = ".codex/config.toml"
	MCPFile        = ".mcp.json"
	ServerName     = "box"
)

// Guides are the agent guides that get the instruction block.
var Guides = []string{"CLAUDE.md", "AGENTS.md"}

// Block markers around the instruction block (Markdown) and the Codex MCP block (TOML).
const (
	Begin     = "<!-- box:begin -->"
	End       = "<!-- box:end -->"
	tomlBegin = "# box:begin (written by box wire; box unwire removes it)"
	tomlEnd   = "# box:end"
)

// Wire plans the configuration for Dir; nothing is written until Apply.
func Wire(o Options) (Plan, error) { return plan(o, true) }

// Unwire plans removing what Wire writes, and only that.
func Unwire(o Options) (Plan, error) { return plan(o, false) }

func plan(o Options, on bool) (Plan, error) {
	var p Plan
	edits := []struct {
		path string
		fn   func([]byte) ([]byte, error)
	}{
		{ClaudeSettings, func(b []byte) ([]byte, error) { return o.hookFile(b, claudeHooks, on) }},
		{CodexHooks, func(b []byte) ([]byte, error) { return o.hookFile(b, codexHooks, on) }},
		{MCPFile, func(b []byte) ([]byte, error) { return o.mcpFile(b, on) }},
		{CodexConfig, func(b []byte) ([]byte, error) { return o.codexConfig(b, on) }},
	}
	for _, g := range Guides {
		edits = append(edits, struct {
			path string
			fn   func([]byte) ([]byte, error)
		}{g, func(b []byte) ([]byte, error) { return setBlock(b, Begin, End, o.block(), on), nil }})
	}
	for _, e := range edits {
		host := filepath.Join(o.Dir, filepath.FromSlash(e.path))
		mode := fs.FileMode(0o644)
		if fi, err := os.Lstat(host); err == nil {
			if fi.Mode()&fs.ModeSymlink != 0 {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s left alone: it is a symbolic link, and the box does not replace a link or write through it; add the box's part by hand where it points", e.path))
				continue
			}
			mode = fi.Mode().Perm()
		}
		old, err := os.ReadFile(host)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Plan{}, errs.Wrap("wire", errs.Other, err, "An agent's configuration file could not be read or written")
		}
		if err != nil {
			old = nil
		}
		next, err := e.fn(old)
		if err != nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s left alone: %v; fix it by hand and run box %s again", e.path, err, map[bool]string{true: "wire", false: "unwire"}[on]))
			continue
		}
		if !bytes.Equal(old, next) {
			p.Changes = append(p.Changes, Change{Path: e.path, Old: old, New: next, Mode: mode})
		}
	}
	return p, nil
}

// Apply writes the plan's files atomically (a nil New removes the file), each with its old permission
// bits; a file that became a symbolic link since the plan is refused.
func (p Plan) Apply(dir string) error {
	for _, c := range p.Changes {
		host := filepath.Join(dir, filepath.FromSlash(c.Path))
		if c.New == nil {
			if err := os.Remove(host); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return errs.Wrap("wire", errs.Other, err, "An agent's configuration file could not be read or written")
			}
			if parent := filepath.Dir(host); parent != filepath.Clean(dir) {
				_ = os.Remove(parent) // .claude/ or .codex/, only when nothing else is in it
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			return errs.Wrap("wire", errs.Other, err, "An agent's configuration file could not be read or written")
		}
		if fi, err := os.Lstat(host); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return errs.E("wire", errs.Conflict, "%s became a symbolic link after it was read; nothing more was written: run box wire again", c.Path)
		}
		mode := c.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err := atomicfile.WriteFile(host, c.New, mode); err != nil {
			return errs.Wrap("wire", errs.Other, err, "An agent's configuration file could not be read or written")
		}
	}
	return nil
}

// Command is the hook command for one event: the binary by absolute path, --box when the folder is not
// the box, then `hook EVENT`.
func (o Options) Command(event string) string {
	cmd := quote(o.Bin)
	if !o.InBox && o.Box != "" {
		cmd += " --box " + quote(o.Box)
	}
	return cmd + " hook " + event
}

// ours recognises a hook command box wire wrote, whatever binary path or box it named.
var ours = lazyregexp.New(`^(?:'[^']*'|\S+)(?: --box (?:'[^']*'|\S+))? hook [A-Za-z]+$`)

func (o Options) isOurs(cmd string) bool {
	if !ours.MatchString(cmd) {
		return false
	}
	exe := strings.Trim(strings.SplitN(strings.TrimPrefix(cmd, "'"), "'", 2)[0], " ")
	if !strings.HasPrefix(cmd, "'") {
		exe = strings.Fields(cmd)[0]
	}
	return exe == o.Bin || filepath.Base(exe) == "box" || filepath.Base(exe) == filepath.Base(o.Bin)
}

// quote single-quotes a word for the shell when it needs it.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+=:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hookFile adds (on) or removes (off) our entries in a Claude Code or Codex hooks file. Our groups are
// kept in place when they already match; otherwise ours are taken out and appended again. The user's
// groups and other settings are kept in their order.
func (o Options) hookFile(data []byte, want []entry, on bool) ([]byte, error) {
	doc, err := parseOrEmpty(data)
	if err != nil {
		return nil, err
	}
	hooksObj := doc.get("hooks")
	if hooksObj == nil {
		if !on {
			return data, nil
		}
		hooksObj = newObject()
		doc.set("hooks", hooksObj)
	}
	if hooksObj.obj == nil {
		return nil, errors.New(`"hooks" is not an object`)
	}
	byEvent := map[string][]entry{}
	var order []string
	for _, e := range want {
		if _, ok := byEvent[e.event]; !ok {
			order = append(order, e.event)
		}
		byEvent[e.event] = append(byEvent[e.event], e)
	}
	changed := false
	events := append([]string{}, hooksObj.keys...)
	for _, ev := range order {
		if hooksObj.get(ev) == nil {
			events = append(events, ev)
		}
	}
	for _, ev := range events {
		arr := hooksObj.get(ev)
		if arr != nil && !arr.isArr {
			return nil, errs.E("wire.hooks", errs.Invalid, "hooks.%s is not a list", ev)
		}
		var kept []*value
		var mine []*value
		if arr != nil {
			for _, g := range arr.arr {
				rest, removed := o.withoutOurs(g)
				if removed && rest == nil {
					mine = append(mine, g)
					continue
				}
				kept = append(kept, g)
				if removed {
					mine = append(mine, nil) // ours was mixed into a user's group: rewrite
				}
			}
		}
		var next []*value
		if on && len(byEvent[ev]) > 0 {
			desired := o.groups(byEvent[ev])
			if sameGroups(mine, desired) && arr != nil && tailIs(arr.arr, desired) {
				continue
			}
			next = append(kept, desired...)
		} else {
			if len(mine) == 0 {
				continue
			}
			next = kept
		}
		changed = true
		if len(next) == 0 {
			hooksObj.del(ev)
		} else {
			hooksObj.set(ev, &value{isArr: true, arr: next})
		}
	}
	if !changed {
		return data, nil
	}
	if len(hooksObj.keys) == 0 {
		doc.del("hooks")
	}
	return encodeOrRemove(doc, data), nil
}

// withoutOurs returns the group with our commands taken out (nil when nothing else is left) and whether
// it held any of ours.
func (o Options) withoutOurs(g *value) (*value, bool) {
	hs := g.get("hooks")
	if hs == nil || !hs.isArr {
		return g, false
	}
	var rest []*value
	for _, h := range hs.arr {
		if !o.isOurs(h.get("command").str()) {
			rest = append(rest, h)
		}
	}
	if len(rest) == len(hs.arr) {
		return g, false
	}
	if len(rest) == 0 {
		return nil, true
	}
	hs.arr = rest
	return g, true
}

// groups are the matcher groups for one event's entries.
func (o Options) groups(es []entry) []*value {
	var out []*value
	for _, e := range es {
		h := orderedMap{"type", "command", "command", o.Command(e.event), "timeout", e.timeout}
		g := orderedMap{}
		if e.matcher != "" {
			g = append(g, "matcher", e.matcher)
		}
		g = append(g, "hooks", []any{h})
		out = append(out, from(g))
	}
	return out
}

func sameGroups(mine, desired []*value) bool {
	if len(mine) != len(desired) {
		return false
	}
	for i := range mine {
		if mine[i] == nil || !bytes.Equal(mine[i].encode(), desired[i].encode()) {
			return false
		}
	}
	return true
}

// tailIs reports whether arr ends with want (our groups sit after the user's).
func tailIs(arr, want []*value) bool {
	if len(arr) < len(want) {
		return false
	}
	return sameGroups(arr[len(arr)-len(want):], want)
}

// mcpFile adds or removes the box server in .mcp.json.
func (o Options) mcpFile(data []byte, on bool) ([]byte, error) {
	doc, err := parseOrEmpty(data)
	if err != nil {
		return nil, err
	}
	servers := doc.get("mcpServers")
	if servers != nil && servers.obj == nil {
		return nil, errors.New(`"mcpServers" is not an object`)
	}
	if !on {
		if servers == nil || servers.get(ServerName) == nil {
			return data, nil
		}
		servers.del(ServerName)
		if len(servers.keys) == 0 {
			doc.del("mcpServers")
		}
		return encodeOrRemove(doc, data), nil
	}
	if servers == nil {
		servers = newObject()
		doc.set("mcpServers", servers)
	}
	want := from(orderedMap{"type", "stdio", "command", o.Bin, "args", o.mcpArgs()})
	if cur := servers.get(ServerName); cur != nil && bytes.Equal(cur.encode(), want.encode()) {
		return data, nil
	}
	servers.set(ServerName, want)
	return doc.encode(), nil
}

func (o Options) mcpArgs() []string {
	if !o.InBox && o.Box != "" {
		return []string{"--box", o.Box, "mcp"}
	}
	return []string{"mcp"}
}

// codexConfig adds or removes the box MCP server in .codex/config.toml, as a marked block; a box server
// the user declared outside the block is left alone.
func (o Options) codexConfig(data []byte, on bool) ([]byte, error) {
	outside := string(setBlock(data, tomlBegin, tomlEnd, "", false))
	if on && strings.Contains(outside, "[mcp_servers."+ServerName+"]") {
		return nil, errors.New("it already declares [mcp_servers.box]")
	}
	var args []string
	for _, a := range o.mcpArgs() {
		args = append(args, fmt.Sprintf("%q", a))
	}
	body := fmt.Sprintf("[mcp_servers.%s]\ncommand = %q\nargs = [%s]", ServerName, o.Bin, strings.Join(args, ", "))
	return setBlock(data, tomlBegin, tomlEnd, body, on), nil
}

// block is the instruction block for CLAUDE.md and AGENTS.md.
func (o Options) block() string {
	where := "This folder is the owner's box (their memory)."
	if !o.InBox {
		where = "This project is wired to the owner's box (their memory)"
		if o.Box != "" {
			where += " at " + o.Box
		} else {
			where += ", found through $BOX_DIR"
		}
		where += "."
	}
	return "## The owner's memory (box)\n\n" + where + " `box wire` wrote this block; `box unwire --apply` removes it.\n" +
		"- At session start and on each task, hooks add a short map of what the memory holds: notes, files and line ranges, not their text. Read only the ranges named.\n" +
		"- Search and read the memory with the box MCP tools (memory_search, memory_read_note, memory_overview); save a durable fact with memory_remember: one plain fact, never a secret.\n" +
		"- A denied Read or search names the range or the rows to use instead; the same call repeated unchanged runs anyway.\n" +
		"- A large command output is kept in full in the box's .box/sieve folder: grep that file instead of running the command again.\n" +
		"- When GATES.md exists, the turn cannot end while a gate is open: run each CHECK, confirm its EXPECT, mark the row met."
}

// setBlock puts body between the markers (replacing a block already there, else appending one) or, off,
// removes the block and the blank line before it. A file left empty is removed (nil).
func setBlock(data []byte, begin, end, body string, on bool) []byte {
	text := string(data)
	i := strings.Index(text, begin)
	j := -1
	if i >= 0 {
		if k := strings.Index(text[i:], end); k >= 0 {
			j = i + k + len(end)
		}
	}
	block := begin + "\n" + body + "\n" + end
	switch {
	case on && j > 0:
		text = text[:i] + block + text[j:]
	case on:
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if text != "" {
			text += "\n"
		}
		text += block + "\n"
	case j > 0:
		before := strings.TrimRight(text[:i], "\n")
		after := strings.TrimPrefix(text[j:], "\n")
		if before != "" && after != "" {
			before += "\n\n"
		} else if before != "" {
			before += "\n"
		}
		text = before + after
	default:
		return data
	}
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return []byte(text)
}

// parseOrEmpty parses a JSON object file; a missing or blank file is an empty object.
func parseOrEmpty(data []byte) (*value, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return newObject(), nil
	}
	v, err := parseJSON(data)
	if err != nil {
		return nil, errs.Wrap("wire.json", errs.Invalid, err, "not valid JSON")
	}
	if v.obj == nil {
		return nil, errors.New("not a JSON object")
	}
	return v, nil
}

// encodeOrRemove encodes doc, or returns nil (remove the file) when unwiring left it empty.
func encodeOrRemove(doc *value, old []byte) []byte {
	if len(doc.keys) == 0 && old != nil {
		return nil
	}
	return doc.encode()
}
