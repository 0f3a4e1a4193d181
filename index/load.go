package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/ristretto/v2/z"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/extsort"
	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/index/internal/keytable"
	"github.com/urlhash/urlhash/store"
)

// DefaultLoadMemory is the default Options.LoadMemory (256 MiB): with
// Badger's caches, the filter and the StreamWriter's tables, the CLI's
// import of 30 million hashes peaked at 778 MiB resident (go run
// ./bench/scale, its default Go memory limit of 768 MiB).
const DefaultLoadMemory = 256 << 20

// Load stores every entry of seq whose key is not stored yet (like
// AddBatch, the first of repeated keys wins; stored values are kept) and
// returns the counts.
//
// Its memory is bounded whatever the input's size (Options.LoadMemory):
// entries are gathered in chunks (32 bytes a key-only full entry), each
// chunk sorted and de-duplicated and, when the input outgrows one chunk,
// written as a sorted run to a temporary file in the index directory
// (urlhash.load-*.run, under the free-space gate; removed when Load
// returns, and by a writable Open when a crash left them). Then, holding
// every other operation off, Load
// merges the runs in key order, checks which keys are stored (the filter,
// then one forward pass of an iterator), admits the new keys to the filter
// and writes them as sorted tables straight into the LSM tree: into the
// last level when the index holds no entries (so that Badger has nothing
// left to compact: the index is settled when Load returns), above the
// existing tables otherwise (after flushing the memtables by reopening
// Badger when needed), and through a write batch when Badger refuses both
// (an in-memory index).
//
// A bad entry (store.ErrPrefixLength, store.ErrTooLarge) fails the load
// before anything is written into the index: entries are checked as they
// are gathered, and the index is written only once the input has ended.
// Everything Load added is durable when it returns. An I/O error while
// writing (disk, run files) can leave a part of the new keys stored, as a
// crash would; the filter and counts are then rebuilt.
func (db *DB) Load(ctx context.Context, seq iter.Seq[store.Entry]) (_ store.LoadResult, err error) {
	defer db.catch(&err)
	if err := db.beginWrite(ctx); err != nil {
		return store.LoadResult{}, err
	}
	dir := db.path
	db.mu.RUnlock()
	if db.opts.InMemory {
		dir = "" // everything stays in memory anyway: never spill
	}
	s := extsort.New(extsort.Config{Dir: dir, Budget: db.opts.LoadMemory, Room: func(n int64) error { return db.spillRoom(ctx, n) },
		FullTag: tagFull, PrefixTag: tagPrefix, AppendValue: appendLoadValue, Cost: entryCostOf})
	defer s.Close()
	var input int64
	var cols keytable.IngestOptions // the columns and values of the key table's file
	for e := range seq {
		if err := db.check(&e); err != nil {
			return store.LoadResult{}, err
		}
		if !e.IsPrefix() {
			widenCols(&cols, tableCols(&e.Value), len(e.Value.Text) > 0 || len(e.Value.Data) > 0)
		}
		// Nothing is written before the input ends: a cancelled load
		// leaves the index as it was.
		if input%ctxEvery == 0 && ctx.Err() != nil {
			return store.LoadResult{}, ctx.Err()
		}
		input++
		if err := s.Add(&e); err != nil {
			return store.LoadResult{}, err
		}
	}
	if err := s.Finish(); err != nil {
		return store.LoadResult{}, err
	}
	if input == 0 {
		return store.LoadResult{}, nil
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return store.LoadResult{}, store.ErrClosed
	}
	if err := db.prepareWrite(); err != nil {
		return store.LoadResult{}, err
	}
	// The new tables (at most every unique entry of every run), and (into
	// a non-empty index) the flattened tree rewritten before the old
	// tables go. The runs already take their space on the disk.
	cost := s.Cost()
	if db.entries.Load()+db.prefixEntries.Load() > 0 {
		cost += db.tableBytes()
	}
	if err := db.roomFor(cost); err != nil {
		return store.LoadResult{}, err
	}
	// Widen the filter first if the load may outgrow it.
	if k := filter.BitsFor(uint64(db.entries.Load() + s.Full())); k > db.f.Bits() {
		if err := db.rebuildFilter(k, nil); err != nil {
			return store.LoadResult{}, err
		}
	}
	// The filter's flat form makes room for the load's keys once.
	db.fmu.Lock()
	db.f.Expect(uint64(db.entries.Load() + s.Full()))
	db.fmu.Unlock()
	cols.Keys = uint64(s.Full())
	added, streamed, err := db.mergeInto(s, &cols)
	if err != nil {
		return store.LoadResult{}, err
	}
	db.entries.Add(added.full)
	db.prefixEntries.Add(added.prefix)
	db.addExpiry(&added.exp)
	if s.HasExpiring() {
		// After the load: a fresh stream replaces everything the index
		// held. (A crash before this line leaves entries with an expiry
		// unrecorded: Stats then counts them expired or not.)
		if err := db.markTTL(); err != nil {
			return store.LoadResult{}, err
		}
	}
	res := store.LoadResult{Added: added.full + added.prefix, Streamed: streamed}
	res.Present = input - res.Added
	// The tables and key files are synced; this syncs the metadata a
	// fresh stream rewrote, and the key table's log.
	if err := db.syncLocked(); err != nil {
		return store.LoadResult{}, err
	}
	return res, nil
}

// spillRoom is the free-space gate for a run file of n bytes.
func (db *DB) spillRoom(ctx context.Context, n int64) error {
	if err := db.begin(ctx); err != nil {
		return err
	}
	defer db.mu.RUnlock()
	return db.roomFor(n)
}

// afterFailedLoad rebuilds the filter and counts after a load failed
// while writing, and records the metadata again if a fresh stream had
// dropped it.
func (db *DB) afterFailedLoad(w *loadWriter) error {
	if db.closed {
		return nil
	}
	var errMeta error
	if w.meta != nil {
		errMeta = translate(db.st.update(func(txn *badger.Txn) error {
			for _, kv := range w.meta {
				if err := txn.Set(kv[0], kv[1]); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	return joinErr(errMeta, db.rebuildFilter(db.f.Bits(), nil))
}

// joinErr returns a, with b (an error while cleaning up after it) in its
// text.
func joinErr(a, b error) error {
	if b == nil {
		return a
	}
	if a == nil {
		return b
	}
	return fmt.Errorf("%w (then: %v)", a, b)
}

// addedCounts counts the keys a load added, and those with an expiry by
// expiry second.
type addedCounts struct {
	full, prefix int64
	exp          expiryCounts
}

// mergeInto merges the sorted runs of s, skips the keys already stored
// (the filter, then the stores), admits the new ones to the filter and
// writes each at its home, in key order: those of the key table straight
// into one new key file (loadIngest takes them), the others to Badger
// through a loadWriter, made at the first of them. It reports whether the new keys went in as sorted
// files or tables (streamed). After a failed write it rebuilds the filter
// and counts: a part may be stored. (Merging two key ranges at once, each
// on a StreamWriter stream of its own, measured no faster on two cores,
// and each stream builds its own tables in memory.)
func (db *DB) mergeInto(s *extsort.Sorter, cols *keytable.IngestOptions) (n addedCounts, streamed bool, err error) {
	m, err := s.Merge()
	if err != nil {
		return n, false, err
	}
	empty, err := db.st.holdsNoEntries()
	if err != nil {
		return n, false, err
	}
	var ex *existence
	if !empty {
		ex = db.st.newExistence()
	}
	defer func() {
		if ex != nil {
			ex.close()
		}
	}()
	in, err := db.st.newLoadIngest(cols)
	if err != nil {
		return n, false, err
	}
	var w *loadWriter
	var p *loadPart
	finished := false
	defer func() {
		if finished {
			return
		}
		in.abort()
		if p != nil {
			p.stop()
		}
		if w != nil {
			w.cancel()
			// A part may be stored: recount and refilter from the keys.
			err = joinErr(err, db.afterFailedLoad(w))
		}
	}()
	const admitLen = 1 << 16
	admit := make([]hashkey.Hash, 0, admitLen)
	for i := 1; ; i++ {
		key, lv, ok, err := m.Next()
		if err != nil {
			return n, false, err
		}
		if !ok {
			break
		}
		if ex != nil {
			if i%(1<<22) == 0 {
				db.releaseTablePages() // the pages the existence pass read
			}
			stored, err := db.loadHas(ex, key)
			if err != nil {
				return n, false, err
			}
			if stored {
				continue
			}
		}
		val, exp := splitLoadValue(lv)
		if took, err := in.take(key, val, exp); err != nil {
			return n, false, err
		} else if took {
			// Admitted in batches before the key file is installed.
			if admit = append(admit, hashkey.Hash(key[1:])); len(admit) == admitLen {
				db.admitKeys(admit)
				admit = admit[:0]
			}
			n.full++
			if exp != 0 {
				n.exp.add(exp, kindFull, 1)
			}
			continue
		}
		if w == nil {
			// The writer may reopen Badger (to flush its memtables): the
			// existence pass's snapshot is taken again after it.
			if ex != nil {
				ex.close()
				ex = nil
			}
			nw, err := db.newLoadWriter(s.Cost() / 2)
			if err != nil {
				if nw != nil { // a fresh stream dropped the metadata
					err = joinErr(err, db.afterFailedLoad(nw))
				}
				return n, false, err
			}
			w, p = nw, nw.newPart()
			if !empty {
				ex = db.st.newExistence()
			}
		}
		if key[0] == tagFull {
			n.full++
		} else {
			n.prefix++
		}
		if exp != 0 {
			n.exp.add(exp, kindOf(key[0] == tagPrefix), 1)
		}
		if err := p.add(key, val, exp); err != nil {
			return n, false, err
		}
	}
	db.admitKeys(admit)
	// No read transaction may stay open across the StreamWriter's Flush,
	// which replaces Badger's oracle.
	if ex != nil {
		ex.close()
		ex = nil
	}
	if p != nil {
		err := p.stop()
		p = nil
		if err == nil {
			err = w.finish()
		}
		if err != nil {
			return n, false, err
		}
		streamed = w.sw != nil && n.full+n.prefix-int64(in.len()) > 0
	}
	finished = true
	if err := in.commit(); err != nil {
		// The Badger part is in: recount and refilter from the keys.
		return n, false, joinErr(err, db.rebuildFilter(db.f.Bits(), nil))
	}
	return n, streamed || in.len() > 0, nil
}

// loadHas reports whether key (a Badger key, ascending across calls) is
// stored: the filter, then the stores.
func (db *DB) loadHas(ex *existence, key []byte) (bool, error) {
	var h hashkey.Hash
	copy(h[:], key[1:])
	db.fmu.RLock()
	maybe := db.f.MayHaveEntry(&h, key[0] == tagPrefix)
	db.fmu.RUnlock()
	if !maybe {
		return false, nil
	}
	return ex.has(key)
}

// A loadWriter writes a load's new keys, in key order, with a
// StreamWriter or (when Badger refuses one) a WriteBatch, admitting each
// key to the filter before it can become visible.
type loadWriter struct {
	db  *DB
	sw  *badger.StreamWriter
	wb  *badger.WriteBatch
	ver uint64
	// meta holds the metadata a fresh stream dropped and writes again.
	meta [][2][]byte
	// streams counts the StreamWriter streams given out.
	streams atomic.Uint32
}

// A loadPart writes keys in key order: to a StreamWriter stream of its
// own (a stream writes its own tables), through a goroutine that hands
// Badger one buffer while the merge fills the other, or to the write
// batch.
type loadPart struct {
	w      *loadWriter
	stream uint32
	buf    *z.Buffer
	// leads and shorts are the filter values of the keys in buf.
	leads   []uint64
	shorts  []uint32
	shifted []uint64 // scratch
	// writes takes full buffers to the writing goroutine, free takes
	// them back, and done closes when it ends.
	writes chan *z.Buffer
	free   chan *z.Buffer
	done   chan struct{}
	werrMu sync.Mutex
	werr   error // the writing goroutine's first error
}

func (p *loadPart) writeErr() error {
	p.werrMu.Lock()
	defer p.werrMu.Unlock()
	return p.werr
}

// streamFlushAt is the size of the buffers handed to the StreamWriter.
const streamFlushAt = 1 << 20

// releaseEvery is how many bytes a part streams between two
// releaseTablePages: Badger's tables take about as many.
const releaseEvery = 64 << 20

// newPart starts a part.
func (w *loadWriter) newPart() *loadPart {
	p := &loadPart{w: w}
	if w.sw == nil {
		return p
	}
	p.stream = w.streams.Add(1)
	p.buf = z.NewBuffer(streamFlushAt+(1<<20), "index.Load")
	p.writes = make(chan *z.Buffer)
	p.free = make(chan *z.Buffer, 1)
	p.free <- z.NewBuffer(streamFlushAt+(1<<20), "index.Load")
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		unreleased := 0
		var err error
		for buf := range p.writes {
			if err == nil {
				unreleased += buf.LenNoPadding()
				if err = translate(w.sw.Write(buf)); err != nil {
					p.werrMu.Lock()
					p.werr = err
					p.werrMu.Unlock()
				}
				if unreleased >= releaseEvery {
					unreleased = 0
					w.db.releaseTablePages()
				}
			}
			buf.Reset()
			p.free <- buf
		}
	}()
	return p
}

// appendLoadValue appends the value a load sorts an entry with (see
// extsort.Config.AppendValue): the expiry (Badger's, not in the encoded
// value), then the encoded value; splitLoadValue takes it apart.
func appendLoadValue(b []byte, v *store.Value) []byte {
	b = binary.BigEndian.AppendUint64(b, expiresAt(v))
	return appendValue(b, *v)
}

// splitLoadValue takes apart a load value (see appendLoadValue): empty,
// or the expiry and the encoded value.
func splitLoadValue(lv []byte) (val []byte, exp uint64) {
	if len(lv) < 8 {
		return nil, 0
	}
	return lv[8:], binary.BigEndian.Uint64(lv)
}

// add writes one key (a Badger key), its encoded value and its expiry
// (0: none). key and val may be reused by the caller once add returns.
func (p *loadPart) add(key, val []byte, exp uint64) error {
	w := p.w
	if w.wb != nil {
		w.admitOne(key)
		e := badger.NewEntry(bytes.Clone(key), bytes.Clone(val))
		e.ExpiresAt = exp
		return translate(w.wb.SetEntry(e))
	}
	switch key[0] {
	case tagFull:
		p.leads = append(p.leads, binary.BigEndian.Uint64(key[1:]))
	case tagPrefix:
		p.shorts = append(p.shorts, binary.BigEndian.Uint32(key[1:]))
	}
	appendKV(p.buf, key, val, w.ver, exp, p.stream)
	if p.buf.LenNoPadding() >= streamFlushAt {
		return p.flush()
	}
	return nil
}

// flush admits the buffered keys to the filter, then hands them to the
// writing goroutine (the StreamWriter makes them visible table by table)
// and takes the buffer it is done with.
func (p *loadPart) flush() error {
	db := p.w.db
	db.fmu.Lock()
	for _, f := range []*filter.Filter{db.f, db.next} {
		if f != nil {
			p.shifted = f.AddLeads(p.leads, p.shifted)
		}
	}
	db.f.AddPrefixes(p.shorts) // db.next shares them
	db.fmu.Unlock()
	p.leads, p.shorts = p.leads[:0], p.shorts[:0]
	p.writes <- p.buf
	p.buf = <-p.free
	return p.writeErr()
}

// stop writes what is buffered and stops the writing goroutine.
func (p *loadPart) stop() error {
	if p.writes == nil {
		return nil
	}
	err := p.flush()
	close(p.writes)
	<-p.done
	p.buf.Release()
	(<-p.free).Release()
	if err == nil {
		err = p.writeErr()
	}
	return err
}

// appendKV appends the protobuf encoding of a badger pb.KV {Key, Value,
// Version, ExpiresAt, StreamId} to buf, as badger.KVToBuffer does, without
// building the message.
func appendKV(buf *z.Buffer, key, val []byte, ver, exp uint64, stream uint32) {
	n := 1 + uvarintLen(uint64(len(key))) + len(key) + 1 + uvarintLen(ver) + 1 + uvarintLen(uint64(stream))
	if len(val) > 0 {
		n += 1 + uvarintLen(uint64(len(val))) + len(val)
	}
	if exp != 0 {
		n += 1 + uvarintLen(exp)
	}
	b := buf.SliceAllocate(n)[:0]
	b = append(b, 1<<3|2) // key: field 1, bytes
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	if len(val) > 0 {
		b = append(b, 2<<3|2) // value: field 2, bytes
		b = binary.AppendUvarint(b, uint64(len(val)))
		b = append(b, val...)
	}
	b = append(b, 4<<3) // version: field 4, varint
	b = binary.AppendUvarint(b, ver)
	if exp != 0 {
		b = append(b, 5<<3) // expires_at: field 5, varint
		b = binary.AppendUvarint(b, exp)
	}
	b = append(b, 10<<3) // stream_id: field 10, varint
	_ = binary.AppendUvarint(b, uint64(stream))
}

// admitOne admits a Badger key to the filter.
func (w *loadWriter) admitOne(key []byte) {
	db := w.db
	var h hashkey.Hash
	copy(h[:], key[1:])
	db.fmu.Lock()
	defer db.fmu.Unlock()
	switch key[0] {
	case tagFull:
		db.f.AddFull(&h)
		if db.next != nil {
			db.next.AddFull(&h)
		}
	case tagPrefix:
		db.f.AddPrefix(h[:4])
	}
}

// newLoadWriter chooses how the load writes about size bytes of tables.
// The caller holds db.mu exclusively.
func (db *DB) newLoadWriter(size int64) (*loadWriter, error) {
	w := &loadWriter{db: db}
	if db.opts.InMemory {
		w.wb = db.st.bdb.NewWriteBatch()
		return w, nil
	}
	empty, err := db.st.badgerHoldsNoEntries()
	if err != nil {
		return nil, err
	}
	if empty && len(db.st.bdb.Tables()) == 0 && size >= db.bo.BaseLevelSize*int64(db.bo.LevelSizeMultiplier) {
		// Nothing is in the tables and the memtables hold only metadata
		// (written since the index was created): stream into an empty
		// tree, whose tables Badger places in the last level, and put the
		// metadata back first. PrepareIncremental would place them one
		// level above a table of metadata, and Badger would rewrite them
		// all into the last level later (the first writing command that
		// runs a few seconds after the import). Only for a load large
		// enough that Badger's level 0 then compacts into a level above
		// the last (100 MiB of tables, about 2.5 million keys): a
		// compaction into the last level drops deletion markers, which
		// incremental backups carry (see Backup), and rewriting a
		// smaller load later costs little.
		if err := db.streamFresh(w); err != nil {
			return w, err // the caller puts the metadata back
		}
		return w, nil
	}
	if db.streamIncremental(w) == nil {
		return w, nil
	}
	// Badger refuses while a memtable holds data. Flush the memtables by
	// reopening Badger, then stream above the tree.
	if err := db.reopen(); err != nil {
		return nil, err
	}
	if db.streamIncremental(w) == nil {
		return w, nil
	}
	w.wb = db.st.bdb.NewWriteBatch()
	return w, nil
}

// streamFresh prepares w to stream into an emptied tree, metadata first.
func (db *DB) streamFresh(w *loadWriter) error {
	err := db.st.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{tagMeta}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			k := item.KeyCopy(nil)
			if bytes.Equal(k, metaKey(metaSnapshot)) || bytes.HasPrefix(k, metaKey(metaFilter)) {
				continue // the snapshot is stale after the load anyway
			}
			if bytes.HasPrefix(k, metaKey(metaRecord)) {
				continue // idempotency records expire; a fresh tree starts without
			}
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			w.meta = append(w.meta, [2][]byte{k, v})
		}
		return nil
	})
	if err != nil {
		return translate(err)
	}
	w.ver = db.st.bdb.MaxVersion() + 1
	sw := db.st.bdb.NewStreamWriter()
	if err := sw.Prepare(); err != nil {
		sw.Cancel()
		return translate(err)
	}
	w.sw = sw
	db.snapState = 0
	// The metadata goes in a stream (and a table) of its own, as it was:
	// damage to a table of entries does not take the profile with it.
	p := w.newPart()
	for _, kv := range w.meta {
		if err := p.add(kv[0], kv[1], 0); err != nil {
			p.stop()
			sw.Cancel()
			return err
		}
	}
	if err := p.stop(); err != nil {
		sw.Cancel()
		return err
	}
	return nil
}

// streamIncremental prepares w to stream above the existing tables. It
// returns an error when a memtable holds data.
func (db *DB) streamIncremental(w *loadWriter) error {
	// PrepareIncremental flattens the tree itself when level 0 holds
	// tables and then assumes the data landed in the last level, which is
	// not always so (badger v4.9.6: "Inter: Biggest(j-1)" overlap).
	// Flatten first so it sees the level the data is really in.
	if lv := db.st.bdb.Levels(); len(lv) > 0 && lv[0].NumTables > 0 {
		if err := db.st.bdb.Flatten(2); err != nil {
			return translate(err)
		}
	}
	w.ver = db.st.bdb.MaxVersion() + 1
	sw := db.st.bdb.NewStreamWriter()
	if err := sw.PrepareIncremental(); err != nil {
		// Badger refuses while a memtable holds data; its error is a
		// plain string, so the caller treats any refusal alike.
		sw.Cancel()
		return translate(err)
	}
	w.sw = sw
	return nil
}

// finish makes the load durable. The parts are stopped.
func (w *loadWriter) finish() error {
	if w.wb != nil {
		if err := translate(w.wb.Flush()); err != nil {
			return err
		}
		return w.db.st.syncValueLogs()
	}
	// The values the stream put in the value log are synced before its
	// last tables are recorded (see valueOrder; the tables it recorded
	// while it ran may point at values a power loss takes: the load is
	// not acknowledged then).
	if err := w.db.st.syncValueLogs(); err != nil {
		return err
	}
	// No releaseTablePages after Flush: it restarts compactions, which
	// may unmap a table between the read of /proc/self/maps and the
	// madvise, and an anonymous mapping reusing the range would lose its
	// pages. While a stream is open compactions are stopped.
	return translate(w.sw.Flush())
}

// cancel abandons the writes not made yet. The parts are stopped.
func (w *loadWriter) cancel() {
	if w.wb != nil {
		w.wb.Cancel()
		return
	}
	w.sw.Cancel()
}

// reopen closes and reopens Badger, which flushes the memtables to tables.
// The caller holds db.mu exclusively.
func (db *DB) reopen() error {
	if err := db.st.bdb.Close(); err != nil {
		db.closed = true
		return translate(err)
	}
	bdb, err := openBadger(db.bo)
	if err != nil {
		db.closed = true
		return err
	}
	db.st.bdb = bdb
	return nil
}
