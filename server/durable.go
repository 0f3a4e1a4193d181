package server

import "sync/atomic"

// writeMarks let a write that stored nothing be answered without an fsync
// unless it may have read what another write stored and not yet synced:
// a key found present must not be lost by a crash after the answer.
type writeMarks struct {
	inflight atomic.Int64 // writes running
	fresh    atomic.Int64 // writes finished that stored something
	durable  atomic.Int64 // of those, how many a Sync covered, at least
}

// writing marks a write running; call the result with whether it stored
// something once it has finished.
func (c *committer) writing() func(fresh bool) {
	m := &c.marks
	m.inflight.Add(1)
	return func(fresh bool) {
		if fresh {
			m.fresh.Add(1)
		}
		m.inflight.Add(-1)
	}
}

// sync returns when a Sync that started after the call has finished,
// noting the finished writes it made durable.
func (c *committer) sync() error {
	m := &c.marks
	n := m.fresh.Load()
	if err := c.groupSync(); err != nil {
		return err
	}
	for {
		d := m.durable.Load()
		if d >= n || m.durable.CompareAndSwap(d, n) {
			return nil
		}
	}
}

// settled returns once every write that stored something before the call
// is durable: at once when none is running and every finished one is
// synced, else after an fsync.
func (c *committer) settled() error {
	m := &c.marks
	if m.inflight.Load() == 0 && m.fresh.Load() == m.durable.Load() {
		return nil
	}
	return c.sync()
}
