// Package builds owns what is built for the box and installed in it: the registry of builds (pages,
// looks, the layout, connectors) under _config/pages, _config/looks and _config/connectors, their
// versions and who asked for each, the proposals that become approval cards, the gate actions that
// install them, their lifecycle (pending, on, off, broken or failed; undo to an earlier version; remove)
// and safe mode (docs/PAGES.md, "Builds"; docs/CONNECTORS.md, "Installed connectors"). It serves and runs
// nothing: the web UI serves pages and the connectors package runs connectors.
package builds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/page"
	"github.com/boxmem/box/internal/state"
	"github.com/boxmem/box/internal/tabs"
)

// The kinds of build.
const (
	KindPage      = "page"
	KindLook      = "look"
	KindLayout    = "layout"
	KindConnector = "connector"
)

// The statuses of a build.
const (
	StatusPending = "pending" // installed, in the menu, waiting for its first clean load (the heartbeat)
	StatusOn      = "on"
	StatusOff     = "off"    // switched off by the owner
	StatusBroken  = "broken" // a first version that did not load cleanly
	StatusFailed  = "failed" // a connector whose tests failed: off, with its health saying why
)

// The single builds of the look and the layout: each proposal is a new version of one of them.
const (
	LookID   = "look"
	LayoutID = "layout"
)

// FlagSafeMode is the state flag of safe mode: every page, look, layout and connector paused.
const FlagSafeMode = "safe-mode"

// Limits of a page's own data store (docs/PAGES.md, "The bridge's routes").
const (
	MaxDataKey   = 100
	MaxDataBytes = 256 << 10
)

// dirs are where each kind is installed.
var dirs = map[string]string{KindPage: layout.PagesDir, KindLook: layout.LooksDir, KindLayout: layout.LooksDir, KindConnector: layout.Connectors}

// Version is one installed version of a build.
type Version struct {
	N         int           `json:"n"`
	SHA256    string        `json:"sha256"`
	Size      int           `json:"size"`
	Changelog string        `json:"changelog"`       // one line: what this version changed
	Brief     string        `json:"brief,omitempty"` // what the build is for, as the card said
	By        gate.Proposer `json:"by"`              // who asked for it
	Card      string        `json:"card,omitempty"`  // the card the owner approved
	At        time.Time     `json:"at"`
	Failed    bool          `json:"failed,omitempty"` // it did not load cleanly
	Problem   string        `json:"problem,omitempty"`
}

// Build is one entry of the registry, as kept in its build.json.
type Build struct {
	Kind    string   `json:"kind"`
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Emoji   string   `json:"emoji,omitempty"`
	What    string   `json:"what"`
	Own     string   `json:"own,omitempty"`  // a page's own map is moc-<own>; own is its slug
	Read    []string `json:"read,omitempty"` // the other maps a page may read
	Uses    []string `json:"uses,omitempty"` // the connectors a page may call
	Status  string   `json:"status"`
	Version int      `json:"version"` // the version served
	// Previous is the version an update goes back to if it fails its first load; 0 when none.
	Previous int       `json:"previous,omitempty"`
	Versions []Version `json:"versions"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	// Envelope is what a connector's version in use reaches (hosts, keys and their hosts, tools' effects).
	Envelope *connector.Envelope `json:"envelope,omitempty"`
	// Health is the outcome of a connector's last test run.
	Health *Health `json:"health,omitempty"`
}

// Health is the outcome of a connector's last test run: why it failed (empty when it passed), in the
// box's own words only. What the connector itself said or printed, which may hold what it fetched with
// the owner's keys, stays out of the tree and away from assistants (connectors.TestReport).
type Health struct {
	OK      bool      `json:"ok"`
	Why     string    `json:"why,omitempty"`
	Version int       `json:"version"` // the version tested
	Hosts   []string  `json:"hosts"`   // the hosts its tests reached
	At      time.Time `json:"at"`
}

// Address is where a page is served.
func (b Build) Address() string {
	if b.Kind != KindPage {
		return ""
	}
	return "/s/" + b.ID + "/"
}

// Current is the version served.
func (b Build) Current() Version {
	for _, v := range b.Versions {
		if v.N == b.Version {
			return v
		}
	}
	return Version{}
}

// Live reports whether the build is shown: pending or on.
func (b Build) Live() bool { return b.Status == StatusPending || b.Status == StatusOn }

// Builds is the registry of one box.
type Builds struct {
	b     *box.Box
	state *state.Store
	gate  *gate.Gate
	now   func() time.Time
	mu    sync.Mutex // one lifecycle change at a time, so a heartbeat and an error never cross
	// bundles are the connector versions checked so far, by the SHA-256 of their installed bytes: a
	// version's check (an esbuild transform) runs once per process, not on every call and chat turn.
	bundles sync.Map // string → *connector.Bundle
	// runner tests connectors and names what a removed one leaves (RunConnectorsWith); nil: none turns on.
	runner ConnectorRunner
}

// New returns the registry of an open box, with its state store (safe mode) and gate.
func New(b *box.Box, st *state.Store, g *gate.Gate) *Builds {
	return &Builds{b: b, state: st, gate: g, now: b.Now}
}

// Dir is where a build of kind is kept, as a box path.
func Dir(kind, id string) string { return dirs[kind] + "/" + id }

func manifestPath(kind, id string) string { return Dir(kind, id) + "/build.json" }

// fileExt is the extension of a version's file, by kind.
// A connector's version is its bundle: {"manifest": {...}, "files": {...}} (docs/CONNECTORS.md).
var fileExt = map[string]string{KindPage: ".html", KindLook: ".css", KindLayout: ".json", KindConnector: ".json"}

// VersionPath is the file of one version of a build.
func VersionPath(kind, id string, n int) string {
	return fmt.Sprintf("%s/v%d%s", Dir(kind, id), n, fileExt[kind])
}

// DataPath is a page's own JSON store, beside its notes.
func DataPath(slug string) string { return "/_content/pages/" + slug + "/data.json" }

// NotesDir is where a page's notes are kept.
func NotesDir(slug string) string { return "/_content/pages/" + slug }

// TodoList is a page's own to-do list: the only one its bridge reads, adds to and ticks off
// (docs/PAGES.md, "Keep each page to its own"). The owner sees it on their To-do tab like any list.
func TodoList(slug string) string { return "page-" + slug }

// List returns every build, pages first, then looks and the layout (and connectors), each by id.
func (r *Builds) List(ctx context.Context) ([]Build, error) {
	var out []Build
	seen := map[string]bool{}
	for _, kind := range []string{KindPage, KindLook, KindConnector} {
		dir := dirs[kind]
		if seen[dir] {
			continue
		}
		seen[dir] = true
		ents, err := os.ReadDir(filepath.Join(r.b.Root, filepath.FromSlash(dir)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, errs.Wrap("builds.list", errs.Other, err, "The installed builds cannot be read")
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			b, err := r.read(dir + "/" + e.Name() + "/build.json")
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	rank := map[string]int{KindPage: 0, KindLook: 1, KindLayout: 2, KindConnector: 3}
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].Kind] != rank[out[j].Kind] {
			return rank[out[i].Kind] < rank[out[j].Kind]
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func (r *Builds) read(p string) (Build, error) {
	data, err := layout.ReadFile(r.b.Root, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Build{}, err
		}
		return Build{}, errs.Wrap("builds.read", errs.Other, err, "The build "+p+" cannot be read")
	}
	var b Build
	if err := json.Unmarshal(data, &b); err != nil {
		return Build{}, errs.Wrap("builds.read", errs.Invalid, err, "The build record "+p+" cannot be read; fix or remove it")
	}
	return b, nil
}

// Get finds a build by id ("garden") or by kind and id ("page:garden").
func (r *Builds) Get(ctx context.Context, id string) (Build, error) {
	kind, bare, qualified := strings.Cut(id, ":")
	if !qualified {
		bare, kind = id, ""
	}
	all, err := r.List(ctx)
	if err != nil {
		return Build{}, err
	}
	var found []Build
	for _, b := range all {
		if b.ID == bare && (kind == "" || b.Kind == kind) {
			found = append(found, b)
		}
	}
	switch len(found) {
	case 0:
		return Build{}, errs.E("builds.get", errs.NotFound, "There is no build %q; `box builds list` shows them.", page.Clip(id))
	case 1:
		return found[0], nil
	}
	return Build{}, errs.E("builds.get", errs.Invalid, "%q names more than one build; say which, like page:%s.", page.Clip(id), bare)
}

// Page is an installed page by slug.
func (r *Builds) Page(ctx context.Context, slug string) (Build, error) {
	if page.CheckSlug(slug) != nil {
		return Build{}, errs.E("builds.page", errs.NotFound, "There is no page %q.", page.Clip(slug))
	}
	b, err := r.read(manifestPath(KindPage, slug))
	if errors.Is(err, fs.ErrNotExist) {
		return Build{}, errs.E("builds.page", errs.NotFound, "There is no page %q.", slug)
	}
	return b, err
}

// Source is the installed bytes of one version of a build, checked against the SHA-256 it was
// approved with: bytes changed on disk are never served.
func (r *Builds) Source(b Build, n int) ([]byte, error) {
	var v Version
	for _, x := range b.Versions {
		if x.N == n {
			v = x
		}
	}
	if v.N == 0 {
		return nil, errs.E("builds.source", errs.NotFound, "%s has no version %d.", b.Name, n)
	}
	data, err := layout.ReadFile(r.b.Root, VersionPath(b.Kind, b.ID, n))
	if err != nil {
		return nil, errs.Wrap("builds.source", errs.NotFound, err, fmt.Sprintf("Version %d of %s cannot be read", n, b.Name))
	}
	if Sum(data) != v.SHA256 {
		return nil, errs.E("builds.source", errs.Conflict, "Version %d of %s was changed on disk since the owner approved it, so it is not used; undo to another version or send it again.", n, b.Name)
	}
	return data, nil
}

// Sum is the hex SHA-256 of data.
func Sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// InstalledPages are the pages a layout may place (pending or on), slug → name.
func (r *Builds) InstalledPages(ctx context.Context) (tabs.Pages, error) {
	all, err := r.List(ctx)
	if err != nil {
		return nil, err
	}
	out := tabs.Pages{}
	for _, b := range all {
		if b.Kind == KindPage && b.Live() {
			out[b.ID] = b.Name
		}
	}
	return out, nil
}

// SafeMode reports whether safe mode is on; a flag that cannot be read counts as on (paused, never
// running).
func (r *Builds) SafeMode(ctx context.Context) bool {
	on, err := r.state.Flag(ctx, FlagSafeMode)
	return on || err != nil
}

// SetSafeMode turns safe mode on or off, with a diary line. Callers check who may: turning it off in the
// web UI needs the passkey; at the CLI the local owner may.
func (r *Builds) SetSafeMode(ctx context.Context, actor box.Actor, on bool) error {
	if err := r.state.SetFlag(ctx, FlagSafeMode, on); err != nil {
		return err
	}
	summary := "Safe mode on: every page, look, layout and connector is paused"
	if !on {
		summary = "Safe mode off: pages, looks, the layout and connectors are back"
	}
	_, err := r.b.Do(ctx, box.Change{Actor: actor, Op: "safe-mode", Summary: summary, Permanent: true, Switch: gate.Change,
		Apply: func(*box.Tx) error { return nil }})
	return err
}

// Screen is how the owner's UI is arranged now: the layout on, with the pages installed now, or the
// default screen without one and in safe mode.
func (r *Builds) Screen(ctx context.Context) (tabs.Screen, error) {
	if r.SafeMode(ctx) {
		return tabs.Default(), nil
	}
	pages, err := r.InstalledPages(ctx)
	if err != nil {
		return tabs.Screen{}, err
	}
	b, err := r.read(manifestPath(KindLayout, LayoutID))
	if errors.Is(err, fs.ErrNotExist) {
		return tabs.Effective(tabs.Layout{}, pages), nil
	}
	if err != nil || b.Status != StatusOn {
		return tabs.Effective(tabs.Layout{}, pages), nil
	}
	data, err := r.Source(b, b.Version)
	if err != nil {
		return tabs.Effective(tabs.Layout{}, pages), nil
	}
	var l tabs.Layout
	if json.Unmarshal(data, &l) != nil {
		return tabs.Effective(tabs.Layout{}, pages), nil
	}
	return tabs.Effective(l, pages), nil
}

// Look is the look change applied now: its CSS, and the version for caching; "" without one, when it
// is off, and in safe mode.
func (r *Builds) Look(ctx context.Context) (css string, version int) {
	if r.SafeMode(ctx) {
		return "", 0
	}
	b, err := r.read(manifestPath(KindLook, LookID))
	if err != nil || b.Status != StatusOn {
		return "", 0
	}
	data, err := r.Source(b, b.Version)
	if err != nil {
		return "", 0
	}
	return string(data), b.Version
}

func encode(b Build) ([]byte, error) {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, errs.Wrap("builds.write", errs.Other, err, "")
	}
	return append(data, '\n'), nil
}

// change writes one build's new record b (and any files) as one change, if the record on disk is still
// was: another process (the owner's CLI beside box serve) may have changed it since it was read, and
// then nothing is written.
func (r *Builds) change(ctx context.Context, actor box.Actor, op, summary string, was, b Build, files map[string][]byte) error {
	b.Updated = r.now().UTC().Truncate(time.Second)
	data, err := encode(b)
	if err != nil {
		return err
	}
	before, err := encode(was)
	if err != nil {
		return err
	}
	_, err = r.b.Do(ctx, box.Change{Actor: actor, Op: op, Summary: summary, Switch: gate.Change,
		Apply: func(tx *box.Tx) error {
			cur, err := readTx(tx, manifestPath(b.Kind, b.ID))
			if err != nil {
				return err
			}
			if now, err := encode(cur); err != nil || string(now) != string(before) {
				return errs.E("builds.change", errs.Conflict, "%s changed while this was being done; nothing was changed, try again.", describe(b))
			}
			for p, d := range files {
				if err := tx.Write(p, d); err != nil {
					return err
				}
			}
			return tx.Write(manifestPath(b.Kind, b.ID), data)
		}})
	return err
}

// clone is a copy of b that shares no slice with it.
func clone(b Build) Build {
	b.Read, b.Uses, b.Versions = slices.Clone(b.Read), slices.Clone(b.Uses), slices.Clone(b.Versions)
	return b
}
