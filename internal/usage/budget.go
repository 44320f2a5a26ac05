package usage

import (
	"fmt"
	"time"
)

// Budget is the owner's monthly cap on the brain's spend (docs/BRAIN.md, "The budget").
type Budget struct {
	// Monthly is in US dollars; 0 means no budget: nothing steps down or stops.
	Monthly float64
	// Grace is how far past the budget, as a share of it, the fast model may go on answering before
	// turns stop; 0 means DefaultGrace. With no separate fast model turns stop at the budget itself.
	Grace float64
}

// DefaultGrace lets the fast model spend up to a tenth more than the budget before turns stop.
const DefaultGrace = 0.10

// Standing is what the budget allows now.
type Standing int

const (
	Open     Standing = iota // under the budget: turns go where routing sends them
	FastOnly                 // at or past 100%: the main model steps down to the fast one
	Stopped                  // past the grace, or at 100% without a fast model: no turns until the 1st
)

func (s Standing) String() string { return [...]string{"open", "fast-only", "stopped"}[s] }

// Verdict is the budget's answer for one moment.
type Verdict struct {
	Standing Standing
	Spent    float64
	Budget   float64
	Until    time.Time // the 1st of next month, local midnight: when it opens again
	Sentence string    // for the chat and the diary; empty while Open
}

// Check applies the rule to what this month has spent so far; hasFast says the owner set a fast model
// distinct from the main one.
func (b Budget) Check(now time.Time, spent float64, hasFast bool) Verdict {
	_, next := MonthOf(now)
	v := Verdict{Standing: Open, Spent: spent, Budget: b.Monthly, Until: next}
	if b.Monthly <= 0 || spent < b.Monthly {
		return v
	}
	grace := b.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	month, until := now.Format("January"), next.Format("2 January")
	if hasFast && spent < b.Monthly*(1+grace) {
		v.Standing = FastOnly
		v.Sentence = fmt.Sprintf("This month's brain budget of %s is used up (%s spent), so the fast model answers until %s; raise the budget in Settings → Brain.",
			Dollars(b.Monthly), Dollars(spent), until)
		return v
	}
	v.Standing = Stopped
	v.Sentence = fmt.Sprintf("The brain is out of budget for %s (%s spent of %s) and thinks again on %s; raise the budget in Settings → Brain to go on now.",
		month, Dollars(spent), Dollars(b.Monthly), until)
	return v
}
