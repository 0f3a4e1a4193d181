package index

import (
	"encoding/binary"
	"errors"
	"slices"

	"github.com/urlhash/urlhash/index/internal/keytable"
)

// The kept counts (DB.entries, DB.prefixEntries) count versions: a write
// of a key that is not live adds one, a delete of a live key removes
// one, and an entry that expires stays counted (Badger drops it only at
// a compaction) until a key-only pass (rebuildFilter, recount) counts
// again. expiryCounts counts the versions with an expiry by expiry
// second, so that the live counts are the kept counts less the versions
// expired by the index's clock, without reading a key:
//
//	live = kept - expired(now)
//	expiring = versions with an expiry - expired(now)
//
// A rewrite of an expired key adds a version beside the expired one (the
// old one stays counted, and expired); an overwrite or a delete of a
// live key moves or removes its version's second, which the write reads
// with the key's existence check.
//
// Seconds more than foldLag in the past are folded into one count, so
// that the map holds the future seconds and the last hour: a clock that
// goes back further counts the entries expired in the folded seconds as
// expired still.
//
// The DB's counts are guarded by DB.emu. The kept counts are atomic, so
// that a write that changes no expiry adds to them without the lock; a
// change to both (apply, dropExpired, setCounts) is made under emu, and
// their readers (liveCounts, countsSnapshot) read both under it: the live
// counts are a difference of the two, and a merge's report of what it
// dropped comes at any moment.
type expiryCounts struct {
	buckets map[uint64][2]int64 // expiry second → full, prefix versions
	folded  [2]int64            // versions expiring at or before through
	through uint64
	total   [2]int64 // every version with an expiry
}

// foldLag is how far in the past seconds are kept apart (see expiryCounts).
const foldLag = 3600

// Record kinds, the indexes of the counts' pairs.
const (
	kindFull   = 0
	kindPrefix = 1
)

func kindOf(prefix bool) int {
	if prefix {
		return kindPrefix
	}
	return kindFull
}

// add adds d versions of kind expiring at second x (x != 0).
func (c *expiryCounts) add(x uint64, kind int, d int64) {
	c.total[kind] += d
	if x <= c.through {
		c.folded[kind] += d
		return
	}
	if c.buckets == nil {
		c.buckets = make(map[uint64][2]int64)
	}
	b := c.buckets[x]
	b[kind] += d
	if b == [2]int64{} {
		delete(c.buckets, x)
	} else {
		c.buckets[x] = b
	}
}

// expired returns the versions expired at now (expiry second <= now) and
// every version with an expiry, each as full, prefix. Its cost is the
// number of distinct expiry seconds after now - foldLag.
func (c *expiryCounts) expired(now int64) (expired, total [2]int64) {
	if now > foldLag && uint64(now-foldLag) > c.through {
		t := uint64(now - foldLag)
		for x, b := range c.buckets {
			if x <= t {
				c.folded[0] += b[0]
				c.folded[1] += b[1]
				delete(c.buckets, x)
			}
		}
		c.through = t
	}
	expired = c.folded
	for x, b := range c.buckets {
		if now > 0 && x <= uint64(now) {
			expired[0] += b[0]
			expired[1] += b[1]
		}
	}
	return expired, c.total
}

// maxExpiryRecord bounds the persisted counts (see writeSnapshot).
const maxExpiryRecord = 16 << 20

// expiryMagic starts the persisted counts (metadata key metaExpiry).
const expiryMagic = "uhexp\x01"

// encode returns the persisted form: the magic, then varints: the
// snapshot state it belongs with (a snapshot written by an older program,
// which leaves this value as it was, does not match), through,
// folded (full, prefix), total (full, prefix), the number of seconds, and
// per second (ascending) its distance from the previous one and its
// counts.
func (c *expiryCounts) encode(state uint64) []byte {
	b := []byte(expiryMagic)
	b = binary.AppendUvarint(b, state)
	b = binary.AppendUvarint(b, c.through)
	for _, v := range [...]int64{c.folded[0], c.folded[1], c.total[0], c.total[1]} {
		b = binary.AppendVarint(b, v)
	}
	xs := make([]uint64, 0, len(c.buckets))
	for x := range c.buckets {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	b = binary.AppendUvarint(b, uint64(len(xs)))
	prev := uint64(0)
	for _, x := range xs {
		b = binary.AppendUvarint(b, x-prev)
		prev = x
		v := c.buckets[x]
		b = binary.AppendVarint(b, v[0])
		b = binary.AppendVarint(b, v[1])
	}
	return b
}

var errBadExpiry = errors.New("index: bad expiry counts")

// decodeExpiryCounts parses encode's form and returns the counts and
// their snapshot state. Its cost is bounded by len(b).
func decodeExpiryCounts(b []byte) (_ *expiryCounts, state uint64, err error) {
	if len(b) < len(expiryMagic) || string(b[:len(expiryMagic)]) != expiryMagic {
		return nil, 0, errBadExpiry
	}
	b = b[len(expiryMagic):]
	bad := false
	// step drops the n bytes a varint took, or marks b bad when its read
	// failed (and so gave 0).
	step := func(n int) {
		if n <= 0 {
			bad = true
			return
		}
		b = b[n:]
	}
	uv := func() uint64 { v, n := binary.Uvarint(b); step(n); return v }
	sv := func() int64 { v, n := binary.Varint(b); step(n); return v }
	c := &expiryCounts{}
	state = uv()
	c.through = uv()
	c.folded = [2]int64{sv(), sv()}
	c.total = [2]int64{sv(), sv()}
	n := uv()
	if bad || n > uint64(len(b))/3 {
		return nil, 0, errBadExpiry
	}
	c.buckets = make(map[uint64][2]int64, n)
	x := uint64(0)
	for range n {
		d := uv()
		if x+d < x || (x > 0 && d == 0) {
			return nil, 0, errBadExpiry
		}
		x += d
		c.buckets[x] = [2]int64{sv(), sv()}
		if bad || x <= c.through {
			return nil, 0, errBadExpiry
		}
	}
	if len(b) != 0 {
		return nil, 0, errBadExpiry
	}
	return c, state, nil
}

// A tally collects a write's changes to the counts, applied once the
// write is committed.
type tally struct {
	n   [2]int64
	exp []expiryDelta
}

type expiryDelta struct {
	x    uint64
	kind int
	d    int64
}

// change records one key's change: before, it was live with expiry oldX;
// after, it is stored with expiry newX (after false: deleted).
func (t *tally) change(prefix, before bool, oldX uint64, after bool, newX uint64) {
	k := kindOf(prefix)
	if before {
		t.n[k]--
		if oldX != 0 {
			t.exp = append(t.exp, expiryDelta{oldX, k, -1})
		}
	}
	if after {
		t.n[k]++
		if newX != 0 {
			t.exp = append(t.exp, expiryDelta{newX, k, 1})
		}
	}
}

// apply adds t to the counts.
func (db *DB) apply(t *tally) {
	if len(t.exp) == 0 {
		db.entries.Add(t.n[kindFull])
		db.prefixEntries.Add(t.n[kindPrefix])
		return
	}
	db.emu.Lock()
	defer db.emu.Unlock()
	db.entries.Add(t.n[kindFull])
	db.prefixEntries.Add(t.n[kindPrefix])
	for _, d := range t.exp {
		db.exp.add(d.x, d.kind, d.d)
	}
}

// dropExpired takes out of the counts the expired rows a key-table merge
// dropped. They were expired, so counted both as kept and as expired:
// the live counts do not change, whichever of this and a recount that
// ran beside the merge comes last. Both counts change in one step under
// emu: a reader between the two would count the rows as kept and not
// expired, live.
func (db *DB) dropExpired(c []keytable.ExpiryCount) {
	db.emu.Lock()
	defer db.emu.Unlock()
	for _, e := range c {
		db.exp.add(uint64(e.Expires), kindFull, -e.Count)
		db.entries.Add(-e.Count)
	}
}

// setCounts replaces the counts (with those of a key-only pass or of the
// snapshot), in one step beside a merge's dropExpired.
func (db *DB) setCounts(full, prefixes int64, c *expiryCounts) {
	db.emu.Lock()
	defer db.emu.Unlock()
	db.entries.Store(full)
	db.prefixEntries.Store(prefixes)
	db.exp = *c
}

// addExpiry adds the counts of c (of a load) to the index's.
func (db *DB) addExpiry(c *expiryCounts) {
	db.emu.Lock()
	defer db.emu.Unlock()
	for x, b := range c.buckets {
		db.exp.add(x, kindFull, b[kindFull])
		db.exp.add(x, kindPrefix, b[kindPrefix])
	}
}

// countsSnapshot returns the kept counts and the persisted form of the
// expiry counts, for the snapshot of state, read at one moment.
func (db *DB) countsSnapshot(state uint64) (full, prefixes int64, exp []byte) {
	db.emu.Lock()
	defer db.emu.Unlock()
	return db.entries.Load(), db.prefixEntries.Load(), db.exp.encode(state)
}

// liveCounts returns the live full and prefix entries and those of them
// with an expiry, by the index's clock, from the kept counts.
func (db *DB) liveCounts() (full, prefixes, expiring int64) {
	if !db.ttl.Load() {
		return db.entries.Load(), db.prefixEntries.Load(), 0
	}
	now := db.opts.now().Unix()
	db.emu.Lock()
	full, prefixes = db.entries.Load(), db.prefixEntries.Load()
	e, tot := db.exp.expired(now)
	db.emu.Unlock()
	return full - e[0], prefixes - e[1], tot[0] + tot[1] - e[0] - e[1]
}
