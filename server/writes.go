package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// The write endpoints: each runs through Server.write, which honours the
// Idempotency-Key and answers once the write is durable.

func (s *Server) put(w http.ResponseWriter, r *http.Request) error {
	return s.write(w, r, withWrite, func(r *http.Request, body []byte, g *recording) (answer, error) {
		es, err := wire.DecodeEntries(body)
		if err != nil {
			return answer{}, err
		}
		done := func([]bool) answer { return answer{status: http.StatusNoContent, fresh: true} }
		s.metrics.put.Observe(float64(len(es)))
		if g == nil || g.replay {
			return done(nil), s.st.PutBatch(r.Context(), es)
		}
		return done(nil), s.records.PutBatchRecorded(r.Context(), es, g.record(done))
	})
}

func (s *Server) add(w http.ResponseWriter, r *http.Request) error {
	return s.write(w, r, withWrite, func(r *http.Request, body []byte, g *recording) (answer, error) {
		if kw, ok := s.st.(keyWriter); ok {
			if a, ok, err := s.writeKeys(r.Context(), kw, body, g, 0, false); ok {
				return a, err
			}
		}
		es, err := wire.DecodeEntries(body)
		if err != nil {
			return answer{}, err
		}
		return s.addEntries(r.Context(), es, g, boolsAnswer, 0, false)
	})
}

// keyWriter is a backend that adds and visits bare keys without an entry
// per key: *index.DB.
type keyWriter interface {
	AddKeys(ctx context.Context, keys []hashkey.Hash, added []bool, rec *index.Record) error
	VisitKeys(ctx context.Context, keys []hashkey.Hash, revisitAfter time.Duration, visited []bool, rec *index.Record) error
}

var _ keyWriter = (*index.DB)(nil)

// writeKeys is addEntries for a body of bare full keys (a seen-set's or a
// revisiting crawler's, the common add and visit), decoded into a reused
// batch: ok is false, and nothing done, for a body of other entries.
func (s *Server) writeKeys(ctx context.Context, kw keyWriter, body []byte, g *recording, after time.Duration, visit bool) (_ answer, ok bool, err error) {
	// A few at a time: more would not run faster on the processors there
	// are, and each holds its keys and the index's scratch (about 90
	// bytes a key) while it runs.
	select {
	case s.adders <- struct{}{}:
		defer func() { <-s.adders }()
	case <-ctx.Done():
		return answer{}, true, errGone
	}
	kb, _ := s.batches.Get().(*keyBatch)
	if kb == nil {
		kb = new(keyBatch)
	}
	if kb.keys, ok = wire.DecodeKeys(kb.keys[:0], body); !ok {
		s.batches.Put(kb)
		return answer{}, false, nil
	}
	defer func() {
		if len(kb.keys) <= maxPooledKeys {
			s.batches.Put(kb)
		}
	}()
	kb.added = slices.Grow(kb.added[:0], len(kb.keys))[:len(kb.keys)]
	run := func(rec *index.Record) error {
		if visit {
			return kw.VisitKeys(ctx, kb.keys, after, kb.added, rec)
		}
		return kw.AddKeys(ctx, kb.keys, kb.added, rec)
	}
	switch {
	case g != nil && g.replay:
		// Store what the first attempt may have left out, as an add
		// (addEntries).
		if err := kw.AddKeys(ctx, kb.keys, kb.added, nil); err != nil {
			return answer{}, true, err
		}
		return answer{fresh: slices.Contains(kb.added, true)}, true, nil
	case g == nil:
		err = run(nil)
	default:
		rec := g.record(boolsAnswer)
		rec.Lazy = true
		err = run(rec)
	}
	if err != nil {
		return answer{}, true, err
	}
	if visit {
		s.metrics.visit.Observe(float64(len(kb.keys)))
	} else {
		s.metrics.add.Observe(float64(len(kb.keys)))
	}
	s.metrics.keysAdded(kb.added)
	return boolsAnswer(kb.added), true, nil
}

// durationArg returns the query argument name as a Go duration (absent: 0;
// 0 or less: never revisit, as store.Backend.VisitBatch reads it).
func durationArg(r *http.Request, name string) (time.Duration, error) {
	a := r.URL.Query().Get(name)
	if a == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(a)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q", wire.ErrBadRequest, name, a)
	}
	return d, nil
}

// revisitArg reads the revisit duration of /v1/visit and /v1/urls/add:
// wire.ParamRevisitAfter, or its alias wire.ParamRevisitAfterAlias (the
// name /v1/visit read first); both given must agree.
func revisitArg(r *http.Request) (time.Duration, error) {
	d, err := durationArg(r, wire.ParamRevisitAfter)
	if err != nil || !r.URL.Query().Has(wire.ParamRevisitAfterAlias) {
		return d, err
	}
	a, err := durationArg(r, wire.ParamRevisitAfterAlias)
	if err != nil {
		return 0, err
	}
	if r.URL.Query().Has(wire.ParamRevisitAfter) && a != d {
		return 0, fmt.Errorf("%w: %s=%v and %s=%v disagree (%s is its old name)", wire.ErrBadRequest,
			wire.ParamRevisitAfter, d, wire.ParamRevisitAfterAlias, a, wire.ParamRevisitAfterAlias)
	}
	return a, nil
}

// addEntries adds es (visits them when visit is set), keeping the answer
// answerOf gives with the write when g is set.
func (s *Server) addEntries(ctx context.Context, es []store.Entry, g *recording, answerOf func([]bool) answer, after time.Duration, visit bool) (answer, error) {
	var added []bool
	var err error
	switch {
	case g != nil && g.replay:
		// Store what the first attempt may have left out, as an add: a
		// visit's keys it stored are not visited again.
		added, err = s.st.AddBatch(ctx, es)
		if err != nil {
			return answer{}, err
		}
		a := answer{}
		for _, n := range added {
			a.fresh = a.fresh || n
		}
		return a, nil
	case g == nil && visit:
		added, err = s.st.VisitBatch(ctx, es, after)
	case g == nil:
		added, err = s.st.AddBatch(ctx, es)
	default:
		// An add that stores nothing (every key present) leaves its
		// record to Server.write, which stores it after answering.
		rec := g.record(answerOf)
		rec.Lazy = true
		if visit {
			added, err = s.records.VisitBatchRecorded(ctx, es, after, rec)
		} else {
			added, err = s.records.AddBatchRecorded(ctx, es, rec)
		}
	}
	if err != nil {
		return answer{}, err
	}
	if visit {
		s.metrics.visit.Observe(float64(len(es)))
	} else {
		s.metrics.add.Observe(float64(len(es)))
	}
	s.metrics.keysAdded(added)
	return answerOf(added), nil
}

// boolsAnswer answers one byte per answer: 1 yes (new, found), 0 no.
func boolsAnswer(added []bool) answer {
	return answer{status: http.StatusOK, ctype: wire.ContentTypeBinary, body: wire.AppendBools(nil, added), fresh: slices.Contains(added, true)}
}

func jsonAnswer(v any) answer {
	b, _ := json.Marshal(v)
	return answer{status: http.StatusOK, ctype: "application/json", body: append(b, '\n'), fresh: true}
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) error {
	return s.write(w, r, afterWrite, func(r *http.Request, body []byte, _ *recording) (answer, error) {
		es, err := wire.DecodeEntries(body)
		if err == nil && len(es) != 1 {
			err = fmt.Errorf("%w: want one entry", wire.ErrBadRequest)
		}
		if err != nil {
			return answer{}, err
		}
		return answer{status: http.StatusNoContent, fresh: true}, s.st.Delete(r.Context(), es[0])
	})
}

func (s *Server) load(w http.ResponseWriter, r *http.Request) error {
	return s.write(w, r, afterStream, func(r *http.Request, _ []byte, _ *recording) (answer, error) {
		sc := wire.NewLineScanner(r.Body)
		var bad error
		seq := func(yield func(store.Entry) bool) {
			for sc.Scan() {
				e, err := store.ParseJSONL(sc.Bytes())
				if err != nil {
					bad = fmt.Errorf("%w: %v", wire.ErrBadRequest, err)
					return
				}
				if !yield(e) {
					return
				}
			}
		}
		res, err := s.st.Load(r.Context(), seq)
		switch {
		case sc.Err() != nil: // a body cut short ends in a line cut short: the cut is the news
			return answer{}, fmt.Errorf("%w: %w", wire.ErrBadRequest, sc.Err())
		case bad != nil:
			return answer{}, bad
		case err != nil:
			return answer{}, err
		}
		return jsonAnswer(res), nil
	})
}

// memRecords keeps idempotency records in memory, for a backend that
// cannot keep them with its writes: they last while the server runs, and
// at most memRecordsMax of them.
type memRecords struct {
	store.Backend
	mu    sync.Mutex
	m     map[string]memRecord
	order []string
}

type memRecord struct {
	b       []byte
	expires time.Time
}

const memRecordsMax = 1 << 16

func newRecords(st store.Backend) recorder {
	if r, ok := st.(recorder); ok {
		return r
	}
	return &memRecords{Backend: st, m: make(map[string]memRecord)}
}

func (m *memRecords) keep(rec *index.Record, added []bool) {
	b := rec.Answer(added)
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for len(m.order) > 0 && (len(m.order) >= memRecordsMax || now.After(m.m[m.order[0]].expires)) {
		delete(m.m, m.order[0])
		m.order = m.order[1:]
	}
	if _, ok := m.m[rec.Key]; !ok {
		m.order = append(m.order, rec.Key)
	}
	m.m[rec.Key] = memRecord{b, now.Add(rec.TTL)}
}

func (m *memRecords) AddBatchRecorded(ctx context.Context, es []store.Entry, rec *index.Record) ([]bool, error) {
	added, err := m.AddBatch(ctx, es)
	if err == nil {
		m.keep(rec, added)
	}
	return added, err
}

func (m *memRecords) VisitBatchRecorded(ctx context.Context, es []store.Entry, after time.Duration, rec *index.Record) ([]bool, error) {
	added, err := m.VisitBatch(ctx, es, after)
	if err == nil {
		m.keep(rec, added)
	}
	return added, err
}

func (m *memRecords) PutBatchRecorded(ctx context.Context, es []store.Entry, rec *index.Record) error {
	err := m.PutBatch(ctx, es)
	if err == nil {
		m.keep(rec, nil)
	}
	return err
}

func (m *memRecords) PutRecord(rec *index.Record) error {
	m.keep(rec, nil)
	return nil
}

func (m *memRecords) Recorded(key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.m[key]
	if !ok || time.Now().After(r.expires) {
		return nil, false, nil
	}
	return r.b, true, nil
}
