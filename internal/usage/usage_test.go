package usage_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/goldenfile"
	"github.com/boxmem/box/internal/provider"
	"github.com/boxmem/box/internal/usage"
)

// The owner's clock in a fixed zone, never today's date.
var paris = time.FixedZone("CET", 3600)

func at(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, paris)
	if err != nil {
		panic(err)
	}
	return t
}

var prices = usage.Prices{
	"claude-sonnet-4-5": {In: 3, Out: 15},
	"claude-haiku-*":    {In: 1, Out: 5},
	"claude-*":          {In: 15, Out: 75},
	"llama-local":       {},
}

func TestNewLineCost(t *testing.T) {
	cases := []struct {
		name  string
		model string
		u     provider.Usage
		cost  float64
		from  usage.CostFrom
	}{
		{"the provider's own figure wins", "claude-sonnet-4-5", provider.Usage{InputTokens: 1000, OutputTokens: 100, Cost: 0.042, HasCost: true}, 0.042, usage.FromProvider},
		{"exact price", "claude-sonnet-4-5", provider.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}, 4.5, usage.FromPrices},
		{"the longest pattern", "claude-haiku-4-5", provider.Usage{InputTokens: 2000, OutputTokens: 400}, 0.004, usage.FromPrices},
		{"a shorter pattern", "claude-opus-4-1", provider.Usage{InputTokens: 1000}, 0.015, usage.FromPrices},
		{"a free local model", "llama-local", provider.Usage{InputTokens: 5000, OutputTokens: 50}, 0, usage.FromPrices},
		{"no price", "gpt-4o-mini", provider.Usage{InputTokens: 5000, OutputTokens: 50}, 0, usage.Unknown},
	}
	for _, c := range cases {
		l := usage.NewLine(at("2026-03-05 14:02"), "t1", "chat", "anthropic", c.model, c.u, prices)
		if d := l.Cost - c.cost; d > 1e-12 || d < -1e-12 || l.CostFrom != c.from {
			t.Errorf("%s: cost %v from %s, want %v from %s", c.name, l.Cost, l.CostFrom, c.cost, c.from)
		}
		if l.TokensIn != c.u.InputTokens || l.TokensOut != c.u.OutputTokens {
			t.Errorf("%s: tokens %d/%d", c.name, l.TokensIn, l.TokensOut)
		}
	}
}

func TestPath(t *testing.T) {
	// 23:30 UTC on 31 March is already April in Paris: the owner's month decides the file.
	utc := time.Date(2026, 3, 31, 23, 30, 0, 0, time.UTC)
	if p := usage.Path(utc.In(paris)); p != "/_bookkeeping/usage/2026-04.jsonl" {
		t.Errorf("Path %s", p)
	}
}

// TestLedgerGolden: the line format, written and read back.
func TestLedgerGolden(t *testing.T) {
	lines := []usage.Line{
		usage.NewLine(at("2026-03-05 14:02"), "turn-8f2a", "chat", "openai", "anthropic/claude-haiku", provider.Usage{InputTokens: 1834, OutputTokens: 212, Cost: 0.002894, HasCost: true}, prices),
		usage.NewLine(at("2026-03-05 14:02"), "turn-8f2a", "chat", "anthropic", "claude-sonnet-4-5", provider.Usage{InputTokens: 2410, OutputTokens: 96}, prices),
		usage.NewLine(at("2026-03-06 03:00"), "job-tidy-0306", "tidy", "openai", "gpt-4o-mini", provider.Usage{InputTokens: 3120, OutputTokens: 640}, prices),
	}
	var got []byte
	for _, l := range lines {
		b, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
	}
	goldenfile.Check(t, "testdata/2026-03.jsonl", got)
	back, err := usage.Parse(got)
	if err != nil || len(back) != 3 {
		t.Fatalf("Parse: %d lines, %v", len(back), err)
	}
	for i := range lines {
		if !back[i].Time.Equal(lines[i].Time) || back[i].Cost != lines[i].Cost || back[i].Model != lines[i].Model || back[i].CostFrom != lines[i].CostFrom {
			t.Errorf("line %d: %+v, want %+v", i, back[i], lines[i])
		}
	}
}

// A damaged ledger line is left out, never the whole month; Damaged names its file and line and why. A
// field Parse does not know is taken (a newer box may add fields).
func TestParseSkipsDamagedLines(t *testing.T) {
	good := `{"time":"2026-03-05T14:02:00+01:00","turn":"t","provider":"openai","model":"m","tokensIn":1,"tokensOut":1,"cost":0,"costFrom":"unknown"}`
	for name, c := range map[string]struct{ text, says string }{
		"not json":   {"hello", "usage line 2 is not a usage line"},
		"no model":   {strings.Replace(good, `"model":"m"`, `"model":""`, 1), "needs its turn, provider and model"},
		"negative":   {strings.Replace(good, `"tokensIn":1`, `"tokensIn":-1`, 1), "zero or more"},
		"bad source": {strings.Replace(good, `"unknown"`, `"guess"`, 1), "costFrom"},
		"no time":    {strings.Replace(good, `"time":"2026-03-05T14:02:00+01:00",`, ``, 1), "needs its time"},
	} {
		data := []byte(good + "\n" + c.text + "\n" + good + "\n")
		lines, err := usage.Parse(data)
		if err != nil || len(lines) != 2 {
			t.Errorf("%s: %d lines %v, want the 2 good ones", name, len(lines), err)
		}
		fs := usage.Damaged("/_bookkeeping/usage/2026-03.jsonl", data)
		if len(fs) != 1 || fs[0].Line != 2 || fs[0].Path != "/_bookkeeping/usage/2026-03.jsonl" || !strings.Contains(fs[0].Message, c.says) {
			t.Errorf("%s: %+v, want line 2 saying %q", name, fs, c.says)
		}
	}
	newer := strings.Replace(good, `"cost":0`, `"cost":0,"cached":12`, 1)
	if l, err := usage.Parse([]byte(newer)); err != nil || len(l) != 1 || len(usage.Damaged("x", []byte(newer))) != 0 {
		t.Errorf("a line with a field added: %v %v", l, err)
	}
	if l, err := usage.Parse([]byte("\n" + good + "\n\n")); err != nil || len(l) != 1 {
		t.Errorf("blank lines: %v", err)
	}
	if _, err := (usage.Line{Time: at("2026-03-05 14:02"), Turn: "t\n", Provider: "p", Model: "m", CostFrom: usage.Unknown}).Marshal(); err == nil {
		t.Errorf("a turn with a newline was written")
	}
}

func TestTotal(t *testing.T) {
	lines := []usage.Line{
		{Time: at("2026-02-28 23:59"), Turn: "old", Cost: 5, CostFrom: usage.FromPrices},
		{Time: at("2026-03-01 00:00"), Turn: "a", Cost: 0.5, TokensIn: 100, TokensOut: 10, CostFrom: usage.FromPrices},
		{Time: at("2026-03-01 00:01"), Turn: "a", Cost: 0.25, TokensIn: 50, TokensOut: 5, CostFrom: usage.FromProvider},
		{Time: at("2026-03-20 10:00"), Turn: "b", TokensIn: 7, CostFrom: usage.Unknown},
		{Time: at("2026-04-01 00:00"), Turn: "next", Cost: 9, CostFrom: usage.FromPrices},
	}
	tot := usage.Total(lines, at("2026-03-15 12:00"))
	if tot.Cost != 0.75 || tot.Calls != 3 || tot.Unpriced != 1 || tot.TokensIn != 157 || tot.TokensOut != 15 {
		t.Errorf("totals %+v", tot)
	}
	if a := tot.Turns["a"]; a.Cost != 0.75 || a.Calls != 2 || len(tot.Turns) != 2 {
		t.Errorf("turns %+v", tot.Turns)
	}
}

func TestPricesCheck(t *testing.T) {
	if err := prices.Check(); err != nil {
		t.Error(err)
	}
	for _, p := range []usage.Prices{{"": {In: 1}}, {"m": {In: -1}}, {"m": {Out: 1e6}}} {
		if err := p.Check(); !errs.Is(err, errs.Invalid) {
			t.Errorf("%v: %v, want Invalid", p, err)
		}
	}
}

// TestBudget: under 100% turns are open; at 100% the main model steps down to the fast one; past the
// grace, or at 100% with no fast model, turns stop until the 1st. The month is the owner's.
func TestBudget(t *testing.T) {
	b := usage.Budget{Monthly: 20}
	cases := []struct {
		name    string
		budget  usage.Budget
		now     string
		spent   float64
		hasFast bool
		want    usage.Standing
		says    string
	}{
		{"no budget", usage.Budget{}, "2026-03-15 12:00", 1000, true, usage.Open, ""},
		{"under", b, "2026-03-15 12:00", 19.99, true, usage.Open, ""},
		{"at 100% steps down", b, "2026-03-15 12:00", 20, true, usage.FastOnly, "the fast model answers until 1 April"},
		{"inside the grace", b, "2026-03-15 12:00", 21.99, true, usage.FastOnly, "$20.00 is used up ($21.99 spent)"},
		{"past the grace stops", b, "2026-03-15 12:00", 22, true, usage.Stopped, "out of budget for March ($22.00 spent of $20.00) and thinks again on 1 April"},
		{"no fast model stops at 100%", b, "2026-03-15 12:00", 20, false, usage.Stopped, "thinks again on 1 April"},
		{"a wider grace", usage.Budget{Monthly: 20, Grace: 0.5}, "2026-03-15 12:00", 29, true, usage.FastOnly, ""},
		{"December rolls into January", b, "2026-12-31 23:59", 25, true, usage.Stopped, "thinks again on 1 January"},
	}
	for _, c := range cases {
		v := c.budget.Check(at(c.now), c.spent, c.hasFast)
		if v.Standing != c.want || !strings.Contains(v.Sentence, c.says) || (c.want == usage.Open) != (v.Sentence == "") {
			t.Errorf("%s: %s %q, want %s saying %q", c.name, v.Standing, v.Sentence, c.want, c.says)
		}
	}
	v := b.Check(at("2026-03-31 23:59"), 30, true)
	if want := time.Date(2026, 4, 1, 0, 0, 0, 0, paris); !v.Until.Equal(want) {
		t.Errorf("Until %v, want %v", v.Until, want)
	}
	// A minute later it is April: a new month starts open (the caller totals April's lines: none).
	if v := b.Check(at("2026-04-01 00:00"), 0, true); v.Standing != usage.Open {
		t.Errorf("the 1st: %s", v.Standing)
	}
}

func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := usage.Parse(data)
		if err != nil {
			return
		}
		var again []byte
		for _, l := range lines {
			b, err := l.Marshal()
			if err != nil {
				t.Fatalf("a parsed line does not write back: %v", err)
			}
			again = append(again, b...)
		}
		back, err := usage.Parse(again)
		if err != nil || len(back) != len(lines) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// TestNewLineTakesTheProvidersWordOnlyAsTheLedgerHoldsIt: a model id with a line break, negative counts or
// a cost that is negative or not a number still make a line the ledger takes (a refused line lost the
// chat's turn and stopped the tidy), never the figures as sent.
func TestNewLineTakesTheProvidersWordOnlyAsTheLedgerHoldsIt(t *testing.T) {
	now := time.Date(2026, 3, 5, 14, 2, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		model    string
		u        provider.Usage
		want     string
		cost     float64
		costFrom usage.CostFrom
	}{
		{"line break", "model-a\nx\u2028y", provider.Usage{InputTokens: 10, OutputTokens: 5}, "model-a x y", 0, usage.Unknown},
		{"negative cost", "model-a", provider.Usage{InputTokens: 10, Cost: -0.5, HasCost: true}, "model-a", 0, usage.Unknown},
		{"not a number", "model-a", provider.Usage{Cost: math.NaN(), HasCost: true}, "model-a", 0, usage.Unknown},
		{"infinite", "model-a", provider.Usage{Cost: math.Inf(1), HasCost: true}, "model-a", 0, usage.Unknown},
		{"negative counts", "", provider.Usage{InputTokens: -4, OutputTokens: -1, Cost: 0.25, HasCost: true}, "unknown", 0.25, usage.FromProvider},
		{"long", strings.Repeat("m", 300), provider.Usage{}, strings.Repeat("m", 100), 0, usage.Unknown},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := usage.NewLine(now, "turn-1", "chat", "openai", c.model, c.u, nil)
			if l.Model != c.want || l.TokensIn < 0 || l.TokensOut < 0 || l.Cost != c.cost || l.CostFrom != c.costFrom {
				t.Errorf("%+v: want model %q, cost %v from %s, counts zero or more", l, c.want, c.cost, c.costFrom)
			}
			if _, err := l.Marshal(); err != nil {
				t.Errorf("the ledger refuses the line: %v", err)
			}
		})
	}
}
