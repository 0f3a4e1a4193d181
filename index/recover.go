package index

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
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
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/index/internal/keytable"
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
	// damaged log it is estimated from sizes. The key table's files add
	// what they know they lost (see RecoverFile.Lost).
	LostEstimate int64
	// Lost reports whether anything was lost: LostEstimate or ValuesLost
	// above zero, or a file that lost an amount it cannot tell (a table,
	// key file or log segment missing or unreadable). Replace the damaged
	// index with the new one only when it is false.
	Lost bool
}

// RecoverFile is what Recover made of one file.
type RecoverFile struct {
	Name string
	// Kind is "table", "unlisted table" (not in the MANIFEST: left by an
	// interrupted compaction, or lost from a damaged MANIFEST),
	// "memtable log" or "value log"; for the key table's files (named
	// keytable/NAME), "key file", "log segment", "manifest", "synced mark",
	// "log records" (records missing between two read ones) or
	// "acknowledged records" (records SYNCED says a sync acknowledged, in
	// the segment named, and not read).
	Kind string
	// Records is the number of records read whole (every version and
	// deletion counts); for a key file, its keys and tombstones read and
	// verified.
	Records int64
	// Lost, for the key table's files, counts the keys and tombstones (a
	// key file) or records (the log) known lost; LostUnknown says that
	// something was lost and how much is not known (a file missing, a
	// segment unreadable from some offset on).
	Lost        int64 `json:",omitempty"`
	LostUnknown bool  `json:",omitempty"`
	// Blocks and BadBlocks count a table's blocks and those that could not
	// be read.
	Blocks, BadBlocks int
	// Problem says what could not be read ("" when the file was read
	// whole).
	Problem string
}

// A record is one version of a key, from any file.
type record = integrity.Record

// Recover copies every readable entry of the index in dir, which may be
// damaged, into a new index in to, and reports what it read and what it
// could not. It never writes to dir (it takes its shared lock, so no
// writer may hold it) and refuses a to that exists and is not empty. It
// reads every table file, listed in the MANIFEST or not, block by block,
// skipping the blocks that fail their checksum; the memtable logs a crash
// left, up to their first damaged record; and the value log for values
// stored there. Of every key it keeps the newest version read, and drops
// the key when that version is a deletion. The key table's key files and
// log segments are each read on their own (keytable.Salvage): a key file
// is copied when its keys' checksum verifies them, none of it when not;
// a log segment record by record. Each file's loss is reported (see
// RecoverFile.Lost), and RecoverReport.Lost says whether anything was
// lost at all. The idempotency records not
// expired (see Record), Badger's and those of the key table's log, are
// copied too, so that a batch retried against the new index gets its
// first answer. The new index is made with opts (nil: defaults) and the
// profile the damaged one records.
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
	s, err := integrity.Inspect(dir)
	if err != nil {
		return rep, err
	}
	if !s.Exists || !s.Manifest && !s.HasData() {
		return rep, fmt.Errorf("%w: %s", store.ErrNoIndex, dir)
	}
	lock, err := lockDir(dir, true)
	if err != nil {
		return rep, err
	}
	defer lock.release()

	bo := o.badgerOptions(dir)
	r := &recoverer{dir: dir, blockSize: bo.BlockSize, rep: &rep, vlogs: map[uint32][]byte{}, crashed: len(s.Mems) > 0}
	listed := map[uint64]options.CompressionType{}
	if s.Manifest {
		if f, err := os.Open(filepath.Join(dir, badger.ManifestFilename)); err == nil {
			m, _, err := badger.ReplayManifestFile(f, bo.ExternalMagicVersion, bo)
			f.Close()
			if err == nil {
				for id, t := range m.Tables {
					listed[id] = t.Compression
				}
			} else {
				r.file(RecoverFile{Name: badger.ManifestFilename, Kind: "manifest", Problem: integrity.FirstLine(err.Error()) + "; every table read as unlisted"})
			}
		}
	} else {
		r.file(RecoverFile{Name: badger.ManifestFilename, Kind: "manifest", Problem: "missing; every table read as unlisted"})
	}
	ids := make([]uint64, 0, len(s.SST))
	for id := range s.SST {
		ids = append(ids, id)
	}
	for id := range listed {
		if !s.SST[id] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		comp, ok := listed[id]
		if !s.SST[id] {
			r.file(RecoverFile{Name: table.IDToFilename(id), Kind: "table", Problem: "listed in MANIFEST, missing"})
			r.missing++
			continue
		}
		r.readTable(id, comp, ok)
	}
	r.estimateUnreadTables()
	rep.Lost = r.missing > 0 || len(r.unread) > 0
	slices.Sort(s.Mems)
	for _, name := range s.Mems {
		r.readMemLog(name)
	}
	slices.Sort(s.VLogs)
	for _, name := range s.VLogs {
		r.readValueLog(name)
	}

	entries, profile := r.merge(o.now())
	entries, err = r.readKeyTable(entries)
	if err != nil {
		return rep, err
	}
	rep.Profile = profile
	rep.Lost = rep.Lost || rep.LostEstimate > 0 || rep.ValuesLost > 0
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
	if _, err := db.Load(context.Background(), slices.Values(entries)); err != nil {
		db.Close()
		return rep, err
	}
	if err := db.writeRecovered(r.recorded, o.now()); err != nil {
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
	// recorded are the idempotency records read: Badger's, then those of
	// the key table's log (see readKeyTable), the later of two with one
	// key the one kept.
	recorded []recovered
}

// recovered is an idempotency record Recover copies.
type recovered struct {
	key     string
	expires uint64 // Unix seconds, 0: never
	answer  []byte
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
		err = integrity.WithTable(path, c, r.blockSize, options.OnBlockRead, func(tb *table.Table) error {
			recs, blocks, bad = integrity.ReadBlocks(tb)
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
	off, end := integrity.LogRecords(data, true, func(k, v []byte, meta byte, expiresAt uint64) bool {
		rec := record{Key: bytes.Clone(y.ParseKey(k)), Version: y.ParseTs(k), Meta: meta, ExpiresAt: expiresAt, Value: bytes.Clone(v)}
		switch {
		case meta&integrity.BitTxn != 0:
			if txnTs != 0 && rec.Version != txnTs {
				return false
			}
			txnTs = rec.Version
			txn = append(txn, rec)
		case meta&integrity.BitFinTxn != 0:
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
	for pos := integrity.LogHeaderSize; pos < end; {
		if n, k, v, meta, expiresAt, ok := integrity.LogRecord(data[pos:]); ok {
			r.records = append(r.records, record{
				Key: bytes.Clone(y.ParseKey(k)), Version: y.ParseTs(k),
				Meta: meta &^ (integrity.BitTxn | integrity.BitFinTxn | integrity.BitValuePointer), ExpiresAt: expiresAt, Value: bytes.Clone(v),
			})
			f.Records++
			pos += n
			continue
		}
		if r.crashed && end < pos+integrity.TornRecordLen(data[pos:]) {
			break // the record a crash tore
		}
		bad++
		if first < 0 {
			first = pos
		}
		h, klen, vlen, ok := integrity.RecordHeader(data[pos:])
		n := h + klen + vlen + 4
		if !ok || pos+n > len(data) {
			unread = end - pos
			snapshotOnly = false
			break
		}
		snapshotOnly = snapshotOnly && integrity.OnlyKeys(data, pos, pos+n, isSnapshotKey)
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

// valueOf returns rec's value, reading it from the value log when the
// record points there (nil, false when that fails).
func (r *recoverer) valueOf(rec *record) ([]byte, bool) {
	if rec.Meta&integrity.BitValuePointer == 0 {
		return rec.Value, true
	}
	if len(rec.Value) < 12 {
		return nil, false
	}
	// Badger copies its valuePointer{Fid, Len, Offset uint32} as memory
	// (little-endian on every platform it runs on).
	fid := binary.LittleEndian.Uint32(rec.Value)
	length := binary.LittleEndian.Uint32(rec.Value[4:])
	offset := binary.LittleEndian.Uint32(rec.Value[8:])
	data := r.vlogs[fid]
	if data == nil || uint64(offset)+uint64(length) > uint64(len(data)) {
		return nil, false
	}
	_, k, v, _, _, ok := integrity.LogRecord(data[offset : offset+length])
	if !ok || !bytes.Equal(y.ParseKey(k), rec.Key) {
		return nil, false
	}
	return v, true
}

// merge keeps the newest version of every key and returns the index's
// entries (those not expired at now) and the recorded profile.
func (r *recoverer) merge(now time.Time) ([]store.Entry, string) {
	slices.SortFunc(r.records, func(a, b record) int {
		if c := bytes.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Version, a.Version); c != 0 {
			return c // newest first
		}
		// The same version from a table (a value-log pointer) and from
		// the value log: the value at hand first.
		return cmp.Compare(a.Meta&integrity.BitValuePointer, b.Meta&integrity.BitValuePointer)
	})
	nowUnix := uint64(now.Unix())
	var entries []store.Entry
	var profile string
	for i := range r.records {
		rec := &r.records[i]
		if i > 0 && bytes.Equal(rec.Key, r.records[i-1].Key) {
			continue // an older version
		}
		if rec.Meta&integrity.BitDelete != 0 || rec.ExpiresAt != 0 && rec.ExpiresAt <= nowUnix || len(rec.Key) == 0 {
			continue
		}
		switch rec.Key[0] {
		case tagMeta:
			if bytes.Equal(rec.Key, metaKey(metaProfile)) {
				if v, ok := r.valueOf(rec); ok {
					profile = string(v)
				}
			}
			if key, ok := bytes.CutPrefix(rec.Key, metaKey(metaRecord)); ok {
				// A retried batch gets its first answer from the copy.
				if v, ok := r.valueOf(rec); ok {
					r.recorded = append(r.recorded, recovered{key: string(key), expires: rec.ExpiresAt, answer: bytes.Clone(v)})
				}
			}
			continue
		case tagFull:
			if len(rec.Key) != fullKeyLen {
				continue
			}
		case tagPrefix:
			if store.CheckPrefixEntryLen(len(rec.Key)-1) != nil {
				continue
			}
		default:
			continue // Badger's own keys
		}
		e := store.Entry{Len: len(rec.Key) - 1}
		copy(e.Hash[:], rec.Key[1:])
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
		e.Value.Expires = store.Unix(int64(rec.ExpiresAt)) // Load writes it back as the TTL
		entries = append(entries, e)
	}
	return entries, profile
}

// readKeyTable appends the key table's live keys, when dir has one, to
// the entries Recover copies, and the idempotency records of its log's
// unmerged batches (see restoreRecords) to r.recorded, after Badger's (as
// Open writes them over Badger's). It reads with keytable.Salvage: each
// key file and log segment on its own, keeping only what their checksums
// verify, and reports each file and what it lost.
func (r *recoverer) readKeyTable(entries []store.Entry) ([]store.Entry, error) {
	dir := filepath.Join(r.dir, keyTableDir)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return entries, nil
	}
	s, err := keytable.Salvage(dir)
	if err != nil {
		return entries, fmt.Errorf("index: recover: %w", err)
	}
	bad := 0
	for i := range s.Entries {
		e := &s.Entries[i]
		en := store.Entry{Hash: hashkey.Hash(e.Key), Len: hashkey.Size}
		if e.HasValue || !e.Cols.IsZero() {
			// Salvage checked the value's block: a value that does not
			// decode was written so, and only its key is copied.
			v, err := fromTable(e.Cols, e.Value)
			if err != nil {
				v = store.Value{}
				bad++
			}
			en.Value = v // Load writes an expiry back as the TTL
		}
		entries = append(entries, en)
	}
	if bad > 0 {
		r.file(RecoverFile{Name: keyTableDir, Kind: "key table values", Problem: fmt.Sprintf("%d values do not decode: their keys copied without them", bad)})
		r.rep.ValuesLost += int64(bad)
	}
	for _, f := range s.Files {
		records := f.Keys
		if f.Kind == "log segment" {
			records = f.Records
		}
		r.file(RecoverFile{Name: keyTableDir + "/" + f.Name, Kind: f.Kind, Records: records, Problem: f.Problem, Lost: f.Lost, LostUnknown: f.LostUnknown})
		r.rep.LostEstimate += f.Lost
		r.rep.Lost = r.rep.Lost || f.Lost > 0 || f.LostUnknown
	}
	for _, b := range s.Opaque {
		err := decodeRecordNotes(b, func(key string, expires int64, answer []byte) error {
			r.recorded = append(r.recorded, recovered{key: key, expires: uint64(expires), answer: bytes.Clone(answer)})
			return nil
		})
		if err != nil {
			// The record's checksum matched: written so by a program.
			r.file(RecoverFile{Name: keyTableDir, Kind: "key table records", Problem: integrity.FirstLine(err.Error())})
		}
	}
	return entries, nil
}
