package index

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/keytable"
	"github.com/urlhash/urlhash/store"
)

// keyTableKeys yields the key table's entries under the bit prefix, in
// order (none without a key table). A key whose move is unfinished is
// Badger's and is not yielded.
func (st *stores) keyTableKeys(prefix []byte, bits int) iter.Seq2[*keytable.Key, error] {
	return func(yield func(*keytable.Key, error) bool) {
		if st.kt == nil {
			return
		}
		stopped := false
		err := st.kt.Scan(prefix, bits, func(k *keytable.Key) error {
			if st.unfinished.has((*hashkey.Hash)(k)) {
				return nil
			}
			if !yield(k, nil) {
				stopped = true
				return errStop
			}
			return nil
		})
		if err != nil && !stopped {
			yield(nil, fmt.Errorf("index: key table: %w", err))
		}
	}
}

// keyTableEntries yields the key table's rows under the bit prefix, in
// order, with their values when values is set (none without a key
// table). A key whose move is unfinished is Badger's and is not yielded.
// A row is valid until the next is asked for.
func (st *stores) keyTableEntries(prefix []byte, bits int, values bool) iter.Seq2[*keytable.Entry, error] {
	return func(yield func(*keytable.Entry, error) bool) {
		if st.kt == nil {
			return
		}
		stopped := false
		err := st.kt.ScanEntries(prefix, bits, keytable.ScanOptions{Values: values}, func(e *keytable.Entry) error {
			if st.unfinished.has((*hashkey.Hash)(&e.Key)) {
				return nil
			}
			if !yield(e, nil) {
				stopped = true
				return errStop
			}
			return nil
		})
		if err != nil && !stopped {
			yield(nil, fmt.Errorf("index: key table: %w", err))
		}
	}
}

// scan visits the entries under the bit prefix in key order: the full
// entries of both stores merged, then the prefix entries. fn gets the
// Badger key (the key a key-table entry would have there) and the entry,
// both reused; with values, the entries' values, else only their
// expiries (for the counts). A key both stores hold is visited once, as
// Badger's.
func (st *stores) scan(ctx context.Context, prefix []byte, bits int, values bool, fn func([]byte, *store.Entry) error) error {
	if st.kt == nil {
		return st.scanBadger(ctx, prefix, bits, values, fn)
	}
	next, stop := iter.Pull2(st.keyTableEntries(prefix, bits, values))
	defer stop()
	var pend *keytable.Entry // the next row of the key table, or nil at its end
	var perr error
	pull := func() {
		e, err, ok := next()
		switch {
		case !ok:
			pend = nil
		case err != nil:
			pend, perr = nil, err
		default:
			pend = e
		}
	}
	pull()
	var done error // fn's error (scanBadger returns nil for errStop)
	user := fn
	fn = func(key []byte, e *store.Entry) error {
		err := user(key, e)
		if err != nil {
			done = err
		}
		return err
	}
	var kkey [fullKeyLen]byte
	var ke store.Entry
	// flush yields the key table's rows before key (all when key is nil
	// or not a full entry's) and drops one equal to it (Badger's copy is
	// the entry).
	sent := 0
	flush := func(key []byte) error {
		for pend != nil {
			kkey[0] = tagFull
			copy(kkey[1:], pend.Key[:])
			c := -1
			if len(key) > 0 && key[0] == tagFull {
				c = bytes.Compare(kkey[:], key)
			}
			if c > 0 {
				return nil
			}
			if c < 0 {
				ke = store.Entry{Hash: hashkey.Hash(pend.Key), Len: hashkey.Size}
				if values {
					v, err := fromTable(pend.Cols, pend.Value)
					if err != nil {
						return fmt.Errorf("value of %x: %w", pend.Key[:], err)
					}
					ke.Value = v
				} else {
					ke.Value.Expires = store.Unix(pend.Cols.Expires)
				}
				if err := fn(kkey[:], &ke); err != nil {
					return err
				}
				// Badger's loop checks the context; a run of the key
				// table's rows between two of Badger's needs its own.
				if sent++; sent%ctxEvery == 0 && ctx.Err() != nil {
					return ctx.Err()
				}
			}
			pull()
		}
		return perr
	}
	err := st.scanBadger(ctx, prefix, bits, values, func(key []byte, e *store.Entry) error {
		if err := flush(key); err != nil {
			return err
		}
		return fn(key, e)
	})
	if err != nil || done != nil {
		return err
	}
	if err := flush(nil); err != nil && err != errStop {
		return err
	}
	return nil
}

// scanBadger is scan over Badger's entries.
func (st *stores) scanBadger(ctx context.Context, prefix []byte, bits int, values bool, fn func([]byte, *store.Entry) error) error {
	nb := bits / 8           // whole bytes
	nbytes := (bits + 7) / 8 // bytes that hold the prefix
	var mask byte
	if bits%8 != 0 {
		mask = 0xff << (8 - bits%8)
	}
	seek := make([]byte, 1+nbytes)
	copy(seek[1:], prefix[:nbytes])
	if mask != 0 {
		seek[nbytes] &= mask
	}
	var fnErr error
	var bad []error // values that cannot be decoded: reported by key, after the rest
	err := st.bdb.View(func(txn *badger.Txn) error {
		var e store.Entry
		for _, tag := range []byte{tagFull, tagPrefix} {
			seek[0] = tag
			err := func() error {
				it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: seek[:1+nb]})
				defer it.Close()
				n := 0
				for it.Seek(seek); it.Valid(); it.Next() {
					// Badger takes no context: a long scan looks at it
					// every ctxEvery keys.
					if n++; n%ctxEvery == 0 && ctx.Err() != nil {
						return ctx.Err()
					}
					item := it.Item()
					key := item.Key()
					if len(key) < 1+nbytes || st.expired(item) {
						continue
					}
					if mask != 0 && key[1+nb]&mask != seek[1+nb] {
						break // keys are sorted: past the prefix
					}
					e = store.Entry{Len: len(key) - 1}
					copy(e.Hash[:], key[1:])
					if x := item.ExpiresAt(); x != 0 && !values {
						e.Value.Expires = expiresOf(item) // for the counts
					}
					if values {
						v, err := st.itemValue(item)
						if err != nil {
							if len(bad) < maxBadValues {
								bad = append(bad, fmt.Errorf("value of %x: %w", key[1:], err))
							} else if len(bad) == maxBadValues {
								bad = append(bad, fmt.Errorf("%w: more values that cannot be read", store.ErrCorrupt))
							}
							continue
						}
						e.Value = v
					}
					if err := fn(key, &e); err != nil {
						fnErr = err
						return err
					}
				}
				return nil
			}()
			if err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case fnErr == errStop:
		err = nil
	case fnErr != nil:
		return fnErr
	}
	if err == nil && len(bad) > 0 {
		return errors.Join(bad...)
	}
	return translate(err)
}

// maxBadValues bounds the values that cannot be read a scan names.
const maxBadValues = 20

// eachKey calls fn for every key of the keyspace tag visible to txn, in
// key order, by key-only iteration, and stops at fn's first error.
func eachKey(txn *badger.Txn, tag byte, fn func(item *badger.Item) error) error {
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{tag}})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		if err := fn(it.Item()); err != nil {
			return err
		}
	}
	return nil
}

// A keyCount is what a keyPass counted: the live full and prefix
// entries, and the versions with an expiry by second.
type keyCount struct {
	full, prefix uint64
	exp          *expiryCounts
}

// keyPass reads every stored key once, for a rebuild of the filter and
// the counts: sized gets the number of full entries first (so that the
// filter is made once, as wide as they need), then full gets the leading
// 8 bytes of every full entry in batches (the key table's streamed in key
// order: holding them all, 8 bytes a key, cost 800 MB at 100M entries;
// then Badger's), and prefix the first 4 bytes of every prefix entry. A
// key both stores hold counts once. full may reuse the batch it gets.
// stop (may be nil), once set, ends the pass with store.ErrClosed.
func (st *stores) keyPass(stop *atomic.Bool, sized func(full uint64), full func(leads []uint64), prefix func(shorts []uint32)) (keyCount, error) {
	stopped := func() bool { return stop != nil && stop.Load() }
	var leads []uint64
	var shorts []uint32
	exp := &expiryCounts{}
	err := st.bdb.View(func(txn *badger.Txn) error {
		err := eachKey(txn, tagFull, func(item *badger.Item) error {
			key := item.Key()
			if len(key) != fullKeyLen {
				return fmt.Errorf("%w: full key of %d bytes", store.ErrCorrupt, len(key))
			}
			if stopped() {
				return store.ErrClosed
			}
			leads = append(leads, binary.BigEndian.Uint64(key[1:]))
			if x := item.ExpiresAt(); x != 0 {
				exp.add(x, kindFull, 1)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return eachKey(txn, tagPrefix, func(item *badger.Item) error {
			key := item.Key()
			if len(key) < 1+store.MinPrefixEntryLen || len(key) > 1+store.MaxPrefixEntryLen {
				return fmt.Errorf("%w: prefix key of %d bytes", store.ErrCorrupt, len(key))
			}
			shorts = append(shorts, binary.BigEndian.Uint32(key[1:]))
			if x := item.ExpiresAt(); x != 0 {
				exp.add(x, kindPrefix, 1)
			}
			return nil
		})
	})
	if err != nil {
		return keyCount{}, translate(err)
	}
	var ktLive uint64
	if st.kt != nil {
		ktLive = uint64(max(st.kt.Len()-st.unfinished.n.Load(), 0))
	}
	sized(uint64(len(leads)) + ktLive)
	batch := make([]uint64, 0, 1<<16)
	var ktFull uint64
	if st.kt != nil {
		// Every row, expired ones too: they are counted until a merge
		// drops them (see dropExpired), as Badger's until a compaction.
		err := st.kt.ScanEntries(nil, 0, keytable.ScanOptions{Expired: true}, func(e *keytable.Entry) error {
			if st.unfinished.has((*hashkey.Hash)(&e.Key)) {
				return nil // Badger's
			}
			if stopped() {
				return store.ErrClosed
			}
			if batch = append(batch, binary.BigEndian.Uint64(e.Key[:8])); len(batch) == cap(batch) {
				full(batch)
				batch = batch[:0]
			}
			if x := e.Cols.Expires; x != 0 {
				exp.add(uint64(x), kindFull, 1)
			}
			ktFull++
			return nil
		})
		if err != nil {
			return keyCount{}, fmt.Errorf("index: key table: %w", err)
		}
	}
	full(batch)
	full(leads)
	prefix(shorts)
	return keyCount{full: uint64(len(leads)) + ktFull, prefix: uint64(len(shorts)), exp: exp}, nil
}

// fullLeads calls fn with the leading 8 bytes of every full key: Badger's
// visible to txn in order, then the key table's in no order, with some it
// no longer holds (keytable.Table.Leads: a filter's superset; its writes
// after txn's snapshot are the caller's to cover). It stops, returning
// false, when fn does or a read fails.
func (st *stores) fullLeads(txn *badger.Txn, fn func(lead uint64) bool) bool {
	err := eachKey(txn, tagFull, func(item *badger.Item) error {
		if key := item.Key(); len(key) == fullKeyLen && !fn(binary.BigEndian.Uint64(key[1:])) {
			return errStop
		}
		return nil
	})
	if err != nil {
		return false
	}
	if st.kt == nil {
		return true
	}
	done := true
	err = st.kt.Leads(func(lead uint64) bool {
		done = fn(lead)
		return done
	})
	return err == nil && done
}

// inBoth calls fn for each key both stores hold (Badger's copy live):
// the moves a crash or a failed write cut short. Badger's full keys are
// looked up in the key table in sorted batches: Badger holds few full
// entries where the key table holds many (a seen-set), and the key table
// few where Badger holds many (an index upgraded from format 1).
func (st *stores) inBoth(fn func(h *hashkey.Hash) error) error {
	if st.kt == nil {
		return nil
	}
	const batchLen = 1 << 14
	batch := make([]keytable.Key, 0, batchLen)
	found := make([]bool, batchLen)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		f := found[:len(batch)]
		clear(f)
		if _, err := st.kt.HasBatch(batch, f); err != nil {
			return fmt.Errorf("index: key table: %w", err)
		}
		for i := range batch {
			if f[i] {
				if err := fn((*hashkey.Hash)(&batch[i])); err != nil {
					return err
				}
			}
		}
		batch = batch[:0]
		return nil
	}
	err := st.bdb.View(func(txn *badger.Txn) error {
		err := eachKey(txn, tagFull, func(item *badger.Item) error {
			key := item.Key()
			if len(key) != fullKeyLen || st.expired(item) {
				return nil
			}
			if batch = append(batch, keytable.Key(key[1:])); len(batch) == batchLen {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
		return flush()
	})
	return translate(err)
}

// reconcile finishes the moves a crash (or a failed write) cut short:
// each key both stores hold is Badger's, and a writable index deletes the
// key table's copy; a read-only one notes the key (unfinishedMoves), so
// that lookups answer Badger's copy. It returns how many keys it found.
func (st *stores) reconcile() (int, error) {
	var both []keytable.Key
	err := st.inBoth(func(h *hashkey.Hash) error {
		both = append(both, keytable.Key(*h))
		return nil
	})
	if err != nil || len(both) == 0 {
		return 0, err
	}
	if st.readOnly {
		for i := range both {
			st.unfinished.add((*hashkey.Hash)(&both[i]))
		}
		return len(both), nil
	}
	for rest := both; len(rest) > 0; {
		m := min(len(rest), 1<<16)
		if err := st.changeKeyTable(&keytable.Batch{Deleted: rest[:m]}); err != nil {
			return 0, err
		}
		rest = rest[m:]
	}
	return len(both), nil
}

// finishMoves finishes the moves this process left unfinished (see
// write) by deleting the key table's copies; Close calls it before it
// writes a filter snapshot, which must not cover a key twice.
func (st *stores) finishMoves() error {
	if st.unfinished.n.Load() == 0 || st.readOnly {
		return nil
	}
	keys := st.unfinished.list()
	if err := st.changeKeyTable(&keytable.Batch{Deleted: keys}); err != nil {
		return err
	}
	for i := range keys {
		st.unfinished.remove((*hashkey.Hash)(&keys[i]))
	}
	return nil
}

// checkKeyTable verifies the key table's files and calls fn for each of
// its live keys, with whether Badger holds it too (a move left
// unfinished) and whether it expires, for Verify.
func (st *stores) checkKeyTable(fn func(h *hashkey.Hash, inBadger, expires bool)) []error {
	if st.kt == nil {
		return nil
	}
	var errs []error
	if err := st.kt.Verify(); err != nil {
		errs = append(errs, fmt.Errorf("index: key table: %w", err))
	}
	both := make(map[hashkey.Hash]bool)
	if err := st.inBoth(func(h *hashkey.Hash) error { both[*h] = true; return nil }); err != nil {
		errs = append(errs, err)
	}
	err := st.kt.ScanEntries(nil, 0, keytable.ScanOptions{}, func(e *keytable.Entry) error {
		h := (*hashkey.Hash)(&e.Key)
		fn(h, both[*h], e.Cols.Expires != 0)
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("index: key table: %w", err))
	}
	return errs
}

// Backups. A backup of an index with a key table (version 3, see
// backup.go) carries the key table's keys in a section of their own
// before Badger's stream.

// backupMagic returns the magic of the backup version the stores need.
func (st *stores) backupMagic() string {
	switch {
	case st.valuesInKeyTable():
		return backupMagicV4
	case st.kt != nil:
		return backupMagicV3
	}
	return backupMagic
}

// writeKeySection writes the key table's section of a version 3 or 4
// backup (nothing without a key table).
func (st *stores) writeKeySection(fw frameWriter) error {
	if st.kt == nil {
		return nil
	}
	if st.valuesInKeyTable() {
		return st.writeRowSection(fw)
	}
	frame := make([]byte, 0, keyFrameSize)
	var count uint64
	for k, err := range st.keyTableKeys(nil, 0) {
		if err != nil {
			return err
		}
		frame = append(frame, k[:]...)
		count++
		if len(frame) >= keyFrameSize {
			if _, err := fw.Write(frame); err != nil {
				return err
			}
			frame = frame[:0]
		}
	}
	if _, err := fw.Write(frame); err != nil {
		return err
	}
	return writeSectionEnd(fw, count)
}

// writeSectionEnd ends a key-table section with its count.
func writeSectionEnd(fw frameWriter, count uint64) error {
	end := binary.BigEndian.AppendUint32(nil, 0)
	end = binary.BigEndian.AppendUint64(end, count)
	_, err := fw.w.Write(end)
	return err
}

// writeRowSection writes the key table's section of a version 4 backup:
// the rows' ranges, then the rows, from one pinned view.
func (st *stores) writeRowSection(fw frameWriter) error {
	p, err := st.kt.Pin()
	if err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	defer p.Release()
	var o keytable.IngestOptions
	err = p.ScanEntries(nil, 0, keytable.ScanOptions{}, func(e *keytable.Entry) error {
		if !st.unfinished.has((*hashkey.Hash)(&e.Key)) {
			widenCols(&o, e.Cols, e.HasValue)
			o.Keys++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	var hdr []byte
	for _, x := range []int64{o.First.Min, o.First.Max, o.Last.Min, o.Last.Max, o.Expires.Min, o.Expires.Max} {
		hdr = binary.AppendUvarint(hdr, uint64(x))
	}
	values := byte(0)
	if o.Values {
		values = 1
	}
	hdr = binary.AppendUvarint(append(hdr, values), o.Keys)
	if _, err := fw.Write(hdr); err != nil {
		return err
	}
	frame := make([]byte, 0, keyFrameSize+1024)
	var count uint64
	err = p.ScanEntries(nil, 0, keytable.ScanOptions{Values: o.Values}, func(e *keytable.Entry) error {
		if st.unfinished.has((*hashkey.Hash)(&e.Key)) {
			return nil
		}
		frame = append(frame, e.Key[:]...)
		for _, x := range []int64{e.Cols.First, e.Cols.Last, e.Cols.Expires} {
			frame = binary.AppendUvarint(frame, uint64(x))
		}
		frame = binary.AppendUvarint(frame, uint64(len(e.Value)))
		frame = append(frame, e.Value...)
		count++
		if len(frame) >= keyFrameSize {
			if _, err := fw.Write(frame); err != nil {
				return err
			}
			frame = frame[:0]
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	if count != o.Keys {
		return fmt.Errorf("index: key table: a pinned view gave %d rows, then %d", o.Keys, count)
	}
	if _, err := fw.Write(frame); err != nil {
		return err
	}
	return writeSectionEnd(fw, count)
}

// readSectionFrame reads one frame of a key-table section (nil at its
// end): at most max bytes, checked against its CRC, under the free-space
// gate room.
func readSectionFrame(br *bufio.Reader, max uint32, room func(int64) error) ([]byte, error) {
	var b [4]byte
	if _, err := io.ReadFull(br, b[:]); err != nil {
		return nil, fmt.Errorf("%w: backup cut short in the key table's section", store.ErrCorrupt)
	}
	n := binary.BigEndian.Uint32(b[:])
	if n == 0 {
		return nil, nil
	}
	if n > max {
		return nil, fmt.Errorf("%w: key table frame of %d bytes", store.ErrCorrupt, n)
	}
	if err := room(2 * int64(n)); err != nil {
		return nil, err
	}
	frame := make([]byte, n+4)
	if _, err := io.ReadFull(br, frame); err != nil {
		return nil, fmt.Errorf("%w: backup cut short in a key table frame", store.ErrCorrupt)
	}
	if crc32.Checksum(frame[:n], castagnoli) != binary.BigEndian.Uint32(frame[n:]) {
		return nil, fmt.Errorf("%w: backup key table frame checksum mismatch", store.ErrCorrupt)
	}
	return frame[:n], nil
}

// maxSectionFrame bounds a key-table section's frame.
const maxSectionFrame = 256 << 20

// readKeySection reads the key section of a version 3 backup (rows: of a
// version 4 one) and adds the keys the index lacks to its key table
// (creating one when the index has none), in one new key file; rows
// replace the rows the index holds. For an incremental backup, the
// returned finish deletes the keys of the key table the section lacks
// (the deletions), once the caller has checked the whole backup. room is
// the free-space gate. The caller holds every lock.
func (st *stores) readKeySection(br *bufio.Reader, rows, incremental bool, deltaKeys int, room func(int64) error) (finish func() error, _ error) {
	if st.kt == nil {
		if st.dir == "" {
			return nil, fmt.Errorf("%w: a backup of an index with a key table restores into an index in a directory", store.ErrInvalidOptions)
		}
		if err := st.openKeyTable(true, deltaKeys); err != nil {
			return nil, err
		}
	}
	o := keytable.IngestOptions{Keys: 1 << 20}
	var want uint64 // rows: the count the header gives
	if rows {
		if !st.valuesInKeyTable() {
			return nil, fmt.Errorf("%w: a backup of format %d restores into an index of that format (this one is format %d)", store.ErrFormat, formatValues, st.format)
		}
		hdr, err := readSectionFrame(br, 1024, room)
		if err != nil {
			return nil, err
		}
		var xs [7]uint64
		for i := range xs {
			if i == 6 {
				if len(hdr) == 0 || hdr[0] > 1 {
					return nil, fmt.Errorf("%w: backup key table header", store.ErrCorrupt)
				}
				o.Values, hdr = hdr[0] == 1, hdr[1:]
			}
			x, n := binary.Uvarint(hdr)
			if n <= 0 || x > keytable.MaxTime && i < 6 {
				return nil, fmt.Errorf("%w: backup key table header", store.ErrCorrupt)
			}
			xs[i], hdr = x, hdr[n:]
		}
		if len(hdr) != 0 {
			return nil, fmt.Errorf("%w: backup key table header", store.ErrCorrupt)
		}
		o.First = keytable.ColRange{Min: int64(xs[0]), Max: int64(xs[1])}
		o.Last = keytable.ColRange{Min: int64(xs[2]), Max: int64(xs[3])}
		o.Expires = keytable.ColRange{Min: int64(xs[4]), Max: int64(xs[5])}
		want, o.Keys = xs[6], max(xs[6], 1)
	}
	in, err := st.kt.NewIngestOf(&o)
	if err != nil {
		return nil, fmt.Errorf("index: key table: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			in.Abort()
		}
	}()
	next, stop := iter.Pull2(st.keyTableKeys(nil, 0))
	defer stop()
	var have *keytable.Key // the index's next key, nil at the end
	pull := func() error {
		k, err, ok := next()
		if !ok {
			have = nil
			return nil
		}
		if err != nil {
			return err
		}
		have = k
		return nil
	}
	if err := pull(); err != nil {
		return nil, err
	}
	var gone []keytable.Key
	var prev keytable.Key
	var count uint64
	// put adds s, in key order; a key the index holds is kept (a key
	// section) or replaced (a row section).
	put := func(s *keytable.Set) error {
		k := s.Key
		if count > 0 && bytes.Compare(prev[:], k[:]) >= 0 {
			return fmt.Errorf("%w: backup key table keys out of order at %x", store.ErrCorrupt, k[:])
		}
		prev = k
		count++
		// The index's keys before k are not in the backup's set.
		for have != nil && bytes.Compare(have[:], k[:]) < 0 {
			if incremental {
				gone = append(gone, *have)
			}
			if err := pull(); err != nil {
				return err
			}
		}
		if have != nil && *have == k {
			if err := pull(); err != nil {
				return err
			}
			if !rows {
				return nil
			}
		}
		if _, err := in.Put(s); err != nil {
			return fmt.Errorf("index: key table: %w", err)
		}
		return nil
	}
	for {
		frame, err := readSectionFrame(br, maxSectionFrame, room)
		if err != nil {
			return nil, err
		}
		if frame == nil {
			break
		}
		if !rows {
			if len(frame)%keytable.KeySize != 0 {
				return nil, fmt.Errorf("%w: key table frame of %d bytes", store.ErrCorrupt, len(frame))
			}
			for off := 0; off < len(frame); off += keytable.KeySize {
				if err := put(&keytable.Set{Key: keytable.Key(frame[off : off+keytable.KeySize])}); err != nil {
					return nil, err
				}
			}
			continue
		}
		for len(frame) > 0 {
			var s keytable.Set
			if len(frame) < keytable.KeySize {
				return nil, fmt.Errorf("%w: backup key table row cut short", store.ErrCorrupt)
			}
			s.Key, frame = keytable.Key(frame[:keytable.KeySize]), frame[keytable.KeySize:]
			var xs [4]uint64
			for i := range xs {
				x, n := binary.Uvarint(frame)
				if n <= 0 || i < 3 && x > keytable.MaxTime || i == 3 && x > uint64(len(frame)-n) {
					return nil, fmt.Errorf("%w: backup key table row %x", store.ErrCorrupt, s.Key[:])
				}
				xs[i], frame = x, frame[n:]
			}
			s.Cols = keytable.Cols{First: int64(xs[0]), Last: int64(xs[1]), Expires: int64(xs[2])}
			s.Value, frame = frame[:xs[3]], frame[xs[3]:]
			if err := put(&s); err != nil {
				return nil, err
			}
		}
	}
	for have != nil {
		if incremental {
			gone = append(gone, *have)
		}
		if err := pull(); err != nil {
			return nil, err
		}
	}
	stop()
	var b [8]byte
	if _, err := io.ReadFull(br, b[:]); err != nil {
		return nil, fmt.Errorf("%w: backup cut short in the key table's section", store.ErrCorrupt)
	}
	if c := binary.BigEndian.Uint64(b[:]); c != count || rows && c != want {
		return nil, fmt.Errorf("%w: backup key table section carries %d keys, its end says %d", store.ErrCorrupt, count, c)
	}
	committed = true
	if in.Len() > 0 {
		if err := st.markSnapshotStale(); err != nil {
			in.Abort()
			return nil, err
		}
	}
	if err := in.Commit(); err != nil {
		return nil, fmt.Errorf("index: key table: %w", err)
	}
	return func() error {
		if len(gone) == 0 {
			return nil
		}
		return st.changeKeyTable(&keytable.Batch{Deleted: gone})
	}, nil
}
