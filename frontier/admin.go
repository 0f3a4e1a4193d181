package frontier

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urlhash/urlhash/store"
)

// Crawls returns the crawls that have queues, in order.
func (f *Frontier) Crawls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for name, c := range f.crawls {
		if len(c.queues) > 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// sortedQueuesLocked returns the queues of crawl in key order (a stable
// order for pagination, unlike GetURLs's turns).
func (f *Frontier) sortedQueuesLocked(crawl string) []*queue {
	c := f.crawls[crawl]
	if c == nil {
		return nil
	}
	qs := make([]*queue, 0, len(c.queues))
	for _, q := range c.queues {
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b *queue) int { return strings.Compare(a.key, b.key) })
	return qs
}

// QueueList is the answer of ListQueues.
type QueueList struct {
	Keys  []string
	Start int
	Crawl string
}

// ListQueues returns the keys of crawl's queues in key order, from the
// start-th of those that match on, at most size (0: 100); only the
// active ones (holding URLs not completed, not blocked) unless
// includeInactive.
func (f *Frontier) ListQueues(crawl string, start, size int, includeInactive bool) QueueList {
	crawl = normCrawl(crawl)
	if size <= 0 {
		size = 100
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	l := QueueList{Start: start, Crawl: crawl}
	nowSec := f.now().Unix()
	now := f.now().UnixNano()
	pos := 0
	for _, q := range f.sortedQueuesLocked(crawl) {
		if len(l.Keys) >= size {
			break
		}
		q.prune(now)
		if !includeInactive && !q.isActive(nowSec) {
			continue
		}
		if pos >= start {
			l.Keys = append(l.Keys, q.key)
		}
		pos++
	}
	return l
}

// Stats are a queue's or a crawl's counts.
type Stats struct {
	Crawl string
	// Size is the URLs not completed (queued or in transit) and InTransit
	// those handed out, neither updated nor expired.
	Size, InTransit, Completed int64
	// Queues counts the queues, ActiveQueues those holding URLs not
	// completed.
	Queues, ActiveQueues int64
	// Puts and Gets count the URLs put new and handed out since Open.
	Puts, Gets int64
	// Recounting is set while the counts of a restart are being made: the
	// queues not yet recounted count nothing.
	Recounting bool
}

// Stats returns the counts of queue key of crawl, or of the whole crawl
// when key is empty (ErrNotFound for an unknown queue).
func (f *Frontier) Stats(crawl, key string) (Stats, error) {
	crawl = normCrawl(crawl)
	f.mu.Lock()
	defer f.mu.Unlock()
	s := Stats{Crawl: crawl, Recounting: f.recounting}
	now := f.now().UnixNano()
	add := func(q *queue) {
		q.prune(now)
		t := q.inTransit()
		s.Size += q.queued + t
		s.InTransit += t
		s.Completed += q.completed
		s.Queues++
		if q.queued+t > 0 {
			s.ActiveQueues++
		}
	}
	if key != "" {
		q := f.lookupLocked(crawl, key)
		if q == nil {
			return s, fmt.Errorf("%w: queue %q of crawl %q", ErrNotFound, key, crawl)
		}
		add(q)
		return s, nil
	}
	if c := f.crawls[crawl]; c != nil {
		for _, q := range c.queues {
			add(q)
		}
		s.Puts, s.Gets = c.puts, c.gets
	}
	return s, nil
}

// AllStats returns the counts of every crawl, in order (for metrics).
func (f *Frontier) AllStats() []Stats {
	var out []Stats
	for _, c := range f.Crawls() {
		if s, err := f.Stats(c, ""); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// Due returns how many of crawl's queued URLs are due now in queues that
// may hand out now (not blocked, past their delay and limit), as far as
// the frontier knows without reading them: a queue whose due order it has
// not read since the start counts its queued URLs.
func (f *Frontier) Due(crawl string) int64 {
	crawl = normCrawl(crawl)
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.crawls[crawl]
	if c == nil || !f.active {
		return 0
	}
	now := f.now().UnixNano()
	var n int64
	for _, q := range c.queues {
		q.prune(now)
		if q.queued == 0 || q.settings.blockedUntil > now/int64(time.Second) ||
			q.settings.limit > 0 && q.completed >= int64(q.settings.limit) ||
			q.lastServed != 0 && q.lastServed+q.delay() > now ||
			q.head != headUnknown && q.head > f.dueByLocked(now) {
			continue
		}
		n += q.queued
	}
	return n
}

// Deleted counts the URLs a deletion removed.
type Deleted struct {
	// URLs counts every URL removed: queued, in transit and completed.
	URLs int64
	// Active counts those of them not completed (url-frontier's answer).
	Active int64
}

func (d *Deleted) add(o Deleted) { d.URLs, d.Active = d.URLs+o.URLs, d.Active+o.Active }

// DeleteQueue deletes queue key of crawl with every URL it holds and
// counts them; ErrNotFound for an unknown queue.
func (f *Frontier) DeleteQueue(ctx context.Context, crawl, key string) (Deleted, error) {
	crawl = normCrawl(crawl)
	f.mu.Lock()
	if err := f.checkLocked(); err != nil {
		f.mu.Unlock()
		return Deleted{}, err
	}
	q := f.lookupLocked(crawl, key)
	if q == nil {
		f.mu.Unlock()
		return Deleted{}, fmt.Errorf("%w: queue %q of crawl %q", ErrNotFound, key, crawl)
	}
	n, err := f.deleteQueueLocked(ctx, q)
	f.mu.Unlock()
	if err != nil {
		return n, err
	}
	return n, f.sync()
}

// deleteQueueLocked deletes q's URLs, then its meta entry, then forgets it.
func (f *Frontier) deleteQueueLocked(ctx context.Context, q *queue) (Deleted, error) {
	var es []store.Entry
	var n Deleted
	seen := map[uid]bool{}
	for _, pre := range []uint64{q.id, q.done} {
		err := f.db.Scan(ctx, prefix8(pre), 64, 0, func(e store.Entry) error {
			if !e.Value.IsZero() {
				return nil
			}
			var u uid
			if pre == q.id {
				_, u = parseDueKey(&e.Hash)
			} else {
				u = parseDoneKey(&e.Hash)
			}
			es = append(es, store.FullEntry(e.Hash, store.Value{}))
			if !seen[u] {
				seen[u] = true
				es = append(es, store.FullEntry(recordKey(u), store.Value{}))
				n.URLs++
				if pre == q.id {
					n.Active++
				}
			}
			return nil
		})
		if err != nil {
			return Deleted{}, err
		}
	}
	es = append(es, store.FullEntry(metaKey(tagQueue, q.crawl.name, q.key), store.Value{}))
	for len(es) > 0 {
		k := min(len(es), 10000)
		if _, err := f.db.DeleteBatch(ctx, es[:k]); err != nil {
			return Deleted{}, err
		}
		es = es[k:]
	}
	f.forgetHeldLocked(q)
	f.removeLocked(q)
	return n, nil
}

// DeleteCrawl deletes every queue of crawl, its URLs and its settings, and
// counts the URLs.
func (f *Frontier) DeleteCrawl(ctx context.Context, crawl string) (Deleted, error) {
	crawl = normCrawl(crawl)
	f.mu.Lock()
	if err := f.checkLocked(); err != nil {
		f.mu.Unlock()
		return Deleted{}, err
	}
	var total Deleted
	for _, q := range f.sortedQueuesLocked(crawl) {
		n, err := f.deleteQueueLocked(ctx, q)
		total.add(n)
		if err != nil {
			f.mu.Unlock()
			return total, err
		}
	}
	if c := f.crawls[crawl]; c != nil {
		if err := f.db.Delete(ctx, store.FullEntry(metaKey(tagCrawl, crawl, ""), store.Value{})); err != nil && !isNotFound(err) {
			f.mu.Unlock()
			return total, err
		}
		delete(f.crawls, crawl)
	}
	f.mu.Unlock()
	return total, f.sync()
}

// settingsLocked writes q's settings and waits for them to be durable
// (the caller unlocks first: see setQueue).
func (f *Frontier) setQueue(ctx context.Context, crawl, key string, set func(*queueSettings)) error {
	crawl = normCrawl(crawl)
	f.mu.Lock()
	if err := f.checkLocked(); err != nil {
		f.mu.Unlock()
		return err
	}
	q := f.lookupLocked(crawl, key)
	if q == nil {
		f.mu.Unlock()
		return fmt.Errorf("%w: queue %q of crawl %q", ErrNotFound, key, crawl)
	}
	set(&q.settings)
	f.signalLocked()
	err := f.db.PutBatch(ctx, []store.Entry{q.metaEntry()})
	if err == nil {
		q.persisted = true
	}
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.sync()
}

// BlockQueueUntil blocks queue key of crawl from handing out URLs until t
// (the zero time unblocks it); ErrNotFound for an unknown queue.
func (f *Frontier) BlockQueueUntil(ctx context.Context, crawl, key string, t time.Time) error {
	return f.setQueue(ctx, crawl, key, func(s *queueSettings) { s.blockedUntil = max(0, t.Unix()) })
}

// SetCrawlLimit stops queue key of crawl from handing out URLs once limit
// of its URLs are completed (0: no limit); ErrNotFound for an unknown
// queue.
func (f *Frontier) SetCrawlLimit(ctx context.Context, crawl, key string, limit uint64) error {
	return f.setQueue(ctx, crawl, key, func(s *queueSettings) { s.limit = limit })
}

// SetDelay sets the politeness delay of queue key of crawl: it hands out
// URLs at most once per delay. An empty key sets the crawl's default, for
// every queue without a delay of its own (DefaultDelay until set).
// Durable on return. ErrNotFound for an unknown queue.
func (f *Frontier) SetDelay(ctx context.Context, crawl, key string, delay time.Duration) error {
	if delay < 0 {
		return fmt.Errorf("%w: negative delay %v", ErrInvalid, delay)
	}
	if key != "" {
		return f.setQueue(ctx, crawl, key, func(s *queueSettings) { s.delay = int64(delay) })
	}
	crawl = normCrawl(crawl)
	f.mu.Lock()
	if err := f.checkLocked(); err != nil {
		f.mu.Unlock()
		return err
	}
	f.crawlLocked(crawl).delay = int64(delay)
	f.signalLocked()
	d := binary.AppendVarint([]byte{tagCrawl, recordVersion}, int64(delay))
	err := f.db.PutBatch(ctx, []store.Entry{store.FullEntry(metaKey(tagCrawl, crawl, ""), store.Value{Text: []byte(crawl), Data: d})})
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.sync()
}

// SetActive sets whether GetURLs hands out anything (puts go on either
// way). Durable on return.
func (f *Frontier) SetActive(ctx context.Context, active bool) error {
	f.mu.Lock()
	if err := f.checkLocked(); err != nil {
		f.mu.Unlock()
		return err
	}
	f.active = active
	f.signalLocked()
	flag := byte(0)
	if active {
		flag = 1
	}
	err := f.db.PutBatch(ctx, []store.Entry{store.FullEntry(metaKey(tagFrontier, "", ""), store.Value{Text: []byte("frontier"), Data: []byte{tagFrontier, recordVersion, flag}})})
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.sync()
}

// IsActive reports whether GetURLs hands out URLs.
func (f *Frontier) IsActive() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active
}
