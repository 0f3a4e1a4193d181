package keytable

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"

	"github.com/urlhash/urlhash/index/internal/syncmark"
	"github.com/urlhash/urlhash/store"
)

// The table knows what it acknowledged. After every fsync of the log,
// SyncTo records in the file SYNCED the number of the last record the
// fsync made durable and the segment that holds it, before any caller
// learns its write is durable. At Open the log must still hold that
// record, and its records must follow one another without a gap: if not,
// acknowledged writes are gone (a segment cut or removed after the last
// close), and Open refuses the table (ErrLost) instead of serving it
// without them. A segment the manifest no longer needs (merged into the
// key files) holds nothing to check.
//
// The file is a sync mark (package index/internal/syncmark, the format
// the index's urlhash.synced shares): the segment and the record number.
// It is written in place (one sector) without an fsync, which Close runs:
// a kill -9 keeps what SyncTo wrote in the operating system's cache. A
// table without the file (new, or written by a version 1 program) is not
// checked; removing it accepts a loss Open refused.
const SyncedName = "SYNCED"

// ErrLost is returned by Open (wrapped, with the segment's name) when the
// log lost records a sync acknowledged. It wraps store.ErrCorrupt.
var ErrLost = fmt.Errorf("%w: acknowledged key table records missing", store.ErrCorrupt)

// syncMark is the table's side of SYNCED.
type syncMark struct {
	f file // open for writing (nil read-only)
	// seg is the segment that holds the last record appended (under
	// wmu), marked the last record number written to the file (under
	// smu, by the one syncer).
	seg    uint64
	marked uint64
}

// readMark returns the segment and record number dir's SYNCED records,
// zeros when there is none.
func readMark(fs fsys, dir string) (seg, seq uint64, err error) {
	name := filepath.Join(dir, SyncedName)
	b, err := fs.ReadFile(name)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return 0, 0, nil
	case err != nil:
		return 0, 0, fmt.Errorf("keytable: %w", err)
	}
	seg, seq, ok := decodeMark(b)
	if !ok {
		return 0, 0, fmt.Errorf("%w: %s is damaged; remove it to open the key table without checking its acknowledged writes", store.ErrCorrupt, name)
	}
	return seg, seq, nil
}

// appendMark appends the bytes of SYNCED for record seq in segment seg.
func appendMark(b []byte, seg, seq uint64) []byte {
	return syncmark.Mark{Seg: seg, Seq: seq}.AppendBinary(b)
}

// decodeMark decodes the bytes of SYNCED (in the current sync-mark format
// or the key table's before it); empty ones (created, never written:
// nothing acknowledged yet) are zeros.
func decodeMark(b []byte) (seg, seq uint64, ok bool) {
	m, ok := syncmark.Decode(b)
	return m.Seg, m.Seq, ok
}

// write records that the log is durable up to record seq, in segment seg.
// The caller is the one syncer (see SyncTo).
func (m *syncMark) write(seg, seq uint64) error {
	if m.f == nil || seq <= m.marked {
		return nil
	}
	if _, err := m.f.WriteAt(appendMark(nil, seg, seq), 0); err != nil {
		return fmt.Errorf("keytable: %s: %w", m.f.Name(), err)
	}
	m.marked = seq
	return nil
}

// close fsyncs and closes SYNCED.
func (m *syncMark) close() error {
	if m.f == nil {
		return nil
	}
	err := m.f.Sync()
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	m.f = nil
	if err != nil {
		return fmt.Errorf("keytable: %s: %w", SyncedName, err)
	}
	return nil
}

// A replay follows the record numbers of the segments Open reads.
type replay struct {
	dir          string
	seg, seq     uint64 // the last record read (seq 0: none) and its segment
	markSeg      uint64 // from SYNCED (markSeq 0: none)
	markSeq      uint64
	ignoreMarked bool
	// torn is what the newest segment's read dropped as a torn tail.
	torn    tail
	tornSeg uint64
}

// next returns the number of r, read from segment seg: its own (version
// 2 and 3), or the one after the last (version 1). A numbered record that
// does not follow the one before means records between them are lost.
func (r *replay) next(rec *record, seg uint64) (uint64, error) {
	switch {
	case rec.seq == 0:
		r.seq++
	case r.seq != 0 && rec.seq != r.seq+1 && !r.ignoreMarked:
		// Named: the segment cut short, when the gap is at its end.
		return 0, fmt.Errorf("%w: %s: record %d follows record %d (in %s): the records between were lost (a segment cut or removed)",
			ErrLost, logName(r.dir, r.seg), rec.seq, r.seq, logName(r.dir, seg))
	default:
		r.seq = rec.seq
	}
	r.seg = seg
	return r.seq, nil
}

// check reports whether the log read holds the last record SYNCED says was
// made durable, unless the manifest no longer needs its segment (merged:
// segments from logStart on are read). When the read dropped a damaged
// tail of the marked segment, the error names it: the records from there
// on were acknowledged, and are lost if the table is opened without them.
func (r *replay) check(logStart uint64) error {
	if r.ignoreMarked || r.markSeq == 0 || r.markSeg < logStart || r.seq >= r.markSeq {
		return nil
	}
	if r.torn.why != "" && r.tornSeg == r.markSeg {
		return fmt.Errorf("%w: %s: damaged record at offset %d (%s): records up to %d were acknowledged durable, the log's last whole record is %d; opening without SYNCED would drop records %d to %d",
			ErrLost, logName(r.dir, r.markSeg), r.torn.off, r.torn.why, r.markSeq, r.seq, r.seq+1, r.markSeq)
	}
	return fmt.Errorf("%w: %s: records up to %d were acknowledged durable, the log ends at record %d: the segment was cut or removed after the last close; opening without SYNCED would drop records %d to %d",
		ErrLost, logName(r.dir, r.markSeg), r.markSeq, r.seq, r.seq+1, r.markSeq)
}
