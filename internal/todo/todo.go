// Package todo owns the to-do lists in _content/todos/*.todo.card: reading them, adding an item, ticking one off.
// It writes only those files and only through the box write transaction; it never touches memory or the index.
package todo

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/card"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/secret"
)

// Dir is where the lists live, as a box path.
const Dir = "/_content/todos"

// DefaultList is the list an item goes to when none is named.
const DefaultList = "todo"

// MaxText is the longest item, in bytes.
const MaxText = 500

// Item is one line of a list: `- [ ] text ^id`.
type Item struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	Done bool   `json:"done"`
	List string `json:"list"`
}

// List is one *.todo.card file.
type List struct {
	Name  string `json:"name"` // the file name without .todo.card
	Title string `json:"title"`
	Path  string `json:"path"` // a box path
	Items []Item `json:"items"`
}

// Store reads the lists of one box and writes them through its transaction.
type Store struct{ b *box.Box }

// New returns the to-do lists of an open box.
func New(b *box.Box) *Store { return &Store{b: b} }

// Select is what an assistant's todos_list shows (MCP and the box's chat): the list named name (every list
// when it is ""), with its open items, and the done ones too when includeDone is set.
func Select(lists []List, name string, includeDone bool) []List {
	out := []List{}
	for _, l := range lists {
		if name != "" && l.Name != name {
			continue
		}
		items := []Item{}
		for _, it := range l.Items {
			if includeDone || !it.Done {
				items = append(items, it)
			}
		}
		l.Items = items
		out = append(out, l)
	}
	return out
}

// Fenced is lists as a model reads them: a to-do keeps no author, and assistants and pages add them (and
// lists, with their titles), so every title and item is others' words, each put through fence (the
// memory's <outside_content> fence; docs/SECURITY.md). lists is changed in place and returned.
func Fenced(lists []List, fence func(string) string) []List {
	for i := range lists {
		lists[i].Title = fence(lists[i].Title)
		for j := range lists[i].Items {
			lists[i].Items[j].Text = fence(lists[i].Items[j].Text)
		}
	}
	return lists
}

// Lists returns every list with its items, in name order.
func (s *Store) Lists(ctx context.Context) ([]List, error) {
	dir := filepath.Join(s.b.Root, filepath.FromSlash(Dir))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []List{}, nil
	}
	if err != nil {
		return nil, errs.Wrap("todo.lists", errs.Other, err, "")
	}
	lists := []List{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".todo.card")
		if !ok || e.IsDir() {
			continue
		}
		data, err := layout.ReadFile(s.b.Root, Dir+"/"+e.Name())
		if layout.Skipped(err) {
			continue // a list linked in from outside the box is not the box's
		}
		if err != nil {
			return nil, errs.Wrap("todo.lists", errs.Other, err, "")
		}
		lists = append(lists, Parse(name, data))
	}
	sort.Slice(lists, func(i, j int) bool { return lists[i].Name < lists[j].Name })
	return lists, nil
}

// Add puts an item at the end of a list (DefaultList when empty), making the list if needed.
func (s *Store) Add(ctx context.Context, a box.Actor, list, text string) (Item, error) {
	list, text, err := checkAdd(list, text)
	if err != nil {
		return Item{}, err
	}
	it := Item{ID: newID(), Text: text, List: list}
	if _, err := s.b.Do(ctx, addChange(a, it)); err != nil {
		return Item{}, errs.Wrap("todo.add", errs.KindOf(err), err, "")
	}
	return it, nil
}

// checkAdd cleans an item's text and list name, or says in one sentence why it cannot be added.
func checkAdd(list, text string) (string, string, error) {
	const op = "todo.add"
	text = strings.Join(strings.Fields(text), " ")
	switch {
	case text == "":
		return "", "", errs.E(op, errs.Invalid, "A to-do needs some text")
	case len(text) > MaxText:
		return "", "", errs.E(op, errs.Invalid, "A to-do is at most %d characters; say it shorter", MaxText)
	}
	if reason, found := secret.Secret(text); found {
		return "", "", errs.E(op, errs.Refused, "%s", reason)
	}
	if list == "" {
		list = DefaultList
	}
	if !validName.MatchString(list) {
		return "", "", errs.E(op, errs.Invalid, "A list name is lower-case letters, digits and dashes, like %q", DefaultList)
	}
	return list, text, nil
}

// addChange appends it to its list, as a.
func addChange(a box.Actor, it Item) box.Change {
	p := path.Join(Dir, it.List+".todo.card")
	return box.Change{Actor: a, Op: "todo-add", Summary: "Added a to-do: " + it.Text, Switch: "change",
		Apply: func(tx *box.Tx) error {
			data, err := tx.Read(p)
			if errors.Is(err, fs.ErrNotExist) {
				data, err = []byte("---\ntitle: "+title(it.List)+"\n---\n"), nil
			}
			if err != nil {
				return err
			}
			if len(data) > 0 && data[len(data)-1] != '\n' {
				data = append(data, '\n')
			}
			return tx.Write(p, append(data, "- [ ] "+it.Text+" ^"+it.ID+"\n"...))
		}}
}

// Find is the item with the given id, or else the one open item whose text is exactly ref.
func (s *Store) Find(ctx context.Context, ref string) (Item, error) {
	lists, err := s.Lists(ctx)
	if err != nil {
		return Item{}, err
	}
	return find(lists, strings.TrimPrefix(strings.TrimSpace(ref), "^"))
}

// Done ticks off the item with the given id, or else the one open item whose text is exactly ref.
func (s *Store) Done(ctx context.Context, a box.Actor, ref string) (Item, error) {
	it, err := s.Find(ctx, ref)
	if err != nil {
		return Item{}, err
	}
	if it.Done {
		return it, nil
	}
	if _, err := s.b.Do(ctx, doneChange(a, it)); err != nil {
		return Item{}, errs.Wrap("todo.done", errs.KindOf(err), err, "")
	}
	it.Done = true
	return it, nil
}

// doneChange ticks off it, as a.
func doneChange(a box.Actor, it Item) box.Change {
	p := path.Join(Dir, it.List+".todo.card")
	return box.Change{Actor: a, Op: "todo-done", Summary: "Ticked off a to-do: " + it.Text, Switch: "change",
		Apply: func(tx *box.Tx) error {
			data, err := tx.Read(p)
			if err != nil {
				return err
			}
			out, ok := tick(data, it.ID)
			if !ok {
				return errs.E("todo.done", errs.Conflict, "The to-do %q changed while ticking it off; list them again", it.Text)
			}
			return tx.Write(p, out)
		}}
}

// FindIn is Find among lists alone (a page's own list): an item elsewhere is not found.
func FindIn(lists []List, ref string) (Item, error) {
	return find(lists, strings.TrimPrefix(strings.TrimSpace(ref), "^"))
}

func find(lists []List, ref string) (Item, error) {
	var byText []Item
	for _, l := range lists {
		for _, it := range l.Items {
			if it.ID != "" && it.ID == ref {
				return it, nil
			}
			if !it.Done && strings.EqualFold(it.Text, ref) {
				byText = append(byText, it)
			}
		}
	}
	switch len(byText) {
	case 1:
		if byText[0].ID != "" {
			return byText[0], nil
		}
	case 0:
		return Item{}, errs.E("todo.done", errs.NotFound, "There is no to-do %q; the list of to-dos shows each one with its id (box todo list, or todos_list over MCP)", ref)
	}
	return Item{}, errs.E("todo.done", errs.Conflict, "More than one to-do reads %q; tick it off by its id from todos_list", ref)
}

var (
	itemLine  = lazyregexp.New(`^\s*[-*] \[([ xX])\] (.*?)(?:\s+\^([a-z0-9-]+))?\s*$`)
	titleLine = lazyregexp.New(`(?m)^title:\s*(.+?)\s*$`)
	validName = lazyregexp.New(`^[a-z0-9][a-z0-9-]{0,63}$`)
)

// Parse reads one list file. Lines that are not items are kept in the file and ignored here.
func Parse(name string, data []byte) List {
	l := List{Name: name, Title: title(name), Path: path.Join(Dir, name+".todo.card"), Items: []Item{}}
	fm, rest, ok := card.Split(data)
	body := string(rest)
	if ok {
		if m := titleLine.FindStringSubmatch(string(fm)); m != nil {
			l.Title = strings.Trim(m[1], `"'`)
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if m := itemLine.FindStringSubmatch(line); m != nil {
			l.Items = append(l.Items, Item{ID: m[3], Text: m[2], Done: m[1] != " ", List: name})
		}
	}
	return l
}

// tick changes `- [ ]` to `- [x]` on the line carrying ^id, leaving every other byte alone.
func tick(data []byte, id string) ([]byte, bool) {
	lines := strings.SplitAfter(string(data), "\n")
	for i, line := range lines {
		m := itemLine.FindStringSubmatchIndex(strings.TrimRight(line, "\n"))
		if m == nil || m[6] < 0 || line[m[6]:m[7]] != id {
			continue
		}
		lines[i] = line[:m[2]] + "x" + line[m[3]:]
		return []byte(strings.Join(lines, "")), true
	}
	return data, false
}

func title(name string) string {
	if name == DefaultList {
		return "To-do"
	}
	t := strings.ReplaceAll(name, "-", " ")
	return strings.ToUpper(t[:1]) + t[1:]
}

func newID() string {
	b := make([]byte, 5)
	rand.Read(b)
	return "t-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}
