// Package fakeclock is a settable clock for the tests of times and
// expiry (an index's through internal/clockhook, pgindex.Options.Now).
package fakeclock

import (
	"sync"
	"time"
)

// Start returns where a test clock usually starts: 2030-01-01 UTC, after
// the wall clock, which Badger applies to expiry as well.
func Start() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }

// A Clock is a time that moves only when told to. It is safe for
// concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock at start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}
