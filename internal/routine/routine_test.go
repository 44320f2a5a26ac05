package routine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/apptest"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/brain"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/passkeytest"
	"github.com/boxmem/box/internal/providertest"
	"github.com/boxmem/box/internal/routine"
	"github.com/boxmem/box/internal/usage"
)

const key = "sk-test-ROUTINE-KEY-5c2e8a1f"

var owner = box.Actor{Who: "owner", Via: "cli", Trust: "own"}

// loc is the owner's zone in these tests: not UTC, not the machine's.
var loc = time.FixedZone("owner", -5*3600)

// at is a local instant on Thursday 5 March 2026 (or another day of that week).
func at(day, hh, mm int) time.Time { return time.Date(2026, 3, day, hh, mm, 0, 0, loc) }

type fx struct {
	a     *app.App
	r     *routine.Service
	clock *passkeytest.Clock
	srv   *providertest.Server
}

func newFx(t *testing.T, withBrain bool) *fx {
	t.Helper()
	c := passkeytest.ClockAt(at(5, 6, 0))
	a := apptest.Open(t, app.Options{Now: c.Now})
	f := &fx{a: a, r: a.Routines, clock: c}
	if withBrain {
		f.srv = apptest.Brain(t, a, key)
	}
	return f
}

func (f *fx) add(t *testing.T, r routine.Routine) {
	t.Helper()
	if _, err := f.r.Add(context.Background(), owner, r); err != nil {
		t.Fatalf("add %s: %v", r.Name, err)
	}
}

func (f *fx) exists(p string) bool {
	_, err := layout.Stat(f.a.Root, p)
	return err == nil
}

func names(rs []routine.Routine) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return strings.Join(out, ",")
}

// A routine round-trips through its file; bad fields are refused with a sentence naming the field and
// the file, and nothing is written.
func TestFileFormat(t *testing.T) {
	r := routine.Routine{Name: "weekly", At: "18:30", Days: []string{"fri", "mon"}, Prompt: "  What is open this week?  ", On: true}
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.Days, ",") != "mon,fri" || r.Prompt != "What is open this week?" {
		t.Fatalf("check did not put days in order or trim: %+v", r)
	}
	data := r.Format()
	want := "---\nat: \"18:30\"\ndays: [mon, fri]\non: true\n---\nWhat is open this week?\n"
	if string(data) != want {
		t.Fatalf("format:\n%s", data)
	}
	back, err := routine.Parse("weekly", data)
	if err != nil || back.When() != "18:30 on mon, fri" || !back.On || back.Prompt != r.Prompt {
		t.Fatalf("parse: %+v %v", back, err)
	}
	bad := map[string]string{
		"no frontmatter":   "Just a prompt\n",
		"an unknown field": "---\nat: \"07:00\"\nevery: day\n---\nx\n",
		"an hour past 23":  "---\nat: \"24:00\"\n---\nx\n",
		"a bare number":    "---\nat: 0700\n---\nx\n",
		"a day that isn't": "---\nat: \"07:00\"\ndays: [mon, funday]\n---\nx\n",
		"a day twice":      "---\nat: \"07:00\"\ndays: [mon, mon]\n---\nx\n",
		"on not a bool":    "---\nat: \"07:00\"\non: yes please\n---\nx\n",
		"no prompt":        "---\nat: \"07:00\"\n---\n\n",
		"a type":           "---\ntype: note\nat: \"07:00\"\n---\nx\n",
	}
	for what, data := range bad {
		_, err := routine.Parse("r", []byte(data))
		if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "/_config/routines/r.md") && !strings.Contains(errs.Sentence(err), "r.md") {
			t.Errorf("%s: %v", what, err)
		}
	}
	if _, err := routine.Parse("Bad Name", []byte(want)); !errs.Is(err, errs.Invalid) {
		t.Errorf("a bad name: %v", err)
	}
	every := routine.Routine{Name: "x", At: "07:00", Days: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, Prompt: "p"}
	if err := every.Check(); err != nil || !every.EveryDay() || strings.Contains(string(every.Format()), "days") {
		t.Fatalf("all seven days are every day: %+v %v", every, err)
	}
}

// Add, list, on/off and remove write the routine's file through the box; a taken name is refused and
// nothing changes; a broken file is listed with its problem and never due.
func TestAddListRemove(t *testing.T) {
	f := newFx(t, false)
	ctx := context.Background()
	f.add(t, routine.Routine{Name: "evening", At: "21:00", Prompt: "What did I do today?", On: true})
	f.add(t, routine.MorningPaper)
	if _, err := f.r.Add(ctx, owner, routine.Routine{Name: "evening", At: "20:00", Prompt: "again"}); !errs.Is(err, errs.Exists) {
		t.Fatalf("a taken name: %v", err)
	}
	if _, err := f.r.Add(ctx, owner, routine.Routine{Name: "x", At: "7am", Prompt: "p"}); !errs.Is(err, errs.Invalid) || !strings.Contains(errs.Sentence(err), "HH:MM") {
		t.Fatalf("a bad time: %v", err)
	}
	list, err := f.r.List(ctx)
	if err != nil || names(list) != "morning-paper,evening" || list[0].On {
		t.Fatalf("list: %+v %v", list, err)
	}
	if r, err := f.r.SetOn(ctx, owner, "morning-paper", true); err != nil || !r.On {
		t.Fatalf("on: %+v %v", r, err)
	}
	if err := os.WriteFile(filepath.Join(f.a.Root, "_config/routines/broken.md"), []byte("---\nat: noon\n---\nx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err = f.r.List(ctx)
	if err != nil || len(list) != 3 {
		t.Fatalf("list with a broken file: %+v %v", list, err)
	}
	for _, r := range list {
		if r.Name == "broken" && !strings.Contains(r.Problem, "HH:MM") {
			t.Fatalf("the broken routine's problem: %+v", r)
		}
	}
	f.clock.Set(at(5, 7, 0))
	if due, err := f.r.Due(context.Background(), f.clock.Now()); err != nil || names(due) != "morning-paper" {
		t.Fatalf("due at 07:00: %+v %v", due, err)
	}
	if err := f.r.Remove(ctx, owner, "evening"); err != nil {
		t.Fatal(err)
	}
	if err := f.r.Remove(ctx, owner, "evening"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("removing twice: %v", err)
	}
	if f.exists(routine.Path("evening")) {
		t.Fatal("the routine's file is still there")
	}
}

// The schedule: a routine is due from its time for Late, on its days only, never when off, and a slot
// that ran is not due again, however often the runner asks. A slot missed by more than Late is skipped.
func TestDueAndRunDueNeverTwice(t *testing.T) {
	f := newFx(t, true)
	ctx := context.Background()
	f.add(t, routine.Routine{Name: "paper", At: "07:00", Prompt: "Today's paper.", On: true})
	f.add(t, routine.Routine{Name: "weekends", At: "07:00", Days: []string{"sat", "sun"}, Prompt: "Weekend.", On: true})
	f.add(t, routine.Routine{Name: "off", At: "07:00", Prompt: "Never.", On: false})

	for _, c := range []struct {
		now  time.Time
		want string
	}{
		{at(5, 6, 59), ""},              // before its time
		{at(5, 7, 0), "paper"},          // Thursday: not the weekend one, never the one that is off
		{at(5, 9, 59), "paper"},         // late, within Late
		{at(5, 10, 0), ""},              // missed by Late: skipped
		{at(7, 8, 0), "paper,weekends"}, // Saturday
	} {
		due, err := f.r.Due(context.Background(), c.now)
		if err != nil || names(due) != c.want {
			t.Errorf("due at %s: %q %v, want %q", c.now.Format("Mon 15:04"), names(due), err, c.want)
		}
	}

	f.clock.Set(at(5, 8, 30))
	f.srv.Push(providertest.Reply{Model: "model-b", Text: []string{"# Thursday\n", "Nothing is waiting."}, InputTokens: 500, OutputTokens: 12})
	reps, err := f.r.RunDue(ctx, f.clock.Now())
	if err != nil || len(reps) != 1 || reps[0].Routine != "paper" || reps[0].Scheduled != "07:00" {
		t.Fatalf("run due: %+v %v", reps, err)
	}
	n := len(f.srv.Requests())
	for _, now := range []time.Time{at(5, 8, 31), at(5, 9, 0), at(5, 9, 59)} {
		if reps, err := f.r.RunDue(ctx, now); err != nil || len(reps) != 0 {
			t.Fatalf("ran again at %s: %+v %v", now.Format("15:04"), reps, err)
		}
	}
	if len(f.srv.Requests()) != n {
		t.Fatal("the model was called again for a slot that ran")
	}
	if !f.exists(routine.ReportsDir + "/2026-03-05/paper.md") {
		t.Fatal("the scheduled report is not under the day's folder")
	}
	// A run now is its own report and does not use up tomorrow's slot, nor is today's slot run again.
	f.srv.Push(providertest.Reply{Model: "model-b", Text: []string{"Again, by hand."}})
	if rep, err := f.r.Run(ctx, "off"); err != nil || !strings.HasSuffix(rep.Path, "off-now-0830.md") {
		t.Fatalf("run now of a routine that is off: %+v %v", rep, err)
	}
	f.clock.Set(at(6, 7, 5))
	if due, _ := f.r.Due(context.Background(), f.clock.Now()); names(due) != "paper" {
		t.Fatalf("Friday's slot: %q", names(due))
	}
}

// A routine reads with the read-only tools only: its model is offered no remember, forget or to-do
// change, and a call to one is answered with an error while nothing is written. The report goes to the
// day's reports (Today) and the diary with its cost, in one commit with its usage lines, and never into
// the memory: a search does not find it.
func TestRunIsReadOnlyAndReportsToToday(t *testing.T) {
	f := newFx(t, true)
	ctx := context.Background()
	if _, err := f.a.Memory.Remember(ctx, owner, memory.RememberInput{Text: "Leo has swim practice on Thursdays."}); err != nil {
		t.Fatal(err)
	}
	f.add(t, routine.Routine{Name: "paper", At: "07:00", Prompt: "What is on today?", On: true})
	cost := 0.0021
	f.srv.Push(
		providertest.Reply{Model: "model-b", Calls: []providertest.Call{
			{ID: "c1", Name: "memory_search", Args: []string{`{"words":"Thursdays"}`}},
			{ID: "c2", Name: "memory_remember", Args: []string{`{"text":"The owner reads the paper at seven."}`}},
		}, InputTokens: 800, OutputTokens: 30},
		providertest.Reply{Model: "model-b", Text: []string{"Leo swims today (Thursday). Zebrafinch."}, InputTokens: 900, OutputTokens: 10, Cost: &cost},
	)
	rep, err := f.r.Run(ctx, "paper")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Text != "Leo swims today (Thursday). Zebrafinch." || rep.Calls != 2 || rep.Model != "model-b" {
		t.Fatalf("report: %+v", rep)
	}
	// The tools offered: exactly the read-only ones.
	req := f.srv.Requests()[0]
	var offered []string
	for _, tl := range req["tools"].([]any) {
		offered = append(offered, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	for _, name := range offered {
		if name != "think_harder" && !contains(brain.ReadOnly, name) {
			t.Errorf("a routine was offered %s", name)
		}
	}
	if len(offered) < len(brain.ReadOnly) {
		t.Errorf("offered %v, want the read-only tools %v", offered, brain.ReadOnly)
	}
	// The remember call was refused, and nothing reached the memory.
	second := f.srv.Requests()[1]["messages"].([]any)
	refused := false
	for _, m := range second {
		mm := m.(map[string]any)
		if mm["role"] == "tool" && mm["tool_call_id"] == "c2" && strings.Contains(mm["content"].(string), "no tool") {
			refused = true
		}
	}
	if !refused {
		t.Fatalf("the remember call was not answered with an error: %v", second)
	}
	if res, err := f.a.Memory.Search(ctx, memory.SearchInput{Words: "paper seven"}); err != nil || len(res.Hits) != 0 {
		t.Fatalf("the model's remember reached the memory: %+v %v", res.Hits, err)
	}
	if res, err := f.a.Memory.Search(ctx, memory.SearchInput{Words: "Zebrafinch"}); err != nil || len(res.Hits) != 0 {
		t.Fatalf("the report is in the memory: %+v %v", res.Hits, err)
	}
	// Today's reports and the diary.
	reps, err := f.r.Reports(ctx, f.clock.Now())
	if err != nil || len(reps) != 1 || reps[0].Text != rep.Text || reps[0].Calls != 2 || reps[0].Path != rep.Path {
		t.Fatalf("today's reports: %+v %v", reps, err)
	}
	es, err := f.a.Box.Diary(ctx, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if es[0].Op != "routine-report" || !strings.Contains(es[0].Summary, "routine paper reported (model-b, 2 calls") || !strings.Contains(es[0].Summary, "Zebrafinch") {
		t.Fatalf("the diary: %+v", es[0])
	}
	// Its usage lines are on the ledger, purpose routine, in the report's own commit.
	data, err := layout.ReadFile(f.a.Root, usage.Path(f.clock.Now()))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := usage.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var mine int
	for _, l := range lines {
		if l.Purpose == "routine" {
			mine++
		}
	}
	if mine != 2 {
		t.Fatalf("%d routine lines on the ledger, want 2", mine)
	}
	if !contains(es[0].Paths, usage.Path(f.clock.Now())) || !contains(es[0].Paths, rep.Path) {
		t.Fatalf("the report and its usage are not one change: %v", es[0].Paths)
	}
}

// Without a brain a run now says so (NotFound) and writes nothing, and the runner runs nothing.
func TestWithoutABrain(t *testing.T) {
	f := newFx(t, false)
	ctx := context.Background()
	f.add(t, routine.Routine{Name: "paper", At: "07:00", Prompt: "Today.", On: true})
	before, _ := f.a.Box.Diary(ctx, 100, nil)
	if _, err := f.r.Run(ctx, "paper"); !errs.Is(err, errs.NotFound) || !strings.Contains(errs.Sentence(err), "No brain") {
		t.Fatalf("run without a brain: %v", err)
	}
	if reps, err := f.r.RunDue(ctx, at(5, 7, 30)); err != nil || len(reps) != 0 {
		t.Fatalf("run due without a brain: %+v %v", reps, err)
	}
	if after, _ := f.a.Box.Diary(ctx, 100, nil); len(after) != len(before) {
		t.Fatal("a run without a brain wrote something")
	}
}

// Out of budget: the routine calls nothing; its report says why, and the slot counts as run.
func TestOutOfBudget(t *testing.T) {
	f := newFx(t, true)
	ctx := context.Background()
	if _, err := f.a.Brain.SetBudget(ctx, owner, 1); err != nil {
		t.Fatal(err)
	}
	apptest.Spend(t, f.a, f.clock.Now(), 5)
	f.add(t, routine.Routine{Name: "paper", At: "07:00", Prompt: "Today.", On: true})
	n := len(f.srv.Requests())
	reps, err := f.r.RunDue(ctx, at(5, 7, 10))
	if err != nil || len(reps) != 1 || !reps[0].Stopped || !strings.Contains(reps[0].Text, "out of budget") {
		t.Fatalf("out of budget: %+v %v", reps, err)
	}
	if len(f.srv.Requests()) != n {
		t.Fatal("a model was called past the budget")
	}
}

// A provider failure is the report's sentence, in the diary as the reason; the slot is not retried.
func TestProviderFailure(t *testing.T) {
	f := newFx(t, true)
	ctx := context.Background()
	f.add(t, routine.Routine{Name: "paper", At: "07:00", Prompt: "Today.", On: true})
	f.srv.Push(providertest.Reply{Fail: &providertest.Fail{Status: 503, Type: "server_error", Message: "overloaded"}})
	reps, err := f.r.RunDue(ctx, at(5, 7, 10))
	if err != nil || len(reps) != 1 || !strings.Contains(reps[0].Failed, "not answering") {
		t.Fatalf("a failure: %+v %v", reps, err)
	}
	if due, _ := f.r.Due(context.Background(), at(5, 7, 20)); len(due) != 0 {
		t.Fatalf("a failed slot is due again: %v", names(due))
	}
	es, _ := f.a.Box.Diary(ctx, 1, nil)
	if !strings.Contains(es[0].Summary, "routine paper failed") || es[0].Reason == "" {
		t.Fatalf("the diary: %+v", es[0])
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// A frozen box runs no routine: the runner calls no model and writes nothing; a run now is refused.
func TestFrozenBoxRunsNothing(t *testing.T) {
	f := newFx(t, true)
	ctx := context.Background()
	f.add(t, routine.Routine{Name: "paper", At: "07:00", Prompt: "Today.", On: true})
	if err := f.a.State.SetFrozen(ctx, true); err != nil {
		t.Fatal(err)
	}
	n := len(f.srv.Requests())
	if reps, err := f.r.RunDue(ctx, at(5, 7, 10)); err != nil || len(reps) != 0 {
		t.Fatalf("a frozen box ran: %+v %v", reps, err)
	}
	if _, err := f.r.Run(ctx, "paper"); !errs.Is(err, errs.Frozen) {
		t.Fatalf("run now in a frozen box: %v", err)
	}
	if len(f.srv.Requests()) != n {
		t.Fatal("a frozen box called the model")
	}
	if due, _ := f.r.Due(context.Background(), at(5, 7, 20)); len(due) != 1 {
		t.Fatal("the slot was used up while frozen")
	}
}

// A routine the box cannot run for a lasting reason (here the month's usage ledger cannot be read) is
// reported as failed and its slot is marked: it is not due again, so the runner does not commit a
// failure every pass for the whole Late window (docs/ROUTINES.md: only a busy box is tried again).
func TestALastingFailureMarksTheSlot(t *testing.T) {
	f := newFx(t, true)
	ctx := context.Background()
	f.add(t, routine.Routine{Name: "paper", At: "07:00", Prompt: "Today.", On: true})
	f.clock.Set(at(5, 7, 10))
	ledger := filepath.Join(f.a.Root, filepath.FromSlash(strings.TrimPrefix(usage.Path(f.clock.Now()), "/")))
	if err := os.MkdirAll(ledger, 0o755); err != nil { // a folder where the ledger file should be
		t.Fatal(err)
	}
	n := len(f.srv.Requests())
	reps, err := f.r.RunDue(ctx, f.clock.Now())
	if err != nil || len(reps) != 1 || !strings.Contains(reps[0].Failed, "could not run it") || !strings.Contains(reps[0].Failed, "ledger") {
		t.Fatalf("a lasting failure: %+v %v", reps, err)
	}
	if !f.exists(routine.ReportsDir + "/2026-03-05/paper.md") {
		t.Fatal("the failure did not mark the slot")
	}
	if due, err := f.r.Due(context.Background(), at(5, 7, 11)); err != nil || len(due) != 0 {
		t.Fatalf("the failed slot is due again: %q %v", names(due), err)
	}
	if len(f.srv.Requests()) != n {
		t.Fatal("a model was called")
	}
}

// A late-evening slot missed until after midnight is still run within Late, once, under its own day.
func TestALateEveningSlotRunsAfterMidnight(t *testing.T) {
	f := newFx(t, true)
	ctx := context.Background()
	f.add(t, routine.Routine{Name: "evening", At: "22:30", Prompt: "The day.", On: true})
	f.add(t, routine.Routine{Name: "thursdays", At: "23:00", Days: []string{"thu"}, Prompt: "Thursday.", On: true})
	// Friday 00:30: Thursday's 22:30 and 23:00 are 2 h and 1.5 h late, within Late.
	now := at(6, 0, 30)
	if due, err := f.r.Due(context.Background(), now); err != nil || names(due) != "evening,thursdays" {
		t.Fatalf("due after midnight: %q %v", names(due), err)
	}
	f.clock.Set(now)
	f.srv.Push(providertest.Reply{Model: "model-b", Text: []string{"Evening."}})
	f.srv.Push(providertest.Reply{Model: "model-b", Text: []string{"Thursday."}})
	reps, err := f.r.RunDue(ctx, now)
	if err != nil || len(reps) != 2 {
		t.Fatalf("run due: %+v %v", reps, err)
	}
	if !f.exists(routine.ReportsDir+"/2026-03-05/evening.md") || !f.exists(routine.ReportsDir+"/2026-03-05/thursdays.md") {
		t.Fatal("the reports are not under the slot's own day")
	}
	if due, _ := f.r.Due(context.Background(), at(6, 1, 0)); len(due) != 0 {
		t.Fatalf("due again: %q", names(due))
	}
	if due, _ := f.r.Due(context.Background(), at(6, 1, 31)); len(due) != 0 { // 3 h past 22:30: out of Late anyway
		t.Fatalf("due past Late: %q", names(due))
	}
}

// Due reads the box under the caller's context: the scheduler's, so a box serve that stops is not held
// by a due check.
func TestDueStopsWithItsContext(t *testing.T) {
	f := newFx(t, false)
	f.add(t, routine.Routine{Name: "paper", At: "07:00", Prompt: "Today.", On: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.r.Due(ctx, at(5, 7, 10)); err == nil {
		t.Fatal("a due check went on after its context ended")
	}
}
