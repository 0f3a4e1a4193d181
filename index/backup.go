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
	"os"
	"path/filepath"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/internal/atomicfile"
	"github.com/urlhash/urlhash/store"
)

// A backup is Badger's backup stream of the entries (metadata left out)
// in urlhash's own framing, so that a cut or damaged file is an error
// rather than a partial restore. Version 2 (written for an index without
// a key table; one with a key table writes version 3, below):
//
//	"urlhash-backup\x02"
//	uvarint len(profile), profile
//	uint64 since (big-endian): the backup holds the changes after it
//	frames: uint32 n > 0, n bytes of the Badger stream, uint32 CRC-32C
//	uint32 0
//	key frames (incremental backups only): uint32 n > 0, n bytes of keys
//	        (each: one length byte, the key), uint32 CRC-32C
//	end:    uint32 0, uint64 until (the since of the next backup),
//	        uint64 asOf, uint64 key count, uint32 CRC-32C of the header,
//	        until, asOf and count
//
// An incremental backup carries, in key order, every key live in a
// snapshot taken before its stream's (version asOf): restore deletes each
// key of the index that is not among them and was not written after asOf,
// so that deletions reach the restored index even when compaction has
// dropped their markers from the source before the backup. A full backup
// (since 0) has no key frames and asOf 0. Version 1 (no key frames, no
// stream end, an end of until and CRC only) still restores.
//
// Version 3, written for an index with a key table, is version 2 with the
// key table's section between the header and the stream:
//
//	frames: uint32 n > 0 (a multiple of 32), n bytes of 32-byte keys in
//	        ascending order, uint32 CRC-32C
//	end:    uint32 0, uint64 key count
//
// The section holds every key of the key table, also in an incremental
// backup (key-table entries have no versions to select by): restore adds
// the keys its key table lacks and deletes those the section lacks, so
// deletions are carried. The section is read before the stream's
// snapshot is taken: an entry moved to Badger meanwhile (given a value)
// is in both, and restore keeps Badger's copy.
//
// Version 4, written for an index whose key table holds the values
// (format 3), is version 3 with rows in the section instead of keys:
//
//	header frame: uint32 n > 0, n bytes: uvarint First.Min, First.Max,
//	        Last.Min, Last.Max, Expires.Min, Expires.Max (the rows'
//	        ranges, see keytable.IngestOptions), one byte (1: rows have
//	        values), uvarint row count; uint32 CRC-32C
//	frames: uint32 n > 0, n bytes of rows in ascending key order, each
//	        the 32-byte key, uvarint First, Last, Expires (unix seconds,
//	        0 unset), uvarint len(value), value (the key table's: text
//	        and data); uint32 CRC-32C
//	end:    uint32 0, uint64 row count
//
// Both passes (ranges, rows) read one pinned view of the key table. A
// restore writes every row (an incremental one replaces the rows the
// index holds, and deletes the keys the section lacks).
const (
	backupMagic   = "urlhash-backup\x02"
	backupMagicV1 = "urlhash-backup\x01"
	backupMagicV3 = "urlhash-backup\x03"
	backupMagicV4 = "urlhash-backup\x04"
)

// keyFrameSize is the size at which a backup's key frame is written.
const keyFrameSize = 64 << 10

// ErrBackupGap is returned by Restore when an incremental backup does not
// continue where the index's last restored backup ended.
var ErrBackupGap = errors.New("index: backup does not continue the restored chain")

// BackupInfo describes a backup stream.
type BackupInfo struct {
	Profile string // the profile of the index it was taken from
	Since   uint64 // it holds the changes after this version; 0: everything
	Until   uint64 // the Since of the next backup in the chain

	v2 bool // read from a version 2, 3 or 4 backup
	v3 bool // read from a version 3 backup (a key-table section of keys)
	v4 bool // read from a version 4 backup (a key-table section of rows)
}

// Backup writes the changes to the index after version since (0: every
// entry) to w and returns the version to pass as since to the next,
// incremental, backup. It runs beside readers and writers: it reads one
// consistent snapshot, and a write it does not see falls in the next
// backup. Deletions are carried as such.
func (db *DB) Backup(w io.Writer, since uint64) (_ BackupInfo, err error) {
	defer db.catch(&err)
	if err := db.begin(context.Background()); err != nil {
		return BackupInfo{}, err
	}
	defer db.mu.RUnlock()
	// Badger's stream, like its iterators, stops silently at a damaged
	// block: verify every table first, so that a backup is never partial.
	if err := db.st.guard.CheckAll(); err != nil {
		return BackupInfo{}, err
	}
	info := BackupInfo{Profile: db.profileName(), Since: since}
	// Everything committed up to here is in the snapshot the stream reads
	// (it starts later); the next backup starts here, so nothing is
	// skipped, and at worst a little is carried twice.
	info.Until = max(db.st.bdb.MaxVersion(), since)
	// The key set of an incremental backup is read from a snapshot taken
	// before the stream's: a key written between the two is in the stream
	// with a newer version, which restore keeps; a key deleted between the
	// two has its marker in the stream (this open snapshot stops
	// compaction from dropping markers newer than it).
	var keys *badger.Txn
	var asOf uint64

	bw := bufio.NewWriterSize(w, 256<<10)
	header := binary.AppendUvarint([]byte(db.st.backupMagic()), uint64(len(info.Profile)))
	header = append(header, info.Profile...)
	header = binary.BigEndian.AppendUint64(header, since)
	if _, err := bw.Write(header); err != nil {
		return BackupInfo{}, err
	}
	if err := db.st.writeKeySection(frameWriter{bw}); err != nil {
		return BackupInfo{}, err
	}
	if since != 0 {
		keys = db.st.bdb.NewTransaction(false)
		defer keys.Discard()
		asOf = keys.ReadTs()
	}
	stream := db.st.bdb.NewStream()
	stream.NumGo = 1 // one read transaction: one consistent snapshot
	stream.SinceTs = since
	stream.LogPrefix = "index.Backup"
	stream.ChooseKey = func(item *badger.Item) bool { return item.Key()[0] != tagMeta }
	if _, err := stream.Backup(frameWriter{bw}, since); err != nil {
		return BackupInfo{}, translate(err)
	}
	if _, err := bw.Write(make([]byte, 4)); err != nil { // the stream's end
		return BackupInfo{}, err
	}
	var count uint64
	if keys != nil {
		var err error
		if count, err = writeKeys(frameWriter{bw}, keys); err != nil {
			return BackupInfo{}, translate(err)
		}
	}
	end := binary.BigEndian.AppendUint32(nil, 0)
	end = binary.BigEndian.AppendUint64(end, info.Until)
	end = binary.BigEndian.AppendUint64(end, asOf)
	end = binary.BigEndian.AppendUint64(end, count)
	sum := crc32.Update(crc32.Checksum(header, castagnoli), castagnoli, end[4:])
	end = binary.BigEndian.AppendUint32(end, sum)
	if _, err := bw.Write(end); err != nil {
		return BackupInfo{}, err
	}
	return info, bw.Flush()
}

// writeKeys writes every entry key (full and prefix, no metadata) live
// in txn's snapshot, in key order, as key frames, and returns how many.
func writeKeys(fw frameWriter, txn *badger.Txn) (uint64, error) {
	it := txn.NewIterator(badger.IteratorOptions{})
	defer it.Close()
	var count uint64
	frame := make([]byte, 0, keyFrameSize+256)
	for it.Seek([]byte{tagMeta + 1}); it.Valid(); it.Next() {
		k := it.Item().Key()
		frame = append(append(frame, byte(len(k))), k...)
		count++
		if len(frame) >= keyFrameSize {
			if _, err := fw.Write(frame); err != nil {
				return 0, err
			}
			frame = frame[:0]
		}
	}
	_, err := fw.Write(frame)
	return count, err
}

// frameWriter frames each write of the Badger stream with its length and
// checksum.
type frameWriter struct{ w *bufio.Writer }

func (f frameWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(len(p)))
	f.w.Write(b[:])
	f.w.Write(p)
	binary.BigEndian.PutUint32(b[:], crc32.Checksum(p, castagnoli))
	_, err := f.w.Write(b[:])
	return len(p), err
}

// metaRestored records the Until of the last backup restored, so that an
// incremental one must continue it.
const metaRestored = "restored"

// Restore applies a backup to the index: a full backup to an index with no
// entries, then each incremental backup in the order they were taken. The
// backup's profile must be the one the index records (a new index takes
// it). A damaged or cut backup is an error wrapping store.ErrCorrupt; the
// entries read before the damage are kept, so restore into a new index and
// remove it when Restore fails. Other operations wait while it runs.
func (db *DB) Restore(r io.Reader) (BackupInfo, error) { return db.restore(r, true) }

// RestoreChain restores backups in order, as Restore each (a full backup,
// then the incremental backups of its chain), under one restoring mark,
// and returns the BackupInfo of each it restored. The mark (see Open)
// stays from the first until the last has restored: a restore cut or
// failed between two of them leaves it, so that no command takes the
// backups restored so far for the whole chain.
func (db *DB) RestoreChain(rs ...io.Reader) ([]BackupInfo, error) {
	infos := make([]BackupInfo, 0, len(rs))
	for i, r := range rs {
		info, err := db.restore(r, i == len(rs)-1)
		if err != nil {
			return infos, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// restore is Restore, leaving the restoring mark in place unless last.
func (db *DB) restore(r io.Reader, last bool) (_ BackupInfo, err error) {
	defer db.catch(&err)
	br := bufio.NewReaderSize(r, 256<<10)
	info, header, err := readBackupHeader(br)
	if err != nil {
		return BackupInfo{}, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	switch {
	case db.closed:
		return BackupInfo{}, store.ErrClosed
	case db.opts.ReadOnly:
		return BackupInfo{}, store.ErrReadOnly
	}
	// A backup of an older format writes full entries to Badger.
	db.st.badgerNoFull.Store(false)
	if err := db.waitFilter(); err != nil {
		return BackupInfo{}, err
	}
	if err := db.prepareWrite(); err != nil {
		return BackupInfo{}, err
	}
	restored, err := db.restoredUntil()
	if err != nil {
		return BackupInfo{}, err
	}
	empty := db.entries.Load() == 0 && db.prefixEntries.Load() == 0
	switch {
	case info.Since == 0 && !empty:
		return BackupInfo{}, fmt.Errorf("%w: a full backup restores into an index with no entries; %s has some", ErrBackupGap, db.path)
	case info.Since != 0 && info.Since > restored:
		return BackupInfo{}, fmt.Errorf("%w: it holds the changes after version %d, the index was restored up to %d", ErrBackupGap, info.Since, restored)
	}
	if p := db.profileName(); p != "" && info.Profile != "" && p != info.Profile {
		return BackupInfo{}, fmt.Errorf("%w: the backup is of a %s index, %s records %s", store.ErrProfileMismatch, info.Profile, db.path, p)
	}
	// Until it ends well, the directory is marked: an index a restore
	// killed, cut or refused midway holds a part of the backup, and Open
	// refuses it rather than serve the part as the whole.
	if err := db.markRestoring(info); err != nil {
		return BackupInfo{}, err
	}
	finishKeys := func() error { return nil }
	if info.v3 || info.v4 {
		if finishKeys, err = db.st.readKeySection(br, info.v4, info.Since != 0, db.opts.keyTableDelta, db.roomFor); err != nil {
			return BackupInfo{}, fmt.Errorf("index: restore: %w", err)
		}
	}
	fr := &frameReader{r: br, room: db.roomFor, v2: info.v2}
	if err := db.st.bdb.Load(fr, 256); err != nil {
		if fr.err != nil {
			err = fr.err
		}
		return BackupInfo{}, fmt.Errorf("index: restore: %w", err)
	}
	if fr.err != nil { // Badger stopped at a frame boundary before the end
		return BackupInfo{}, fmt.Errorf("index: restore: %w", fr.err)
	}
	var gone [][]byte
	if info.v2 {
		if !fr.streamEnd {
			return BackupInfo{}, fmt.Errorf("%w: backup ends before the end of its stream", store.ErrCorrupt)
		}
		if gone, err = db.restoreKeys(fr, info.Since != 0); err != nil {
			return BackupInfo{}, fmt.Errorf("index: restore: %w", err)
		}
	}
	if !fr.done {
		return BackupInfo{}, fmt.Errorf("%w: backup ends before its end record", store.ErrCorrupt)
	}
	info.Until = fr.until
	end := binary.BigEndian.AppendUint64(nil, info.Until)
	if info.v2 {
		end = binary.BigEndian.AppendUint64(end, fr.asOf)
		end = binary.BigEndian.AppendUint64(end, fr.count)
	}
	if crc32.Update(crc32.Checksum(header, castagnoli), castagnoli, end) != fr.sum {
		return BackupInfo{}, fmt.Errorf("%w: backup end record checksum", store.ErrCorrupt)
	}
	if fr.keys != fr.count {
		return BackupInfo{}, fmt.Errorf("%w: backup carries %d keys, its end record says %d", store.ErrCorrupt, fr.keys, fr.count)
	}
	// The whole backup is checked: the deletions it implies may go.
	if len(gone) > 0 {
		if err := db.st.deleteBadger(gone); err != nil {
			return BackupInfo{}, err
		}
	}
	if err := finishKeys(); err != nil {
		return BackupInfo{}, err
	}
	// An entry moved into Badger while the backup was taken is in both
	// sections: the stores keep Badger's copy.
	if _, err := db.st.reconcile(); err != nil {
		return BackupInfo{}, err
	}
	// A backup of an index whose full entries with values were Badger's
	// (version 1 to 3) restores them there, and they stay: the next
	// incremental backup of the chain deletes by Badger's markers. A
	// write moves such an entry into the key table (see stores.write).
	err = db.st.update(func(txn *badger.Txn) error {
		if err := txn.Set(metaKey(metaRestored), binary.BigEndian.AppendUint64(nil, info.Until)); err != nil {
			return err
		}
		if db.profileName() == "" && info.Profile != "" {
			return txn.Set(metaKey(metaProfile), []byte(info.Profile))
		}
		return nil
	})
	if err != nil {
		return BackupInfo{}, translate(err)
	}
	if db.profileName() == "" {
		db.profileMu.Lock()
		db.profile = info.Profile
		db.profileMu.Unlock()
	}
	// The entries came in below the filter and the counts: rebuild both.
	if err := db.rebuildFilter(db.f.Bits(), nil); err != nil {
		return BackupInfo{}, err
	}
	// The backup's entries may expire, and the record that says the index
	// holds such entries is metadata, which backups leave out.
	if err := db.readTTL(); err != nil {
		return BackupInfo{}, translate(err)
	}
	if db.holdsExpiring() {
		if err := db.markTTL(); err != nil {
			return BackupInfo{}, err
		}
	}
	if err := db.syncLocked(); err != nil {
		return BackupInfo{}, err
	}
	if !last {
		return info, nil
	}
	return info, db.unmarkRestoring()
}

// restoringFileName marks an index directory a restore is writing.
const restoringFileName = "urlhash.restoring"

// markRestoring creates the restoring mark, durably.
func (db *DB) markRestoring(info BackupInfo) error {
	if db.opts.InMemory {
		return nil
	}
	kind := "a full backup"
	if info.Since != 0 {
		kind = fmt.Sprintf("the changes after version %d", info.Since)
	}
	name := filepath.Join(db.path, restoringFileName)
	if err := atomicfile.WriteFile(name, []byte("restore of "+kind+" began "+time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return fmt.Errorf("index: restore: %w", err)
	}
	return nil
}

// unmarkRestoring removes the restoring mark, durably.
func (db *DB) unmarkRestoring() error {
	if db.opts.InMemory {
		return nil
	}
	if err := os.Remove(filepath.Join(db.path, restoringFileName)); err != nil {
		return fmt.Errorf("index: restore: %w", err)
	}
	return integrity.SyncDir(db.path)
}

// restoreKeys reads the key frames of a version 2 backup and the end
// record into fr and, for an incremental backup (incremental), returns
// the keys of the index that the backup's key set lacks and that were
// written no later than its snapshot: the deletions since the base. The
// index's keys and the backup's are both in key order: one merge, with
// memory for the deletions only.
func (db *DB) restoreKeys(fr *frameReader, incremental bool) ([][]byte, error) {
	var gone []missing
	txn := db.st.bdb.NewTransaction(false)
	defer txn.Discard()
	it := txn.NewIterator(badger.IteratorOptions{})
	defer it.Close()
	it.Seek([]byte{tagMeta + 1})
	var prev []byte
	for {
		k, err := fr.nextKey()
		if err != nil {
			return nil, err
		}
		if k != nil && prev != nil && bytes.Compare(prev, k) >= 0 {
			return nil, fmt.Errorf("%w: backup keys out of order at %x", store.ErrCorrupt, k)
		}
		prev = k
		// Every index key before k (all of them at the end) is not in
		// the backup's set.
		for ; it.Valid() && (k == nil || bytes.Compare(it.Item().Key(), k) < 0); it.Next() {
			if incremental {
				gone = append(gone, missing{it.Item().KeyCopy(nil), it.Item().Version()})
			}
		}
		if k == nil {
			break
		}
		if it.Valid() && bytes.Equal(it.Item().Key(), k) {
			it.Next()
		}
	}
	if !incremental && fr.count != 0 {
		return nil, fmt.Errorf("%w: a full backup with a key set", store.ErrCorrupt)
	}
	// asOf came with the end record, after the keys.
	keys := make([][]byte, 0, len(gone))
	for _, m := range gone {
		if m.version <= fr.asOf {
			keys = append(keys, m.key)
		}
	}
	return keys, nil
}

// missing is a key of the index that a backup's key set lacks.
type missing struct {
	key     []byte
	version uint64
}

// holdsExpiring reports whether an entry of the index has an expiry, by
// the expiry counts (which rebuildFilter's key-only pass just set).
func (db *DB) holdsExpiring() bool {
	db.emu.Lock()
	defer db.emu.Unlock()
	return db.exp.total != [2]int64{}
}

// restoredUntil returns the Until of the last backup restored, 0 if none.
func (db *DB) restoredUntil() (uint64, error) {
	var v []byte
	err := db.st.bdb.View(func(txn *badger.Txn) error {
		var err error
		v, err = getCopy(txn, metaKey(metaRestored))
		return err
	})
	if err != nil || v == nil {
		return 0, translate(err)
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: restored record of %d bytes", store.ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func readBackupHeader(br *bufio.Reader) (BackupInfo, []byte, error) {
	magic := make([]byte, len(backupMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != backupMagic && string(magic) != backupMagicV1 && string(magic) != backupMagicV3 && string(magic) != backupMagicV4 {
		return BackupInfo{}, nil, fmt.Errorf("%w: not a urlhash backup", store.ErrFormat)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n > 255 {
		return BackupInfo{}, nil, fmt.Errorf("%w: backup header", store.ErrCorrupt)
	}
	rest := make([]byte, n+8)
	if _, err := io.ReadFull(br, rest); err != nil {
		return BackupInfo{}, nil, fmt.Errorf("%w: backup header", store.ErrCorrupt)
	}
	info := BackupInfo{Profile: string(rest[:n]), Since: binary.BigEndian.Uint64(rest[n:]),
		v2: string(magic) != backupMagicV1, v3: string(magic) == backupMagicV3, v4: string(magic) == backupMagicV4}
	header := binary.AppendUvarint(magic, n)
	return info, append(header, rest...), nil
}

// frameReader checks and removes the framing, handing Badger the stream;
// then, in a version 2 backup, it reads the key frames and the end.
type frameReader struct {
	r         *bufio.Reader
	room      func(n int64) error // the free-space gate, asked before each frame
	v2        bool
	frame     []byte
	err       error // the framing error that ended the stream
	streamEnd bool  // version 2: the stream's end was read
	done      bool  // the end record was read
	until     uint64
	asOf      uint64 // version 2: the version of the key set
	count     uint64 // version 2: the key count of the end record
	keys      uint64 // version 2: the keys read
	sum       uint32
}

func (f *frameReader) Read(p []byte) (int, error) {
	for len(f.frame) == 0 {
		if f.done || f.streamEnd || f.err != nil {
			if f.err != nil {
				return 0, f.err
			}
			return 0, io.EOF
		}
		f.next()
	}
	n := copy(p, f.frame)
	f.frame = f.frame[n:]
	return n, nil
}

// next reads and checks one frame (or the end of the stream, or the end
// record).
func (f *frameReader) next() {
	var b [28]byte
	if _, err := io.ReadFull(f.r, b[:4]); err != nil {
		f.err = fmt.Errorf("%w: backup cut short (no end record)", store.ErrCorrupt)
		return
	}
	n := binary.BigEndian.Uint32(b[:4])
	if n == 0 {
		if f.v2 && !f.streamEnd {
			f.streamEnd = true
			return
		}
		end := b[:12]
		if f.v2 {
			end = b[:28]
		}
		if _, err := io.ReadFull(f.r, end); err != nil {
			f.err = fmt.Errorf("%w: backup end record cut short", store.ErrCorrupt)
			return
		}
		f.until, f.sum, f.done = binary.BigEndian.Uint64(end), binary.BigEndian.Uint32(end[len(end)-4:]), true
		if f.v2 {
			f.asOf, f.count = binary.BigEndian.Uint64(end[8:]), binary.BigEndian.Uint64(end[16:])
		}
		return
	}
	if n > 256<<20 {
		f.err = fmt.Errorf("%w: backup frame of %d bytes", store.ErrCorrupt, n)
		return
	}
	if !f.streamEnd {
		if err := f.room(2 * int64(n)); err != nil { // the log, then the tables
			f.err = err
			return
		}
	}
	frame := make([]byte, n+4)
	if _, err := io.ReadFull(f.r, frame); err != nil {
		f.err = fmt.Errorf("%w: backup cut short in a frame", store.ErrCorrupt)
		return
	}
	if crc32.Checksum(frame[:n], castagnoli) != binary.BigEndian.Uint32(frame[n:]) {
		f.err = fmt.Errorf("%w: backup frame checksum mismatch", store.ErrCorrupt)
		return
	}
	f.frame = frame[:n]
}

// nextKey returns the next key of the key frames, nil after the last one
// (the end record is then read). The key is valid until the next call.
func (f *frameReader) nextKey() ([]byte, error) {
	for len(f.frame) == 0 {
		if f.done {
			return nil, nil
		}
		if f.err != nil {
			return nil, f.err
		}
		f.next()
	}
	n := int(f.frame[0])
	if n < 5 || n > 1+32 || len(f.frame) < 1+n {
		return nil, fmt.Errorf("%w: backup key of %d bytes", store.ErrCorrupt, n)
	}
	k := f.frame[1 : 1+n]
	f.frame = f.frame[1+n:]
	f.keys++
	return k, nil
}
