package todo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
)

func TestParse(t *testing.T) {
	l := Parse("family", []byte("---\ntitle: \"Family things\"\n---\nSome prose.\n- [ ] Book the dentist ^t-aaaa\n- [x] Call Leo ^t-bbbb\n  * [X] nested no id\n- not an item\n"))
	if l.Title != "Family things" || l.Path != "/_content/todos/family.todo.card" {
		t.Fatalf("%+v", l)
	}
	want := []Item{{"t-aaaa", "Book the dentist", false, "family"}, {"t-bbbb", "Call Leo", true, "family"}, {"", "nested no id", true, "family"}}
	if len(l.Items) != len(want) {
		t.Fatalf("%+v", l.Items)
	}
	for i := range want {
		if l.Items[i] != want[i] {
			t.Errorf("item %d: %+v, want %+v", i, l.Items[i], want[i])
		}
	}
}

func TestTickChangesOneByte(t *testing.T) {
	in := "---\ntitle: To-do\n---\n- [ ] a ^t-1\n- [ ] b ^t-2   \nend"
	out, ok := tick([]byte(in), "t-2")
	if !ok || string(out) != strings.Replace(in, "- [ ] b", "- [x] b", 1) {
		t.Fatalf("%v %q", ok, out)
	}
	if _, ok := tick([]byte(in), "t-3"); ok {
		t.Fatal("ticked a missing id")
	}
}

func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		l := Parse("x", []byte(s))
		for _, it := range l.Items {
			if it.ID == "" {
				continue
			}
			out, ok := tick([]byte(s), it.ID)
			if !ok || len(out) != len(s) {
				t.Fatalf("tick %q in %q: %v %q", it.ID, s, ok, out)
			}
		}
	})
}

func TestAddAndDoneThroughTheBox(t *testing.T) {
	ctx := context.Background()
	b, err := box.Init(ctx, t.TempDir(), box.InitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := New(b)
	a := box.Actor{Who: "Claude", Via: "mcp", Trust: "outside"}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Add(ctx, a, "", "item "+string(rune('a'+i))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	lists, err := s.Lists(ctx)
	if err != nil || len(lists) != 1 || len(lists[0].Items) != 8 || lists[0].Title != "To-do" {
		t.Fatalf("%+v %v", lists, err)
	}
	first := lists[0].Items[0]
	if it, err := s.Done(ctx, a, first.ID); err != nil || !it.Done {
		t.Fatalf("%+v %v", it, err)
	}
	if it, err := s.Done(ctx, a, lists[0].Items[1].Text); err != nil || !it.Done {
		t.Fatalf("done by text: %+v %v", it, err)
	}
	data, _ := os.ReadFile(filepath.Join(b.Root, "_content", "todos", "todo.todo.card"))
	if strings.Count(string(data), "- [x]") != 2 {
		t.Fatalf("%s", data)
	}
	for _, tc := range []struct {
		list, text string
		kind       errs.Kind
	}{
		{"", "", errs.Invalid},
		{"", strings.Repeat("x", MaxText+1), errs.Invalid},
		{"../etc", "x", errs.Invalid},
		{"", "my password is hunter22", errs.Refused},
	} {
		if _, err := s.Add(ctx, a, tc.list, tc.text); !errs.Is(err, tc.kind) {
			t.Errorf("Add(%q, %.20q): %v, want %v", tc.list, tc.text, err, tc.kind)
		}
	}
	if _, err := s.Done(ctx, a, "t-nothere"); !errs.Is(err, errs.NotFound) {
		t.Errorf("Done missing: %v", err)
	}
}
