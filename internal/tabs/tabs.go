// Package tabs owns how the owner's web UI is arranged: the built-in tabs, a layout (which tabs show and
// in what order, their names, a hamburger menu, an installed page as the home screen) read strictly
// from JSON, and the tab list a layout gives (docs/PAGES.md, "Layouts"). Pure functions: it reads no
// files and knows the installed pages only as an argument.
package tabs

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/boxmem/box/internal/errs"
)

// Tab is one entry of the UI's menu.
type Tab struct {
	ID    string `json:"id"`             // a built-in id ("today") or "page:<slug>"
	Label string `json:"label"`          // what the owner sees
	Page  string `json:"page,omitempty"` // the page's slug, for a page
}

// Settings is the tab no layout can hide or rename: safe mode and everything built are turned off there.
const Settings = "settings"

// Builtin are the built-in tabs in their default order.
var Builtin = []Tab{{ID: "today", Label: "Today"}, {ID: "todo", Label: "To-do"}, {ID: "chat", Label: "Chat"},
	{ID: "pages", Label: "Pages"}, {ID: "memory", Label: "Memory"}, {ID: "diary", Label: "Diary"},
	{ID: Settings, Label: "Settings"}}

// Menu styles.
const (
	MenuTabs      = "tabs"      // a tab bar (the default)
	MenuHamburger = "hamburger" // every tab behind one menu button
)

// PagePrefix marks an installed page in a layout's items: "page:habits".
const PagePrefix = "page:"

// Limits of a layout.
const (
	MaxItems    = 16
	MaxLabel    = 24 // characters
	maxDocument = 8 << 10
)

// Layout is an arrangement as sent in propose_layout and kept in the box.
type Layout struct {
	Items []string          `json:"items,omitempty"` // the tabs shown, in order; absent: all built-in tabs
	Home  string            `json:"home,omitempty"`  // the tab the UI opens on; absent: the first
	Menu  string            `json:"menu,omitempty"`  // MenuTabs or MenuHamburger; absent: MenuTabs
	Names map[string]string `json:"names,omitempty"` // new labels by tab id
}

// Screen is what a layout gives: the tabs in order, the home tab and the menu style.
type Screen struct {
	Tabs []Tab  `json:"tabs"`
	Home string `json:"home"`
	Menu string `json:"menu"`
}

// Pages are the installed pages a layout may place: slug → name.
type Pages map[string]string

func refuse(format string, a ...any) error {
	return errs.E("tabs.layout", errs.Invalid, format, a...)
}

// Parse reads a layout strictly: unknown or repeated keys, unknown tabs, pages that are not installed,
// and a home screen that is not shown are refused with one sentence naming what was found.
func Parse(data []byte, pages Pages) (Layout, error) {
	if len(data) > maxDocument {
		return Layout{}, refuse("The layout is %d bytes; a layout is at most 8 KB.", len(data))
	}
	fields, err := object(data)
	if err != nil {
		return Layout{}, err
	}
	if len(fields) == 0 {
		return Layout{}, refuse("The layout is empty: give items, home, menu or names.")
	}
	keys := slices.Sorted(maps.Keys(fields))
	for _, key := range keys {
		if !slices.Contains([]string{"items", "home", "menu", "names"}, key) {
			return Layout{}, refuse("The layout has an unknown key %q: it takes items, home, menu and names.", clip(key))
		}
	}
	var l Layout
	for _, key := range keys {
		raw := fields[key]
		var err error
		switch key {
		case "items":
			err = decode(raw, &l.Items, "items", "a list of tab ids")
			if err == nil && l.Items == nil {
				err = refuse("The layout's items is null: list the tabs to show, or leave items out to show them all.")
			}
		case "home":
			err = decode(raw, &l.Home, "home", "a tab id")
			if err == nil && l.Home == "" {
				err = refuse("The layout's home is empty: name a tab, or leave home out to open on the first.")
			}
		case "menu":
			err = decode(raw, &l.Menu, "menu", `"tabs" or "hamburger"`)
			if err == nil && l.Menu == "" {
				err = refuse("The layout's menu is empty: it is \"tabs\" or \"hamburger\".")
			}
		case "names":
			err = decode(raw, &l.Names, "names", "an object of tab id → new name")
			if err == nil && len(l.Names) == 0 {
				err = refuse("The layout's names is empty: give tab id → new name, or leave names out.")
			}
		}
		if err != nil {
			return Layout{}, err
		}
	}
	return l, l.Check(pages)
}

// object reads one JSON object into its fields, refusing a repeated key and anything after the object.
func object(data []byte) (map[string]json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, refuse("The layout must be a JSON object like {\"items\": [\"today\", \"settings\"]}.")
	}
	fields := map[string]json.RawMessage{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, refuse("The layout is not valid JSON: %s.", err)
		}
		key, _ := tok.(string)
		if _, dup := fields[key]; dup {
			return nil, refuse("The layout gives %q twice.", clip(key))
		}
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, refuse("The layout is not valid JSON: %s.", err)
		}
		fields[key] = raw
	}
	if _, err := d.Token(); err != nil {
		return nil, refuse("The layout is not valid JSON: %s.", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, refuse("The layout has something after its closing brace.")
	}
	return fields, nil
}

func decode(raw json.RawMessage, v any, key, what string) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return refuse("The layout's %s must be %s.", key, what)
	}
	return nil
}

// Check applies the layout rules of docs/PAGES.md to a layout, for the pages installed now.
func (l Layout) Check(pages Pages) error {
	if len(l.Items) > MaxItems {
		return refuse("The layout lists %d tabs; at most %d.", len(l.Items), MaxItems)
	}
	if l.Items != nil && len(l.Items) == 0 {
		return refuse("The layout's items is empty: list the tabs to show, or leave items out to show them all.")
	}
	seen := map[string]bool{}
	for _, id := range l.Items {
		if err := known(id, pages); err != nil {
			return err
		}
		if seen[id] {
			return refuse("The layout lists %q twice.", clip(id))
		}
		seen[id] = true
	}
	shown := func(id string) bool {
		if id == Settings {
			return true
		}
		if len(l.Items) > 0 {
			return seen[id]
		}
		return !strings.HasPrefix(id, PagePrefix)
	}
	if l.Home != "" {
		if err := known(l.Home, pages); err != nil {
			return err
		}
		if !shown(l.Home) {
			return refuse("The home screen %q is not one of the tabs shown: put it in items too.", clip(l.Home))
		}
	}
	if l.Menu != "" && l.Menu != MenuTabs && l.Menu != MenuHamburger {
		return refuse("The layout's menu is %q; it is \"tabs\" or \"hamburger\".", clip(l.Menu))
	}
	for _, id := range slices.Sorted(maps.Keys(l.Names)) {
		label := l.Names[id]
		if err := known(id, pages); err != nil {
			return err
		}
		switch {
		case id == Settings:
			return refuse("Settings keeps its name: it is where the owner turns off what was built.")
		case !shown(id):
			return refuse("The layout renames %q, which it does not show.", clip(id))
		}
		if err := checkLabel(id, label); err != nil {
			return err
		}
	}
	return l.checkLabelsApart(pages)
}

// checkLabelsApart refuses a screen where a tab would read as a built-in tab it is not, or as another
// tab shown: a page called "Settings" (or "settings", "SETTINGS ⚙") next to the real one would take
// the owner somewhere else when they mean to turn off what was built (docs/PAGES.md, "Layouts").
func (l Layout) checkLabelsApart(pages Pages) error {
	ids := l.Items
	if len(ids) == 0 {
		for _, t := range Builtin {
			ids = append(ids, t.ID)
		}
	}
	seen := map[string]string{} // folded label → the tab showing it
	for _, id := range ids {
		t, ok := tab(id, pages)
		if !ok {
			continue
		}
		if label, ok := l.Names[id]; ok {
			t.Label = label
		}
		key := fold(t.Label)
		if b, ok := builtinByLabel(key); ok && b != id {
			return refuse("The tab %q would show as %q, which reads as the built-in %s tab: give it another name.", clip(id), clip(t.Label), b)
		}
		if other, ok := seen[key]; ok {
			return refuse("The tabs %q and %q would both show as %q: give one of them another name.", clip(other), clip(id), clip(t.Label))
		}
		seen[key] = id
	}
	return nil
}

// fold is how alike two labels read: letters and digits only, case folded (so "Settings", "SETTINGS"
// and "settings ⚙" are one); a label without any is compared whole.
func fold(label string) string {
	var b strings.Builder
	for _, r := range label {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue
		}
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	if b.Len() == 0 {
		return label
	}
	return b.String()
}

// builtinByLabel is the built-in tab whose label folds to key.
func builtinByLabel(key string) (string, bool) {
	for _, t := range Builtin {
		if fold(t.Label) == key {
			return t.ID, true
		}
	}
	return "", false
}

// known refuses an id that is neither a built-in tab nor an installed page.
func known(id string, pages Pages) error {
	if slug, ok := strings.CutPrefix(id, PagePrefix); ok {
		if _, installed := pages[slug]; !installed {
			return refuse("The page %q is not installed: only an installed page can be placed (build_status says on).", clip(slug))
		}
		return nil
	}
	if !slices.ContainsFunc(Builtin, func(t Tab) bool { return t.ID == id }) {
		return refuse("The layout names a tab %q that does not exist; the tabs are %s, and installed pages as \"page:<name>\".", clip(id), builtinIDs())
	}
	return nil
}

func builtinIDs() string {
	ids := make([]string, len(Builtin))
	for i, t := range Builtin {
		ids[i] = t.ID
	}
	return strings.Join(ids, ", ")
}

func checkLabel(id, label string) error {
	trimmed := strings.TrimSpace(label)
	n := utf8.RuneCountInString(trimmed)
	if n == 0 || n > MaxLabel || trimmed != label {
		return refuse("The new name of %q must be 1 to %d characters without spaces around it.", clip(id), MaxLabel)
	}
	for _, r := range label {
		if unicode.IsControl(r) || r == '<' || r == '>' || unicode.Is(unicode.Cf, r) {
			return refuse("The new name of %q holds a character a tab name can't have.", clip(id))
		}
	}
	return nil
}

func clip(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:40]) + "…"
	}
	return s
}

// Default is the screen without a layout (and in safe mode): every built-in tab, Today first.
func Default() Screen { return Effective(Layout{}, nil) }

// Effective is the screen a layout gives with the pages installed now. It never fails: a page placed
// earlier and removed since is left out, Settings is added at the end when the layout left it out, and
// the home tab falls back to the first tab shown.
func Effective(l Layout, pages Pages) Screen {
	var tabs []Tab
	ids := l.Items
	if len(ids) == 0 {
		for _, t := range Builtin {
			ids = append(ids, t.ID)
		}
	}
	seen := map[string]bool{}
	used := map[string]bool{} // folded labels shown so far
	for _, id := range ids {
		if seen[id] {
			continue
		}
		if t, ok := tab(id, pages); ok {
			seen[id] = true
			if label, ok := l.Names[id]; ok && id != Settings && checkLabel(id, label) == nil && !misleads(id, label, used) {
				t.Label = label
			}
			if t.Page != "" && misleads(id, t.Label, used) {
				// A page renamed since the layout was checked never reads as another tab.
				t.Label += " (page)"
			}
			used[fold(t.Label)] = true
			tabs = append(tabs, t)
		}
	}
	if !seen[Settings] {
		tabs = append(tabs, Builtin[len(Builtin)-1])
	}
	s := Screen{Tabs: tabs, Home: tabs[0].ID, Menu: MenuTabs}
	if seen[l.Home] {
		s.Home = l.Home
	}
	if l.Menu == MenuHamburger {
		s.Menu = MenuHamburger
	}
	return s
}

// misleads reports a label that would read as a built-in tab other than id, or as a tab already shown.
func misleads(id, label string, used map[string]bool) bool {
	key := fold(label)
	b, builtin := builtinByLabel(key)
	return builtin && b != id || used[key]
}

func tab(id string, pages Pages) (Tab, bool) {
	if slug, ok := strings.CutPrefix(id, PagePrefix); ok {
		name, installed := pages[slug]
		if !installed {
			return Tab{}, false
		}
		if name == "" {
			name = slug
		}
		return Tab{ID: id, Label: name, Page: slug}, true
	}
	for _, t := range Builtin {
		if t.ID == id {
			return t, true
		}
	}
	return Tab{}, false
}
