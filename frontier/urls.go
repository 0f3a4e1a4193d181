package frontier

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// URLItem is a URL as the frontier knows it (url-frontier's URLItem of a
// KnownURLItem).
type URLItem struct {
	ID   ID
	Info URLInfo
	// Refetch is when the URL is due (queued) or due again (in transit:
	// when its transit ends); zero when it is completed.
	Refetch time.Time
	// Created is when the frontier first stored the URL, to the second.
	Created   time.Time
	InTransit bool
}

// IsCompleted reports whether the URL is completed: it is never handed out
// again.
func (it *URLItem) IsCompleted() bool { return it.Refetch.IsZero() }

// itemOf returns the item of u's record; h is u's hand-out, if any.
func itemOf(u uid, v store.Value, r *record, done bool, h *held, now int64) URLItem {
	it := URLItem{ID: ID(u), Info: r.info(string(v.Text)), Created: v.FirstSeen}
	if !done && r.state != stateCompleted {
		it.Refetch = time.Unix(0, r.due).UTC()
		if h != nil && h.expiry > now {
			it.InTransit, it.Refetch = true, time.Unix(0, h.expiry).UTC()
		}
	}
	return it
}

// heldOf returns u's hand-out, if any.
func (f *Frontier) heldOf(u uid) *held {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.held[u]; h != nil {
		c := *h
		return &c
	}
	return nil
}

// URLStatus returns what the frontier knows of url in crawl (ErrNotFound
// when nothing): the URL as first written, its queue, metadata and state.
func (f *Frontier) URLStatus(ctx context.Context, crawl, url string) (URLItem, error) {
	p, err := f.prepare(&Item{Info: URLInfo{URL: url, Crawl: crawl, Key: "-"}})
	if err != nil {
		return URLItem{}, err
	}
	v, r, found, err := f.getRecord(ctx, p.u)
	if err != nil {
		return URLItem{}, err
	}
	if !found || r.crawl != p.crawl {
		return URLItem{}, fmt.Errorf("%w: %q in crawl %q", ErrNotFound, url, p.crawl)
	}
	_, done := queueHashes(r.crawl, r.key)
	isDone, err := f.db.Has(ctx, doneKey(done, p.u))
	if err != nil {
		return URLItem{}, err
	}
	return itemOf(p.u, v, &r, isDone, f.heldOf(p.u), f.now().UnixNano()), nil
}

// ListParams selects the URLs ListURLs and CountURLs visit.
type ListParams struct {
	Crawl string
	// Key restricts them to one queue; empty: every queue of the crawl.
	Key string
	// Start skips the first Start URLs that match; Size bounds those
	// visited (ListURLs: 0 means 100; CountURLs ignores both).
	Start, Size int
	// Filter keeps the URLs that contain it (IgnoreCase: in any case).
	Filter     string
	IgnoreCase bool
}

func (p *ListParams) matches(url string) bool {
	switch {
	case p.Filter == "":
		return true
	case p.IgnoreCase:
		return strings.Contains(strings.ToLower(url), strings.ToLower(p.Filter))
	}
	return strings.Contains(url, p.Filter)
}

// visit calls fn for each URL of the queues p selects, queue by queue in
// key order, each queue's URLs in due order and then its completed ones.
// It reads without holding the frontier: a URL that moves meanwhile may be
// seen twice or not at all.
func (f *Frontier) visit(ctx context.Context, p *ListParams, fn func(URLItem) error) error {
	crawl := normCrawl(p.Crawl)
	f.mu.Lock()
	var qs []*queue
	if p.Key != "" {
		if q := f.lookupLocked(crawl, p.Key); q != nil {
			qs = []*queue{q}
		}
	} else {
		qs = f.sortedQueuesLocked(crawl)
	}
	f.mu.Unlock()
	for _, q := range qs {
		for _, done := range []bool{false, true} {
			pre := q.id
			if done {
				pre = q.done
			}
			var us []uid
			var dues []int64
			err := f.db.Scan(ctx, prefix8(pre), 64, 0, func(e store.Entry) error {
				if !e.Value.IsZero() {
					return nil
				}
				if done {
					us = append(us, parseDoneKey(&e.Hash))
					return nil
				}
				due, u := parseDueKey(&e.Hash)
				us, dues = append(us, u), append(dues, due)
				return nil
			})
			if err != nil {
				return err
			}
			completed := make([]bool, len(us))
			if !done {
				keys := make([]hashkey.Hash, len(us))
				for i, u := range us {
					keys[i] = doneKey(q.done, u)
				}
				if completed, err = f.db.HasBatch(ctx, keys); err != nil {
					return err
				}
			}
			now := f.now().UnixNano()
			for i, u := range us {
				v, r, found, err := f.getRecord(ctx, u)
				if err != nil {
					return err
				}
				if !found || r.crawl != q.crawl.name || r.key != q.key || !done && (completed[i] || r.due != dues[i]) {
					continue
				}
				if err := fn(itemOf(u, v, &r, done, f.heldOf(u), now)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ListURLs calls fn for the URLs p selects (at most Size, from the
// Start-th that matches the filter), in the order of visit.
func (f *Frontier) ListURLs(ctx context.Context, p ListParams, fn func(URLItem) error) error {
	size := p.Size
	if size <= 0 {
		size = 100
	}
	pos, sent := 0, 0
	err := f.visit(ctx, &p, func(it URLItem) error {
		if !p.matches(it.Info.URL) {
			return nil
		}
		pos++
		if pos <= p.Start {
			return nil
		}
		if err := fn(it); err != nil {
			return err
		}
		if sent++; sent >= size {
			return errStop
		}
		return nil
	})
	if err == errStop {
		err = nil
	}
	return err
}

// CountURLs counts the URLs of crawl (or of its queue key) that match the
// filter, whatever their state.
func (f *Frontier) CountURLs(ctx context.Context, p ListParams) (int64, error) {
	var n int64
	err := f.visit(ctx, &p, func(it URLItem) error {
		if p.matches(it.Info.URL) {
			n++
		}
		return nil
	})
	return n, err
}

// PurgeURLs deletes the URLs of crawl (or of its queue key) that the
// frontier first stored more than days days ago, whatever their state,
// and returns how many.
func (f *Frontier) PurgeURLs(ctx context.Context, crawl, key string, days int) (int64, error) {
	crawl = normCrawl(crawl)
	cutoff := f.now().Add(-time.Duration(days) * 24 * time.Hour)
	var old []URLItem
	err := f.visit(ctx, &ListParams{Crawl: crawl, Key: key}, func(it URLItem) error {
		if it.Created.Before(cutoff) {
			old = append(old, it)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	f.mu.Lock()
	var n int64
	var es []store.Entry
	now := f.now().UnixNano()
	for _, it := range old {
		u := uid(it.ID)
		_, r, found, err := f.getRecord(ctx, u)
		if err != nil {
			f.mu.Unlock()
			return 0, err
		}
		q := f.lookupLocked(r.crawl, r.key)
		if !found || q == nil {
			continue
		}
		f.unholdLocked(u, now)
		q.version++
		if it.IsCompleted() {
			q.completed = max(0, q.completed-1)
			es = append(es, store.FullEntry(doneKey(q.done, u), store.Value{}))
		} else {
			q.queued = max(0, q.queued-1)
			es = append(es, store.FullEntry(dueKey(q.id, r.due, u), store.Value{}))
		}
		es = append(es, store.FullEntry(recordKey(u), store.Value{}))
		n++
	}
	if len(es) > 0 {
		if _, err := f.db.DeleteBatch(ctx, es); err != nil {
			f.mu.Unlock()
			return 0, err
		}
	}
	f.mu.Unlock()
	return n, f.sync()
}
