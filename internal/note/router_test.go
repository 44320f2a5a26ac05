package note

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestRouterSkeleton(t *testing.T) {
	r, err := ParseRouter([]byte(RouterSkeleton))
	if err != nil {
		t.Fatal(err)
	}
	if r.Waiting != 0 || len(r.CoreFacts)+len(r.Maps)+len(r.Cautions) != 0 {
		t.Errorf("skeleton parsed as %+v", r)
	}
	if !bytes.Equal(r.Render(), []byte(RouterSkeleton)) {
		t.Error("skeleton does not round-trip")
	}
	golden(t, "router-skeleton.md", []byte(RouterSkeleton))
	// Setting the same content again gives the skeleton back: the builder and the skeleton agree.
	r.SetWaiting(0)
	if got := r.Render(); !bytes.Equal(got, []byte(RouterSkeleton)) {
		t.Errorf("rebuilt skeleton differs:\n%s", got)
	}
}

func TestGoldenRouter(t *testing.T) {
	r, _ := ParseRouter([]byte(RouterSkeleton))
	r.SetCoreFacts([]Fact{{"Lives in Lisbon.", ""}, {"Married to Ana Maria since 2015.", "k3f9a2qd"}})
	r.SetMaps([]MapLink{{"moc-people", "People", 12}, {"moc-home", "Home", 1}})
	r.SetCautions([]string{"Leo is allergic to peanuts."})
	r.SetWaiting(12)
	out := r.Render()
	golden(t, "router.md", out)
	back, err := ParseRouter(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.CoreFacts, r.CoreFacts) || !reflect.DeepEqual(back.Maps, r.Maps) ||
		!reflect.DeepEqual(back.Cautions, r.Cautions) || back.Waiting != 12 {
		t.Errorf("parsed back %+v", back)
	}
	r.SetWaiting(1)
	if !strings.Contains(string(r.Render()), "\nInbox: 1 line waiting\n") {
		t.Error("one line is not singular")
	}
}

func TestRouterFits(t *testing.T) {
	r, _ := ParseRouter([]byte(RouterSkeleton))
	var core []Fact
	var maps []MapLink
	var cautions []string
	for i := range 20 {
		core = append(core, Fact{Text: fmt.Sprintf("Core fact %d.", i)})
		maps = append(maps, MapLink{fmt.Sprintf("moc-m%d", i), fmt.Sprintf("M%d", i), 20 - i})
		cautions = append(cautions, fmt.Sprintf("Caution %d.", i))
	}
	r.SetCoreFacts(core)
	r.SetMaps(maps)
	r.SetCautions(cautions)
	r.SetWaiting(3)
	out := r.Render()
	golden(t, "router-condensed.md", out)
	if n := strings.Count(string(out), "\n"); n > MaxRouterLines {
		t.Errorf("router has %d lines", n)
	}
	back, _ := ParseRouter(out)
	kept := len(back.CoreFacts) + len(back.Cautions)
	if kept+len(r.Dropped)+len(r.DroppedCautions) != 40 {
		t.Errorf("kept %d and dropped %d + %d of 40 core facts and cautions", kept, len(r.Dropped), len(r.DroppedCautions))
	}
	if len(back.Cautions) != 20 || len(r.DroppedCautions) != 0 {
		t.Errorf("live cautions left the router for older core facts: %d shown, %d dropped", len(back.Cautions), len(r.DroppedCautions))
	}
	if back.CoreFacts[len(back.CoreFacts)-1].Text != "Core fact 19." {
		t.Error("the newest core fact was dropped")
	}
	if back.Waiting != 3 {
		t.Error("the inbox count was lost")
	}
}

func TestHandEditedRouter(t *testing.T) {
	data, err := os.ReadFile("testdata/router-hand-edited.md")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRouter(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Render(), data) {
		t.Fatal("hand-edited router does not round-trip")
	}
	r.SetWaiting(5)
	added, removed := diffLines(data, r.Render())
	if !reflect.DeepEqual(added, []string{"Inbox: 5 lines waiting"}) || !reflect.DeepEqual(removed, []string{"Nothing waiting."}) {
		t.Errorf("SetWaiting changed %q → %q", removed, added)
	}
}

func TestWaitingLineOnEverySurface(t *testing.T) {
	for n, want := range map[int]string{0: "Inbox: nothing waiting", 1: "Inbox: 1 line waiting", 12: "Inbox: 12 lines waiting"} {
		if got := WaitingLine(n); got != want {
			t.Errorf("%d: %q", n, got)
		}
		for _, data := range []string{RouterSkeleton, strings.Replace(RouterSkeleton, "Inbox: nothing waiting", "7 lines waiting.", 1)} {
			out := WithWaiting([]byte(data), n)
			r, err := ParseRouter(out)
			if err != nil || r.Waiting != n || strings.Count(string(out), "waiting") != 1 {
				t.Errorf("%d: %v\n%s", n, err, out)
			}
			if added, removed := diffLines([]byte(data), out); len(added) > 1 || len(removed) > 1 {
				t.Errorf("WithWaiting changed more than the line: %q → %q", removed, added)
			}
		}
	}
	// a hand-made router with no Inbox section gets the line at its end
	if out := string(WithWaiting([]byte("# Memory\n- a note\n"), 2)); out != "# Memory\n- a note\nInbox: 2 lines waiting\n" {
		t.Errorf("no section: %q", out)
	}
}

func TestCautionLine(t *testing.T) {
	line := CautionLine("Leo's school is closed for works", "2026-12-24")
	if line != "Leo's school is closed for works (until 2026-12-24)" {
		t.Fatal(line)
	}
	if text, until := ParseCaution(line); text != "Leo's school is closed for works" || until != "2026-12-24" {
		t.Errorf("%q %q", text, until)
	}
	if text, until := ParseCaution("Leo is allergic to peanuts."); text != "Leo is allergic to peanuts." || until != "" {
		t.Errorf("no end: %q %q", text, until)
	}
}

func FuzzParseRouter(f *testing.F) {
	f.Add([]byte(RouterSkeleton))
	for _, name := range []string{"testdata/router.md", "testdata/router-condensed.md", "testdata/router-hand-edited.md"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRouter(data)
		if err != nil {
			return
		}
		if !bytes.Equal(r.Render(), data) {
			t.Fatalf("round trip failed for %q", data)
		}
		r.SetWaiting(7)
		out := r.Render()
		back, err := ParseRouter(out)
		if err != nil {
			t.Fatalf("rebuilt router does not parse: %v\n%q", err, out)
		}
		if back.Waiting != 7 && !strings.Contains(string(data), "\n## Inbox") {
			t.Fatalf("the inbox count did not stick:\n%q", out)
		}
	})
}
