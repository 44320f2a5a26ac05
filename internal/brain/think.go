package brain

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/route"
	"github.com/boxmem/box/internal/usage"
)

// Tool is one tool a turn offers its model: its definition and how the box runs it.
type Tool struct {
	provider.Tool
	Run func(ctx context.Context, input json.RawMessage) Outcome
}

// Outcome is what running a tool gave: the text the model reads, whether it failed, whether it brought
// outside content into the turn, and whether it changed anything (a turn whose tools changed the box is
// never restarted).
type Outcome struct {
	Text    string
	IsError bool
	Outside bool
	Changed bool
	Card    string // the id of an approval card it made
}

// Job is one model turn for any caller: the chat, and later the tidy planner and routines. The brain
// routes it (the owner's message decides fast or main, unless Tier is set), checks the budget before
// every call, runs the tools the model calls and keeps one usage line per call.
type Job struct {
	Turn    string // the turn's id, for the ledger
	Purpose string // chat, tidy, routine
	// Message is the owner's words, for routing; Tier, when set, skips routing and think_harder (a tidy asks the fast model).
	Message string
	Tier    route.Tier
	// System is the system prompt for the model that answers (the chat names the exact model id in it).
	System   func(model string) string
	Messages []provider.Message
	Tools    []Tool
	// MaxSteps bounds the calls of one turn; 0 is 8.
	MaxSteps  int
	MaxTokens int
}

// Event is one piece of a turn as it streams: text as it arrives, a tool being called, the turn
// starting over on the main model (the text so far is dropped), or a note from the box (the budget).
type Event struct {
	Type string `json:"type"` // text, tool, restart, note
	Text string `json:"text,omitempty"`
	Tool string `json:"tool,omitempty"`
}

// Thought is what a job's turn gave.
type Thought struct {
	Text     string        `json:"text"`
	Model    string        `json:"model,omitempty"` // the model that gave the last answer, as the provider named it
	Tier     route.Tier    `json:"tier,omitempty"`
	Reason   string        `json:"reason,omitempty"` // why the turn started where it did
	Lines    []usage.Line  `json:"-"`                // one per provider call
	Tools    []ToolRun     `json:"tools,omitempty"`
	Changed  bool          `json:"-"` // a tool changed the box
	Outside  bool          `json:"outsideRead,omitempty"`
	Cards    []string      `json:"cards,omitempty"`
	Budget   string        `json:"budget,omitempty"` // the budget's sentence, when it stepped down or stopped
	Stopped  bool          `json:"-"`                // the budget allowed no call
	Failure  string        `json:"failed,omitempty"` // one plain sentence when the provider failed
	Provider provider.Stop `json:"-"`
}

// ToolRun is one tool call as the owner may see it.
type ToolRun struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Text  string `json:"text"`
	Input string `json:"input,omitempty"`
}

const defaultMaxSteps = 8

// Think runs one turn of a job on the brain the owner set. A provider failure ends the turn with its
// sentence in Thought.Failure (and the error); the turn is never retried, and a turn whose tools
// already ran is never restarted (docs/BRAIN.md, "One turn").
func (b *Brain) Think(ctx context.Context, job Job, emit func(Event)) (Thought, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	// A frozen or locked box talks to no one, its brain's provider included, whatever asked
	// (docs/GATE.md, "Freeze and lock").
	if err := b.cfg.State.Quiet(ctx); err != nil {
		return Thought{}, err
	}
	s, err := b.Settings()
	if err != nil {
		return Thought{}, err
	}
	p, err := b.open(s, nil)
	if err != nil {
		return Thought{}, err
	}
	now := b.cfg.Now()
	lines, err := b.ledger(now)
	if err != nil {
		return Thought{}, err
	}
	spent := usage.Total(billed(lines), now).Cost
	models := route.Models{Main: s.Model, Fast: s.FastModel}
	start := route.Pick(job.Message, models, b.verdict(s, spent, now))
	if job.Tier == route.Fast && !start.Stopped && start.Tier == route.Main && models.HasFast() {
		start = route.Start{Tier: route.Fast, Model: models.Fast, Reason: job.Purpose}
	}
	if job.Tier != "" {
		start.ThinkHarder = false // a job that fixed its tier is not offered think_harder
	}
	th := Thought{Tier: start.Tier, Reason: start.Reason, Budget: start.Sentence}
	if start.Stopped {
		th.Stopped, th.Text = true, start.Sentence
		return th, nil
	}
	if start.Sentence != "" {
		emit(Event{Type: "note", Text: start.Sentence})
	}
	t := &turn{b: b, job: job, p: p, s: s, models: models, model: start.Model, tier: start.Tier, spent: spent,
		thinkHarder: start.ThinkHarder, emit: emit, th: &th}
	err = t.run(ctx) // before th is read: the run writes it
	return th, err
}

// turn is one job's turn in progress.
type turn struct {
	b           *Brain
	job         Job
	p           provider.Provider
	s           Settings
	models      route.Models
	model       string
	tier        route.Tier
	spent       float64 // this month before the turn
	thinkHarder bool
	emit        func(Event)
	th          *Thought
}

func (t *turn) run(ctx context.Context) error {
	steps := t.job.MaxSteps
	if steps <= 0 {
		steps = defaultMaxSteps
	}
	msgs := append([]provider.Message(nil), t.job.Messages...)
	byName := map[string]Tool{}
	for _, tl := range t.job.Tools {
		byName[tl.Name] = tl
	}
	for step := 0; step < steps; step++ {
		if stop := t.stepDown(); stop {
			return nil
		}
		reply, err := t.call(ctx, msgs)
		if err != nil {
			return t.failed(ctx, err)
		}
		t.th.Model = reply.Model
		msgs = append(msgs, provider.Message{Role: provider.Assistant, Text: reply.Text, Calls: reply.Calls})
		t.th.Text += reply.Text
		if reply.Stop != provider.StopToolUse || len(reply.Calls) == 0 {
			t.th.Provider = reply.Stop
			return nil
		}
		results, restart := t.runCalls(ctx, reply.Calls, byName)
		if restart {
			msgs = append([]provider.Message(nil), t.job.Messages...)
			t.th.Text = ""
			t.emit(Event{Type: "restart"})
			continue
		}
		msgs = append(msgs, provider.Message{Role: provider.User, Results: results})
	}
	t.th.Text += fmt.Sprintf("\n\n(The turn stopped after %d steps; ask again to go on.)", steps)
	return nil
}

// stepDown applies the budget before each call: what this turn spent counts. Past 100% the main model
// steps down to the fast one; past the grace nothing more is called.
func (t *turn) stepDown() bool {
	spent := t.spent
	for _, l := range t.th.Lines {
		spent += l.Cost
	}
	v := t.b.verdict(t.s, spent, t.b.cfg.Now())
	switch {
	case v.Standing == usage.Stopped:
		t.th.Budget, t.th.Stopped = v.Sentence, true
		if strings.TrimSpace(t.th.Text) == "" {
			t.th.Text = v.Sentence
		} else {
			t.th.Text += "\n\n" + v.Sentence
		}
		t.emit(Event{Type: "note", Text: v.Sentence})
		return true
	case v.Standing == usage.FastOnly && t.tier == route.Main && t.models.HasFast():
		t.tier, t.model, t.thinkHarder = route.Fast, t.models.Fast, false
		if t.th.Budget == "" {
			t.th.Budget = v.Sentence
			t.emit(Event{Type: "note", Text: v.Sentence})
		}
	}
	return false
}

// call is one provider call; its usage line is kept whatever happens.
func (t *turn) call(ctx context.Context, msgs []provider.Message) (provider.Reply, error) {
	tools := make([]provider.Tool, 0, len(t.job.Tools)+1)
	for _, tl := range t.job.Tools {
		tools = append(tools, tl.Tool)
	}
	if t.thinkHarder && t.tier == route.Fast {
		tools = append(tools, route.ThinkHarderTool)
	}
	system := ""
	if t.job.System != nil {
		system = t.job.System(t.model)
	}
	req := provider.Request{Model: t.model, System: system, Messages: msgs, Tools: tools, MaxTokens: t.job.MaxTokens}
	reply, err := t.p.Stream(ctx, req, func(d provider.Delta) {
		if d.Text != "" {
			t.emit(Event{Type: "text", Text: d.Text})
		}
		if d.Tool != "" && d.Tool != route.ThinkHarder {
			t.emit(Event{Type: "tool", Tool: d.Tool})
		}
	})
	model := reply.Model
	if model == "" {
		model = t.model // Codex names no model: the one asked for (docs/BRAIN.md)
	}
	if model == "" {
		model = "default"
	}
	u := reply.Usage
	if err == nil || u.InputTokens+u.OutputTokens > 0 || u.HasCost {
		t.th.Lines = append(t.th.Lines, usage.NewLine(t.b.cfg.Now(), t.job.Turn, t.job.Purpose, t.s.Provider, model, u, t.s.Prices))
	}
	return reply, err
}

// failed ends the turn on a provider failure: its one sentence, and when tools already ran, that they
// stay done and nothing is run again.
func (t *turn) failed(ctx context.Context, err error) error {
	sentence := errs.Sentence(err)
	switch f := provider.FailureOf(err); {
	case f != nil:
		sentence = f.Error()
	case ctx.Err() != nil:
		sentence = "The answer was stopped before it was finished."
	case sentence == "":
		sentence = "The brain stopped before it answered; try again."
	}
	if t.th.Changed {
		sentence += " What it had already done stays done; nothing was run twice."
	}
	t.th.Failure = sentence
	return err
}

// runCalls runs the model's tool calls in order. think_harder follows route.OnThinkHarder; restart
// says the turn starts over on the main model.
func (t *turn) runCalls(ctx context.Context, calls []provider.ToolCall, byName map[string]Tool) ([]provider.ToolResult, bool) {
	var results []provider.ToolResult
	for _, c := range calls {
		if c.Name == route.ThinkHarder {
			h := route.OnThinkHarder(route.Turn{Tier: t.tier, ToolsRan: t.ran(), Budget: t.b.verdict(t.s, t.spent+t.cost(), t.b.cfg.Now())}, t.models)
			switch h.Action {
			case route.Restart:
				t.tier, t.model, t.thinkHarder = route.Main, h.Model, false
				t.th.Tier, t.th.Reason = route.Main, "think_harder"
				return nil, true
			case route.Continue:
				t.tier, t.model, t.thinkHarder = route.Main, h.Model, false
				t.th.Tier, t.th.Reason = route.Main, "think_harder"
				results = append(results, provider.ToolResult{CallID: c.ID, Content: "The main model takes the turn from here."})
			default:
				results = append(results, provider.ToolResult{CallID: c.ID, Content: h.Answer, IsError: true})
			}
			continue
		}
		o := t.runOne(ctx, c, byName)
		results = append(results, provider.ToolResult{CallID: c.ID, Content: o.Text, IsError: o.IsError})
		run := ToolRun{Name: c.Name, OK: !o.IsError, Text: o.Text, Input: string(c.Input)}
		t.th.Tools = append(t.th.Tools, run)
		t.th.Outside = t.th.Outside || o.Outside
		t.th.Changed = t.th.Changed || o.Changed
		if o.Card != "" {
			t.th.Cards = append(t.th.Cards, o.Card)
		}
	}
	return results, false
}

func (t *turn) ran() bool { return len(t.th.Tools) > 0 }

func (t *turn) cost() float64 {
	c := 0.0
	for _, l := range t.th.Lines {
		c += l.Cost
	}
	return c
}

func (t *turn) runOne(ctx context.Context, c provider.ToolCall, byName map[string]Tool) Outcome {
	tl, ok := byName[c.Name]
	switch {
	case !ok:
		return Outcome{Text: fmt.Sprintf("There is no tool %q here; use one of the tools listed.", c.Name), IsError: true}
	case c.BadInput != "":
		return Outcome{Text: "The arguments were not valid JSON, so the tool did not run; send them again as one JSON object.", IsError: true}
	}
	return tl.Run(ctx, c.Input)
}

// billed are the lines the budget counts: a subscription's cost is its CLI's estimate of the API price,
// not a bill (docs/BRAIN.md, "Subscriptions"), so it never spends an API brain's budget.
func billed(lines []usage.Line) []usage.Line {
	out := make([]usage.Line, 0, len(lines))
	for _, l := range lines {
		if !(Settings{Provider: l.Provider}).Subscription() {
			out = append(out, l)
		}
	}
	return out
}
