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

// NewClock returns a clock set to the current time.
func NewClock() *Clock { return &Clock{now: time.Now()} }

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
