package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/validate"
)

// toolArgs is the part of tool_input the hooks read (Claude Code's Read, Grep, Glob, Bash; Codex's shell).
type toolArgs struct {
	FilePath string     `json:"file_path"`
	Offset   flexInt    `json:"offset"`
	Limit    flexInt    `json:"limit"`
	Pattern  string     `json:"pattern"`
	Path     string     `json:"path"`
	Glob     string     `json:"glob"`
	Fold     bool       `json:"-i"`
	Command  flexString `json:"command"`
}

// flexInt is a number that may arrive as a JSON number or a numeric string.
type flexInt int

func (n *flexInt) UnmarshalJSON(b []byte) error {
	var f float64
	if json.Unmarshal(bytes.Trim(b, `"`), &f) == nil {
		*n = flexInt(f)
	}
	return nil
}

// flexString is a command given as a string or as argv (Codex: ["bash", "-lc", "…"]).
type flexString string

func (s *flexString) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = flexString(one)
		return nil
	}
	var argv []string
	if json.Unmarshal(b, &argv) == nil {
		if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
			*s = flexString(argv[2])
		} else {
			*s = flexString(strings.Join(argv, " "))
		}
	}
	return nil
}

// ToolArgs decodes a payload's tool_input; anything it does not understand is left empty.
func (in Input) toolArgs() toolArgs {
	var a toolArgs
	_ = json.Unmarshal(in.ToolInput, &a)
	return a
}

// abs makes a path from tool_input absolute against the session's cwd, followed as the kernel follows it
// (layout.Resolve: link/.. is the parent of the link's target, not the link's folder).
func (s *session) abs(p string) string {
	if p == "" {
		return ""
	}
	return layout.Resolve(layout.Join(s.in.Cwd, p))
}

// writeTools are the tools that write files (Claude Code's and Codex's apply_patch).
var writeTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, "apply_patch": true}

func (s *session) preToolUse() (Result, error) {
	switch t := s.in.ToolName; {
	case t == "Read":
		return s.preRead()
	case t == "Bash" || t == "shell":
		if res, denied := s.preBash(); denied {
			return res, nil
		}
		return s.preSearch()
	case t == "Grep" || t == "Glob":
		return s.preSearch()
	case writeTools[t]:
		return s.preWrite()
	}
	return Result{}, nil
}

// noPrice are files the Read tool renders rather than pours into the window.
var noPrice = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".pdf": true, ".ipynb": true}

// preRead denies a whole-file read of a file the brief already located (naming the range to read), and
// prices a whole-file read of an oversized file (naming an offset and a limit). Either denial is given
// once: the same read repeated goes through.
func (s *session) preRead() (Result, error) {
	a := s.in.toolArgs()
	if a.FilePath == "" || a.Offset > 0 || a.Limit > 0 || noPrice[strings.ToLower(filepath.Ext(a.FilePath))] {
		return Result{}, nil
	}
	host := s.abs(a.FilePath)
	key := "read\x00" + host
	if regions := s.briefRegions(host); len(regions) > 0 {
		if !s.once(key) {
			return Result{}, nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "The brief already located what matters in %s; read that range instead of the whole file:\n", s.display(host))
		for _, r := range regions {
			fmt.Fprintf(&b, "- lines %d-%d (Read offset=%d limit=%d): %s\n", r.Start, r.End, r.Start, r.End-r.Start+1, r.Why)
		}
		b.WriteString("Repeat this read unchanged to read the whole file anyway.")
		return deny(Trim(b.String(), CapRead)), nil
	}
	size, lines, err := measure(host)
	if err != nil {
		return Result{}, nil // a file that is not there is the Read tool's to report
	}
	tokens := int(size / 4)
	if tokens <= s.settings.ReadMaxTokens || lines == 0 {
		return Result{}, nil
	}
	if !s.once(key) {
		return Result{}, nil
	}
	limit := max(50, lines*s.settings.ReadMaxTokens/tokens)
	text := fmt.Sprintf("%s is %d lines (about %d tokens), over the read budget of %d tokens. Read it in parts: offset=1 limit=%d, then offset=%d limit=%d, and so on — or Grep for what you need first. Repeat this read unchanged to read it whole anyway.",
		s.display(host), lines, tokens, s.settings.ReadMaxTokens, limit, limit+1, limit)
	return deny(Trim(text, CapRead)), nil
}

// briefRegions are the standing brief's regions in one file.
func (s *session) briefRegions(host string) []Region {
	rec := s.record()
	if rec.Brief == "" {
		return nil
	}
	var b Brief
	_ = s.load("brief-"+rec.Brief+".json", &b)
	var out []Region
	for _, r := range b.Regions {
		if r.File == host {
			out = append(out, r)
		}
	}
	return out
}

// measure returns a regular file's size and line count (lines counted up to 64 MiB). Anything else (a
// folder, a named pipe, a device) is not measured: opening a pipe would wait for a writer, and reading a
// device might never end.
func measure(host string) (int64, int, error) {
	f, fi, err := openRegular(host)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = f.Close() }() // hooks fail open: a close is not worth failing a session for
	buf := make([]byte, 256<<10)
	lines, read := 0, 0
	for read < 64<<20 {
		n, err := f.Read(buf)
		lines += bytes.Count(buf[:n], []byte{'\n'})
		read += n
		if err != nil {
			break
		}
	}
	return fi.Size(), lines, nil
}

// preSearch denies a declaration search the name index already answers, with the rows. Searches for a
// string, a call site, a comment — anything the index has no rows for — go through untouched, and so
// does the same search repeated (its key carries the words and the target).
func (s *session) preSearch() (Result, error) {
	a := s.in.toolArgs()
	var q search
	switch s.in.ToolName {
	case "Grep":
		q = search{pattern: a.Pattern, within: a.Path, glob: a.Glob, fold: a.Fold}
	case "Glob":
		return s.globSearch(a)
	default:
		var ok bool
		if q, ok = parseShellSearch(string(a.Command)); !ok {
			return Result{}, nil
		}
	}
	name := DeclName(q.pattern)
	if name == "" || s.inBox {
		return Result{}, nil
	}
	within := ""
	if q.within != "" {
		within = s.abs(q.within)
	}
	rows := lookup(s.codeRows(), name, q.fold, within)
	if q.glob != "" {
		rows = filterGlob(rows, q.glob)
	}
	if len(rows) == 0 || !s.once("search\x00"+name+"\x00"+within+"\x00"+q.glob) {
		return Result{}, nil
	}
	return deny(s.rowsText("The name index already answers this declaration search:", rows)), nil
}

// globSearch answers a Glob for a note or card by its name from the box's file names, when the Glob
// searches the box: a session in the box, or a path inside it. A code project's Glob finds the project's
// own files (its docs/MEMORY.md is not the box's).
func (s *session) globSearch(a toolArgs) (Result, error) {
	base := path.Base(a.Pattern)
	name := strings.TrimSuffix(base, path.Ext(base))
	if name == "" || strings.ContainsAny(name, "*?[]{}") {
		return Result{}, nil
	}
	where := s.root // the folder the Glob searches, as boxRows spells its files
	if a.Path != "" {
		bp, err := layout.FromHost(s.root, s.abs(a.Path))
		if err != nil {
			return Result{}, nil
		}
		where = filepath.Join(s.root, filepath.FromSlash(bp))
	} else if !s.inBox {
		return Result{}, nil
	}
	rows := lookup(boxRows(s.root), name, false, where)
	if len(rows) == 0 || !s.once("glob\x00"+a.Pattern+"\x00"+a.Path) {
		return Result{}, nil
	}
	return deny(s.rowsText("The box's name index already answers this file search:", rows)), nil
}

func (s *session) rowsText(head string, rows []Row) string {
	var b strings.Builder
	b.WriteString(head + "\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "- %s:%d %s %s\n", s.display(r.File), r.Line, r.Kind, r.Name)
	}
	b.WriteString("Read from those lines (Read with offset and limit). Repeat the same search to run it anyway.")
	return Trim(b.String(), CapSearch)
}

func filterGlob(rows []Row, glob string) []Row {
	var out []Row
	for _, r := range rows {
		if ok, _ := filepath.Match(glob, filepath.Base(r.File)); ok || strings.Contains(glob, "/") {
			out = append(out, r)
		}
	}
	return out
}

// preWrite guards writes inside the box (the reserved names, .box/, the switches) and the brief's scope
// (recorded in observe, denied once in enforce).
func (s *session) preWrite() (Result, error) {
	p, err := validate.ParseHook(s.in.raw, s.in.Cwd)
	if err != nil {
		return Result{}, err
	}
	for _, e := range p.Edits {
		// Both readings of the path: the agent's tool may follow it as the kernel does or clean it first.
		if bp, why := s.guardHost(e.Path, e.Lexical); why != "" {
			return deny(Trim(fmt.Sprintf("%s: %s. Nothing was written.", bp, why), CapWrite)), nil
		}
	}
	rec := s.record()
	for _, e := range p.Edits {
		if inScope(rec, e.Path, s.root, s.project) {
			continue
		}
		verdict := map[string]any{"time": s.now().UTC(), "path": e.Path, "tool": s.in.ToolName, "verdict": "out-of-scope", "scope": rec.Scope, "phase": s.settings.Scope}
		_ = s.appendLine(scopeLog, verdict)
		if s.settings.Scope == "enforce" && s.once("scope\x00"+e.Path) {
			text := fmt.Sprintf("%s is outside the scope the task's brief declared (%s). Stay in scope; if the task really needs this file, say why and repeat the edit.",
				s.display(e.Path), strings.Join(s.displayAll(rec.Scope), ", "))
			return deny(Trim(text, CapWrite)), nil
		}
	}
	return Result{}, nil
}

// guardHost says why one of the host paths (readings of one path) may not be written by an agent, with
// the box path it names, or "".
func (s *session) guardHost(paths ...string) (bp, why string) {
	for _, p := range paths {
		if !within(s.root, p) {
			continue
		}
		bp, err := layout.FromHost(s.root, p)
		if err != nil {
			continue
		}
		if why := guard(bp); why != "" {
			return bp, why
		}
	}
	return "", ""
}

// guard says why a box path may not be written by an agent, or "".
func guard(bp string) string {
	low := strings.ToLower(bp) // a file system that ignores case (macOS's) takes .GIT for .git
	switch {
	case low == "/.box" || strings.HasPrefix(low, "/.box/"):
		return "the box's runtime folder .box/ is written only by the box itself"
	case low == "/.git" || strings.HasPrefix(low, "/.git/"):
		return "the box's repository .git/ is written only by git, through the box"
	case strings.EqualFold(bp, layout.Switches):
		return "the switches are the owner's to set, in the box's settings"
	case strings.EqualFold(bp, layout.Settings):
		return "the box's settings (the brain's address among them) are the owner's to change, in the box's web UI or `box brain`"
	case strings.HasPrefix(strings.ToLower(bp), strings.ToLower(layout.Approvals)+"/"),
		strings.HasPrefix(strings.ToLower(bp), strings.ToLower(layout.ArchiveDir)+"/approvals/"):
		return "approval cards are made by the box's gate and decided by the owner with their passkey"
	}
	if off, bad := layout.ReservedOffender(bp); bad {
		return fmt.Sprintf("%s nests a reserved area name (_content, _config, _bookkeeping and _publish may appear only at the box root)", off)
	}
	return ""
}

// inScope reports whether a write is inside the brief's scope. No scope, a path under no scope folder's
// tree (box or project), or a file the session already edited count as in scope.
func inScope(rec Record, p, root, project string) bool {
	if len(rec.Scope) == 0 {
		return true
	}
	treeOf := func(x string) string {
		if within(root, x) {
			return root
		}
		return project
	}
	relevant := false
	for _, d := range rec.Scope {
		if treeOf(d) != treeOf(p) {
			continue
		}
		relevant = true
		if within(strings.TrimSuffix(d, string(filepath.Separator)), p) {
			return true
		}
	}
	for _, e := range rec.Edited {
		if e == p {
			return true
		}
	}
	return !relevant
}

// openRegular opens a file a hook reads from a project or the box only when it is a regular file: a
// pipe would block the hook (and the agent) and a device such as /dev/zero never ends.
func openRegular(host string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(host)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil, errs.E("hooks.read", errs.NotFound, "%s is not a regular file", host)
	}
	// O_NONBLOCK: a pipe swapped in since the Stat makes the open return at once, and the check below refuses it.
	f, err := os.OpenFile(host, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, nil, errs.E("hooks.read", errs.NotFound, "%s is not a regular file", host)
	}
	return f, fi, nil
}

// readRegular reads a regular file of at most max bytes (openRegular); a longer one is an error.
func readRegular(host string, max int64) ([]byte, error) {
	data, longer, err := readUpTo(host, max)
	if err == nil && longer {
		return nil, errs.E("hooks.read", errs.Limited, "%s is longer than %d bytes", host, max)
	}
	return data, err
}

// readHead reads a regular file's first max bytes (openRegular), cut after its last whole line there when
// the file is longer: a long agent guide is read as far as a hook reads, not skipped.
func readHead(host string, max int64) ([]byte, error) {
	data, longer, err := readUpTo(host, max)
	if longer {
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	return data, err
}

// readUpTo reads at most max bytes of a regular file and says whether it holds more.
func readUpTo(host string, max int64) ([]byte, bool, error) {
	f, _, err := openRegular(host)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > max {
		return data[:max], true, nil
	}
	return data, false, nil
}
