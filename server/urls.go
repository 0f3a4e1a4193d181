package server

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/urlhash"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// urlProfile is the profile /v1/urls/* hash URLs with: the one the index
// records, read once it records one.
type urlProfile struct {
	mu sync.Mutex
	p  hashkey.Profile
}

// maxReason bounds the reason of an invalid line.
const maxReason = 256

// urlsProfile returns the profile the index records; an index that records
// none gets the default profile recorded when write is set (a URL is about
// to be stored) and is answered with it otherwise.
func (s *Server) urlsProfile(ctx context.Context, write bool) (hashkey.Profile, error) {
	s.urls.mu.Lock()
	defer s.urls.mu.Unlock()
	if s.urls.p != nil {
		return s.urls.p, nil
	}
	recorded, err := s.st.Profile(ctx)
	if err != nil {
		return nil, err
	}
	if recorded == "" {
		p := urlhash.Default
		if !write {
			return p, nil // nothing is stored: every URL is absent
		}
		if err := s.st.SetProfile(ctx, query.ProfileRecord(p)); err != nil {
			return nil, err
		}
		s.urls.p = p
		return p, nil
	}
	p, err := query.ParseProfile(recorded)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", store.ErrProfileMismatch, err)
	}
	if rec := query.ProfileRecord(p); rec != recorded {
		return nil, fmt.Errorf("%w: the index records %s; this server hashes %s", store.ErrProfileMismatch, recorded, rec)
	}
	s.urls.p = p
	return p, nil
}

// hashedLines is a URL batch hashed: the entries of its valid lines and,
// per line, the entry's position or the reason the line is invalid.
type hashedLines struct {
	entries []store.Entry
	pos     []int    // pos[line]: index into entries, or -1
	reasons []string // reasons[line], for an invalid line
}

func hashLines(p hashkey.Profile, lines [][]byte) hashedLines {
	hs := make([]hashkey.Hash, len(lines))
	errs := make([]error, len(lines))
	hashRange := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if len(lines[i]) == 0 {
				errs[i] = fmt.Errorf("blank line")
				continue
			}
			hs[i], errs[i] = p.Hash(string(lines[i]))
		}
	}
	// Hashing is most of the work of a large batch: spread it.
	workers := min(runtime.GOMAXPROCS(0), len(lines)/512)
	if workers <= 1 {
		hashRange(0, len(lines))
	} else {
		var wg sync.WaitGroup
		per := (len(lines) + workers - 1) / workers
		for lo := 0; lo < len(lines); lo += per {
			wg.Go(func() { hashRange(lo, min(lo+per, len(lines))) })
		}
		wg.Wait()
	}
	out := hashedLines{entries: make([]store.Entry, 0, len(lines)), pos: make([]int, len(lines)), reasons: make([]string, len(lines))}
	for i := range lines {
		if errs[i] != nil {
			out.pos[i] = -1
			r := errs[i].Error()
			if len(r) > maxReason {
				r = r[:maxReason]
			}
			out.reasons[i] = r
			continue
		}
		out.pos[i] = len(out.entries)
		out.entries = append(out.entries, store.FullEntry(hs[i], store.Value{}))
	}
	return out
}

// answer spells, per line, yes or no for a valid line (found[pos]) and
// invalid with its reason for the others. fresh is set when any yes is
// wire.New.
func (h *hashedLines) answer(found []bool, yes, no wire.Answer) answer {
	a := answer{status: http.StatusOK, ctype: wire.ContentTypeText, body: make([]byte, 0, 8*len(h.pos))}
	for i, p := range h.pos {
		switch {
		case p < 0:
			a.body = wire.AppendAnswer(a.body, wire.Invalid, h.reasons[i])
		case found[p]:
			a.body = wire.AppendAnswer(a.body, yes, "")
			a.fresh = a.fresh || yes == wire.New
		default:
			a.body = wire.AppendAnswer(a.body, no, "")
		}
	}
	return a
}

func splitLines(body []byte) ([][]byte, error) {
	lines, err := wire.SplitLines(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", wire.ErrBadRequest, err)
	}
	return lines, nil
}

// urlsAdd is POST /v1/urls/add[?revisit_after=DURATION]: the body's URLs
// (text, one per line) hashed with the index's profile and added (visited
// with revisitAfter DURATION, as dedupe --revisit-after does, when it is
// set; after, its alias, is read too), answered one line per input line:
// new, present or invalid.
func (s *Server) urlsAdd(w http.ResponseWriter, r *http.Request) error {
	after, err := revisitArg(r)
	if err != nil {
		return err
	}
	return s.write(w, r, withWrite, func(r *http.Request, body []byte, g *recording) (answer, error) {
		lines, err := splitLines(body)
		if err != nil {
			return answer{}, err
		}
		p, err := s.urlsProfile(r.Context(), true)
		if err != nil {
			return answer{}, err
		}
		h := hashLines(p, lines)
		answerOf := func(added []bool) answer { return h.answer(added, wire.New, wire.Present) }
		return s.addEntries(r.Context(), h.entries, g, answerOf, after, after > 0)
	})
}

// urlsHas is POST /v1/urls/has: the body's URLs looked up, answered one
// line per input line: present, absent or invalid.
func (s *Server) urlsHas(w http.ResponseWriter, r *http.Request) error {
	body, err := bodyBytes(r)
	if err != nil {
		return err
	}
	lines, err := splitLines(body)
	if err != nil {
		return err
	}
	p, err := s.urlsProfile(r.Context(), false)
	if err != nil {
		return err
	}
	h := hashLines(p, lines)
	hs := make([]hashkey.Hash, len(h.entries))
	for i := range h.entries {
		hs[i] = h.entries[i].Hash
	}
	s.metrics.has.Observe(float64(len(hs)))
	found, err := s.st.HasBatch(r.Context(), hs)
	if err != nil {
		return err
	}
	a := h.answer(found, wire.Present, wire.Absent)
	return writeAnswer(w, &a)
}
