package passkeytest

import (
	"sync"
	"time"
)

// Clock is a test's clock for the box (web.Config.Now, grants.Open): it stands still until Advance moves
// it, so setup codes, ceremonies, sessions and tokens expire when the test says.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Start is where every test clock starts: the last second of a leap day, local time, so that no test
// depends on today's date or time zone and a day boundary is one second away.
var Start = time.Date(2028, 2, 29, 23, 59, 59, 0, time.Local)

// NewClock returns a clock set to Start.
func NewClock() *Clock { return &Clock{now: Start} }

// ClockAt returns a clock set to t, in t's zone (the owner's zone of a test about local days and times).
func ClockAt(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t, in t's zone.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}
