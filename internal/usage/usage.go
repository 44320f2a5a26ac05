// Package usage owns what the brain spends: the usage ledger's line format
// (_bookkeeping/usage/YYYY-MM.jsonl), the owner-editable price table, totals per turn and month, and
// the monthly budget rule. It is pure: it never reads or writes files; the layer above writes lines
// through the box's write transaction (docs/BRAIN.md).
package usage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/provider"
)

// Dir is the box folder of the ledger.
const Dir = "/_bookkeeping/usage"

// Path is the ledger file of t's month, in t's own time zone (the owner's, from the clock).
func Path(t time.Time) string { return Dir + "/" + t.Format("2006-01") + ".jsonl" }

// CostFrom says where a line's cost comes from.
type CostFrom string

const (
	FromProvider CostFrom = "provider" // the provider's own figure (OpenRouter's usage.cost)
	FromPrices   CostFrom = "prices"   // the price table
	Unknown      CostFrom = "unknown"  // neither: counted as 0 and shown as unknown
)

// Line is one provider call.
type Line struct {
	Time      time.Time `json:"time"`
	Turn      string    `json:"turn"`              // the chat turn or job the call belonged to
	Purpose   string    `json:"purpose,omitempty"` // chat, tidy, routine, keycheck
	Provider  string    `json:"provider"`          // openai or anthropic (the wire), as set in Settings → Brain
	Model     string    `json:"model"`             // the model the provider says answered
	TokensIn  int       `json:"tokensIn"`          // the provider's own counts
	TokensOut int       `json:"tokensOut"`
	Cost      float64   `json:"cost"` // US dollars
	CostFrom  CostFrom  `json:"costFrom"`
}

// NewLine records one call: the provider's own counts, and its own cost when it gave one, else the
// price table's, else Unknown. The model id and the figures are the provider's word, and a line the
// ledger refuses would lose the turn's record and stop a tidy: the model id is made one line of at most
// 100 characters, a negative count zero, and a cost that is negative or not a number is not taken.
func NewLine(now time.Time, turn, purpose, providerName, model string, u provider.Usage, prices Prices) Line {
	model = strings.Join(strings.Fields(model), " ") // every kind of line break is a space to Fields
	if r := []rune(model); len(r) > 100 {
		model = strings.TrimSpace(string(r[:100]))
	}
	if model == "" {
		model = "unknown"
	}
	l := Line{Time: now, Turn: turn, Purpose: purpose, Provider: providerName, Model: model,
		TokensIn: max(u.InputTokens, 0), TokensOut: max(u.OutputTokens, 0), CostFrom: Unknown}
	switch p, ok := prices.Lookup(model); {
	case u.HasCost && u.Cost >= 0 && !math.IsInf(u.Cost, 0): // NaN compares false
		l.Cost, l.CostFrom = u.Cost, FromProvider
	case ok:
		l.Cost, l.CostFrom = p.Cost(l.TokensIn, l.TokensOut), FromPrices
	}
	return l
}

// Marshal is the line as the ledger holds it: one JSON object and a newline.
func (l Line) Marshal() ([]byte, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(l)
	if err != nil {
		return nil, errs.Wrap("usage.line", errs.Invalid, err, "the usage line could not be encoded")
	}
	return append(data, '\n'), nil
}

func (l Line) check() error {
	const op = "usage.line"
	switch {
	case l.Time.IsZero():
		return errs.E(op, errs.Invalid, "a usage line needs its time")
	case l.Turn == "" || l.Model == "" || l.Provider == "":
		return errs.E(op, errs.Invalid, "a usage line needs its turn, provider and model")
	case strings.ContainsAny(l.Turn+l.Model+l.Provider+l.Purpose, "\n\r"):
		return errs.E(op, errs.Invalid, "a usage line's fields are one line each")
	case l.TokensIn < 0 || l.TokensOut < 0 || l.Cost < 0 || math.IsNaN(l.Cost) || math.IsInf(l.Cost, 0):
		return errs.E(op, errs.Invalid, "a usage line's counts and cost are zero or more")
	case l.CostFrom != FromProvider && l.CostFrom != FromPrices && l.CostFrom != Unknown:
		return errs.E(op, errs.Invalid, "a usage line's costFrom is provider, prices or unknown, not %q", l.CostFrom)
	}
	return nil
}

// Parse reads a ledger file. A line it cannot read (hand-edited, cut short) is left out, never the
// whole month: one bad line must not stop the chat, a routine or the tidy's brain. Damaged names those
// lines for box validate. A field it does not know is taken (a newer box may add fields).
func Parse(data []byte) ([]Line, error) {
	lines, _ := parse(data)
	return lines, nil
}

// Damaged lists, as warnings naming path and line, the lines of a ledger file Parse leaves out (their
// cost is not counted, so the month's total may be low until the line is fixed).
func Damaged(path string, data []byte) []finding.Finding {
	_, bad := parse(data)
	out := make([]finding.Finding, 0, len(bad))
	for _, b := range bad {
		out = append(out, finding.Warnf(path, b.line, CodeDamaged, "%s; this call's cost is not counted in the month's total: fix the line or remove it", b.why))
	}
	return out
}

// CodeDamaged is the finding code of a ledger line Parse leaves out.
const CodeDamaged = "usage-line-damaged"

type damage struct {
	line int
	why  string
}

func parse(data []byte) ([]Line, []damage) {
	var out []Line
	var bad []damage
	for i, raw := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var l Line
		if err := json.Unmarshal(raw, &l); err != nil {
			bad = append(bad, damage{n, "usage line " + fmt.Sprint(n) + " is not a usage line: " + plain(err)})
			continue
		}
		if err := l.check(); err != nil {
			bad = append(bad, damage{n, "usage line " + fmt.Sprint(n) + ": " + errs.Sentence(err)})
			continue
		}
		out = append(out, l)
	}
	return out, bad
}

func plain(err error) string { return strings.TrimPrefix(err.Error(), "json: ") }

// Prices is the owner-editable price table: model id → US dollars per million tokens in and out. A key
// ending in "*" covers every model id it starts ("claude-haiku-*"); an exact id wins, then the longest
// pattern.
type Prices map[string]provider.Price

// Lookup returns the price of a model.
func (p Prices) Lookup(model string) (provider.Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best, found := "", false
	for k := range p {
		if prefix, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(model, prefix) && (!found || len(k) > len(best)) {
			best, found = k, true
		}
	}
	return p[best], found
}

// Check refuses a table an owner could not have meant: negative or absurd prices, empty names.
func (p Prices) Check() error {
	for k, v := range p {
		if strings.TrimSpace(k) == "" || strings.ContainsAny(k, "\n\r") {
			return errs.E("usage.prices", errs.Invalid, "a price needs a model id")
		}
		if v.In < 0 || v.Out < 0 || v.In > 10000 || v.Out > 10000 || math.IsNaN(v.In) || math.IsNaN(v.Out) {
			return errs.E("usage.prices", errs.Invalid, "the price of %s must be between 0 and 10,000 dollars per million tokens", k)
		}
	}
	return nil
}

// Totals is one month of the ledger added up.
type Totals struct {
	Cost      float64
	TokensIn  int
	TokensOut int
	Calls     int
	Unpriced  int // calls whose cost is unknown: the month's cost is at least Cost
	Turns     map[string]TurnTotal
}

// TurnTotal is one turn's calls added up.
type TurnTotal struct {
	Cost      float64
	TokensIn  int
	TokensOut int
	Calls     int
}

// Total adds up the lines of now's month (in now's time zone).
func Total(lines []Line, now time.Time) Totals {
	from, to := MonthOf(now)
	t := Totals{Turns: map[string]TurnTotal{}}
	for _, l := range lines {
		if l.Time.Before(from) || !l.Time.Before(to) {
			continue
		}
		t.Cost += l.Cost
		t.TokensIn += l.TokensIn
		t.TokensOut += l.TokensOut
		t.Calls++
		if l.CostFrom == Unknown {
			t.Unpriced++
		}
		tt := t.Turns[l.Turn]
		tt.Cost, tt.TokensIn, tt.TokensOut, tt.Calls = tt.Cost+l.Cost, tt.TokensIn+l.TokensIn, tt.TokensOut+l.TokensOut, tt.Calls+1
		t.Turns[l.Turn] = tt
	}
	return t
}

// MonthOf returns the first instant of now's month and of the next, at local midnight in now's zone.
func MonthOf(now time.Time) (time.Time, time.Time) {
	y, m, _ := now.Date()
	from := time.Date(y, m, 1, 0, 0, 0, 0, now.Location())
	return from, from.AddDate(0, 1, 0)
}

// Dollars formats an amount for a sentence: $0.0042, $1.50, $20.00.
func Dollars(v float64) string {
	if v > 0 && v < 0.01 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
