package server

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/urlhash/urlhash/store"
)

// committer shares fsyncs between concurrent writers (group commit): a
// writer waits for one Sync that started after its write; while a Sync
// runs, the writers that arrive wait for the next one, which serves them
// all.
type committer struct {
	st    store.Backend
	log   *slog.Logger
	mu    sync.Mutex
	cond  *sync.Cond
	begun uint64 // Syncs started
	done  uint64 // Syncs finished
	err   error  // the error of the last Sync finished
	busy  bool
	syncs atomic.Int64 // Syncs run, for /metrics
	// seconds observes each Sync's duration (/metrics), when set.
	seconds prometheus.Observer
	marks   writeMarks // which writes a Sync covered (durable.go)
}

func newCommitter(st store.Backend, log *slog.Logger) *committer {
	c := &committer{st: st, log: log}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// groupSync returns when a Sync that started after the call has finished.
func (c *committer) groupSync() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	target := c.begun + 1 // a Sync running now may have started before our write
	for c.done < target {
		if c.busy {
			c.cond.Wait()
			continue
		}
		c.busy = true
		c.begun++
		gen := c.begun
		c.mu.Unlock()
		start := time.Now()
		// One sync answers many requests: none of theirs may cancel it.
		err := c.st.Sync(context.Background())
		c.syncs.Add(1)
		if c.seconds != nil {
			c.seconds.Observe(time.Since(start).Seconds())
		}
		if err != nil {
			c.log.Error("sync failed", "sync", gen, "duration", time.Since(start), "error", err)
		} else {
			c.log.Debug("sync", "sync", gen, "duration", time.Since(start))
		}
		c.mu.Lock()
		c.busy, c.done, c.err = false, gen, err
		c.cond.Broadcast()
	}
	return c.err
}
