package index

import (
	"context"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/store"
)

// metaRecord prefixes the metadata keys of idempotency records (after
// it: the record's key).
const metaRecord = "record/"

// MaxRecordKeyLen is the longest Record.Key.
const MaxRecordKeyLen = 255

// A Record is kept with a write so that a client that resends the write
// (after a crash of either side, with the same key) gets the write's first
// answer: a server's idempotency record (Idempotency-Key). The index
// knows records as opaque bytes under a key; what they hold is the
// caller's.
//
// The seam: a write method that takes a *Record (AddBatchRecorded,
// VisitBatchRecorded, PutBatchRecorded) computes the answer under the
// write's locks, from what the write finds, and stores the record in the
// same ordered write as the entries, before them. So after a crash (or a
// write that failed midway) no entry of the write is stored without its
// record: a resend never finds a key its first attempt stored and reports
// it present. The record may name keys a crash left out, so its reader
// writes the entries again (an add of them: what is stored stays) before
// it answers with the record. A store of key-only entries with its own
// log (a key table) keeps the promise by appending the record to that log
// no later than the keys, in the same group commit.
type Record struct {
	// Key names the record: 1..MaxRecordKeyLen bytes.
	Key string
	// TTL is how long the record is kept, at least (Badger drops it at a
	// compaction after that). Required: records take space.
	TTL time.Duration
	// Answer returns the record's bytes given which entries the write
	// found new (nil for a put). It is called once, with the write's
	// locks held; it must not call the index.
	Answer func(added []bool) []byte
	// Lazy leaves the record out of a write that stores no entry (every
	// key present; Answer is called all the same): such a write gives the
	// same answer when run again (unless the keys are deleted meanwhile),
	// so its caller may answer first and store the record after
	// (PutRecord), keeping the write off the path of the answer.
	Lazy bool
}

func (r *Record) check() error {
	if r == nil {
		return nil
	}
	if len(r.Key) == 0 || len(r.Key) > MaxRecordKeyLen || r.TTL <= 0 || r.Answer == nil {
		return fmt.Errorf("%w: record key of %d bytes (want 1..%d), TTL %v, answer set %v", store.ErrInvalidOptions, len(r.Key), MaxRecordKeyLen, r.TTL, r.Answer != nil)
	}
	return nil
}

// entry returns the Badger entry of the record with the answer b.
func (r *Record) entry(b []byte) *badger.Entry {
	return badger.NewEntry(metaKey(metaRecord+r.Key), b).WithTTL(r.TTL)
}

// AddBatchRecorded is AddBatch that stores rec with the entries (see
// Record): rec.Answer gets what AddBatch returns.
func (db *DB) AddBatchRecorded(ctx context.Context, entries []store.Entry, rec *Record) ([]bool, error) {
	if err := rec.check(); err != nil {
		return nil, err
	}
	return db.writeRecorded(ctx, entries, true, rec)
}

// PutBatchRecorded is PutBatch that stores rec with the entries (see
// Record); rec.Answer gets nil.
func (db *DB) PutBatchRecorded(ctx context.Context, entries []store.Entry, rec *Record) error {
	if err := rec.check(); err != nil {
		return err
	}
	_, err := db.writeRecorded(ctx, entries, false, rec)
	return err
}

// VisitBatchRecorded is VisitBatch that stores rec with the entries it
// writes (see Record): rec.Answer gets what VisitBatch returns.
func (db *DB) VisitBatchRecorded(ctx context.Context, entries []store.Entry, revisitAfter time.Duration, rec *Record) ([]bool, error) {
	if err := rec.check(); err != nil {
		return nil, err
	}
	return db.visitBatch(ctx, entries, revisitAfter, rec)
}

// PutRecord stores rec alone (rec.Answer gets nil), for a write that
// cannot carry it: it is not atomic with that write, so a crash between
// the two leaves the write without its record.
func (db *DB) PutRecord(rec *Record) (err error) {
	if err := rec.check(); err != nil {
		return err
	}
	defer db.catch(&err)
	if err := db.beginWrite(context.Background()); err != nil {
		return err
	}
	defer db.mu.RUnlock()
	b := rec.Answer(nil)
	if err := db.roomFor(int64(2 * (len(rec.Key) + len(b) + 64))); err != nil {
		return err
	}
	return db.st.putRecord(rec, b)
}

// Recorded returns the bytes of the record named key, and false when there
// is none (never stored, or expired). The bytes are the caller's.
func (db *DB) Recorded(key string) (_ []byte, ok bool, err error) {
	if len(key) == 0 || len(key) > MaxRecordKeyLen {
		return nil, false, nil
	}
	defer db.catch(&err)
	if err := db.begin(context.Background()); err != nil {
		return nil, false, err
	}
	defer db.mu.RUnlock()
	return db.st.recorded(key)
}

// writeRecordOnly stores rec (when not nil) for a write that stored
// nothing (the caller holds the shared lock).
func (db *DB) writeRecordOnly(rec *Record, added []bool) error {
	if rec == nil {
		return nil
	}
	b := rec.Answer(added)
	if rec.Lazy {
		return nil
	}
	return db.st.putRecord(rec, b)
}

// writeRecovered writes the idempotency records Recover read (those not
// expired at now; of two with one key, the later) to the new index.
func (db *DB) writeRecovered(recs []recovered, now time.Time) error {
	return db.st.putRecords(recs, now)
}
