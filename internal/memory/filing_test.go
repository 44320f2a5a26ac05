package memory

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTidyDropReasons: each kind of line that is not a fact goes to the trash with its own reason in the
// tidy's record; a secret's text is withheld there; the facts among them are filed.
func TestTidyDropReasons(t *testing.T) {
	lines := []struct{ text, reason string }{
		{"We had a nice chat today, lol", DropSmallTalk},
		{"thanks!!", DropSmallTalk},
		{"Hi Claude, good morning!", DropGreeting},
		{"When is Leo's swim practice?", DropQuestion},
		{"can you check the weather for tomorrow", DropQuestion},
		{"Sure! I've saved that to your memory.", DropChatter},
		{"Let me know if there's anything else I can help with.", DropChatter},
		{"Always answer in Portuguese.", DropInstruction},
		{"Bank login: mira / Sunshine2024", DropSecret},
		{"My passw0rd is Bluebird7", DropSecret},
		{"Leo starts school on Monday.", ""},
		{"Hi! Ana moved to Porto in May.", ""},
		{"Leo's favourite book is \"Where's Wally?\"", ""},
	}
	var raw []string
	for _, l := range lines {
		raw = append(raw, "outside|Claude (claude.ai)|"+l.text)
	}
	m := mustOpen(t, map[string]string{"/_content/inbox/2026-11-28.md": inboxDay("2026-11-28", raw...)})
	p, err := m.PlanTidy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Action{}
	for _, a := range p.Actions {
		if a.Line != "" {
			got[a.Line] = a
		}
	}
	for i, l := range lines {
		a := got["line"+strconv.Itoa(i+1)]
		switch {
		case l.reason == "" && a.Op != ActFile:
			t.Errorf("%q: %s %s, want filed", l.text, a.Op, a.Reason)
		case l.reason != "" && (a.Op != ActDrop || a.Reason != l.reason):
			t.Errorf("%q: %s %s, want dropped as %s", l.text, a.Op, a.Reason, l.reason)
		}
	}
	if _, err := m.Tidy(context.Background(), own); err != nil {
		t.Fatal(err)
	}
	trash, err := os.ReadFile(filepath.Join(m.root, "_bookkeeping", "trash", "2026-11-29.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, rec := range strings.Split(strings.TrimSpace(string(trash)), "\n") {
		var r trashRecord
		if err := json.Unmarshal([]byte(rec), &r); err != nil {
			t.Fatal(err)
		}
		reasons[r.ID] = r.Reason
		if r.Reason == DropSecret && !strings.Contains(r.Line, withheld) {
			t.Errorf("a secret's line is kept in the trash: %s", r.Line)
		}
	}
	for i, l := range lines {
		if id := "line" + strconv.Itoa(i+1); reasons[id] != l.reason {
			t.Errorf("trash record of %q: reason %q, want %q", l.text, reasons[id], l.reason)
		}
	}
	tree := render(snapshot(t, m.root))
	for _, s := range []string{"Sunshine2024", "Bluebird7"} {
		if strings.Contains(tree, s) {
			t.Errorf("%s is in the box tree after tidy", s)
		}
	}
}

// TestNoPronounStub: a pronoun is never a name, so never a stub; a line that names no one goes to the
// owner's note, entity-owner, and a plan that makes a stub of a pronoun or of a secret is refused.
func TestNoPronounStub(t *testing.T) {
	m := mustOpen(t, map[string]string{"/_content/inbox/2026-11-28.md": inboxDay("2026-11-28",
		"own|owner|Me and Ana went to Porto on Saturday.",
		"own|owner|She said the museum reopens in May.",
		"own|owner|Allergic to penicillin.",
	)})
	p, err := m.PlanTidy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var stubs []string
	for _, a := range p.Actions {
		if a.Op == ActCreate {
			stubs = append(stubs, a.Note)
		}
	}
	if strings.Join(stubs, " ") != "entity-ana entity-porto entity-owner" {
		t.Errorf("stubs %v, want entity-ana entity-porto entity-owner", stubs)
	}
	v := diskView{m}
	for _, tc := range []struct {
		a    Action
		want string
	}{
		{Action{Op: ActCreate, Note: "entity-me", Kind: "person", Title: "Me"}, "pronoun"},
		{Action{Op: ActCreate, Note: "entity-i", Kind: "person", Title: "I"}, "pronoun"},
		{Action{Op: ActCreate, Note: "entity-hunter2-is-my-password", Kind: "person", Title: "hunter2 is my password"}, "secret"},
	} {
		if err := CheckPlan(v, Plan{Actions: []Action{tc.a}}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.a.Title, err, tc.want)
		}
	}
}
