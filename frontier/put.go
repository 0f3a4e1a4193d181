package frontier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// URLInfo is a URL as the frontier hands it out: url-frontier's URLInfo,
// with the HTTP frontier's request bytes and priority.
type URLInfo struct {
	// URL is the URL as first written (a later spelling of the same
	// identity does not replace it).
	URL string
	// Key is the URL's queue; empty on a put: the URL's host.
	Key string
	// Crawl is the crawl; empty on a put: DefaultCrawl.
	Crawl string
	// Metadata is the caller's, kept with the URL (url-frontier's).
	Metadata map[string][]string
	// Data is opaque bytes kept with the URL (a serialised scrapy request).
	Data []byte
	// Priority orders a queue's URLs: a positive priority p makes the URL
	// due p seconds before it was put.
	Priority int32
}

// Item is one URL to put.
type Item struct {
	Info URLInfo
	// Fingerprint, when set, is the URL's identity instead of its
	// profile's (a scrapy request fingerprint); it is hashed into a space
	// of its own, so it never equals a URL's identity.
	Fingerprint []byte
	// Known marks an update of a URL (url-frontier's KnownURLItem): it is
	// created when unknown, its metadata and data are replaced, and it is
	// due again at Refetch, or completed when Refetch is zero. Without
	// Known the item is discovered: created when unknown, else left as it
	// is.
	Known   bool
	Refetch time.Time
}

// PutStatus is what Put did with an item.
type PutStatus uint8

const (
	// PutNew: the URL was not known and is now queued (or completed).
	PutNew PutStatus = iota
	// PutUpdated: a known URL was updated (a Known item).
	PutUpdated
	// PutPresent: a discovered URL was already known in its crawl;
	// nothing changed.
	PutPresent
	// PutInvalid: the item was refused (not a URL, a URL without a host
	// and no key, a key too long); PutResult.Err says why.
	PutInvalid
)

// PutResult is the answer for one item.
type PutResult struct {
	Status PutStatus
	Err    error // why the item is invalid
}

// prepared is an item with its identity worked out.
type prepared struct {
	item  *Item
	crawl string
	key   string
	u     uid
	rec   hashkey.Hash
}

// prepare works out crawl, queue key and id of an item.
func (f *Frontier) prepare(it *Item) (prepared, error) { return f.prepareIn(it, nil) }

// prepareIn is prepare with buf (nil: a new one) as the buffer of the
// URL's canonical form: a put reuses one for its items.
func (f *Frontier) prepareIn(it *Item, buf *[]byte) (prepared, error) {
	p := prepared{item: it, crawl: normCrawl(it.Info.Crawl), key: it.Info.Key}
	if it.Info.URL == "" {
		return p, fmt.Errorf("%w: an empty URL", ErrInvalid)
	}
	if err := checkSizes(&it.Info); err != nil {
		return p, err
	}
	var id hashkey.Hash
	if p.key == "" {
		// The host of the canonical form is the queue: canonicalise once,
		// and hash that string when the profile says how.
		if buf == nil {
			buf = new([]byte)
		}
		canon, err := f.o.Profile.AppendHashed((*buf)[:0], it.Info.URL)
		if err != nil {
			return p, err
		}
		*buf = canon
		if p.key = hostOf(string(canon)); p.key == "" {
			return p, fmt.Errorf("%w: URL %q has no host to queue it by: give a key", ErrInvalid, it.Info.URL)
		}
		if d, ok := f.o.Profile.(digester); ok {
			id = d.Digest().Sum(canon)
		} else if id, err = f.o.Profile.Hash(it.Info.URL); err != nil {
			return p, err
		}
	} else {
		var err error
		if id, err = f.o.Profile.Hash(it.Info.URL); err != nil {
			return p, err
		}
	}
	if len(it.Fingerprint) > 0 {
		id = fingerprintIdentity(it.Fingerprint)
	}
	if len(p.key) > MaxKeyLen {
		return p, fmt.Errorf("%w: queue key of %d bytes (at most %d)", ErrInvalid, len(p.key), MaxKeyLen)
	}
	p.u = uidOf(p.crawl, id)
	p.rec = recordKey(p.u)
	return p, nil
}

// digester is a profile whose identity is a digest of its AppendHashed
// string (urlhash.Profile).
type digester interface{ Digest() hashkey.Digest }

// checkSizes refuses a URL, data or metadata longer than a record keeps
// (maxFieldLength, 1 MiB, each).
func checkSizes(in *URLInfo) error {
	if len(in.URL) > maxFieldLength || len(in.Data) > maxFieldLength {
		return fmt.Errorf("%w: URL of %d bytes, data of %d (at most %d each)", ErrInvalid, len(in.URL), len(in.Data), maxFieldLength)
	}
	n := 0
	for k, vs := range in.Metadata {
		n += len(k)
		for _, v := range vs {
			n += len(v)
		}
	}
	if n > maxFieldLength {
		return fmt.Errorf("%w: metadata of %d bytes (at most %d)", ErrInvalid, n, maxFieldLength)
	}
	return nil
}

// hostOf returns the host of a canonical URL (without user info or
// port), or "".
func hostOf(canon string) string {
	_, rest, ok := strings.Cut(canon, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if strings.HasPrefix(rest, "[") {
		if i := strings.IndexByte(rest, ']'); i >= 0 {
			return rest[:i+1]
		}
		return rest
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// nextDueLocked returns the due time of a URL put now with priority p:
// distinct and increasing for URLs put at once, so that a queue is FIFO.
func (f *Frontier) nextDueLocked(now time.Time, p int32) int64 {
	d := max(now.UnixNano(), f.lastDue+1)
	f.lastDue = d
	if p > 0 {
		d -= int64(p) * int64(time.Second)
	}
	return d
}

// Put puts items and answers each, in order, once what it did is durable
// (an fsync shared with concurrent callers). An error of the index fails
// the whole call (the items may be resent).
func (f *Frontier) Put(ctx context.Context, items []Item) ([]PutResult, error) {
	res := make([]PutResult, len(items))
	preps := make([]prepared, 0, len(items))
	discovered := make([]int, 0, len(items)) // positions in preps
	buf := make([]byte, 0, 256)
	for i := range items {
		p, err := f.prepareIn(&items[i], &buf)
		if err != nil {
			res[i] = PutResult{Status: PutInvalid, Err: err}
			continue
		}
		if !items[i].Known {
			discovered = append(discovered, len(preps))
		}
		preps = append(preps, p)
	}
	pos := make([]int, 0, len(preps)) // item of each prepared
	for i := range items {
		if res[i].Err == nil {
			pos = append(pos, i)
		}
	}
	// Most discovered URLs of a crawl are known already: find those
	// first, without the lock (the filter answers most new ones).
	fresh := make([]bool, len(preps))
	if len(discovered) > 0 {
		keys := make([]hashkey.Hash, len(discovered))
		for j, k := range discovered {
			keys[j] = preps[k].rec
		}
		found, err := f.db.HasBatch(ctx, keys)
		if err != nil {
			return nil, err
		}
		for j, k := range discovered {
			if found[j] {
				res[pos[k]].Status = PutPresent
			} else {
				fresh[k] = true
			}
		}
	}
	if err := f.create(ctx, preps, fresh, res, pos); err != nil {
		return nil, err
	}
	var updated bool
	for k := range preps {
		if preps[k].item.Known {
			updated = true
			break
		}
	}
	if updated {
		if err := f.update(ctx, preps, res, pos); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// create stores the discovered URLs that are new: their queues' meta
// entries, then their due keys, records and intent in one write, made
// durable by one fsync (shared with concurrent callers). A crash before it
// may leave a due key without its record (GetURLs deletes it) or a record
// without its due key (Open repairs it: see intent.go).
func (f *Frontier) create(ctx context.Context, preps []prepared, fresh []bool, res []PutResult, pos []int) error {
	var cand []int
	for k, ok := range fresh {
		if ok {
			cand = append(cand, k)
		}
	}
	if len(cand) == 0 {
		return nil
	}
	f.mu.Lock()
	if err := f.checkLocked(); err != nil {
		f.mu.Unlock()
		return err
	}
	// Again under the lock: another put may have created some since.
	keys := make([]hashkey.Hash, len(cand))
	for j, k := range cand {
		keys[j] = preps[k].rec
	}
	found, err := f.db.HasBatch(ctx, keys)
	if err != nil {
		f.mu.Unlock()
		return err
	}
	now := f.now()
	es := make([]store.Entry, 0, 2*len(cand)+1) // due keys, records and their intent: one write
	us := make([]uid, 0, len(cand))
	type made struct {
		q   *queue
		u   uid
		due int64
	}
	news := make([]made, 0, len(cand))
	for j, k := range cand {
		p := &preps[k]
		if found[j] || f.pending[p.u] {
			res[pos[k]].Status = PutPresent
			continue
		}
		q := f.queueLocked(p.crawl, p.key)
		if err := f.persistLocked(ctx, q); err != nil {
			for _, m := range news {
				delete(f.pending, m.u)
			}
			f.mu.Unlock()
			return err
		}
		f.pending[p.u] = true
		info := &p.item.Info
		due := f.nextDueLocked(now, info.Priority)
		es = append(es, store.FullEntry(dueKey(q.id, due, p.u), store.Value{}))
		r := record{state: stateQueued, due: due, crawl: p.crawl, key: p.key, priority: info.Priority, data: info.Data, metadata: info.Metadata}
		es = append(es, store.FullEntry(p.rec, recordValue(&r, info.URL, now, due)))
		us = append(us, p.u)
		news = append(news, made{q, p.u, due})
		res[pos[k]].Status = PutNew
	}
	var in store.Entry
	if len(us) > 0 {
		in = f.intentLocked(us)
		es = append(es, in)
	}
	f.mu.Unlock()
	if len(es) > 0 {
		if err = f.db.PutBatch(ctx, es); err == nil {
			err = f.sync()
		}
		if err == nil {
			err = f.settle(ctx, in)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		f.signalLocked()
	}
	for _, m := range news {
		delete(f.pending, m.u)
		if err == nil {
			m.q.queued++
			m.q.crawl.puts++
			m.q.lowerHead(m.due)
		}
	}
	return err
}

// recordValue returns the value of a URL's record.
func recordValue(r *record, url string, created time.Time, due int64) store.Value {
	last := max(created.Unix(), min(due/int64(time.Second), store.MaxTime.Unix()))
	return store.Value{Text: []byte(url), Data: r.appendBinary(nil), FirstSeen: created.Truncate(time.Second), LastSeen: time.Unix(last, 0)}
}

// update applies the Known items: each URL's record is read and
// rewritten, its due key moved (or replaced by a done key), under the
// lock; one fsync ends the call.
func (f *Frontier) update(ctx context.Context, preps []prepared, res []PutResult, pos []int) error {
	f.mu.Lock()
	if err := f.checkLocked(); err != nil {
		f.mu.Unlock()
		return err
	}
	b := newChanges(len(preps))
	now := f.now()
	for k := range preps {
		p := &preps[k]
		if !p.item.Known {
			continue
		}
		st, err := f.updateLocked(ctx, &b, p, now)
		if err != nil {
			f.mu.Unlock()
			return err
		}
		res[pos[k]].Status = st
	}
	var in store.Entry
	if len(b.records) > 0 {
		us := make([]uid, len(b.records))
		for i := range b.records {
			copy(us[i][:], b.records[i].Hash[:])
		}
		in = f.intentLocked(us)
		b.records = append(b.records, in)
	}
	err := b.apply(ctx, f)
	f.signalLocked()
	f.mu.Unlock()
	if err == nil {
		err = f.sync()
	}
	if err == nil && len(b.records) > 0 {
		err = f.settle(ctx, in)
	}
	return err
}

// changes are the writes of a transition batch, applied in order: new
// keys, records, deletions (see update).
type changes struct {
	keys, records, deletes []store.Entry
}

// newChanges returns changes with room for the keys and deletions of n
// URLs (most batches write one of each a URL).
func newChanges(n int) changes {
	return changes{keys: make([]store.Entry, 0, n), deletes: make([]store.Entry, 0, n)}
}

func (b *changes) apply(ctx context.Context, f *Frontier) error {
	if len(b.keys) > 0 {
		if err := f.db.PutBatch(ctx, b.keys); err != nil {
			return err
		}
	}
	if len(b.records) > 0 {
		if err := f.db.PutBatch(ctx, b.records); err != nil {
			return err
		}
	}
	if len(b.deletes) > 0 {
		if _, err := f.db.DeleteBatch(ctx, b.deletes); err != nil {
			return err
		}
	}
	return nil
}

// getRecord reads the record of u: its value, decoded record and whether
// it is stored.
func (f *Frontier) getRecord(ctx context.Context, u uid) (store.Value, record, bool, error) {
	v, err := f.db.Get(ctx, recordKey(u))
	if errors.Is(err, store.ErrNotFound) {
		return v, record{}, false, nil
	}
	if err != nil {
		return v, record{}, false, err
	}
	r, err := parseRecord(v.Data)
	return v, r, err == nil, err
}

// updateLocked adds to b the writes of one Known item and counts them.
// A URL is completed when its done key is stored (its record may still say
// queued: the record is rewritten only when what it holds changes).
func (f *Frontier) updateLocked(ctx context.Context, b *changes, p *prepared, now time.Time) (PutStatus, error) {
	info := &p.item.Info
	if h := f.held[p.u]; h != nil && p.item.Refetch.IsZero() && h.q.crawl.name == p.crawl && h.q.key == p.key &&
		h.sum == contentSum(info.Priority, info.Data, info.Metadata) {
		// A URL handed out, completed with what it holds: nothing to
		// read, its record stays (the done key says completed).
		f.unholdLocked(p.u, now.UnixNano())
		h.q.version++
		b.keys = append(b.keys, store.FullEntry(doneKey(h.q.done, p.u), store.Value{}))
		b.deletes = append(b.deletes, store.FullEntry(dueKey(h.q.id, h.due, p.u), store.Value{}))
		h.q.queued = max(0, h.q.queued-1)
		h.q.completed++
		return PutUpdated, nil
	}
	v, old, found, err := f.getRecord(ctx, p.u)
	if err != nil {
		return 0, err
	}
	nowNs := now.UnixNano()
	q := f.queueLocked(p.crawl, p.key)
	if err := f.persistLocked(ctx, q); err != nil {
		return 0, err
	}
	q.version++
	r := record{state: stateQueued, crawl: p.crawl, key: p.key, priority: info.Priority, data: info.Data, metadata: info.Metadata}
	complete := p.item.Refetch.IsZero()
	if complete {
		r.state = stateCompleted
	} else {
		r.due = p.item.Refetch.UnixNano()
	}
	status, created, url := PutNew, now, info.URL
	oldDone := false
	if found {
		status, created, url = PutUpdated, v.FirstSeen, string(v.Text)
		f.unholdLocked(p.u, nowNs)
		oq := f.lookupLocked(old.crawl, old.key)
		if oq == nil {
			oq = f.queueLocked(old.crawl, old.key) // deleted meanwhile: counts go nowhere
		}
		oq.version++
		oldDone = old.state == stateCompleted
		if !oldDone {
			if oldDone, err = f.db.Has(ctx, doneKey(oq.done, p.u)); err != nil {
				return 0, err
			}
		}
		switch {
		case oldDone && complete && oq == q:
			// Completed again: nothing moves.
		case oldDone:
			oq.completed = max(0, oq.completed-1)
			b.deletes = append(b.deletes, store.FullEntry(doneKey(oq.done, p.u), store.Value{}))
		default:
			oq.queued = max(0, oq.queued-1)
			if oq != q || old.due != r.due {
				b.deletes = append(b.deletes, store.FullEntry(dueKey(oq.id, old.due, p.u), store.Value{}))
			}
		}
		if complete && oq == q {
			// Keep the record's due: the due key it names is deleted,
			// and the done key says completed.
			r.state, r.due = old.state, old.due
		}
	} else {
		q.crawl.puts++
	}
	switch {
	case complete && !(found && oldDone && f.lookupLocked(old.crawl, old.key) == q):
		b.keys = append(b.keys, store.FullEntry(doneKey(q.done, p.u), store.Value{}))
		q.completed++
	case !complete:
		b.keys = append(b.keys, store.FullEntry(dueKey(q.id, r.due, p.u), store.Value{}))
		q.queued++
		q.lowerHead(r.due)
	}
	if !found || !sameRecord(&old, &r) {
		b.records = append(b.records, store.FullEntry(p.rec, recordValue(&r, url, created, max(r.due, nowNs))))
	}
	return status, nil
}

// sameRecord reports whether two records hold the same.
func sameRecord(a, b *record) bool {
	if a.state != b.state || a.due != b.due || a.crawl != b.crawl || a.key != b.key || a.priority != b.priority ||
		!bytes.Equal(a.data, b.data) || len(a.metadata) != len(b.metadata) {
		return false
	}
	for k, va := range a.metadata {
		vb, ok := b.metadata[k]
		if !ok || !slices.Equal(va, vb) {
			return false
		}
	}
	return true
}
