package route_test

import (
	"strings"
	"testing"

	"github.com/boxmem/box/internal/route"
	"github.com/boxmem/box/internal/usage"
)

var (
	models  = route.Models{Main: "claude-sonnet-4-5", Fast: "claude-haiku-4-5"}
	open    = usage.Verdict{Standing: usage.Open}
	stepped = usage.Verdict{Standing: usage.FastOnly, Sentence: "This month's brain budget of $20.00 is used up ($20.50 spent), so the fast model answers until 1 April; raise the budget in Settings → Brain."}
	stopped = usage.Verdict{Standing: usage.Stopped, Sentence: "The brain is out of budget for March ($23.00 spent of $20.00) and thinks again on 1 April; raise the budget in Settings → Brain to go on now."}
)

func TestCareful(t *testing.T) {
	cases := []struct {
		msg    string
		reason string
	}{
		{"What's on my list today?", ""},
		{"When does Leo swim?", ""},
		{"remember that Ana likes tulips", ""},
		{"Should I refinance the mortgage now?", "money"},
		{"Is it worth moving €5,000 into savings?", "money"},
		{"Can I afford a $1200 bike this month", "money"},
		{"My doctor changed Leo's medication, what should I watch for?", "health"},
		{"Leo has a fever of 39", "health"},
		{"Help me plan the trip to Lisbon in May", "plans"},
		{"Help me decide between the two schools", "plans"},
		{"Write a letter to the landlord about the heating", "a letter"},
		{"Can you draft my resignation?", "a letter"},
		{"Read the lease and tell me if I can sublet", "legal"},
		{"Think it through carefully: which one?", "asked for care"},
		{"The planet Mars is red", ""}, // "plan" is a whole word, not a prefix
		{"Santé: le médecin a dit que la DIAGNOSIS est bonne", "health"},
		{strings.Repeat("We talked about the garden and the fence. ", 15), "long message"},
		{"a\nb\nc\nd\ne\nf\ng\nh", "long message"},
	}
	for _, c := range cases {
		reason, ok := route.Careful(c.msg)
		if reason != c.reason || ok != (c.reason != "") {
			t.Errorf("%q: %q %v, want %q", c.msg, reason, ok, c.reason)
		}
	}
}

func TestPick(t *testing.T) {
	cases := []struct {
		name    string
		msg     string
		models  route.Models
		verdict usage.Verdict
		want    route.Start
	}{
		{"everyday goes to the fast one with think_harder", "When does Leo swim?", models, open,
			route.Start{Tier: route.Fast, Model: "claude-haiku-4-5", Reason: "everyday", ThinkHarder: true}},
		{"careful goes to the main one", "Should I refinance the mortgage?", models, open,
			route.Start{Tier: route.Main, Model: "claude-sonnet-4-5", Reason: "money"}},
		{"one model takes everything", "When does Leo swim?", route.Models{Main: "gpt-4o"}, open,
			route.Start{Tier: route.Main, Model: "gpt-4o", Reason: "one model"}},
		{"fast equal to main is one model", "Should I refinance?", route.Models{Main: "m", Fast: "m"}, open,
			route.Start{Tier: route.Main, Model: "m", Reason: "one model"}},
		{"at 100% careful steps down too", "Should I refinance the mortgage?", models, stepped,
			route.Start{Tier: route.Fast, Model: "claude-haiku-4-5", Reason: "budget", Sentence: stepped.Sentence}},
		{"stopped calls no model", "When does Leo swim?", models, stopped,
			route.Start{Stopped: true, Reason: "budget", Sentence: stopped.Sentence}},
	}
	for _, c := range cases {
		if got := route.Pick(c.msg, c.models, c.verdict); got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

// TestOnThinkHarder: a turn restarts on the main model only when nothing ran; once a tool ran it goes
// on, with its results, on the main model; it declines on the main model or when the budget stepped down.
func TestOnThinkHarder(t *testing.T) {
	cases := []struct {
		name   string
		turn   route.Turn
		models route.Models
		want   route.Action
		model  string
	}{
		{"fresh fast turn restarts", route.Turn{Tier: route.Fast, Budget: open}, models, route.Restart, "claude-sonnet-4-5"},
		{"after a tool ran it continues", route.Turn{Tier: route.Fast, ToolsRan: true, Budget: open}, models, route.Continue, "claude-sonnet-4-5"},
		{"already main", route.Turn{Tier: route.Main, Budget: open}, models, route.Decline, ""},
		{"budget stepped down", route.Turn{Tier: route.Fast, Budget: stepped}, models, route.Decline, ""},
		{"one model", route.Turn{Tier: route.Main, Budget: open}, route.Models{Main: "m"}, route.Decline, ""},
	}
	for _, c := range cases {
		h := route.OnThinkHarder(c.turn, c.models)
		if h.Action != c.want || h.Model != c.model || (h.Action == route.Decline) != (h.Answer != "") {
			t.Errorf("%s: %+v, want %s on %q", c.name, h, c.want, c.model)
		}
	}
}

func TestThinkHarderTool(t *testing.T) {
	if route.ThinkHarderTool.Name != route.ThinkHarder || !strings.Contains(string(route.ThinkHarderTool.Schema), `"type":"object"`) {
		t.Errorf("tool %+v", route.ThinkHarderTool)
	}
}
