package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/store"
)

// A backup is Badger's backup stream of the entries (metadata left out)
// in urlhash's own framing, so that a cut or damaged file is an error
// rather than a partial restore:
//
//	"urlhash-backup\x01"
//	uvarint len(profile), profile
//	uint64 since (big-endian): the backup holds the changes after it
//	frames: uint32 n > 0, n bytes of the Badger stream, uint32 CRC-32C
//	end:    uint32 0, uint64 until (the since of the next backup),
//	        uint32 CRC-32C of the header and until
const backupMagic = "urlhash-backup\x01"

// ErrBackupGap is returned by Restore when an incremental backup does not
// continue where the index's last restored backup ended.
var ErrBackupGap = errors.New("index: backup does not continue the restored chain")

// BackupInfo describes a backup stream.
type BackupInfo struct {
	Profile string // the profile of the index it was taken from
	Since   uint64 // it holds the changes after this version; 0: everything
	Until   uint64 // the Since of the next backup in the chain
}

// Backup writes the changes to the index after version since (0: every
// entry) to w and returns the version to pass as since to the next,
// incremental, backup. It runs beside readers and writers: it reads one
// consistent snapshot, and a write it does not see falls in the next
// backup. Deletions are carried as such.
func (db *DB) Backup(w io.Writer, since uint64) (_ BackupInfo, err error) {
	defer db.catch(&err)
	if err := db.begin(); err != nil {
		return BackupInfo{}, err
	}
	defer db.mu.RUnlock()
	// Badger's stream, like its iterators, stops silently at a damaged
	// block: verify every table first, so that a backup is never partial.
	if err := db.guard.checkAll(); err != nil {
		return BackupInfo{}, err
	}
	info := BackupInfo{Profile: db.Profile(), Since: since}
	// Everything committed up to here is in the snapshot the stream reads
	// (it starts later); the next backup starts here, so nothing is
	// skipped, and at worst a little is carried twice.
	info.Until = max(db.bdb.MaxVersion(), since)

	bw := bufio.NewWriterSize(w, 256<<10)
	header := binary.AppendUvarint([]byte(backupMagic), uint64(len(info.Profile)))
	header = append(header, info.Profile...)
	header = binary.BigEndian.AppendUint64(header, since)
	if _, err := bw.Write(header); err != nil {
		return BackupInfo{}, err
	}
	stream := db.bdb.NewStream()
	stream.NumGo = 1 // one read transaction: one consistent snapshot
	stream.SinceTs = since
	stream.LogPrefix = "index.Backup"
	stream.ChooseKey = func(item *badger.Item) bool { return item.Key()[0] != tagMeta }
	if _, err := stream.Backup(frameWriter{bw}, since); err != nil {
		return BackupInfo{}, translate(err)
	}
	end := binary.BigEndian.AppendUint32(nil, 0)
	end = binary.BigEndian.AppendUint64(end, info.Until)
	sum := crc32.Update(crc32.Checksum(header, castagnoli), castagnoli, end[4:])
	end = binary.BigEndian.AppendUint32(end, sum)
	if _, err := bw.Write(end); err != nil {
		return BackupInfo{}, err
	}
	return info, bw.Flush()
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
func (db *DB) Restore(r io.Reader) (_ BackupInfo, err error) {
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
	if p := db.Profile(); p != "" && info.Profile != "" && p != info.Profile {
		return BackupInfo{}, fmt.Errorf("%w: the backup is of a %s index, %s records %s", store.ErrProfileMismatch, info.Profile, db.path, p)
	}
	fr := &frameReader{r: br, room: db.roomFor}
	if err := db.bdb.Load(fr, 256); err != nil {
		if fr.err != nil {
			err = fr.err
		}
		return BackupInfo{}, fmt.Errorf("index: restore: %w", err)
	}
	if fr.err != nil { // Badger stopped at a frame boundary before the end
		return BackupInfo{}, fmt.Errorf("index: restore: %w", fr.err)
	}
	if !fr.done {
		return BackupInfo{}, fmt.Errorf("%w: backup ends before its end record", store.ErrCorrupt)
	}
	info.Until = fr.until
	if crc32.Update(crc32.Checksum(header, castagnoli), castagnoli, binary.BigEndian.AppendUint64(nil, info.Until)) != fr.sum {
		return BackupInfo{}, fmt.Errorf("%w: backup end record checksum", store.ErrCorrupt)
	}
	err = db.bdb.Update(func(txn *badger.Txn) error {
		if err := txn.Set(metaKey(metaRestored), binary.BigEndian.AppendUint64(nil, info.Until)); err != nil {
			return err
		}
		if db.Profile() == "" && info.Profile != "" {
			return txn.Set(metaKey(metaProfile), []byte(info.Profile))
		}
		return nil
	})
	if err != nil {
		return BackupInfo{}, translate(err)
	}
	if db.Profile() == "" {
		db.profileMu.Lock()
		db.profile = info.Profile
		db.profileMu.Unlock()
	}
	// The entries came in below the filter and the counts: rebuild both.
	if err := db.rebuildFilter(db.f.k); err != nil {
		return BackupInfo{}, err
	}
	if err := db.readTTL(); err != nil { // the backup's entries may expire
		return BackupInfo{}, translate(err)
	}
	return info, translate(db.bdb.Sync())
}

// restoredUntil returns the Until of the last backup restored, 0 if none.
func (db *DB) restoredUntil() (uint64, error) {
	var v []byte
	err := db.bdb.View(func(txn *badger.Txn) error {
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
	if _, err := io.ReadFull(br, magic); err != nil || !bytes.Equal(magic, []byte(backupMagic)) {
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
	info := BackupInfo{Profile: string(rest[:n]), Since: binary.BigEndian.Uint64(rest[n:])}
	header := binary.AppendUvarint(magic, n)
	return info, append(header, rest...), nil
}

// frameReader checks and removes the framing, handing Badger the stream.
type frameReader struct {
	r     *bufio.Reader
	room  func(n int64) error // the free-space gate, asked before each frame
	left  uint32              // bytes of the current frame not yet read
	frame []byte
	err   error // the framing error that ended the stream
	done  bool  // the end record was read
	until uint64
	sum   uint32
}

func (f *frameReader) Read(p []byte) (int, error) {
	for len(f.frame) == 0 {
		if f.done || f.err != nil {
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

// next reads and checks one frame (or the end record).
func (f *frameReader) next() {
	var b [12]byte
	if _, err := io.ReadFull(f.r, b[:4]); err != nil {
		f.err = fmt.Errorf("%w: backup cut short (no end record)", store.ErrCorrupt)
		return
	}
	n := binary.BigEndian.Uint32(b[:4])
	if n == 0 {
		if _, err := io.ReadFull(f.r, b[:12]); err != nil {
			f.err = fmt.Errorf("%w: backup end record cut short", store.ErrCorrupt)
			return
		}
		f.until, f.sum, f.done = binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint32(b[8:]), true
		return
	}
	if n > 256<<20 {
		f.err = fmt.Errorf("%w: backup frame of %d bytes", store.ErrCorrupt, n)
		return
	}
	if err := f.room(2 * int64(n)); err != nil { // the log, then the tables
		f.err = err
		return
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
