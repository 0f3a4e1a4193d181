package frontier

import (
	"context"
	"math"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// GetParams selects the URLs GetURLs hands out (url-frontier's GetParams).
type GetParams struct {
	// MaxPerQueue bounds the URLs a queue hands out per call, and a queue
	// whose URLs in transit reach it hands out none. 0: no limit.
	MaxPerQueue int
	// MaxQueues bounds the queues that hand out URLs. 0: no limit.
	MaxQueues int
	// MaxURLs bounds the URLs handed out in all. 0: no limit.
	MaxURLs int
	// Key restricts the call to one queue of Crawl.
	Key string
	// Crawl is the crawl (empty: DefaultCrawl), unless AnyCrawl.
	Crawl    string
	AnyCrawl bool
	// Transit is how long a URL handed out stays in transit before it is
	// due again (url-frontier's delay_requestable). 0: DefaultTransit.
	Transit time.Duration
}

// Handed is a URL handed out.
type Handed struct {
	ID   ID
	Info URLInfo
}

// maxPerCall bounds the URLs one queue hands out in one call when
// MaxPerQueue sets no bound.
const maxPerCall = 10000

// GetURLs hands out the URLs due now, from queues taken in turn (each call
// goes on from where the last one stopped): at most MaxPerQueue a queue,
// from at most MaxQueues queues. A queue hands out nothing while it is
// blocked, past its crawl limit (completed URLs), within its delay of the
// last time it handed out, or with MaxPerQueue URLs in transit. Each URL
// handed out is in transit until it is updated (Put with Known, Complete,
// Release) or until Transit passes, when it is due again. Nothing is handed
// out while the frontier is inactive (SetActive).
//
// The hand-out is written to the index but not synced: a crash before the
// next fsync makes the URL due again after the restart (at least once),
// never lost.
func (f *Frontier) GetURLs(ctx context.Context, p GetParams) ([]Handed, error) {
	if p.Transit <= 0 {
		p.Transit = DefaultTransit
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkLocked(); err != nil {
		return nil, err
	}
	if !f.active {
		return nil, nil
	}
	crawl := normCrawl(p.Crawl)
	now := f.now().UnixNano()
	var b changes
	var out []Handed
	if p.Key != "" {
		if p.AnyCrawl {
			return nil, nil // a queue is within a crawl (as the reference)
		}
		q := f.lookupLocked(crawl, p.Key)
		if q == nil {
			return nil, nil
		}
		if _, err := f.serveLocked(ctx, q, &b, &out, &p, now); err != nil {
			return nil, err
		}
	} else {
		n := len(f.order)
		start := 0
		if n > 0 {
			start = f.cursor % n
		}
		served, last := 0, -1
		for i := 0; i < n && (p.MaxQueues <= 0 || served < p.MaxQueues) && (p.MaxURLs <= 0 || len(out) < p.MaxURLs); i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			j := (start + i) % n
			q := f.order[j]
			if !p.AnyCrawl && q.crawl.name != crawl {
				continue
			}
			got, err := f.serveLocked(ctx, q, &b, &out, &p, now)
			if err != nil {
				return nil, err
			}
			if got > 0 {
				served, last = served+1, j
			}
		}
		if last >= 0 {
			f.cursor = last + 1
		}
	}
	if err := b.apply(ctx, f); err != nil {
		return nil, err
	}
	return out, nil
}

// dueSlack is how far in the future a due time may be and still be due:
// URLs put at once get due times a nanosecond apart, so that a queue is
// FIFO, and those run ahead of the clock when many are put in a
// nanosecond (or on a test's fake clock).
const dueSlack = int64(time.Millisecond)

// dueByLocked returns the latest due time that is due now.
func (f *Frontier) dueByLocked(now int64) int64 { return max(now+dueSlack, f.lastDue) }

// serveLocked hands out q's due URLs into out, removes into b the due
// keys it finds stale, and returns how many it handed out.
func (f *Frontier) serveLocked(ctx context.Context, q *queue, b *changes, out *[]Handed, p *GetParams, now int64) (int, error) {
	q.prune(now)
	switch {
	case q.settings.blockedUntil > now/int64(time.Second),
		q.settings.limit > 0 && q.completed >= int64(q.settings.limit),
		q.lastServed != 0 && q.lastServed+q.delay() > now,
		q.counted && q.queued == 0,
		q.head != headUnknown && q.head > f.dueByLocked(now):
		return 0, nil
	}
	inTransit := int(q.inTransit())
	want := maxPerCall
	if p.MaxPerQueue > 0 {
		want = p.MaxPerQueue - inTransit
	}
	if p.MaxURLs > 0 {
		want = min(want, p.MaxURLs-len(*out))
	}
	want = min(want, f.o.MaxInTransit-len(f.held))
	if want <= 0 {
		return 0, nil
	}
	dueBy := f.dueByLocked(now)
	next := int64(math.MaxInt64)
	var keys []hashkey.Hash
	// The URLs in transit keep their places at the head of the due order:
	// read past them.
	err := f.db.Scan(ctx, prefix8(q.id), 64, want+inTransit+1, func(e store.Entry) error {
		if !e.Value.IsZero() {
			return nil // a record whose id starts as the queue's: not a due key
		}
		due, u := parseDueKey(&e.Hash)
		if due > dueBy || len(keys) == want {
			next = due
			return errStop
		}
		if h := f.held[u]; (h == nil || h.expiry <= now) && !f.pending[u] {
			keys = append(keys, e.Hash)
		}
		return nil
	})
	if err != nil && err != errStop {
		return 0, err
	}
	if len(keys) == 0 {
		q.head = next
		return 0, nil
	}
	done := make([]hashkey.Hash, len(keys))
	for i := range keys {
		_, u := parseDueKey(&keys[i])
		done[i] = doneKey(q.done, u)
	}
	completed, err := f.db.HasBatch(ctx, done)
	if err != nil {
		return 0, err
	}
	expiry := now + int64(p.Transit)
	sent := 0
	for i := range keys {
		due, u := parseDueKey(&keys[i])
		v, r, found, err := f.getRecord(ctx, u)
		if err != nil {
			return sent, err
		}
		if !found || completed[i] || r.state == stateCompleted || r.due != due || r.crawl != q.crawl.name || r.key != q.key {
			// Left by a crash between writes, or by a move: not the
			// URL's place in the queue.
			f.unholdLocked(u, now)
			b.deletes = append(b.deletes, store.FullEntry(keys[i], store.Value{}))
			q.queued = max(0, q.queued-1)
			continue
		}
		f.unholdLocked(u, now) // handed out before, its transit expired
		f.holdLocked(q, u, due, expiry, contentSum(r.priority, r.data, r.metadata))
		*out = append(*out, Handed{ID: ID(u), Info: r.info(string(v.Text))})
		sent++
	}
	if sent > 0 {
		q.lastServed = now
		q.crawl.gets += int64(sent)
		next = min(next, expiry)
	}
	q.head = next
	return sent, nil
}

// info returns the URLInfo of a record of URL url.
func (r *record) info(url string) URLInfo {
	return URLInfo{URL: url, Key: r.key, Crawl: r.crawl, Metadata: r.metadata, Data: r.data, Priority: r.priority}
}

// Complete marks the URLs ids of crawl completed (as a Known put without a
// refetch date, keeping their metadata and data) and reports which were
// found; a completed URL is never handed out again. It returns once the
// change is durable.
func (f *Frontier) Complete(ctx context.Context, crawl string, ids []ID) ([]bool, error) {
	return f.move(ctx, crawl, ids, true)
}

// Release makes the URLs ids of crawl that are in transit due again at
// once, and reports which were in transit.
func (f *Frontier) Release(ctx context.Context, crawl string, ids []ID) ([]bool, error) {
	return f.move(ctx, crawl, ids, false)
}

func (f *Frontier) move(ctx context.Context, crawl string, ids []ID, complete bool) ([]bool, error) {
	crawl = normCrawl(crawl)
	found := make([]bool, len(ids))
	f.mu.Lock()
	if err := f.checkLocked(); err != nil {
		f.mu.Unlock()
		return nil, err
	}
	now := f.now().UnixNano()
	var b changes
	for i, id := range ids {
		u := uid(id)
		h := f.held[u]
		if h != nil && h.q.crawl.name != crawl {
			continue
		}
		if !complete {
			// A release writes nothing: the due key never moved.
			if h != nil && h.expiry > now {
				f.unholdLocked(u, now)
				if h.q.head != headUnknown {
					h.q.head = min(h.q.head, h.due)
				}
				found[i] = true
			}
			continue
		}
		q, due := (*queue)(nil), int64(0)
		if h != nil {
			f.unholdLocked(u, now)
			q, due = h.q, h.due
		} else {
			_, r, ok, err := f.getRecord(ctx, u)
			if err != nil {
				f.mu.Unlock()
				return nil, err
			}
			if !ok || r.crawl != crawl {
				continue
			}
			if q = f.lookupLocked(r.crawl, r.key); q == nil {
				continue
			}
			if r.state == stateCompleted {
				found[i] = true
				continue
			}
			due = r.due
			isDone, err := f.db.Has(ctx, doneKey(q.done, u))
			if err != nil {
				f.mu.Unlock()
				return nil, err
			}
			if isDone {
				found[i] = true
				continue
			}
		}
		found[i] = true
		// The done key first: a crash between the two leaves a due key
		// that GetURLs finds completed and deletes.
		b.keys = append(b.keys, store.FullEntry(doneKey(q.done, u), store.Value{}))
		b.deletes = append(b.deletes, store.FullEntry(dueKey(q.id, due, u), store.Value{}))
		q.queued = max(0, q.queued-1)
		q.completed++
	}
	if len(b.keys) == 0 {
		f.mu.Unlock()
		return found, nil
	}
	err := b.apply(ctx, f)
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return found, f.sync()
}
