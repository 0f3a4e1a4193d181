package frontier

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/store"
)

// ID names a URL within its crawl (a hash of the crawl and the URL's
// identity): the id of the HTTP frontier's requests.
type ID [16]byte

// String returns id in lowercase hex.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// ParseID parses the 32 hex digits of an ID.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("%w: id %q: want %d hex digits", ErrInvalid, s, 2*len(id))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("%w: id %q: %v", ErrInvalid, s, err)
	}
	return id, nil
}

// A Frontier is the crawl frontier: URLs per crawl in queues keyed by
// host, handed out when due, politely, and kept in an index of its own.
// It is safe for concurrent use. See the package documentation.
type Frontier struct {
	o      Options
	db     *index.DB
	commit committer

	mu      sync.Mutex
	closed  bool
	active  bool
	crawls  map[string]*crawl
	queues  map[uint64]*queue // by due-order hash
	order   []*queue          // round-robin order of GetURLs
	cursor  int
	pending map[uid]bool  // URLs being created, between their writes
	held    map[uid]*held // URLs handed out (in transit, or expired and not handed out again)
	lastDue int64         // the last due time given to a new URL (ns)
	// intentSeq numbers the intents (see intent.go) from the time of Open.
	intentSeq uint64
	changed   chan struct{} // closed at the next change (see Changes), when taken

	recounting bool
	recountWG  sync.WaitGroup
	stop       chan struct{}
}

// crawl is a crawl's queues and settings.
type crawl struct {
	name       string
	delay      int64 // default politeness delay (ns)
	queues     map[string]*queue
	puts, gets int64 // URLs put new, handed out, since Open
}

// queue is what the frontier holds in memory of a queue: its counts and
// settings, never its URLs.
type queue struct {
	crawl    *crawl
	key      string
	id, done uint64 // its due keys' and done keys' prefixes
	settings queueSettings

	queued    int64 // URLs in its due order, not in transit
	completed int64
	transit   []transit // hand-outs not yet ended, by expiry
	counted   bool      // the counts are known (a restart recounts them)
	persisted bool      // its meta entry is written
	// head is the earliest due time in its due order when known
	// (headUnknown: read the due order to know).
	head       int64
	lastServed int64  // when it last handed out (ns)
	busy       bool   // a GetURLs is reading it (see pickLocked)
	headMoved  bool   // a URL became due while busy (see lowerHead)
	version    uint64 // counts the changes of its keys other than new URLs
}

// held is a URL handed out: in memory only, so that handing out writes
// nothing (after a restart, what was in transit is due at once).
type held struct {
	q      *queue
	due    int64  // its due key's time: the key stays in place
	expiry int64  // when its transit ends (ns)
	sum    uint64 // what its record holds (see contentSum)
}

// transit counts the URLs of a queue handed out with one expiry.
type transit struct {
	expiry int64 // ns
	n      int64
}

const headUnknown = math.MinInt64

// frontierValueBlock is the value block size of the frontier's index
// (index.Options.ValueBlockSize).
const frontierValueBlock = 4 << 10

// Open opens the frontier kept in the index directory dir (created if
// needed): it reads the queues' settings and returns, and counts the
// queues' URLs in the background (Stats says Recounting meanwhile).
func Open(dir string, opts *Options) (*Frontier, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	var io index.Options
	if o.Index != nil {
		io = *o.Index
	} else {
		// A GetURLs reads the records of thousands of URLs, each alone
		// in a block of its own: a block of 16 KiB (the index's
		// default) took 28 µs to decode, half the CPU of a drain of 10M
		// URLs over 100k queues. Blocks of 4 KiB (ValueBlockSize),
		// stored uncompressed (StoredValues): a read costs 4-5 µs
		// against 22-25 µs to decode one compressed. Batches read stored blocks without the
		// cache, so it is small: it serves single reads (a completion
		// of a URL not in transit, GetURLStatus).
		io = index.Options{BlockCacheSize: 8 << 20, IndexCacheSize: 16 << 20, ValueBlockSize: frontierValueBlock, StoredValues: true}
	}
	if io.Profile == "" {
		io.Profile = "frontier:" + query.ProfileRecord(o.Profile)
	}
	db, err := index.Open(dir, &io)
	if err != nil {
		return nil, err
	}
	f := &Frontier{o: o, db: db, active: true, crawls: map[string]*crawl{}, queues: map[uint64]*queue{},
		pending: map[uid]bool{}, held: map[uid]*held{}, stop: make(chan struct{}), intentSeq: uint64(o.now().UnixNano())}
	f.commit.init(db)
	ctx := context.Background()
	intents, err := f.load(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	n, err := f.repair(ctx, intents)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("frontier: repairing what a crash left: %w", err)
	}
	if n > 0 {
		o.Logger.Warn("frontier: repaired URLs a crash left without their place in a queue", "urls", n)
	}
	if !o.noRecount {
		f.recounting = true
		f.recountWG.Add(1)
		go f.recount()
	}
	return f, nil
}

// load reads the meta entries: every queue with its settings, the
// crawls' default delays and the active flag, and returns the intents a
// crash left.
func (f *Frontier) load(ctx context.Context) ([]intent, error) {
	var intents []intent
	err := f.db.Scan(ctx, make([]byte, 4), metaBits, 0, func(e store.Entry) error {
		d := e.Value.Data
		if len(d) == 0 {
			return nil
		}
		switch d[0] {
		case tagIntent:
			us, err := parseIntent(d)
			if err != nil {
				return err
			}
			intents = append(intents, intent{key: e.Hash, ids: us})
		case tagQueue:
			s, err := parseQueueSettings(d)
			if err != nil {
				return err
			}
			name, key, ok := strings.Cut(string(e.Value.Text), "\x00")
			if !ok {
				return fmt.Errorf("%w: frontier: a queue entry without its name", store.ErrCorrupt)
			}
			q := f.queueLocked(name, key)
			q.settings, q.counted, q.persisted = s, false, true
		case tagCrawl:
			r := reader{b: d[1:]}
			if r.byte() != recordVersion {
				r.fail()
			}
			delay := r.varint()
			if r.err != nil {
				return r.err
			}
			f.crawlLocked(string(e.Value.Text)).delay = delay
		case tagFrontier:
			if len(d) != 3 {
				return fmt.Errorf("%w: frontier: a frontier entry of %d bytes", store.ErrCorrupt, len(d))
			}
			f.active = d[2] == 1
		}
		return nil
	})
	return intents, err
}

// recount counts each queue's URLs (due keys and done keys): after a
// restart the counts are not kept anywhere else. Each queue is counted
// under the lock, so that the changes made meanwhile are either in its
// count or made after it.
func (f *Frontier) recount() {
	defer f.recountWG.Done()
	f.mu.Lock()
	todo := slices.Clone(f.order)
	f.mu.Unlock()
	ctx := context.Background()
	for _, q := range todo {
		select {
		case <-f.stop:
			return
		default:
		}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return
		}
		if !q.counted && f.queues[q.id] == q {
			if err := f.countLocked(ctx, q); err != nil {
				f.o.Logger.Error("frontier: recounting a queue", "crawl", q.crawl.name, "queue", q.key, "error", err)
			}
		}
		f.mu.Unlock()
	}
	f.mu.Lock()
	f.recounting = false
	f.mu.Unlock()
}

func (f *Frontier) countLocked(ctx context.Context, q *queue) error {
	queued, _, err := f.db.Count(ctx, prefix8(q.id), 64)
	if err != nil {
		return err
	}
	done, _, err := f.db.Count(ctx, prefix8(q.done), 64)
	if err != nil {
		return err
	}
	// The count holds the due keys of the URLs handed out since the
	// start: those are in transit, not queued.
	q.prune(f.now().UnixNano())
	q.queued, q.completed, q.counted = max(0, queued-q.inTransit()), done, true
	return nil
}

// Close stops the frontier and closes its index (which syncs).
func (f *Frontier) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return ErrClosed
	}
	f.closed = true
	close(f.stop)
	f.signalLocked()
	f.mu.Unlock()
	f.recountWG.Wait()
	return f.db.Close()
}

// Path returns the frontier's index directory.
func (f *Frontier) Path() string { return f.db.Path() }

func (f *Frontier) now() time.Time { return f.o.now() }

// normCrawl returns the crawl an ID names: DefaultCrawl for a blank one.
func normCrawl(c string) string {
	if strings.TrimSpace(c) == "" {
		return DefaultCrawl
	}
	return c
}

func (f *Frontier) crawlLocked(name string) *crawl {
	c := f.crawls[name]
	if c == nil {
		c = &crawl{name: name, delay: int64(DefaultDelay), queues: map[string]*queue{}}
		f.crawls[name] = c
	}
	return c
}

// queueLocked returns the queue key of crawl name, created in memory
// when new: a new queue is counted (it holds nothing yet) and its meta
// entry is not written (persisted is false; see persistLocked).
func (f *Frontier) queueLocked(name, key string) *queue {
	c := f.crawlLocked(name)
	if q := c.queues[key]; q != nil {
		return q
	}
	id, done := queueHashes(name, key)
	q := &queue{crawl: c, key: key, id: id, done: done, settings: queueSettings{delay: -1}, head: headUnknown, counted: true}
	c.queues[key] = q
	f.queues[id] = q
	f.order = append(f.order, q)
	return q
}

// lookupLocked returns the queue key of crawl name, or nil.
func (f *Frontier) lookupLocked(name, key string) *queue {
	if c := f.crawls[name]; c != nil {
		return c.queues[key]
	}
	return nil
}

// removeLocked forgets q.
func (f *Frontier) removeLocked(q *queue) {
	delete(q.crawl.queues, q.key)
	delete(f.queues, q.id)
	if i := slices.Index(f.order, q); i >= 0 {
		f.order = slices.Delete(f.order, i, i+1)
		if f.cursor > i {
			f.cursor--
		}
	}
}

// persistLocked writes the meta entries of the queues among qs that have
// none yet, under the lock: a write that follows the call and a Sync
// after it find them written, so that no URL is ever durable in a queue
// a restart would not find.
func (f *Frontier) persistLocked(ctx context.Context, qs ...*queue) error {
	var es []store.Entry
	for _, q := range qs {
		if !q.persisted {
			es = append(es, q.metaEntry())
		}
	}
	if len(es) == 0 {
		return nil
	}
	if err := f.db.PutBatch(ctx, es); err != nil {
		return err
	}
	for _, q := range qs {
		q.persisted = true
	}
	return nil
}

func (q *queue) metaEntry() store.Entry {
	return store.FullEntry(metaKey(tagQueue, q.crawl.name, q.key), store.Value{
		Text: []byte(q.crawl.name + "\x00" + q.key), Data: q.settings.appendBinary(nil)})
}

// delay returns the queue's politeness delay (ns).
func (q *queue) delay() int64 {
	if q.settings.delay >= 0 {
		return q.settings.delay
	}
	return q.crawl.delay
}

// lowerHead notes a URL of the queue due at due: its head is then due at
// the latest. A GetURLs reading the queue unlocked meanwhile may have read
// past it: headMoved makes it leave the head unknown.
func (q *queue) lowerHead(due int64) {
	if q.busy {
		q.headMoved = true
	}
	if q.head != headUnknown {
		q.head = min(q.head, due)
	}
}

// prune ends the transits that expired by now: their URLs are due again.
func (q *queue) prune(now int64) {
	i := 0
	for i < len(q.transit) && q.transit[i].expiry <= now {
		q.queued += q.transit[i].n
		i++
	}
	if i > 0 {
		q.transit = slices.Delete(q.transit, 0, i)
	}
}

// inTransit returns the URLs of the queue in transit (after prune).
func (q *queue) inTransit() int64 {
	var n int64
	for _, t := range q.transit {
		n += t.n
	}
	return n
}

// addTransit counts n URLs handed out until expiry.
func (q *queue) addTransit(expiry, n int64) {
	i, found := slices.BinarySearchFunc(q.transit, expiry, func(t transit, e int64) int { return cmp.Compare(t.expiry, e) })
	if found {
		q.transit[i].n += n
		return
	}
	q.transit = slices.Insert(q.transit, i, transit{expiry: expiry, n: n})
}

// holdLocked counts u (of q, due key time due) handed out until expiry.
func (f *Frontier) holdLocked(q *queue, u uid, due, expiry int64, sum uint64) {
	q.queued = max(0, q.queued-1)
	q.addTransit(expiry, 1)
	f.held[u] = &held{q: q, due: due, expiry: expiry, sum: sum}
}

// unholdLocked forgets that u was handed out and returns what was held
// (nil if nothing): u counts as queued again.
func (f *Frontier) unholdLocked(u uid, now int64) *held {
	h := f.held[u]
	if h == nil {
		return nil
	}
	delete(f.held, u)
	q := h.q
	q.prune(now)
	if h.expiry > now && q.removeTransit(h.expiry) {
		q.queued++
	}
	return h
}

// removeTransit uncounts one URL handed out until expiry, and reports
// whether one was counted (not yet pruned).
func (q *queue) removeTransit(expiry int64) bool {
	i, found := slices.BinarySearchFunc(q.transit, expiry, func(t transit, e int64) int { return cmp.Compare(t.expiry, e) })
	if !found {
		return false
	}
	if q.transit[i].n--; q.transit[i].n == 0 {
		q.transit = slices.Delete(q.transit, i, i+1)
	}
	return true
}

// forgetHeldLocked forgets the URLs of q handed out (q is deleted).
func (f *Frontier) forgetHeldLocked(q *queue) {
	for u, h := range f.held {
		if h.q == q {
			delete(f.held, u)
		}
	}
}

// isActive reports whether the queue holds URLs not completed and is not
// blocked (url-frontier's "active"; whether they are due does not count).
func (q *queue) isActive(nowSec int64) bool {
	return q.queued+q.inTransit() > 0 && q.settings.blockedUntil <= nowSec
}

// checkLocked returns ErrClosed after Close.
func (f *Frontier) checkLocked() error {
	if f.closed {
		return ErrClosed
	}
	return nil
}

// sync makes every write so far durable, sharing the fsync with
// concurrent callers.
func (f *Frontier) sync() error { return f.commit.sync() }

// committer shares fsyncs between concurrent writers (group commit): a
// caller waits for one Sync that started after its call.
type committer struct {
	db    *index.DB
	mu    sync.Mutex
	cond  *sync.Cond
	begun uint64
	done  uint64
	busy  bool
	err   error
}

func (c *committer) init(db *index.DB) {
	c.db = db
	c.cond = sync.NewCond(&c.mu)
}

func (c *committer) sync() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	target := c.begun + 1
	for c.done < target {
		if c.busy {
			c.cond.Wait()
			continue
		}
		c.busy = true
		c.begun++
		gen := c.begun
		c.mu.Unlock()
		err := c.db.Sync(context.Background())
		c.mu.Lock()
		c.busy, c.done, c.err = false, gen, err
		c.cond.Broadcast()
	}
	return c.err
}

// logLevel maps url-frontier's levels (TRACE, DEBUG, INFO, WARN, ERROR)
// to slog's.
func logLevel(name string) (slog.Level, error) {
	switch strings.ToUpper(name) {
	case "TRACE", "DEBUG":
		return slog.LevelDebug, nil
	case "INFO":
		return slog.LevelInfo, nil
	case "WARN":
		return slog.LevelWarn, nil
	case "ERROR":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%w: log level %q", ErrInvalid, name)
}

// SetLogLevel sets the level of the frontier's log lines (Options.LogLevel)
// to level: TRACE or DEBUG, INFO, WARN or ERROR. Go has no per-package
// loggers: pkg is only logged.
func (f *Frontier) SetLogLevel(pkg, level string) error {
	lv, err := logLevel(level)
	if err != nil {
		return err
	}
	if f.o.LogLevel != nil {
		f.o.LogLevel.Set(lv)
	}
	f.o.Logger.Info("frontier: log level set", "package", pkg, "level", lv.String())
	return nil
}

// Nodes returns the frontier's nodes: this one.
func (f *Frontier) Nodes() []string { return []string{f.o.Node} }

var errStop = errors.New("stop")
