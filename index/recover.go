package index

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/urlhash/urlhash/store"
)

// RecoverReport describes what Recover copied and what it could not read.
type RecoverReport struct {
	// Entries and PrefixEntries count the full and prefix entries copied
	// into the new index.
	Entries, PrefixEntries int64
	// Profile is the profile recorded in the damaged index ("" if none or
	// unreadable); the new index records it.
	Profile string
	// Files lists every data file read, in name order.
	Files []RecoverFile
	// ValuesLost counts entries copied without their value, because the
	// value could not be read (a damaged value-log record, or a value that
	// does not decode).
	ValuesLost int64
	// LostEstimate estimates how many records (entries, older versions
	// and deletions) could not be read. For unreadable blocks of a table
	// whose index is readable it is the table's own count less the records
	// read (an upper bound: a lost record may have had a copy in another
	// file); for a table that does not open, or is missing, and for a
	// damaged log it is estimated from sizes.
	LostEstimate int64
}

// RecoverFile is what Recover made of one file.
type RecoverFile struct {
	Name string
	// Kind is "table", "unlisted table" (not in the MANIFEST: left by an
	// interrupted compaction, or lost from a damaged MANIFEST),
	// "memtable log" or "value log".
	Kind string
	// Records is the number of records read whole (every version and
	// deletion counts).
	Records int64
	// Blocks and BadBlocks count a table's blocks and those that could not
	// be read.
	Blocks, BadBlocks int
	// Problem says what could not be read ("" when the file was read
	// whole).
	Problem string
}

// A record is one version of a key, from any file.
type record struct {
	key       []byte // the index's key, without Badger's version
	version   uint64
	meta      byte
	expiresAt uint64
	value     []byte // a value-log pointer when meta has bitValuePointer
}

// Badger's record flags (value.go in Badger; unexported there).
const (
	bitDelete       = 1 << 0
	bitValuePointer = 1 << 1
	bitTxn          = 1 << 6
	bitFinTxn       = 1 << 7
	logHeaderSize   = 20 // a log file starts with a key id and an IV
)

// Recover copies every readable entry of the index in dir, which may be
// damaged, into a new index in to, and reports what it read and what it
// could not. It never writes to dir (it takes its shared lock, so no
// writer may hold it) and refuses a to that exists and is not empty. It
// reads every table file, listed in the MANIFEST or not, block by block,
// skipping the blocks that fail their checksum; the memtable logs a crash
// left, up to their first damaged record; and the value log for values
// stored there. Of every key it keeps the newest version read, and drops
// the key when that version is a deletion. The new index is made with
// opts (nil: defaults) and the profile the damaged one records.
//
// Limits: a table whose index (at the end of the file) is unreadable,
// such as a truncated one, is skipped whole; a deletion in an unreadable
// block lets an older version of its key come back; everything read is
// held in memory (about 100 bytes per record) before it is loaded.
func Recover(dir, to string, opts *Options) (RecoverReport, error) {
	var rep RecoverReport
	if err := opts.Validate(); err != nil {
		return rep, err
	}
	o := opts.withDefaults()
	if o.InMemory || o.ReadOnly {
		return rep, fmt.Errorf("%w: Recover writes a new index on disk", store.ErrInvalidOptions)
	}
	if a, b := filepath.Clean(dir), filepath.Clean(to); a == b || strings.HasPrefix(b, a+string(filepath.Separator)) {
		return rep, fmt.Errorf("%w: recover %s into itself (%s)", store.ErrInvalidOptions, dir, to)
	}
	if ents, err := os.ReadDir(to); err == nil && len(ents) > 0 {
		return rep, fmt.Errorf("%w: %s is not empty; recover into a new directory", store.ErrNotIndex, to)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("index: recover: %w", err)
	}
	s, err := inspectDir(dir)
	if err != nil {
		return rep, err
	}
	if !s.exists || !s.manifest && !s.hasData() {
		return rep, fmt.Errorf("%w: %s", store.ErrNoIndex, dir)
	}
	lock, err := lockDir(dir, true)
	if err != nil {
		return rep, err
	}
	defer lock.release()

	bo := o.badgerOptions(dir)
	r := &recoverer{dir: dir, blockSize: bo.BlockSize, rep: &rep, vlogs: map[uint32][]byte{}, crashed: len(s.mems) > 0}
	listed := map[uint64]options.CompressionType{}
	if s.manifest {
		if f, err := os.Open(filepath.Join(dir, badger.ManifestFilename)); err == nil {
			m, _, err := badger.ReplayManifestFile(f, bo.ExternalMagicVersion, bo)
			f.Close()
			if err == nil {
				for id, t := range m.Tables {
					listed[id] = t.Compression
				}
			} else {
				r.file(RecoverFile{Name: badger.ManifestFilename, Kind: "manifest", Problem: firstLine(err.Error()) + "; every table read as unlisted"})
			}
		}
	} else {
		r.file(RecoverFile{Name: badger.ManifestFilename, Kind: "manifest", Problem: "missing; every table read as unlisted"})
	}
	ids := make([]uint64, 0, len(s.sst))
	for id := range s.sst {
		ids = append(ids, id)
	}
	for id := range listed {
		if !s.sst[id] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		comp, ok := listed[id]
		if !s.sst[id] {
			r.file(RecoverFile{Name: table.IDToFilename(id), Kind: "table", Problem: "listed in MANIFEST, missing"})
			r.missing++
			continue
		}
		r.readTable(id, comp, ok)
	}
	r.estimateUnreadTables()
	slices.Sort(s.mems)
	for _, name := range s.mems {
		r.readMemLog(name)
	}
	slices.Sort(s.vlogs)
	for _, name := range s.vlogs {
		r.readValueLog(name)
	}

	entries, profile := r.merge(o.Now())
	entries = r.readKeyTable(entries)
	rep.Profile = profile
	if profile != "" {
		if o.Profile != "" && o.Profile != profile {
			return rep, fmt.Errorf("%w: %s records %q, not %q", store.ErrProfileMismatch, dir, profile, o.Profile)
		}
		o.Profile = profile
	}
	o.MustExist = false
	db, err := Open(to, &o)
	if err != nil {
		return rep, err
	}
	if _, err := db.Load(slices.Values(entries)); err != nil {
		db.Close()
		return rep, err
	}
	if err := db.Close(); err != nil {
		return rep, err
	}
	for i := range entries {
		if entries[i].IsPrefix() {
			rep.PrefixEntries++
		} else {
			rep.Entries++
		}
	}
	return rep, nil
}

// recoverer holds what Recover has read.
type recoverer struct {
	dir       string
	blockSize int
	rep       *RecoverReport
	records   []record
	vlogs     map[uint32][]byte // value-log files read, by id (nil: unreadable)
	// tableBytes and tableRecords, over the tables read whole, give the
	// records per byte that estimates an unreadable table's loss.
	tableBytes, tableRecords int64
	unread                   []int64 // sizes of tables not opened
	missing                  int     // listed tables not on disk
	crashed                  bool    // memtable logs left: a log may end in a torn record
	tables                   int     // tables read whole
}

func (r *recoverer) file(f RecoverFile) { r.rep.Files = append(r.rep.Files, f) }

// readTable reads the table id block by block. When the MANIFEST does not
// list it, it tries each compression.
func (r *recoverer) readTable(id uint64, comp options.CompressionType, listed bool) {
	path := table.NewFilename(id, r.dir)
	f := RecoverFile{Name: filepath.Base(path), Kind: "table"}
	comps := []options.CompressionType{comp}
	if !listed {
		f.Kind = "unlisted table"
		comps = []options.CompressionType{options.Snappy, options.None, options.ZSTD}
	}
	var size int64
	if info, err := os.Stat(path); err == nil {
		size = info.Size()
	}
	var err error
	for _, c := range comps {
		var recs []record
		var blocks, bad int
		var count uint32
		err = withTable(path, c, r.blockSize, options.OnBlockRead, func(tb *table.Table) error {
			recs, blocks, bad = readBlocks(tb)
			count = tb.KeyCount()
			if bad == blocks && blocks > 0 {
				return errors.New("no block readable")
			}
			return nil
		})
		if err != nil {
			continue
		}
		f.Records, f.Blocks, f.BadBlocks = int64(len(recs)), blocks, bad
		if bad > 0 {
			f.Problem = fmt.Sprintf("%d of %d blocks unreadable", bad, blocks)
			r.rep.LostEstimate += max(int64(count)-int64(len(recs)), 0)
		} else {
			r.tableBytes += size
			r.tableRecords += int64(len(recs))
			r.tables++
		}
		r.records = append(r.records, recs...)
		r.file(f)
		return
	}
	f.Problem = "unreadable: " + strings.TrimPrefix(err.Error(), "damaged: ")
	r.unread = append(r.unread, size)
	r.file(f)
}

// readBlocks reads every block of tb that passes its checksum.
func readBlocks(tb *table.Table) (recs []record, blocks, bad int) {
	// KeySplits with more parts than blocks returns every block's first
	// key (the table's index, already verified by OpenTable).
	starts := tb.KeySplits(math.MaxInt32, nil)
	for i, start := range starts {
		var end []byte
		if i+1 < len(starts) {
			end = []byte(starts[i+1])
		}
		got, ok := readBlock(tb, []byte(start), end)
		if !ok {
			bad++
			continue
		}
		recs = append(recs, got...)
	}
	return recs, len(starts), bad
}

// readBlock reads the records from start (a block's first key) up to end
// (the next block's, nil for the last block). It reports false when the
// block cannot be read.
func readBlock(tb *table.Table, start, end []byte) (recs []record, ok bool) {
	defer func() {
		if recover() != nil {
			recs, ok = nil, false
		}
	}()
	it := tb.NewIterator(table.NOCACHE)
	defer it.Close()
	it.Seek(start)
	if !it.Valid() || !bytes.Equal(it.Key(), start) {
		return nil, false
	}
	for ; it.Valid(); it.Next() {
		k := it.Key()
		if end != nil && y.CompareKeys(k, end) >= 0 {
			break
		}
		v := it.ValueCopy()
		recs = append(recs, record{
			key:       bytes.Clone(y.ParseKey(k)),
			version:   y.ParseTs(k),
			meta:      v.Meta,
			expiresAt: v.ExpiresAt,
			value:     v.Value,
		})
	}
	// Stopped before end: the next block failed (its own turn says so).
	return recs, true
}

// estimateUnreadTables adds the records of the tables that did not open,
// at the density of those read whole (else about 45 bytes a record), and
// of the missing ones, as many as an average table read whole.
func (r *recoverer) estimateUnreadTables() {
	perByte := 1.0 / 45
	if r.tableBytes > 0 && r.tableRecords > 0 {
		perByte = float64(r.tableRecords) / float64(r.tableBytes)
	}
	for _, size := range r.unread {
		r.rep.LostEstimate += int64(float64(size) * perByte)
	}
	if r.missing > 0 && r.tables > 0 {
		r.rep.LostEstimate += int64(r.missing) * r.tableRecords / int64(r.tables)
	}
}

// readMemLog reads the records of a memtable log up to its end or its
// first damaged record. A transaction counts only when its commit record
// was read, as when Badger replays the log.
func (r *recoverer) readMemLog(name string) {
	f := RecoverFile{Name: name, Kind: "memtable log"}
	data, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		f.Problem = "unreadable: " + err.Error()
		r.file(f)
		return
	}
	var txn []record
	var txnTs uint64
	off, end := logRecords(data, true, func(k, v []byte, meta byte, expiresAt uint64) bool {
		rec := record{key: bytes.Clone(y.ParseKey(k)), version: y.ParseTs(k), meta: meta, expiresAt: expiresAt, value: bytes.Clone(v)}
		switch {
		case meta&bitTxn != 0:
			if txnTs != 0 && rec.version != txnTs {
				return false
			}
			txnTs = rec.version
			txn = append(txn, rec)
		case meta&bitFinTxn != 0:
			ts, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil || ts != txnTs {
				return false
			}
			r.records = append(r.records, txn...)
			f.Records += int64(len(txn))
			txn, txnTs = txn[:0], 0
		default:
			if txnTs != 0 {
				return false
			}
			r.records = append(r.records, rec)
			f.Records++
		}
		return true
	})
	if end > off {
		// A crash leaves at most one torn record before zeros; anything
		// after it is damage. The transaction it cut was committed (its
		// end is beyond the damage): keep what was read of it.
		f.Problem = fmt.Sprintf("damaged record at offset %d, %d bytes after it unread", off, end-off)
		if len(txn) > 0 {
			f.Problem += fmt.Sprintf(" (%d records read of the transaction it cuts)", len(txn))
			r.records = append(r.records, txn...)
			f.Records += int64(len(txn))
		}
		r.rep.LostEstimate += int64(end-off) / 60
	}
	r.file(f)
}

// readValueLog reads a value-log file: its values back the records that
// point to it, and its records (which carry their keys and versions) count
// too, so that a value whose table record was lost is found here. A
// damaged record whose header still gives its length is skipped.
func (r *recoverer) readValueLog(name string) {
	f := RecoverFile{Name: name, Kind: "value log"}
	fid, err := strconv.ParseUint(strings.TrimSuffix(name, ".vlog"), 10, 32)
	if err != nil {
		return
	}
	data, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		f.Problem = "unreadable: " + err.Error()
		r.file(f)
		return
	}
	r.vlogs[uint32(fid)] = data
	end := len(data)
	for end > 0 && data[end-1] == 0 {
		end--
	}
	var bad, snapshotOnly = 0, true
	first, unread := -1, 0
	for pos := logHeaderSize; pos < end; {
		if n, k, v, meta, expiresAt, ok := logRecord(data[pos:]); ok {
			r.records = append(r.records, record{
				key: bytes.Clone(y.ParseKey(k)), version: y.ParseTs(k),
				meta: meta &^ (bitTxn | bitFinTxn | bitValuePointer), expiresAt: expiresAt, value: bytes.Clone(v),
			})
			f.Records++
			pos += n
			continue
		}
		if r.crashed && end < pos+tornRecordLen(data[pos:]) {
			break // the record a crash tore
		}
		bad++
		if first < 0 {
			first = pos
		}
		h, klen, vlen, ok := recordHeader(data[pos:])
		n := h + klen + vlen + 4
		if !ok || pos+n > len(data) {
			unread = end - pos
			snapshotOnly = false
			break
		}
		snapshotOnly = snapshotOnly && onlySnapshot(data, pos, pos+n)
		pos += n
	}
	switch {
	case bad > 0 && snapshotOnly:
		f.Problem = fmt.Sprintf("%d damaged filter snapshot records from offset %d (a cache: nothing lost)", bad, first)
	case bad > 0 && unread > 0:
		f.Problem = fmt.Sprintf("%d damaged records from offset %d, the last %d bytes unread", bad, first, unread)
	case bad > 0:
		f.Problem = fmt.Sprintf("%d damaged records from offset %d, skipped", bad, first)
	}
	r.file(f)
}

// logRecords calls fn for each whole record of a log file (a memtable log
// or a value log) until fn returns false or a record is torn or damaged.
// It returns the offset where reading stopped and the end of the non-zero
// data after it (equal when nothing but zeros, or nothing, follows). When
// torn is set (the file may end in a record a crash tore), a stop at such
// a record, whose bytes end early and only zeros follow, counts as the end.
func logRecords(data []byte, torn bool, fn func(k, v []byte, meta byte, expiresAt uint64) bool) (off, end int) {
	off = logHeaderSize
	for off < len(data) {
		n, k, v, meta, expiresAt, ok := logRecord(data[off:])
		if !ok || !fn(k, v, meta, expiresAt) {
			break
		}
		off += n
	}
	off = min(off, len(data))
	end = len(data)
	for end > off && data[end-1] == 0 {
		end--
	}
	// A torn record is a prefix of one: the copy into the log stopped
	// before its end (its checksum), and zeros follow. A whole record
	// that fails its checksum is damage.
	if torn && end > off && end < off+tornRecordLen(data[off:]) {
		end = off
	}
	return off, end
}

// logRecord decodes one log record: header (meta, user meta, uvarint key
// length, value length, expiry), key, value, CRC-32C of all of it.
func logRecord(b []byte) (n int, k, v []byte, meta byte, expiresAt uint64, ok bool) {
	if len(b) < 2 {
		return 0, nil, nil, 0, 0, false
	}
	meta = b[0]
	h := 2
	klen, w := binary.Uvarint(b[h:])
	if w <= 0 {
		return
	}
	h += w
	vlen, w := binary.Uvarint(b[h:])
	if w <= 0 {
		return
	}
	h += w
	expiresAt, w = binary.Uvarint(b[h:])
	if w <= 0 {
		return
	}
	h += w
	if klen == 0 || klen > 1<<16 || vlen > uint64(len(b)) || h+int(klen)+int(vlen)+4 > len(b) {
		return
	}
	n = h + int(klen) + int(vlen)
	if crc32.Checksum(b[:n], castagnoli) != binary.BigEndian.Uint32(b[n:]) {
		return
	}
	return n + 4, b[h : h+int(klen)], b[h+int(klen) : n], meta, expiresAt, true
}

// tornRecordLen is the length of the record at the start of b as its
// header announces it, or a header's length when the header does not
// decode.
func tornRecordLen(b []byte) int {
	h, klen, vlen, ok := recordHeader(b)
	if !ok {
		return maxRecordHeader
	}
	return h + klen + vlen + 4
}

// maxRecordHeader is the longest header of a log record.
const maxRecordHeader = 22

// recordHeader decodes the header of the log record at the start of b.
func recordHeader(b []byte) (hlen, klen, vlen int, ok bool) {
	if len(b) < 2 {
		return 0, 0, 0, false
	}
	h := 2
	var x [3]uint64
	for i := range x {
		v, w := binary.Uvarint(b[h:])
		if w <= 0 {
			return 0, 0, 0, false
		}
		x[i] = v
		h += w
	}
	if x[0] > 1<<16 || x[1] > 1<<31 {
		return 0, 0, 0, false
	}
	return h, int(x[0]), int(x[1]), true
}

// onlySnapshot reports whether the records of data from off to end are
// all filter snapshot chunks, as their headers and keys say: damage there
// costs nothing but the filter snapshot, a cache rebuilt at the next Open.
func onlySnapshot(data []byte, off, end int) bool {
	prefix := metaKey(metaFilter)
	for off < end {
		h, klen, vlen, ok := recordHeader(data[off:])
		n := h + klen + vlen + 4
		if !ok || off+n > len(data) {
			return false
		}
		k := data[off+h : off+h+klen]
		if len(k) != len(prefix)+4+8 || !bytes.HasPrefix(k, prefix) {
			return false
		}
		off += n
	}
	return true
}

// valueOf returns rec's value, reading it from the value log when the
// record points there (nil, false when that fails).
func (r *recoverer) valueOf(rec *record) ([]byte, bool) {
	if rec.meta&bitValuePointer == 0 {
		return rec.value, true
	}
	if len(rec.value) < 12 {
		return nil, false
	}
	// Badger copies its valuePointer{Fid, Len, Offset uint32} as memory
	// (little-endian on every platform it runs on).
	fid := binary.LittleEndian.Uint32(rec.value)
	length := binary.LittleEndian.Uint32(rec.value[4:])
	offset := binary.LittleEndian.Uint32(rec.value[8:])
	data := r.vlogs[fid]
	if data == nil || uint64(offset)+uint64(length) > uint64(len(data)) {
		return nil, false
	}
	_, k, v, _, _, ok := logRecord(data[offset : offset+length])
	if !ok || !bytes.Equal(y.ParseKey(k), rec.key) {
		return nil, false
	}
	return v, true
}

// merge keeps the newest version of every key and returns the index's
// entries (those not expired at now) and the recorded profile.
func (r *recoverer) merge(now time.Time) ([]store.Entry, string) {
	slices.SortFunc(r.records, func(a, b record) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		if c := cmp.Compare(b.version, a.version); c != 0 {
			return c // newest first
		}
		// The same version from a table (a value-log pointer) and from
		// the value log: the value at hand first.
		return cmp.Compare(a.meta&bitValuePointer, b.meta&bitValuePointer)
	})
	nowUnix := uint64(now.Unix())
	var entries []store.Entry
	var profile string
	for i := range r.records {
		rec := &r.records[i]
		if i > 0 && bytes.Equal(rec.key, r.records[i-1].key) {
			continue // an older version
		}
		if rec.meta&bitDelete != 0 || rec.expiresAt != 0 && rec.expiresAt <= nowUnix || len(rec.key) == 0 {
			continue
		}
		switch rec.key[0] {
		case tagMeta:
			if bytes.Equal(rec.key, metaKey(metaProfile)) {
				if v, ok := r.valueOf(rec); ok {
					profile = string(v)
				}
			}
			continue
		case tagFull:
			if len(rec.key) != fullKeyLen {
				continue
			}
		case tagPrefix:
			if store.CheckPrefixEntryLen(len(rec.key)-1) != nil {
				continue
			}
		default:
			continue // Badger's own keys
		}
		e := store.Entry{Len: len(rec.key) - 1}
		copy(e.Hash[:], rec.key[1:])
		v, ok := r.valueOf(rec)
		if ok {
			var err error
			if e.Value, err = decodeValue(v); err != nil {
				ok = false
			}
		}
		if !ok {
			e.Value = store.Value{}
			r.rep.ValuesLost++
		}
		e.Value.Expires = store.Unix(int64(rec.expiresAt)) // Load writes it back as the TTL
		entries = append(entries, e)
	}
	return entries, profile
}
