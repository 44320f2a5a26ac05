package brain_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/apptest"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/providertest"
	"github.com/boxmem/box/internal/usage"
)

var claude = box.Actor{Who: "Claude", Via: "mcp", Host: "claude.ai", Trust: "outside"}

func (f *fx) remember(t *testing.T, who box.Actor, text string, core bool) string {
	t.Helper()
	res, err := f.a.Memory.Remember(context.Background(), who, memory.RememberInput{Text: text, Core: core})
	if err != nil {
		t.Fatalf("remember %q: %v", text, err)
	}
	return res.ID
}

func refusedFor(res memory.TidyResult, id string) string {
	for _, r := range res.Refused {
		if r.Line == id {
			return r.Reason
		}
	}
	return ""
}

// A tidy with a brain: the fast model plans own lines and outside lines in separate requests, with no
// tools; what it plans passes the same CheckPlan as the rules' plan, line by line. A line whose proposal
// is refused (a note that does not exist; an outside line made a core fact; an outside line replacing a
// core fact kept in topic-kept-from-the-router) is filed by the rules; the router's core facts are as
// they were; one tidy commit, its diary line naming the model; the calls on the ledger.
func TestTidyWithABrain(t *testing.T) {
	f := newFx(t)
	ctx := context.Background()
	srv := apptest.Brain(t, f.a, openAIKey)

	// Enough core facts that the router keeps some in topic-kept-from-the-router.
	for i := 0; i < 40; i++ {
		f.remember(t, owner, fmt.Sprintf("The owner's locker number at gym %d is private knowledge.", i+1), true)
	}
	keptPath := layout.NotesDir + "/topic-kept-from-the-router.md"
	kept := f.read(t, keptPath)
	if !strings.Contains(kept, "locker number at gym 1 ") {
		t.Fatalf("the router kept nothing aside:\n%s", kept)
	}

	ana := f.remember(t, owner, "Ana Lopez started a new job at the bakery.", false)
	chess := f.remember(t, owner, "Leo Smith likes chess.", false)
	coreTry := f.remember(t, claude, "The owner lives in Lisbon.", false)
	keptTry := f.remember(t, claude, "The owner's locker number at gym 1 is 99.", false)

	cost := 0.0004
	srv.Push(
		providertest.Reply{Model: "model-b", Text: []string{"```json\n", fmt.Sprintf(`{"lines": [
			{"line": %q, "op": "file", "note": "entity-ana-lopez", "new": [{"kind": "person", "title": "Ana Lopez"}]},
			{"line": %q, "op": "file", "note": "entity-nobody-at-all"}]}`, ana, chess), "\n```"}, InputTokens: 700, OutputTokens: 80, Cost: &cost},
		providertest.Reply{Model: "model-b", Text: []string{fmt.Sprintf(`{"lines": [
			{"line": %q, "op": "core"},
			{"line": %q, "op": "replace", "note": "topic-kept-from-the-router", "old": "The owner's locker number at gym 1 is private knowledge."},
			{"line": %q, "op": "drop", "reason": "small-talk"}]}`, coreTry, keptTry, ana)}, InputTokens: 500, OutputTokens: 60, Cost: &cost},
	)
	before := commits(t, f.a.Root)
	res, err := f.a.Memory.Tidy(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	// Two requests, one per trust, to the fast model, with no tools; the outside lines fenced, the own
	// lines not, and never in the same request.
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	own, outside := fmt.Sprint(reqs[len(reqs)-2]["messages"]), fmt.Sprint(reqs[len(reqs)-1]["messages"])
	for _, r := range reqs[len(reqs)-2:] {
		if r["model"] != "model-b" || r["tools"] != nil {
			t.Fatalf("a tidy request: model %v, tools %v", r["model"], r["tools"])
		}
	}
	if !strings.Contains(own, "Ana Lopez started") || strings.Contains(own, "Lisbon") || strings.Contains(own, "<outside_content>") {
		t.Fatalf("the own batch:\n%s", own)
	}
	if !strings.Contains(outside, "<outside_content>The owner lives in Lisbon.</outside_content>") || strings.Contains(outside, "Ana Lopez") {
		t.Fatalf("the outside batch:\n%s", outside)
	}

	if len(res.Planned) != 1 || res.Planned[0] != ana || res.Brain != "model-b" {
		t.Fatalf("planned: %+v", res)
	}
	if r := refusedFor(res, chess); !strings.Contains(r, "there is no note entity-nobody-at-all") {
		t.Fatalf("the missing note's refusal: %q (%+v)", r, res.Refused)
	}
	if r := refusedFor(res, coreTry); !strings.Contains(r, "never becomes a core fact") {
		t.Fatalf("the outside core fact's refusal: %q", r)
	}
	if r := refusedFor(res, keptTry); !strings.Contains(r, "never touches topic-kept-from-the-router") {
		t.Fatalf("the outside replace of a kept core fact: %q", r)
	}
	// Every line left the inbox: the refused ones by the rules' own filing.
	if inboxLeft(t, f) != 0 {
		t.Fatalf("lines left in the inbox: %+v", res)
	}
	if !strings.Contains(f.read(t, layout.NotesDir+"/entity-ana-lopez.md"), "Ana Lopez started a new job at the bakery.") {
		t.Fatal("the planned line is not in its note")
	}
	if !strings.Contains(f.read(t, layout.NotesDir+"/entity-leo-smith.md"), "Leo Smith likes chess.") {
		t.Fatal("the refused line was not filed by the rules")
	}
	// The core facts are as they were (the router's refit may move some aside, never change one), and
	// neither outside line is among them.
	router, keptNow := f.read(t, layout.Router), f.read(t, keptPath)
	both := coreOf(router) + keptNow
	if n := strings.Count(both, "is private knowledge."); n != 40 || !strings.Contains(both, "locker number at gym 1 is private knowledge.") {
		t.Fatalf("the core facts changed (%d):\n%s\n%s", n, router, keptNow)
	}
	if strings.Contains(both, "is 99") || strings.Contains(coreOf(router), "Lisbon") {
		t.Fatalf("an outside line reached the core facts:\n%s\n%s", router, keptNow)
	}
	// One tidy commit, plus the two batches' ledger commits; the diary names the model.
	if n := commits(t, f.a.Root) - before; n != 3 {
		t.Fatalf("%d commits, want the tidy and two ledger records", n)
	}
	es, _ := f.a.Box.Diary(ctx, 3, nil)
	var tidy string
	for _, e := range es {
		if e.Op == "tidy" {
			tidy = e.Summary
		}
	}
	if !strings.Contains(tidy, "the brain (model-b) planned 1 of 4 lines") {
		t.Fatalf("the tidy's diary line: %q", tidy)
	}
	var lines int
	for _, l := range f.ledger(t) {
		if l.Purpose == "tidy" {
			lines++
		}
	}
	if lines != 2 {
		t.Fatalf("%d tidy lines on the ledger, want 2", lines)
	}
}

// Past the budget the brain is not asked: the rules file everything, and the result says why.
func TestTidyOutOfBudgetIsRulesOnly(t *testing.T) {
	f := newFx(t)
	ctx := context.Background()
	srv := apptest.Brain(t, f.a, openAIKey)
	if _, err := f.b.SetBudget(ctx, owner, 1); err != nil {
		t.Fatal(err)
	}
	apptest.Spend(t, f.a, f.clock.Now(), 3)
	f.remember(t, owner, "Ana Lopez started a new job at the bakery.", false)
	n := len(srv.Requests())
	res, err := f.a.Memory.Tidy(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Requests()) != n || len(res.Planned) != 0 || !strings.Contains(res.Brain, "out of budget") || res.Filed != 1 {
		t.Fatalf("out of budget: %d requests, %+v", len(srv.Requests())-n, res)
	}
}

// A provider failure, or a plan that is not JSON, leaves the filing to the rules; nothing is lost.
func TestTidyPlanFailuresFallBack(t *testing.T) {
	f := newFx(t)
	ctx := context.Background()
	srv := apptest.Brain(t, f.a, openAIKey)
	f.remember(t, owner, "Ana Lopez started a new job at the bakery.", false)
	srv.Push(providertest.Reply{Model: "model-b", Text: []string{"I would file it under Ana."}})
	res, err := f.a.Memory.Tidy(ctx, owner)
	if err != nil || res.Filed != 1 || len(res.Planned) != 0 || !strings.Contains(res.Brain, "could not be read") {
		t.Fatalf("a plan that is not JSON: %+v %v", res, err)
	}
	f.remember(t, owner, "Leo Smith likes chess.", false)
	srv.Push(providertest.Reply{Fail: &providertest.Fail{Status: 503, Type: "server_error", Message: "down"}})
	res, err = f.a.Memory.Tidy(ctx, owner)
	if err != nil || res.Filed != 1 || !strings.Contains(res.Brain, "not answering") {
		t.Fatalf("a provider failure: %+v %v", res, err)
	}
}

// ParseTidyPlan reads the plan a model writes; lines not in the batch, named twice, or with an op it does
// not know are left out (the rules file them).
func TestParseTidyPlan(t *testing.T) {
	batch := memory.Batch{Trust: inbox.Own, Lines: []memory.BatchLine{{ID: "a1", Day: "/_content/inbox/2026-03-05.md"}, {ID: "b2", Day: "/_content/inbox/2026-03-05.md"}}}
	acts, err := brain.ParseTidyPlan([]byte("Here:\n```json\n"+`{"lines":[
		{"line":"a1","op":"file","new":[{"kind":"person","title":"Ana Lopez"}]},
		{"line":"a1","op":"drop","reason":"greeting"},
		{"line":"zz","op":"file","note":"entity-x"},
		{"line":"b2","op":"delete-everything"}]}`+"\n```"), batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 2 || acts[0].Op != memory.ActCreate || acts[0].Note != "entity-ana-lopez" || acts[1].Note != "entity-ana-lopez" || acts[1].Day != batch.Lines[0].Day {
		t.Fatalf("actions: %+v", acts)
	}
	for _, bad := range []string{"", "no json here", `{"lines": "nope"}`} {
		if _, err := brain.ParseTidyPlan([]byte(bad), batch); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzParseTidyPlan: no model's answer panics the plan reader, and every action it returns names a line
// of the batch (or is a stub) with a known op.
func FuzzParseTidyPlan(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/tidyplan/*.txt")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	batch := memory.Batch{Trust: inbox.Outside, Lines: []memory.BatchLine{{ID: "a1", Day: "/_content/inbox/2026-03-05.md"}, {ID: "b2", Day: "/_content/inbox/2026-03-05.md"}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		acts, err := brain.ParseTidyPlan(data, batch)
		if err != nil {
			return
		}
		for _, a := range acts {
			switch a.Op {
			case memory.ActCreate:
			case memory.ActFile, memory.ActReplace, memory.ActDrop, memory.ActCore, memory.ActCaution:
				if a.Line != "a1" && a.Line != "b2" {
					t.Fatalf("an action for a line outside the batch: %+v", a)
				}
			default:
				t.Fatalf("an unknown op: %+v", a)
			}
		}
	})
}

func inboxLeft(t *testing.T, f *fx) int {
	t.Helper()
	sum, err := f.a.Memory.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sum.Inbox
}

// coreOf is the router's Core facts section.
func coreOf(router string) string {
	_, s, _ := strings.Cut(router, "## Core facts")
	s, _, _ = strings.Cut(s, "## ")
	return s
}

// One ledger line the box cannot read (hand-edited, or a newer box's extra field) never stops the tidy:
// a damaged line is left out of the totals and the brain is asked; a ledger that cannot be read at all
// leaves the filing to the rules, with the reason in the result.
func TestTidyIsNeverBlockedByTheLedger(t *testing.T) {
	f := newFx(t)
	ctx := context.Background()
	srv := providertest.OpenAI(t, openAIKey)
	f.set(t, brain.SetInput{Provider: "openai", BaseURL: srv.URL, Model: "model-a", FastModel: "model-b", Key: openAIKey})
	ledger := filepath.Join(f.a.Root, filepath.FromSlash(strings.TrimPrefix(usage.Path(f.clock.Now()), "/")))
	if err := os.MkdirAll(filepath.Dir(ledger), 0o755); err != nil {
		t.Fatal(err)
	}
	good := `{"time":"` + f.clock.Now().Format(time.RFC3339) + `","turn":"t","provider":"openai","model":"m","tokensIn":1,"tokensOut":1,"cost":0,"costFrom":"unknown","newField":1}`
	if err := os.WriteFile(ledger, []byte(good+"\n{\"time\": broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.remember(t, owner, "Ana Lopez started a new job at the bakery.", false)
	srv.Push(providertest.Reply{Model: "model-b", Text: []string{"I would file it under Ana."}})
	n := len(srv.Requests())
	res, err := f.a.Memory.Tidy(ctx, owner)
	if err != nil || res.Filed != 1 || len(srv.Requests()) != n+1 {
		t.Fatalf("a damaged ledger line: %d requests, %+v %v", len(srv.Requests())-n, res, err)
	}
	if err := os.Remove(ledger); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ledger, 0o755); err != nil { // a folder where the ledger file should be
		t.Fatal(err)
	}
	f.remember(t, owner, "Leo Smith likes chess.", false)
	res, err = f.a.Memory.Tidy(ctx, owner)
	if err != nil || res.Filed != 1 || !strings.Contains(res.Brain, "not asked") || !strings.Contains(res.Brain, "ledger") {
		t.Fatalf("a ledger that cannot be read: %+v %v", res, err)
	}
}
