package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/ref"
)

// HookEdit is one file an agent's edit touched, as a host path.
type HookEdit struct {
	Path    string // followed as the kernel follows it: link/.. climbs from the link's target
	Lexical string // the same path with its ".." taken from the text first, as a tool that cleans paths writes it
	Deleted bool
}

// HookPayload is what an agent's PostToolUse hook input says was edited.
type HookPayload struct {
	Tool  string
	Cwd   string
	Edits []HookEdit
}

// hookInput is the part of Claude Code and Codex hook JSON the hook reads.
type hookInput struct {
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	Cwd           string          `json:"cwd"`
	ToolInput     json.RawMessage `json:"tool_input"`
}

// ParseHook reads an agent's hook JSON: Claude Code's tool_input.file_path (Write, Edit, MultiEdit and
// anything else naming a file_path), or a Codex apply_patch whose patch text has "*** Add File: p",
// "*** Update File: p" (with an optional "*** Move to: q") and "*** Delete File: p" lines, relative to
// cwd (defaultCwd when the payload has none). A payload naming no file is valid and empty.
func ParseHook(data []byte, defaultCwd string) (HookPayload, error) {
	const op = "validate.hook"
	var in hookInput
	if len(bytes.TrimSpace(data)) == 0 {
		return HookPayload{}, errs.E(op, errs.Invalid, "the hook input is empty; box validate --hook reads Claude Code or Codex PostToolUse JSON on stdin")
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return HookPayload{}, errs.E(op, errs.Invalid,
			"the hook input is not the JSON object an agent hook sends (%v); box validate --hook reads Claude Code or Codex PostToolUse JSON on stdin", jsonMsg(err))
	}
	p := HookPayload{Tool: in.ToolName, Cwd: in.Cwd}
	if p.Cwd == "" {
		p.Cwd = defaultCwd
	}
	relative := "" // a relative path named with no folder to read it from
	edit := func(s string, deleted bool) HookEdit {
		if !filepath.IsAbs(s) {
			if p.Cwd == "" || !filepath.IsAbs(p.Cwd) {
				relative = s
			}
			s = layout.Join(p.Cwd, s)
		}
		return HookEdit{Path: layout.Resolve(s), Lexical: layout.Resolve(filepath.Clean(s)), Deleted: deleted}
	}
	if len(in.ToolInput) == 0 || string(in.ToolInput) == "null" {
		return p, nil
	}
	var ti any
	if err := json.Unmarshal(in.ToolInput, &ti); err != nil {
		return HookPayload{}, errs.E(op, errs.Invalid, "the hook input's tool_input is not JSON: %v", jsonMsg(err))
	}
	if m, ok := ti.(map[string]any); ok {
		for _, k := range []string{"file_path", "path", "notebook_path"} {
			if s, ok := m[k].(string); ok && s != "" && !strings.Contains(s, "\n") {
				p.Edits = append(p.Edits, edit(s, false))
				break
			}
		}
	}
	for _, text := range patchTexts(ti) {
		for _, e := range patchFiles(text) {
			p.Edits = append(p.Edits, edit(e.Path, e.Deleted))
		}
	}
	if relative != "" {
		return HookPayload{}, errs.E(op, errs.Invalid, "the hook input names %q, a relative path, and no absolute cwd to read it from; "+
			"run box validate --hook from the agent's folder or give the hook its cwd", relative)
	}
	return p, nil
}

func jsonMsg(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "invalid JSON at byte " + itoa(int(se.Offset))
	}
	return err.Error()
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// patchTexts finds the apply_patch texts anywhere in a tool input: a string holding "*** Begin Patch"
// (Codex sends it as tool_input.command[1], tool_input.input or tool_input.patch, depending on version).
func patchTexts(v any) []string {
	switch t := v.(type) {
	case string:
		if strings.Contains(t, "*** Begin Patch") || strings.Contains(t, "*** Add File: ") ||
			strings.Contains(t, "*** Update File: ") || strings.Contains(t, "*** Delete File: ") {
			return []string{t}
		}
	case []any:
		var out []string
		for _, x := range t {
			out = append(out, patchTexts(x)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, k := range sortedKeys(t) {
			out = append(out, patchTexts(t[k])...)
		}
		return out
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// patchFiles reads the file operations of an apply_patch text.
func patchFiles(text string) []HookEdit {
	var out []HookEdit
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "*** Add File: "):
			out = append(out, HookEdit{Path: strings.TrimSpace(strings.TrimPrefix(line, "*** Add File: "))})
		case strings.HasPrefix(line, "*** Update File: "):
			out = append(out, HookEdit{Path: strings.TrimSpace(strings.TrimPrefix(line, "*** Update File: "))})
		case strings.HasPrefix(line, "*** Move to: ") && len(out) > 0:
			out[len(out)-1].Deleted = true // the old name goes away; the new one is edited
			out = append(out, HookEdit{Path: strings.TrimSpace(strings.TrimPrefix(line, "*** Move to: "))})
		case strings.HasPrefix(line, "*** Delete File: "):
			out = append(out, HookEdit{Path: strings.TrimSpace(strings.TrimPrefix(line, "*** Delete File: ")), Deleted: true})
		}
	}
	var kept []HookEdit
	for _, e := range out {
		if e.Path != "" {
			kept = append(kept, e)
		}
	}
	return kept
}

// Hook validates the cards an agent edit touched, each in its own box: files outside any box,
// non-card files and deleted files are silent. It never touches the network.
func Hook(ctx context.Context, p HookPayload, findBox func(dir string) (string, error)) (Result, error) {
	var res Result
	seen := map[string]bool{}
	byBox := map[string]*Validator{}
	for _, e := range p.Edits {
		if e.Deleted || seen[e.Path] {
			continue
		}
		seen[e.Path] = true
		root, err := findBox(filepath.Dir(e.Path))
		if err != nil {
			continue // not in a box: not ours
		}
		v := byBox[root]
		if v == nil {
			v = New(root, Options{})
			byBox[root] = v
		}
		bp, f := v.boxPathOf(p.Cwd, e.Path)
		if f != nil || bp == "/" || !card.IsCard(bp) || !layout.InArea(bp) && !isRootDoc(bp) {
			continue
		}
		host := filepath.Join(v.root, filepath.FromSlash(bp))
		if fi, err := os.Lstat(host); err != nil {
			continue // gone already: nothing to check
		} else if fi.Mode()&os.ModeSymlink != 0 {
			if f := v.symlink(bp, host); f != nil {
				res.add(*f)
				continue
			}
		}
		if off, bad := layout.ReservedOffender(bp); bad {
			res.add(reservedFinding(off))
		}
		if isRootDoc(bp) {
			continue // CLAUDE.md and friends are not cards
		}
		data, f := v.read(bp)
		if f != nil {
			res.add(*f)
			continue
		}
		res.add(v.Data(bp, data, ref.NewResolver(v.root))...)
		res.Files++
	}
	return res.done(), nil
}

func isRootDoc(bp string) bool { return strings.Count(bp, "/") == 1 }

// HookContext renders findings for an agent: one line each, at most a few hundred words.
func HookContext(fs []finding.Finding) string {
	var b strings.Builder
	b.WriteString("box validate found problems in the file you just edited:\n")
	for i, f := range fs {
		if i == 12 {
			b.WriteString("… and " + itoa(len(fs)-i) + " more; run `box validate` on the file to see them all.\n")
			break
		}
		b.WriteString(f.String())
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
