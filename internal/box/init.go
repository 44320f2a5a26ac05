package box

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/boxmem/box/internal/atomicfile"
	"github.com/boxmem/box/internal/card"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
)

// InitOptions shape a new box.
type InitOptions struct {
	// Files adds or overrides seed files by box path ("/_content/memory/MEMORY.md" → its text).
	Files map[string][]byte
	// Actor made the box; empty means the owner through the CLI.
	Actor Actor
	// Options are the write-transaction options the returned box uses (validation, index).
	Options Options
	// HookBinary overrides the program the git hooks call (default: this binary, see HookBinary).
	HookBinary string
}

// SwitchesDefault is _config/switches.card as box init writes it: the defaults of docs/GATE.md.
const SwitchesDefault = `---
title: What the box may do
change: just-do-it
send: ask-me
share: ask-me
access: ask-me
delete: ask-me
---
`

// Gitignore is the box's .gitignore.
const Gitignore = `# Written by box init. Runtime state stays out of git; the marker is the one committed file in .box/.
.box/*
!.box/box.json
_tmp/
`

// defaultRouter is used only when the caller passes no router skeleton.
const defaultRouter = "# Memory\n"

func seedFiles() map[string][]byte {
	seedCard := func(title, desc, body string) []byte {
		return card.Build([]card.Field{{Key: "title", Value: title}, {Key: "description", Value: desc}}, body)
	}
	guide := []byte(layout.AgentGuide())
	return map[string][]byte{
		"/.gitignore":   []byte(Gitignore),
		layout.Router:   []byte(defaultRouter),
		layout.Switches: []byte(SwitchesDefault),
		"/CLAUDE.md":    guide,
		"/AGENTS.md":    guide,
		layout.Settings: seedCard("Settings", "How the box is set up: brain, assistants, safety.", "The settings the owner changes from the Settings view; the switches live in switches.card.\n"),
		layout.InterfaceCards[0]: seedCard("Dashboard", "Today: what waits for the owner and what the box did.",
			"# Dashboard\n\nThe first view: approval cards waiting for a decision, today's to-dos and the box's recent diary.\n"),
		layout.InterfaceCards[1]: seedCard("Settings", "What the box may do, other assistants, brain, things built, safety.",
			"# Settings\n\nThe owner's settings view: the five switches, connections, the brain and its budget, and safety.\n"),
		layout.InterfaceCards[2]: seedCard("Browse", "The box's folders and files, one at a time.",
			"# Browse\n\nA view of the box's folders: pick a folder, then a file to read or edit.\n"),
	}
}

// SeedSettings is the settings card as box init writes it (erase leaves it so, the brain's block aside).
func SeedSettings() []byte { return seedFiles()[layout.Settings] }

// Init makes dir a new box: a git repository with the marker, the layout, the seed files and a first
// commit (Box-Op: init), and the git hooks. An existing box is left alone (Exists); a non-empty folder
// that is not a box is refused, except one holding only .git, which is used.
func Init(ctx context.Context, dir string, opts InitOptions) (*Box, error) {
	const op = "box.init"
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, errs.Wrap(op, errs.Invalid, err, "")
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, errs.Wrap(op, errs.Other, err, fmt.Sprintf("cannot make the folder %s", root))
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(layout.Marker))); err == nil {
		return nil, errs.E(op, errs.Exists, "%s is already a box; nothing changed", root)
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, errs.Wrap(op, errs.Other, err, fmt.Sprintf("cannot read %s", root))
	}
	for _, e := range ents {
		if e.Name() != ".git" {
			return nil, errs.E(op, errs.Invalid,
				"%s is not empty and is not a box (it holds %s): run `box init` in an empty folder, or in one holding only .git", root, e.Name())
		}
	}
	b := newBox(root, opts.Options)
	_, statErr := os.Stat(filepath.Join(root, ".git"))
	hadGit := statErr == nil
	undoInit := func() { // the folder was empty (or held only .git): leave it so, for another try
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if e.Name() != ".git" || !hadGit {
				_ = os.RemoveAll(filepath.Join(root, e.Name()))
			}
		}
	}
	if err := b.git.Init(ctx); err != nil {
		undoInit()
		return nil, errs.Wrap(op, errs.Other, err, "cannot make the git repository")
	}
	files := seedFiles()
	m := Marker{ShapeVersion: ShapeVersion, ID: randomID(), Created: b.Now().UTC().Format(time.RFC3339)}
	mj, _ := json.MarshalIndent(m, "", "  ")
	files["/"+layout.Marker] = append(mj, '\n')
	for p, data := range opts.Files {
		clean, err := layout.Clean(p)
		if err != nil {
			return nil, errs.Wrap(op, errs.Invalid, err, "")
		}
		files[clean] = data
	}
	for _, k := range keepFiles(files) {
		files[k] = nil
	}
	actor := opts.Actor
	if actor.Who == "" {
		actor = Actor{Who: "owner", Via: "cli", Trust: "own"}
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	_, err = b.Do(ctx, Change{Actor: actor, Op: "init", Summary: "The box was made.", Apply: func(tx *Tx) error {
		for _, p := range paths {
			if err := tx.Write(p, files[p]); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		undoInit()
		return nil, err
	}
	b.Marker = m
	for _, d := range []string{"_tmp", ".box/logs"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o755); err != nil {
			return nil, errs.Wrap(op, errs.Other, err, "the box was made, but its folder "+d+" could not be")
		}
	}
	bin, note := opts.HookBinary, ""
	if bin == "" {
		bin, note = HookBinary()
	}
	hookNote, err := b.InstallHooks(bin)
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	b.Notes = appendNote(appendNote(nil, note), hookNote)
	return b, nil
}

func appendNote(notes []string, n string) []string {
	if n != "" {
		notes = append(notes, n)
	}
	return notes
}

// keepFiles lists the .gitkeep files for the areas and standard folders no seed file fills.
func keepFiles(files map[string][]byte) []string {
	var dirs []string
	for _, a := range layout.Areas {
		if a != "_tmp" {
			dirs = append(dirs, "/"+a)
		}
	}
	for _, f := range layout.Folders {
		dirs = append(dirs, "/"+f.Name)
	}
	var out []string
	for _, d := range dirs {
		if d == layout.DiaryDir {
			continue // the init commit's diary line fills it
		}
		filled := false
		for p := range files {
			if strings.HasPrefix(p, d+"/") {
				filled = true
				break
			}
		}
		for _, o := range dirs {
			if strings.HasPrefix(o, d+"/") {
				filled = true // a child folder will hold something
			}
		}
		if !filled {
			out = append(out, d+"/.gitkeep")
		}
	}
	return out
}

func randomID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// HookBinary is the program the git hooks should call: this binary by absolute path, or "box" on PATH
// when this is a temporary build (go run, go test), with a note saying so.
func HookBinary() (string, string) {
	exe, err := os.Executable()
	if err != nil {
		return "box", "the git hooks call `box` on PATH: the path of this binary is unknown"
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	tmp := os.TempDir()
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r
	}
	if rel, err := filepath.Rel(tmp, exe); err == nil && !strings.HasPrefix(rel, "..") && strings.Contains(rel, "go-build") {
		return "box", "the git hooks call `box` on PATH, because this binary is a temporary `go run` build; install box on PATH (go install ./cmd/box) or run `box wire --apply` from the installed binary"
	}
	return exe, ""
}

// hookMark identifies hooks the box wrote, so it replaces only its own.
const hookMark = "# Installed by box"

// LinkCheckEnded is the line the post-commit hook's background link check writes to its log when it has
// ended, whatever its outcome.
const LinkCheckEnded = "-- link check ended"

// InstallHooks writes the pre-commit and post-commit hooks calling bin. A hook that is not the box's
// own is left alone, and the returned note says so.
func (b *Box) InstallHooks(bin string) (string, error) {
	q := shellQuote(bin)
	hooks := map[string]string{
		"pre-commit": "#!/bin/sh\n" + hookMark + ": checks the staged cards before each commit.\nexec " + q + " validate --pre-commit\n",
		"post-commit": "#!/bin/sh\n" + hookMark + ": checks new external links in the background; never blocks a commit.\n" +
			"mkdir -p .box/logs\n" +
			"( cd \"$(git rev-parse --show-toplevel)\" && BOX_BIN=" + q + " nohup sh -c '\"$BOX_BIN\" validate --urls --urls-since HEAD~1; echo \"" + LinkCheckEnded + "\"' </dev/null >>.box/logs/post-commit.log 2>&1 & ) >/dev/null 2>&1\n" +
			"exit 0\n",
	}
	dir := filepath.Join(b.git.GitDir(), "hooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", errs.Wrap("box.hooks", errs.Other, err, "cannot make .git/hooks")
	}
	var kept []string
	for _, name := range []string{"pre-commit", "post-commit"} {
		path := filepath.Join(dir, name)
		old, err := os.ReadFile(path)
		if err == nil && !strings.Contains(string(old), hookMark) {
			kept = append(kept, name)
			continue
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", errs.Wrap("box.hooks", errs.Other, err, "cannot read "+path)
		}
		// atomicfile, not the batch writer: `box wire` installs hooks without the write lock, and the
		// batch writer's temp files in .box/tmp are swept by whoever takes the lock next.
		if err := atomicfile.WriteFile(path, []byte(hooks[name]), 0o755); err != nil {
			return "", errs.Wrap("box.hooks", errs.Other, err, "cannot write "+path)
		}
	}
	if len(kept) > 0 {
		return fmt.Sprintf("left the existing git hook(s) %s alone: they are not the box's; add `box validate --pre-commit` to them by hand", strings.Join(kept, ", ")), nil
	}
	return "", nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
