// Package frontier is the crawl frontier: the URLs a crawl has yet to
// fetch, in queues per host, handed out when due and politely, kept
// durably in an index of its own. It holds the semantics of
// crawler-commons' URL Frontier (package frontier/urlfrontier serves it
// over gRPC; urlhash serve's /v1/frontier/ endpoints serve it to scrapy),
// as a plain Go type that tests drive without a network.
//
// # Basics
//
//	f, err := frontier.Open(dir, nil)
//	res, err := f.Put(ctx, []frontier.Item{{Info: frontier.URLInfo{URL: "https://example.com/"}}})
//	hs, err := f.GetURLs(ctx, frontier.GetParams{MaxPerQueue: 10})
//	found, err := f.Complete(ctx, "", []frontier.ID{hs[0].ID})
//
// A crawl (an ID; empty: DefaultCrawl) is a namespace of queues. A URL is
// known per crawl by its identity (Options.Profile: urlhash's, the URL
// Standard's canonical form, so that spellings it makes equal are one URL,
// kept and handed out as first written), or by an explicit fingerprint
// (Item.Fingerprint, a space of its own). Its queue is its Key, by
// default the host of its canonical form (lowercase, punycode, no port).
// Put creates discovered URLs that are unknown (a known one is left as
// it is) and applies Known items: the URL is due again at Refetch, or
// completed without one, and a completed URL is never handed out again.
// GetURLs hands out due URLs in due order (FIFO; a positive priority p
// makes a URL due p seconds before it was put), queue after queue in
// turn, honouring per queue a politeness delay since it last handed out
// (SetDelay; DefaultDelay, 1 s, until set), a block (BlockQueueUntil), a
// limit of completed URLs (SetCrawlLimit) and a cap of URLs in transit
// (GetParams.MaxPerQueue); nothing while the frontier is inactive
// (SetActive). A URL handed out is in transit until it is updated,
// completed or released, or until its transit (GetParams.Transit,
// DefaultTransit; Extend renews it) ends and it is due again. A caller
// that found nothing can wait for Changes or until NextDue (a long poll).
//
// # Storage
//
// The frontier's state is an index (package index) of its own: its
// durability, group commit, filter and key table are the index's. Four
// kinds of entries, all 32-byte keys:
//
//	record   uid[16] 0[16]              the URL as first written (Text), its crawl, queue,
//	                                    due time, metadata, data (Data), created (FirstSeen)
//	due      queue[8] due[8] uid[16]    no value: the queue's URLs not completed, by due time
//	done     done[8] uid[16] 0[8]       no value: the queue's completed URLs
//	meta     0[4] hash[28]              a queue's crawl, key and settings; a crawl's delay;
//	                                    the active flag; the intent of a write in progress
//
// uid is 16 bytes of SHA-256 over the crawl and the identity; queue and
// done are 8 bytes of SHA-256 over the crawl and the queue key (with
// separate domains), big-endian due times in nanoseconds, so that a
// prefix scan of a queue's 8 bytes reads its URLs in due order without
// reading anything else. The due and done entries have no value: the
// index keeps them in its key table, 32 bytes each. A URL is completed
// when its done entry is stored (its record may still say queued: it is
// rewritten only when what it holds changes).
//
// What is in memory is bounded by the queues, never the URLs queued: per
// queue its key, settings and counts (about 200 bytes), plus the URLs in
// transit (about 100 bytes each, at most Options.MaxInTransit).
//
// # Durability
//
// Put returns once what it wrote is durable, after one fsync shared with
// concurrent callers: a batch's due entries, records and an intent (a meta
// entry naming the URLs whose records it writes) go into the index in one
// write, and the intent is deleted once that is durable. A crash before
// the fsync may keep a due entry without its record (GetURLs deletes it)
// or a record without its due entry (a power loss may keep one store's
// writes and not another's): Open repairs each URL an intent left names
// (its due or done entry, its queue's meta entry), so that no URL is known
// without its place in a queue. A completion writes the done entry
// before it deletes the due entry, and GetURLs skips a due entry whose
// URL is completed. Handing out writes nothing: the URLs in transit are
// held in memory, so after a restart they are due at once (handed out
// again: at least once, never lost). Settings are durable when their call
// returns.
//
// # Restart
//
// Open reads the meta entries (every queue and its settings, a few
// milliseconds per thousand queues), repairs what the intents a crash left
// name (a few reads each: they are the puts that were in progress) and
// returns: GetURLs answers at once, reading each queue's due order as it
// serves it. The queues' counts are made in the background, a key-range
// count per queue (Stats.Recounting meanwhile; the queues not yet
// recounted count nothing).
//
// # Differences from the reference service
//
// Two deliberate differences from crawler-commons' reference service: a
// URL is known per crawl by its urlhash identity, not by its exact string
// (within its queue), so spellings the URL Standard makes equal are one
// URL, handed out as first written; and a string that is not a URL (or
// has no host and no key) is refused (acked SKIPPED over gRPC) rather
// than queued. Besides: the default delay is per crawl (SetDelay with an
// empty key, for the crawl named); a queue's delay is measured in
// nanoseconds from its last hand-out (the reference compares whole
// seconds, so a delay of 0 serves a queue once a second); PutURLs acks
// in the order the items came (the reference acks as its writer threads
// finish).
package frontier
