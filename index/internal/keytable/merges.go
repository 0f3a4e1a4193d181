package keytable

import (
	"os"
	"sync/atomic"
	"time"
)

// Merges are the key table's background merges since it was opened, as a
// server's metrics report them.
type Merges struct {
	// Count is the number of merges finished.
	Count int64
	// Time is their total duration.
	Time time.Duration
	// Bytes is the size of the key files they wrote, and of their value
	// files.
	Bytes int64
}

// mergeCounts accumulates Merges; a merge adds itself once it finished.
type mergeCounts struct {
	count, nanos, bytes atomic.Int64
}

// done counts a merge that began at start and wrote the key file name and
// its value file (none when its output was empty).
func (c *mergeCounts) done(start time.Time, name string) {
	c.nanos.Add(int64(time.Since(start)))
	for _, n := range []string{name, valueName(name)} {
		if fi, err := os.Stat(n); err == nil {
			c.bytes.Add(fi.Size())
		}
	}
	c.count.Add(1)
}

// Merges returns the merges finished since Open: reading it costs three
// atomic loads.
func (t *Table) Merges() Merges {
	return Merges{Count: t.merged.count.Load(), Time: time.Duration(t.merged.nanos.Load()), Bytes: t.merged.bytes.Load()}
}
