package keytable

import (
	"fmt"

	"github.com/urlhash/urlhash/store"
)

// appendLocked appends rec to the log with one write (a killed process
// loses nothing written) and returns its position. The caller holds wmu.
func (t *Table) appendLocked(rec *record) (uint64, error) {
	if t.log == nil {
		return 0, store.ErrClosed
	}
	var err error
	rec.seq = t.written.Load() + 1
	t.buf, err = appendRecord(t.buf[:0], rec)
	if err != nil {
		return 0, err
	}
	off := t.segBytes + logHeader
	if _, err := t.log.Write(t.buf); err != nil {
		// Cut what part was written, so that the next record follows a
		// whole one; if even that fails, stop writing.
		if terr := t.log.Truncate(off); terr != nil {
			t.log = nil
		} else if _, serr := t.log.Seek(off, 0); serr != nil {
			t.log = nil
		}
		return 0, fmt.Errorf("keytable: append to %s: %w", logName(t.dir, t.logNum), err)
	}
	if cap(t.buf) > 1<<20 {
		t.buf = nil // a large batch's buffer is not kept
	}
	t.segBytes += int64(len(t.buf))
	t.mark.seg = t.logNum
	return t.written.Add(1), nil
}

// SyncTo returns when the log up to position seq is durable (fsynced).
// Concurrent callers share fsyncs: a caller waits for one that started
// after its record was written; while one runs, the callers that arrive
// wait for the next, which serves them all.
func (t *Table) SyncTo(seq uint64) error {
	t.smu.Lock()
	defer t.smu.Unlock()
	for t.synced < seq && t.syncErr == nil {
		if t.syncing {
			t.scond.Wait()
			continue
		}
		t.syncing = true
		// The last record, its segment and the newest segment at one
		// moment: a rotation syncs the older segment before it installs
		// a newer one, so the fsync of the newest covers every record.
		t.wmu.Lock()
		target, seg, f := t.written.Load(), t.mark.seg, t.log
		t.wmu.Unlock()
		t.smu.Unlock()
		var err error
		if f != nil {
			if err = f.Sync(); err == nil {
				// Before any caller learns its record is durable.
				err = t.mark.write(seg, target)
			}
		}
		t.syncs.Add(1)
		t.smu.Lock()
		t.syncing = false
		if err != nil {
			t.syncErr = fmt.Errorf("keytable: fsync %s: %w", f.Name(), err)
		} else {
			t.synced = max(t.synced, target)
		}
		t.scond.Broadcast()
	}
	return t.syncErr
}

// Sync makes every change made so far durable.
func (t *Table) Sync() error { return t.SyncTo(t.written.Load()) }

// Syncs returns the number of log fsyncs run (for metrics and tests).
func (t *Table) Syncs() int64 { return t.syncs.Load() }
