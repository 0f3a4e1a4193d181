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

// scan visits the entries under the bit prefix in key order: the full
// entries of both stores merged, then the prefix entries. fn gets the
// Badger key (the key a key-table entry would have there) and the entry,
// both reused. A key both stores hold is visited once, as Badger's.
func (st *stores) scan(ctx context.Context, prefix []byte, bits int, values bool, fn func([]byte, *store.Entry) error) error {
	if st.kt == nil {
		return st.scanBadger(ctx, prefix, bits, values, fn)
	}
	next, stop := iter.Pull2(st.keyTableKeys(prefix, bits))
	defer stop()
	var pend *keytable.Key // the next key of the key table, or nil at its end
	var perr error
	pull := func() {
		k, err, ok := next()
		switch {
		case !ok:
			pend = nil
		case err != nil:
			pend, perr = nil, err
		default:
			pend = k
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
	// flush yields the key table's keys before key (all when key is nil
	// or not a full entry's) and drops one equal to it (Badger's copy is
	// the entry).
	sent := 0
	flush := func(key []byte) error {
		for pend != nil {
			kkey[0] = tagFull
			copy(kkey[1:], pend[:])
			c := -1
			if len(key) > 0 && key[0] == tagFull {
				c = bytes.Compare(kkey[:], key)
			}
			if c > 0 {
				return nil
			}
			if c < 0 {
				ke = store.Entry{Hash: hashkey.Hash(*pend), Len: hashkey.Size}
				if err := fn(kkey[:], &ke); err != nil {
					return err
				}
				// Badger's loop checks the context; a run of the key
				// table's keys between two of Badger's needs its own.
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
func (st *stores) keyPass(sized func(full uint64), full func(leads []uint64), prefix func(shorts []uint32)) (keyCount, error) {
	var leads []uint64
	var shorts []uint32
	exp := &expiryCounts{}
	err := st.bdb.View(func(txn *badger.Txn) error {
		err := eachKey(txn, tagFull, func(item *badger.Item) error {
			key := item.Key()
			if len(key) != fullKeyLen {
				return fmt.Errorf("%w: full key of %d bytes", store.ErrCorrupt, len(key))
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
	for k, err := range st.keyTableKeys(nil, 0) {
		if err != nil {
			return keyCount{}, err
		}
		if batch = append(batch, binary.BigEndian.Uint64(k[:8])); len(batch) == cap(batch) {
			full(batch)
			batch = batch[:0]
		}
		ktFull++
	}
	full(batch)
	full(leads)
	prefix(shorts)
	return keyCount{full: uint64(len(leads)) + ktFull, prefix: uint64(len(shorts)), exp: exp}, nil
}

// fullLeads calls fn with the leading 8 bytes of every full key: Badger's
// visible to txn, then the key table's (its writes after txn's snapshot
// are the caller's to cover). It stops, returning false, when fn does.
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
	for k, err := range st.keyTableKeys(nil, 0) {
		if err != nil || !fn(binary.BigEndian.Uint64(k[:8])) {
			return false
		}
	}
	return true
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
// its keys, with whether Badger holds it too (a move left unfinished),
// for Verify.
func (st *stores) checkKeyTable(fn func(h *hashkey.Hash, inBadger bool)) []error {
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
	err := st.kt.Scan(nil, 0, func(k *keytable.Key) error {
		h := (*hashkey.Hash)(k)
		fn(h, both[*h])
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
	if st.kt != nil {
		return backupMagicV3
	}
	return backupMagic
}

// writeKeySection writes the key table's section of a version 3 backup
// (nothing without a key table).
func (st *stores) writeKeySection(fw frameWriter) error {
	if st.kt == nil {
		return nil
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
	end := binary.BigEndian.AppendUint32(nil, 0)
	end = binary.BigEndian.AppendUint64(end, count)
	_, err := fw.w.Write(end)
	return err
}

// readKeySection reads the key section of a version 3 backup and adds the
// keys the index lacks to its key table (creating one when the index has
// none), in one new key file. For an incremental backup, the returned
// finish deletes the keys of the key table the section lacks (the
// deletions), once the caller has checked the whole backup. room is the
// free-space gate. The caller holds every lock.
func (st *stores) readKeySection(br *bufio.Reader, incremental bool, deltaKeys int, room func(int64) error) (finish func() error, _ error) {
	if st.kt == nil {
		if st.dir == "" {
			return nil, fmt.Errorf("%w: a backup of an index with a key table restores into an index in a directory", store.ErrInvalidOptions)
		}
		if err := st.openKeyTable(true, deltaKeys); err != nil {
			return nil, err
		}
	}
	in, err := st.kt.NewIngest(1 << 20)
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
	for {
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("%w: backup cut short in the key table's section", store.ErrCorrupt)
		}
		n := binary.BigEndian.Uint32(b[:])
		if n == 0 {
			break
		}
		if n%keytable.KeySize != 0 || n > 256<<20 {
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
		for off := 0; off < int(n); off += keytable.KeySize {
			k := keytable.Key(frame[off : off+keytable.KeySize])
			if count > 0 && bytes.Compare(prev[:], k[:]) >= 0 {
				return nil, fmt.Errorf("%w: backup key table keys out of order at %x", store.ErrCorrupt, k[:])
			}
			prev = k
			count++
			// The index's keys before k are not in the backup's set.
			for have != nil && bytes.Compare(have[:], k[:]) < 0 {
				if incremental {
					gone = append(gone, *have)
				}
				if err := pull(); err != nil {
					return nil, err
				}
			}
			if have != nil && *have == k {
				if err := pull(); err != nil {
					return nil, err
				}
				continue
			}
			if err := in.Add(&k); err != nil {
				return nil, fmt.Errorf("index: key table: %w", err)
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
	if c := binary.BigEndian.Uint64(b[:]); c != count {
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
