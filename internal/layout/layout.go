// Package layout owns the on-disk shape of a box, defined once: the closed root vocabulary, the five
// areas and their folders, reserved names, and box paths (their forms and that none escapes the root).
// It writes no file; it reads the tree only through the escape check (Open, ReadFile, Stat), which every
// reader of the box uses. The agent guide and the docs table are generated here.
package layout

import (
	"fmt"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/finding"
)

// Entry is one name allowed at the box root, or one folder inside an area.
type Entry struct {
	Name    string // "_content" or "_content/memory"
	Dir     bool
	Purpose string
	Ignored bool // not committed (git ignores it)
}

// Root is the closed root vocabulary, in the order the docs show it.
var Root = []Entry{
	{Name: ".git", Dir: true, Purpose: "the git repository", Ignored: true},
	{Name: ".gitignore", Purpose: "written by box init: .box/* except box.json, and _tmp/"},
	{Name: ".box", Dir: true, Purpose: "runtime: box.json (the committed marker), index.db, state.db, logs, caches"},
	{Name: "CLAUDE.md", Purpose: "the agent guide for agents working inside the box"},
	{Name: "AGENTS.md", Purpose: "the same guide for Codex and other agents (mirrors CLAUDE.md)"},
	{Name: ".claude", Dir: true, Purpose: "Claude Code configuration written by box wire"},
	{Name: ".codex", Dir: true, Purpose: "Codex configuration written by box wire"},
	{Name: ".agents", Dir: true, Purpose: "an agent's own folder (skills, for agents that read them there), allowed at the root; box wire writes none"},
	{Name: ".mcp.json", Purpose: "the MCP entry for box mcp, written by box wire"},
	{Name: "README.md", Purpose: "optional: what this box is, for a person browsing it"},
	{Name: "_content", Dir: true, Purpose: "everything the owner and assistants author; the only open vocabulary"},
	{Name: "_config", Dir: true, Purpose: "switches, settings, schemas, interface cards, pages, connectors, looks"},
	{Name: "_bookkeeping", Dir: true, Purpose: "the box's paper trail: diary, approvals, archive, trash, usage, jobs"},
	{Name: "_publish", Dir: true, Purpose: "staged public bundles"},
	{Name: "_tmp", Dir: true, Purpose: "scratch, never committed, may nest", Ignored: true},
}

// Folders are the standard folders inside the areas; box init creates each.
var Folders = []Entry{
	{Name: "_content/memory", Dir: true, Purpose: "MEMORY.md, the router: core facts, maps, cautions, inbox count (at most 40 lines)"},
	{Name: "_content/memory/maps", Dir: true, Purpose: "moc-<domain>.md: a list of [[note]] — one-line hook; past 120 notes, a letter index moc-<domain>/a.md"},
	{Name: "_content/memory/notes", Dir: true, Purpose: "entity-*.md (people, orgs, places) and topic-*.md, one per subject"},
	{Name: "_content/inbox", Dir: true, Purpose: "YYYY-MM-DD.md: unfiled lines, each with id, time, who, via, trust (a busy day goes on in YYYY-MM-DD-2.md, -3.md …)"},
	{Name: "_content/todos", Dir: true, Purpose: "*.todo.card: to-do lists"},
	{Name: "_content/pages", Dir: true, Purpose: "<slug>/: a page's own notes (its map is moc-<slug>)"},
	{Name: "_config/schemas", Dir: true, Purpose: "<type>.yaml: card types this box adds"},
	{Name: "_config/interface", Dir: true, Purpose: "dashboard.card, settings.card, browse.card: the interface anchors"},
	{Name: "_config/pages", Dir: true, Purpose: "<slug>/: an installed page: build.json (its record) and v<N>.html, one per version"},
	{Name: "_config/connectors", Dir: true, Purpose: "installed connectors"},
	{Name: "_config/looks", Dir: true, Purpose: "look/ and layout/: the look change and the arrangement of the tabs, build.json and v<N>.css / v<N>.json"},
	{Name: "_bookkeeping/diary", Dir: true, Purpose: "YYYY-MM-DD.jsonl: every change and every read of outside sources"},
	{Name: "_bookkeeping/approvals", Dir: true, Purpose: "<id>.approval.card: waiting approval cards"},
	{Name: "_bookkeeping/archive", Dir: true, Purpose: "decided approvals, merged notes: kept, never deleted"},
	{Name: "_bookkeeping/trash", Dir: true, Purpose: "what forget and tidy removed, for undo"},
	{Name: "_bookkeeping/usage", Dir: true, Purpose: "brain and connection usage"},
	{Name: "_bookkeeping/jobs", Dir: true, Purpose: "background job records"},
}

// Areas are the five underscore areas; Reserved are the four whose names may not nest.
var (
	Areas    = []string{"_content", "_config", "_bookkeeping", "_publish", "_tmp"}
	Reserved = []string{"_content", "_config", "_bookkeeping", "_publish"}
)

// Paths of the files box init writes and the box reads by name.
const (
	Marker      = ".box/box.json"
	Router      = "/_content/memory/MEMORY.md"
	Switches    = "/_config/switches.card"
	Settings    = "/_config/settings.card"
	InboxDir    = "/_content/inbox"
	MapsDir     = "/_content/memory/maps"
	NotesDir    = "/_content/memory/notes"
	TodosDir    = "/_content/todos"
	DiaryDir    = "/_bookkeeping/diary"
	TrashDir    = "/_bookkeeping/trash"
	ArchiveDir  = "/_bookkeeping/archive"
	Approvals   = "/_bookkeeping/approvals"
	SchemasDir  = "/_config/schemas"
	PagesDir    = "/_config/pages"
	Connectors  = "/_config/connectors"
	LooksDir    = "/_config/looks"
	Interface   = "/_config/interface"
	templateDir = "_config/_template-updates"
)

// InterfaceCards are the required interface anchors.
var InterfaceCards = []string{"/_config/interface/dashboard.card", "/_config/interface/settings.card", "/_config/interface/browse.card"}

func isRootName(name string) bool {
	for _, e := range Root {
		if e.Name == name {
			return true
		}
	}
	return false
}

// IsArea reports whether name is one of the five areas.
func IsArea(name string) bool {
	for _, a := range Areas {
		if a == name {
			return true
		}
	}
	return false
}

func isReserved(name string) bool {
	for _, r := range Reserved {
		if r == name {
			return true
		}
	}
	return false
}

// CheckRoot reports every root name outside the closed vocabulary. .DS_Store is ignored.
func CheckRoot(names []string) []finding.Finding {
	var out []finding.Finding
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	for _, n := range sorted {
		if n == ".DS_Store" || isRootName(n) {
			continue
		}
		if strings.HasPrefix(n, "_") {
			out = append(out, finding.Errorf("/"+n, 0, "ad-hoc-underscore",
				"%q is not a box area; the areas are %s: move it under /_content/ or remove it", n, strings.Join(Areas, ", ")))
			continue
		}
		out = append(out, finding.Errorf("/"+n, 0, "unlisted",
			"%q is not allowed at the box root: move it under /_content/ (the root holds only the box's own names)", n))
	}
	return out
}

// ReservedOffender returns the shallowest nested use of a reserved area name in a box path
// ("/_content/a/_config/b" → "/_content/a/_config"). The area at the root itself is not an offender;
// _tmp may nest; /_config/_template-updates/ is exempt as a subtree.
func ReservedOffender(boxPath string) (string, bool) {
	segs := Segments(boxPath)
	if len(segs) >= 2 && segs[0] == "_config" && segs[1] == "_template-updates" {
		return "", false
	}
	for i := 1; i < len(segs); i++ {
		if isReserved(segs[i]) {
			return "/" + strings.Join(segs[:i+1], "/"), true
		}
	}
	return "", false
}

// Segments splits a box path into its names, without empty ones.
func Segments(boxPath string) []string {
	var out []string
	for _, s := range strings.Split(boxPath, "/") {
		if s != "" && s != "." {
			out = append(out, s)
		}
	}
	return out
}

// Clean turns any box-path form ("/_content/x", "_content/x", "./_content/x") into the canonical
// "/_content/x". It refuses NUL bytes, backslashes, ".." that leaves the root, and paths whose first
// name is not a box root name (a host path like "/etc/hosts", or a stray like "notes/x").
func Clean(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	if strings.Contains(p, `\`) {
		return "", fmt.Errorf("path %q contains a backslash: box paths use /", p)
	}
	var stack []string
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
		case "..":
			if len(stack) == 0 {
				return "", fmt.Errorf("path %q leaves the box: .. goes above the root", p)
			}
			stack = stack[:len(stack)-1]
		default:
			stack = append(stack, s)
		}
	}
	// A first name outside the root vocabulary means a host path ("/etc/hosts") or no box path at all;
	// refusing both forms alike keeps Clean(Clean(p)) == Clean(p).
	if len(stack) > 0 && !isRootName(stack[0]) {
		return "", fmt.Errorf("path %q is not a box path: box paths start with a box name like /_content/", p)
	}
	return "/" + strings.Join(stack, "/"), nil
}

// NeverCommitted reports a path (relative to the box root, as git lists it) that no box puts in git: the
// runtime folder .box/ but its marker, and the scratch area _tmp/. A repository that carries one was not
// made by a box, and what it holds there (a write journal, a state database, a symlink) is never used.
// The marker is committed as a plain file only (plain false: a link or a submodule).
func NeverCommitted(rel string, plain bool) bool {
	first, _, _ := strings.Cut(rel, "/")
	// Case folded: on a file system that ignores case, .BOX/tmp is .box/tmp.
	return strings.EqualFold(first, ".box") && (rel != Marker || !plain) || strings.EqualFold(first, "_tmp")
}

// InArea reports whether a clean box path lies inside one of the five areas.
func InArea(boxPath string) bool {
	segs := Segments(boxPath)
	return len(segs) > 1 && IsArea(segs[0])
}
