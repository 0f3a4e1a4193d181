package frontier

import (
	"context"
	"math"
	"slices"
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
	// Three steps, so that the reads hold no lock: pick the queues that
	// may hand out (in memory, locked; they are reserved meanwhile), read
	// their due orders and records, then hand out under the lock what is
	// still valid.
	f.mu.Lock()
	if err := f.checkLocked(); err != nil || !f.active {
		f.mu.Unlock()
		return nil, err
	}
	now := f.now().UnixNano()
	picks := f.pickLocked(&p, now)
	dueBy := f.dueByLocked(now)
	f.mu.Unlock()
	var err error
	for _, pk := range picks {
		if err = ctx.Err(); err == nil {
			err = f.scanDue(ctx, pk, dueBy)
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		err = f.readPicks(ctx, picks)
	}
	f.mu.Lock()
	var b changes
	n := 0
	for _, pk := range picks {
		n += len(pk.keys)
	}
	out := make([]Handed, 0, n) // at most
	for _, pk := range picks {
		if err == nil {
			err = f.handLocked(ctx, pk, &b, &out, &p, now)
		}
		pk.q.busy = false
	}
	if err == nil && len(b.deletes) > 0 {
		// Under the lock: another call must not find them stored and
		// uncount them again.
		_, err = f.db.DeleteBatch(ctx, b.deletes)
	}
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pick is a queue GetURLs reads: what it found in the queue's due order.
type pick struct {
	q         *queue
	want      int // URLs it may hand out
	inTransit int
	version   uint64
	keys      []hashkey.Hash
	next      int64 // the first due time past the keys read
	done      []bool
	values    []store.Value
	records   []record
	found     []bool
}

// maxPicks bounds the queues one GetURLs reads when MaxQueues sets no
// bound.
const maxPicks = 1000

// pickLocked chooses the queues GetURLs reads, in turn from where the last
// call stopped, and reserves them (busy).
func (f *Frontier) pickLocked(p *GetParams, now int64) []*pick {
	crawl := normCrawl(p.Crawl)
	var picks []*pick
	budget := f.o.MaxInTransit - len(f.held)
	if p.MaxURLs > 0 {
		budget = min(budget, p.MaxURLs)
	}
	consider := func(q *queue) bool {
		if budget <= 0 || q.busy {
			return false
		}
		q.prune(now)
		switch {
		case q.settings.blockedUntil > now/int64(time.Second),
			q.settings.limit > 0 && q.completed >= int64(q.settings.limit),
			q.lastServed != 0 && q.lastServed+q.delay() > now,
			q.counted && q.queued == 0,
			q.head != headUnknown && q.head > f.dueByLocked(now):
			return false
		}
		inTransit := int(q.inTransit())
		want := maxPerCall
		if p.MaxPerQueue > 0 {
			want = p.MaxPerQueue - inTransit
		}
		want = min(want, budget)
		if want <= 0 {
			return false
		}
		q.busy = true
		picks = append(picks, &pick{q: q, want: want, inTransit: inTransit, version: q.version})
		return true
	}
	if p.Key != "" {
		if !p.AnyCrawl { // a queue is within a crawl (as the reference)
			if q := f.lookupLocked(crawl, p.Key); q != nil {
				consider(q)
			}
		}
		return picks
	}
	limit := maxPicks
	if p.MaxQueues > 0 {
		limit = p.MaxQueues
	}
	n := len(f.order)
	if n == 0 {
		return nil
	}
	start := f.cursor % n
	for i := 0; i < n && len(picks) < limit && budget > 0; i++ {
		j := (start + i) % n
		q := f.order[j]
		if !p.AnyCrawl && q.crawl.name != crawl {
			continue
		}
		if consider(q) {
			f.cursor = j + 1
		}
	}
	return picks
}

// scanDue reads a picked queue's due keys, holding no lock.
func (f *Frontier) scanDue(ctx context.Context, pk *pick, dueBy int64) error {
	pk.next = math.MaxInt64
	// The URLs in transit keep their places at the head of the due order:
	// read past them.
	err := f.db.Scan(ctx, prefix8(pk.q.id), 64, pk.want+pk.inTransit+1, func(e store.Entry) error {
		if !e.Value.IsZero() {
			return nil // a record whose id starts as the queue's: not a due key
		}
		due, _ := parseDueKey(&e.Hash)
		if due > dueBy || len(pk.keys) == pk.want+pk.inTransit {
			pk.next = due
			return errStop
		}
		pk.keys = append(pk.keys, e.Hash)
		return nil
	})
	if err != nil && err != errStop {
		return err
	}
	return nil
}

// readPicks reads, for the due keys the picks' scans found, whether their
// URLs are completed and their records, holding no lock: one batch of
// lookups and one of reads for all the picks (the index reads a batch
// in key order, each value block once), not one read a URL.
func (f *Frontier) readPicks(ctx context.Context, picks []*pick) error {
	n := 0
	for _, pk := range picks {
		n += len(pk.keys)
	}
	if n == 0 {
		return nil
	}
	done := make([]hashkey.Hash, 0, n)
	recs := make([]hashkey.Hash, 0, n)
	for _, pk := range picks {
		for i := range pk.keys {
			// A URL in transit is read all the same: reading is cheaper
			// than asking, and it may be due by the time it is handed out.
			_, u := parseDueKey(&pk.keys[i])
			done = append(done, doneKey(pk.q.done, u))
			recs = append(recs, recordKey(u))
		}
	}
	isDone, err := f.db.HasBatch(ctx, done)
	if err != nil {
		return err
	}
	values, found, err := f.db.GetBatch(ctx, recs)
	if err != nil {
		return err
	}
	k := 0
	for _, pk := range picks {
		m := len(pk.keys)
		pk.done, pk.values, pk.found = isDone[k:k+m:k+m], values[k:k+m:k+m], found[k:k+m:k+m]
		pk.records = make([]record, m)
		for i := range m {
			if !pk.found[i] {
				continue
			}
			if pk.records[i], err = parseRecord(pk.values[i].Data); err != nil {
				return err
			}
		}
		k += m
	}
	return nil
}

// handLocked hands out what a pick read that is still due and valid, and
// deletes (into b) the due keys it found stale.
func (f *Frontier) handLocked(ctx context.Context, pk *pick, b *changes, out *[]Handed, p *GetParams, now int64) error {
	q := pk.q
	if f.queues[q.id] != q {
		return nil // deleted meanwhile
	}
	reread := q.version != pk.version
	if reread {
		// Changed meanwhile (an update, a completion): read again.
		for i := range pk.keys {
			if err := f.readKey(ctx, pk, i); err != nil {
				return err
			}
		}
	}
	q.prune(now)
	expiry := now + int64(p.Transit)
	budget := pk.want
	if p.MaxURLs > 0 {
		budget = min(budget, p.MaxURLs-len(*out))
	}
	budget = min(budget, f.o.MaxInTransit-len(f.held))
	next := pk.next
	sent := 0
	for i := range pk.keys {
		due, u := parseDueKey(&pk.keys[i])
		if h := f.held[u]; h != nil && h.expiry > now {
			next = min(next, h.expiry) // due again then, unless it ends first
			continue
		}
		if f.pending[u] {
			continue
		}
		if !reread && !pk.isPlace(i) {
			// Read unlocked: a put may have written the record since
			// (new URLs do not change the version). Stale keys are
			// rare: read it again, locked, before deleting it.
			if err := f.readKey(ctx, pk, i); err != nil {
				return err
			}
		}
		r := &pk.records[i]
		if !pk.isPlace(i) {
			// Not the URL's place in the queue. Deleted since it was
			// read (completed, moved), it was uncounted then; still
			// stored, it is a crash's leftover, counted by the recount.
			stored, err := f.db.Has(ctx, pk.keys[i])
			if err != nil {
				return err
			}
			if stored {
				f.unholdLocked(u, now)
				b.deletes = append(b.deletes, store.FullEntry(pk.keys[i], store.Value{}))
				q.queued = max(0, q.queued-1)
			}
			continue
		}
		if sent == budget {
			next = min(next, due)
			break
		}
		f.unholdLocked(u, now) // handed out before, its transit expired
		f.holdLocked(q, u, due, expiry, contentSum(r.priority, r.data, r.metadata))
		*out = append(*out, Handed{ID: ID(u), Info: r.info(string(pk.values[i].Text))})
		sent++
	}
	if sent > 0 {
		q.lastServed = now
		q.crawl.gets += int64(sent)
		next = min(next, expiry)
	}
	q.head = next
	if q.headMoved {
		// URLs became due while it was read unlocked, perhaps past what
		// it read: read them next time.
		q.head, q.headMoved = headUnknown, false
	}
	return nil
}

// readKey reads the record of the i-th due key pk read, and whether its
// URL is completed.
func (f *Frontier) readKey(ctx context.Context, pk *pick, i int) error {
	_, u := parseDueKey(&pk.keys[i])
	var err error
	if pk.values[i], pk.records[i], pk.found[i], err = f.getRecord(ctx, u); err != nil {
		return err
	}
	pk.done[i], err = f.db.Has(ctx, doneKey(pk.q.done, u))
	return err
}

// isPlace reports whether the i-th due key pk read is its URL's place in
// the queue: its record is stored and names this queue and due time, and
// the URL is not completed.
func (pk *pick) isPlace(i int) bool {
	due, _ := parseDueKey(&pk.keys[i])
	r := &pk.records[i]
	return pk.found[i] && !pk.done[i] && r.state != stateCompleted && r.due == due && r.crawl == pk.q.crawl.name && r.key == pk.q.key
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

// Extend renews the transit of the URLs ids of crawl that are in transit:
// each is due again transit from now (0: DefaultTransit) unless completed,
// updated or released first. It reports which were in transit; one whose
// transit has ended is not (it is due again, and may be handed out to
// another caller). Like handing out, it writes nothing.
func (f *Frontier) Extend(ctx context.Context, crawl string, ids []ID, transit time.Duration) ([]bool, error) {
	if transit <= 0 {
		transit = DefaultTransit
	}
	crawl = normCrawl(crawl)
	found := make([]bool, len(ids))
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkLocked(); err != nil {
		return nil, err
	}
	now := f.now().UnixNano()
	expiry := now + int64(transit)
	for i, id := range ids {
		h := f.held[uid(id)]
		if h == nil || h.q.crawl.name != crawl || h.expiry <= now {
			continue
		}
		q := h.q
		q.prune(now)
		q.removeTransit(h.expiry)
		q.addTransit(expiry, 1) // q.head stays: it is never later than it was
		h.expiry = expiry
		found[i] = true
	}
	return found, nil
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
	b := newChanges(len(ids))
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
				h.q.lowerHead(h.due)
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
		q.version++
		// The done key first: a crash between the two leaves a due key
		// that GetURLs finds completed and deletes.
		b.keys = append(b.keys, store.FullEntry(doneKey(q.done, u), store.Value{}))
		b.deletes = append(b.deletes, store.FullEntry(dueKey(q.id, due, u), store.Value{}))
		q.queued = max(0, q.queued-1)
		q.completed++
	}
	if slices.Contains(found, true) {
		f.signalLocked() // released, or a queue's transit shorter
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

// dueSlack is how far in the future a due time may be and still be due:
// URLs put at once get due times a nanosecond apart, so that a queue is
// FIFO, and those run ahead of the clock when many are put in a
// nanosecond (or on a test's fake clock).
const dueSlack = int64(time.Millisecond)

// dueByLocked returns the latest due time that is due now.
func (f *Frontier) dueByLocked(now int64) int64 { return max(now+dueSlack, f.lastDue) }
