package frontier

import (
	"math"
	"time"
)

// Changes returns a channel that is closed at the next change that may let
// GetURLs hand out what it could not: URLs put or due again, released or
// completed (a queue's cap of URLs in transit), settings changed, the
// frontier activated or closed. A caller that found nothing takes the
// channel before it calls GetURLs, then waits on it and on NextDue (a long
// poll).
func (f *Frontier) Changes() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changed == nil {
		f.changed = make(chan struct{})
		if f.closed {
			close(f.changed)
		}
	}
	return f.changed
}

// signalLocked closes the channel of Changes, if one was taken.
func (f *Frontier) signalLocked() {
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}

// NextDue returns when the queues p selects may next hand out a URL
// without a change (see Changes): the earliest end of a transit, of a
// politeness delay, of a block, or due time of a queue's next URL, as far
// as the frontier knows without reading; a time not after now when one
// may hand out now; the zero time when none will without a change.
func (f *Frontier) NextDue(p GetParams) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || !f.active {
		return time.Time{}
	}
	now := f.now().UnixNano()
	next := int64(math.MaxInt64)
	visit := func(q *queue) {
		q.prune(now)
		if len(q.transit) > 0 {
			next = min(next, q.transit[0].expiry)
		}
		switch {
		case q.counted && q.queued == 0,
			q.settings.limit > 0 && q.completed >= int64(q.settings.limit),
			p.MaxPerQueue > 0 && q.inTransit() >= int64(p.MaxPerQueue):
			return // until a change, or the end of a transit
		}
		t := now
		if q.head != headUnknown {
			t = max(t, q.head-dueSlack)
		}
		if q.lastServed != 0 {
			t = max(t, q.lastServed+q.delay())
		}
		t = max(t, q.settings.blockedUntil*int64(time.Second))
		next = min(next, t)
	}
	crawl := normCrawl(p.Crawl)
	switch {
	case p.Key != "":
		if q := f.lookupLocked(crawl, p.Key); q != nil && !p.AnyCrawl {
			visit(q)
		}
	case p.AnyCrawl:
		for _, q := range f.order {
			visit(q)
		}
	default:
		if c := f.crawls[crawl]; c != nil {
			for _, q := range c.queues {
				visit(q)
			}
		}
	}
	if next == math.MaxInt64 {
		return time.Time{}
	}
	return time.Unix(0, next)
}
