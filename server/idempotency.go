package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// recorder is a backend that keeps idempotency records with its writes:
// *index.DB (see index.Record). Another backend gets memRecords, which
// keeps them in memory only.
type recorder interface {
	AddBatchRecorded(ctx context.Context, es []store.Entry, rec *index.Record) ([]bool, error)
	VisitBatchRecorded(ctx context.Context, es []store.Entry, revisitAfter time.Duration, rec *index.Record) ([]bool, error)
	PutBatchRecorded(ctx context.Context, es []store.Entry, rec *index.Record) error
	PutRecord(rec *index.Record) error
	Recorded(key string) ([]byte, bool, error)
}

var _ recorder = (*index.DB)(nil)

// answer is what a write answers; with an Idempotency-Key it is kept, and
// a repeat gets it byte for byte.
type answer struct {
	status int
	ctype  string
	body   []byte
	// fresh: the write stored something, so the answer waits for an fsync
	// (and so does its replay); else it waits only for writes in flight.
	fresh bool
}

// Record encoding: the version, the request digest, the status (2 bytes
// big-endian), a flags byte (1: fresh), uvarint len(ctype), ctype, body.
// Version 2 (packedVersion) sets flag 2 and holds a body of 0 and 1
// bytes (a batch's answer, one byte a key) packed 8 to a byte, after its
// length as a uvarint: a 16,384-key answer takes 2 KiB instead of 16,
// small enough for Badger to keep it in its tables rather than its value
// log, whose mapped pages a server would otherwise hold. Version 1 records
// (every other body, and those written before) read as before; an older
// server refuses a version 2 record (corrupt) rather than misreading it.
const (
	recordVersion = 1
	packedVersion = 2
	flagFresh     = 1
	flagPacked    = 2
)

// minPacked is the shortest body packed: below it the length prefix
// would eat the saving.
const minPacked = 64

func (a *answer) appendRecord(dst []byte, digest *[32]byte) []byte {
	packed := len(a.body) >= minPacked && onlyBits(a.body)
	version, flags := byte(recordVersion), byte(0)
	if packed {
		version, flags = packedVersion, flagPacked
	}
	if a.fresh {
		flags |= flagFresh
	}
	dst = append(dst, version)
	dst = append(dst, digest[:]...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(a.status))
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(len(a.ctype)))
	dst = append(dst, a.ctype...)
	if !packed {
		return append(dst, a.body...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(a.body)))
	start := len(dst)
	dst = append(dst, make([]byte, (len(a.body)+7)/8)...)
	for i, c := range a.body {
		dst[start+i/8] |= c << (i % 8)
	}
	return dst
}

// onlyBits reports whether every byte of b is 0 or 1.
func onlyBits(b []byte) bool {
	for _, c := range b {
		if c > 1 {
			return false
		}
	}
	return true
}

func parseRecord(b []byte) (digest [32]byte, a answer, err error) {
	if len(b) < 1+32+3 || b[0] != recordVersion && b[0] != packedVersion {
		return digest, a, fmt.Errorf("%w: idempotency record of %d bytes", store.ErrCorrupt, len(b))
	}
	copy(digest[:], b[1:33])
	a.status = int(binary.BigEndian.Uint16(b[33:]))
	flags := b[35]
	if packed := b[0] == packedVersion; flags&^(flagFresh|flagPacked) != 0 || (flags&flagPacked != 0) != packed {
		return digest, a, fmt.Errorf("%w: idempotency record: version %d with flags %#x", store.ErrCorrupt, b[0], flags)
	}
	a.fresh = flags&flagFresh != 0
	n, k := binary.Uvarint(b[36:])
	if k <= 0 || n > uint64(len(b)-36-k) {
		return digest, a, fmt.Errorf("%w: idempotency record: bad content type", store.ErrCorrupt)
	}
	a.ctype = string(b[36+k : 36+k+int(n)])
	rest := b[36+k+int(n):]
	if flags&flagPacked == 0 {
		a.body = rest
		return digest, a, nil
	}
	n, k = binary.Uvarint(rest)
	if k <= 0 || n < minPacked || (n+7)/8 != uint64(len(rest)-k) {
		return digest, a, fmt.Errorf("%w: idempotency record: packed body of %d bits in %d bytes", store.ErrCorrupt, n, len(rest)-max(k, 0))
	}
	bits := rest[k:]
	if n%8 != 0 && bits[len(bits)-1]>>(n%8) != 0 {
		return digest, a, fmt.Errorf("%w: idempotency record: packed body with bits past its %d", store.ErrCorrupt, n)
	}
	a.body = make([]byte, n)
	for i := range a.body {
		a.body[i] = bits[i/8] >> (i % 8) & 1
	}
	return digest, a, nil
}

// recording is a write request's idempotency: nil without a key.
type recording struct {
	key    string
	digest [32]byte
	ttl    time.Duration
	rec    recorder
	hash   hash.Hash // of a streamed body, until it is read (then digest)
	// replay: the request repeats one whose answer is recorded; the write
	// is applied again without a record, for what a crash may have left
	// out, and its own answer is dropped.
	replay bool
	kept   *answer // the answer the record holds, once made
}

// record returns the index.Record that keeps the answer answerOf returns;
// the write that takes it calls answerOf under its locks, with what it
// found new.
func (g *recording) record(answerOf func(added []bool) answer) *index.Record {
	return &index.Record{Key: g.key, TTL: g.ttl, Answer: func(added []bool) []byte {
		a := answerOf(added)
		g.kept = &a
		return a.appendRecord(nil, &g.digest)
	}}
}

// store keeps a, the answer of a write that could not carry its record.
func (g *recording) store(a answer) error {
	if g.hash != nil {
		g.hash.Sum(g.digest[:0])
	}
	return g.rec.PutRecord(g.record(func([]bool) answer { return a }))
}

// keys serialises requests by idempotency key: one runs, repeats wait.
type keys struct {
	mu      sync.Mutex
	running map[string]chan struct{}
}

// acquire waits until no request with key runs, then marks key running;
// release ends that.
func (k *keys) acquire(ctx context.Context, key string) (release func(), err error) {
	for {
		k.mu.Lock()
		done, busy := k.running[key]
		if !busy {
			if k.running == nil {
				k.running = make(map[string]chan struct{})
			}
			done = make(chan struct{})
			k.running[key] = done
			k.mu.Unlock()
			return func() {
				k.mu.Lock()
				delete(k.running, key)
				k.mu.Unlock()
				close(done)
			}, nil
		}
		k.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// writeFunc applies a write request: body is the request body (nil for a
// load, which reads r.Body itself), g its idempotency (nil without a key).
// A write kept withWrite stores its answer through g.record when g is set;
// the others leave g to apply.
type writeFunc func(r *http.Request, body []byte, g *recording) (answer, error)

// keeping is how a write keeps the answer to its Idempotency-Key.
type keeping uint8

const (
	// withWrite: the write stores the record with its entries (g.record);
	// a repeat runs it again, for what a crash may have left out.
	withWrite keeping = iota
	// afterWrite: apply stores the record once the write is done
	// (g.store); a repeat is given the answer only.
	afterWrite
	// afterStream: afterWrite, for a body streamed into the write (a
	// load), digested as it is read.
	afterStream
)

// write runs a write endpoint: it refuses writes on a read-only server,
// reads the body, honours the Idempotency-Key, waits for durability (an
// fsync only when the write stored something) and answers.
func (s *Server) write(w http.ResponseWriter, r *http.Request, keep keeping, run writeFunc) error {
	streamed := keep == afterStream
	if err := s.writable(); err != nil {
		return err
	}
	var key string
	if v := r.Header.Get(wire.HeaderIdempotencyKey); v != "" {
		var err error
		if key, err = wire.ParseKey(v); err != nil {
			return fmt.Errorf("%w: %v", wire.ErrBadRequest, err)
		}
	}
	var body []byte
	if !streamed {
		var err error
		if body, err = bodyBytes(r); err != nil {
			return err
		}
	}
	if key == "" {
		a, err := s.apply(r, body, nil, run)
		if err != nil {
			return err
		}
		return writeAnswer(w, &a)
	}
	release, err := s.keys.acquire(r.Context(), key)
	if err != nil {
		return err
	}
	held := true
	defer func() {
		if held {
			release()
		}
	}()
	b, found, err := s.records.Recorded(key)
	if err != nil {
		return err
	}
	g := &recording{key: key, ttl: s.o.IdempotencyTTL, rec: s.records}
	h := wire.NewRequestDigest(r.Method, r.URL.Path, r.URL.RawQuery)
	if streamed {
		// The digest of a streamed body is known once it is read: the
		// write stores its record after that (g.store).
		r.Body = &hashingReader{r: r.Body, h: h}
		g.hash = h
	} else {
		h.Write(body)
		h.Sum(g.digest[:0])
	}
	if found {
		if streamed {
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				return err
			}
			h.Sum(g.digest[:0])
		}
		first, a, err := parseRecord(b)
		if err != nil {
			return err
		}
		// A body is read whole but a streamed one (a load, which takes no
		// revisit parameter): an answer kept before the revisit alias
		// matches the request as sent.
		if first != g.digest && (streamed || first != wire.RequestDigestAsSent(r.Method, r.URL.Path, r.URL.RawQuery, body)) {
			return fmt.Errorf("%w: key %q", wire.ErrKeyReused, key)
		}
		s.metrics.replays.Inc()
		if keep == withWrite {
			// The record may name keys a crash left out (it is written
			// before them): write them again, then give the first answer.
			g.replay = true
			if _, err := s.apply(r, body, g, run); err != nil {
				return err
			}
		}
		if err := s.settle(a.fresh); err != nil {
			return err
		}
		return writeAnswer(w, &a)
	}
	a, err := s.apply(r, body, g, run)
	if err != nil {
		return err
	}
	a = *g.kept // the bytes recorded are the bytes answered (apply saw to a record)
	if a.fresh {
		return writeAnswer(w, &a) // the record is stored with the write
	}
	// Every key was present: the record was left out of the write (Lazy).
	// Answer first, then store it, still holding the key so that a repeat
	// waits for it, off the connection (its next request goes on).
	held = false
	go func() {
		defer release()
		if err := g.store(a); err != nil {
			s.o.Logger.Error("idempotency record not stored", "key", key, "error", err)
		}
	}()
	return writeAnswer(w, &a)
}

// apply runs a write between the committer's marks and makes its answer
// durable: an fsync when it stored something, else only a wait for the
// writes in flight before it (present keys are answered without an fsync).
func (s *Server) apply(r *http.Request, body []byte, g *recording, run writeFunc) (answer, error) {
	done := s.commit.writing()
	a, err := run(r, body, g)
	if err == nil && g != nil && !g.replay && g.kept == nil {
		// The write could not carry its record (afterWrite): store it
		// now, to be made durable with the write.
		err = g.store(a)
	}
	// An error may come after a part was stored: count it as fresh.
	done(a.fresh || err != nil)
	if err != nil {
		return a, err
	}
	return a, s.settle(a.fresh)
}

// settle waits until the answer of a write may be given: after an fsync
// when it stored something (fresh), else once every write that began
// before it is durable.
func (s *Server) settle(fresh bool) error {
	if fresh {
		return s.commit.sync()
	}
	return s.commit.settled()
}

func writeAnswer(w http.ResponseWriter, a *answer) error {
	if a.ctype != "" {
		w.Header().Set("Content-Type", a.ctype)
	}
	w.WriteHeader(a.status)
	_, err := w.Write(a.body)
	return err
}

// hashingReader writes what it reads to h, for the digest of a streamed
// body.
type hashingReader struct {
	r io.ReadCloser
	h hash.Hash
}

func (d *hashingReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.h.Write(p[:n])
	return n, err
}

func (d *hashingReader) Close() error { return d.r.Close() }
