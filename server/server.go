package server

import (
	"bufio"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Options configures New. A nil *Options means the defaults.
type Options struct {
	// Token, when not empty, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN). Default: none, which is only right on
	// loopback.
	Token string
	// ReadOnly refuses every write with store.ErrReadOnly (403).
	ReadOnly bool
	// MaxBody bounds a request body, in bytes (load bodies excepted, which
	// are streamed). Default 64 MiB.
	MaxBody int64
	// MaxInFlight bounds the requests served at once; more wait. Default 64.
	MaxInFlight int
	// Logger receives one line per failed request. Default: slog's.
	Logger *slog.Logger
}

// Server is an http.Handler over a store.Backend.
type Server struct {
	st      store.Backend
	o       Options
	commit  *committer
	metrics *metrics
	slots   chan struct{}
	mux     *http.ServeMux
}

// New returns a server of st. The caller keeps owning st (and closes it
// after the server has stopped).
func New(st store.Backend, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 64 << 20
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 64
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Server{st: st, o: o, commit: newCommitter(st), slots: make(chan struct{}, o.MaxInFlight), mux: http.NewServeMux()}
	s.metrics = newMetrics(st, s.commit)
	metrics := s.metrics.handler()
	s.handle("GET /metrics", func(w http.ResponseWriter, r *http.Request) error {
		metrics.ServeHTTP(w, r)
		return nil
	})
	s.handle("GET /v1/health", s.health)
	s.handle("GET /v1/stats", s.stats)
	s.handle("GET /v1/profile", s.profile)
	s.handle("POST /v1/profile", s.setProfile)
	s.handle("POST /v1/has", s.has)
	s.handle("POST /v1/get", s.get)
	s.handle("POST /v1/match", s.match)
	s.handle("POST /v1/put", s.put)
	s.handle("POST /v1/add", s.add)
	s.handle("POST /v1/delete", s.delete)
	s.handle("POST /v1/visit", s.visit)
	s.handle("POST /v1/delete-prefix", s.deletePrefix)
	s.handle("POST /v1/load", s.load)
	s.handle("GET /v1/scan", s.scan)
	s.handle("GET /v1/count", s.count)
	s.handle("POST /v1/verify", s.verify)
	s.handle("POST /v1/sync", s.sync)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

type handler func(w http.ResponseWriter, r *http.Request) error

func (s *Server) handle(pattern string, h handler) {
	endpoint := pattern[strings.IndexByte(pattern, ' ')+1:]
	s.mux.HandleFunc(pattern, func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w := &statusWriter{ResponseWriter: rw, status: http.StatusOK}
		defer func() { s.metrics.observe(endpoint, w.status, start) }()
		if s.o.Token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.o.Token)) != 1 {
				writeError(w, http.StatusUnauthorized, "unauthorized", "server: missing or wrong bearer token")
				return
			}
		}
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		case <-r.Context().Done():
			return
		}
		if r.URL.Path != "/v1/load" {
			r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBody)
		}
		if err := h(w, r); err != nil {
			kind, status := Kind(err)
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				kind, status = "too_large", http.StatusRequestEntityTooLarge
			}
			if status >= 500 {
				s.o.Logger.Error("request failed", "path", r.URL.Path, "err", err)
			}
			writeError(w, status, kind, err.Error())
		}
	})
}

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg, "kind": kind})
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}

func (s *Server) writable() error {
	if s.o.ReadOnly {
		return fmt.Errorf("%w: this server serves reads only", store.ErrReadOnly)
	}
	return nil
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, map[string]string{"status": "ok", "profile": s.st.Profile()})
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.st.Stats()
	if err != nil {
		return err
	}
	return writeJSON(w, st)
}

func (s *Server) profile(w http.ResponseWriter, r *http.Request) error {
	_, err := io.WriteString(w, s.st.Profile())
	return err
}

func (s *Server) setProfile(w http.ResponseWriter, r *http.Request) error {
	name, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if s.st.Profile() != string(name) {
		if err := s.writable(); err != nil {
			return err
		}
	}
	if err := s.st.SetProfile(string(name)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func readHashes(r *http.Request) ([]hashkey.Hash, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if len(b)%hashkey.Size != 0 {
		return nil, fmt.Errorf("%w: body of %d bytes is not whole 32-byte hashes", ErrBadRequest, len(b))
	}
	hs := make([]hashkey.Hash, len(b)/hashkey.Size)
	for i := range hs {
		copy(hs[i][:], b[i*hashkey.Size:])
	}
	return hs, nil
}

func (s *Server) has(w http.ResponseWriter, r *http.Request) error {
	hs, err := readHashes(r)
	if err != nil {
		return err
	}
	found, err := s.st.HasBatch(hs)
	if err != nil {
		return err
	}
	out := make([]byte, len(found))
	for i, f := range found {
		if f {
			out[i] = 1
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, err = w.Write(out)
	return err
}

func oneHash(r *http.Request) (hashkey.Hash, error) {
	hs, err := readHashes(r)
	if err == nil && len(hs) != 1 {
		err = fmt.Errorf("%w: want one hash", ErrBadRequest)
	}
	if err != nil {
		return hashkey.Hash{}, err
	}
	return hs[0], nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) error {
	h, err := oneHash(r)
	if err != nil {
		return err
	}
	v, err := s.st.Get(h)
	if err != nil {
		return err
	}
	e := store.FullEntry(h, v)
	_, err = w.Write(AppendEntry(nil, &e))
	return err
}

func (s *Server) match(w http.ResponseWriter, r *http.Request) error {
	h, err := oneHash(r)
	if err != nil {
		return err
	}
	m, ok, err := s.st.Match(h)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: no entry matches %s", store.ErrNotFound, h)
	}
	e := store.Entry{Hash: h, Len: m.Len, Value: m.Value}
	if !e.IsPrefix() {
		e.Len = hashkey.Size
	}
	_, err = w.Write(AppendEntry(nil, &e))
	return err
}

func readEntries(r *http.Request) ([]store.Entry, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	return DecodeEntries(b)
}

func (s *Server) put(w http.ResponseWriter, r *http.Request) error {
	if err := s.writable(); err != nil {
		return err
	}
	es, err := readEntries(r)
	if err != nil {
		return err
	}
	if err := s.st.PutBatch(es); err != nil {
		return err
	}
	if err := s.commit.sync(); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) add(w http.ResponseWriter, r *http.Request) error {
	if err := s.writable(); err != nil {
		return err
	}
	es, err := readEntries(r)
	if err != nil {
		return err
	}
	added, err := s.st.AddBatch(es)
	if err != nil {
		return err
	}
	if err := s.commit.sync(); err != nil {
		return err
	}
	out := make([]byte, len(added))
	for i, a := range added {
		if a {
			out[i] = 1
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, err = w.Write(out)
	return err
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request) error {
	if err := s.writable(); err != nil {
		return err
	}
	es, err := readEntries(r)
	if err == nil && len(es) != 1 {
		err = fmt.Errorf("%w: want one entry", ErrBadRequest)
	}
	if err != nil {
		return err
	}
	if err := s.st.Delete(es[0]); err != nil {
		return err
	}
	if err := s.commit.sync(); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) load(w http.ResponseWriter, r *http.Request) error {
	if err := s.writable(); err != nil {
		return err
	}
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(nil, 4<<20)
	var bad error
	seq := func(yield func(store.Entry) bool) {
		for sc.Scan() {
			e, err := store.ParseJSONL(sc.Bytes())
			if err != nil {
				bad = fmt.Errorf("%w: %v", ErrBadRequest, err)
				return
			}
			if !yield(e) {
				return
			}
		}
	}
	res, err := s.st.Load(seq)
	switch {
	case bad != nil:
		return bad
	case err != nil:
		return err
	case sc.Err() != nil:
		return fmt.Errorf("%w: %v", ErrBadRequest, sc.Err())
	}
	return writeJSON(w, res)
}

func prefixArgs(r *http.Request) ([]byte, int, error) {
	q := r.URL.Query()
	var prefix []byte
	if p := q.Get("prefix"); p != "" {
		var err error
		if prefix, err = hex.DecodeString(p + strings.Repeat("0", len(p)%2)); err != nil {
			return nil, 0, fmt.Errorf("%w: prefix %q", ErrBadRequest, p)
		}
	}
	bits := 8 * len(prefix)
	if b := q.Get("bits"); b != "" {
		var err error
		if bits, err = strconv.Atoi(b); err != nil {
			return nil, 0, fmt.Errorf("%w: bits %q", ErrBadRequest, b)
		}
	}
	return prefix, bits, nil
}

func (s *Server) scan(w http.ResponseWriter, r *http.Request) error {
	prefix, bits, err := prefixArgs(r)
	if err != nil {
		return err
	}
	limit := 0
	if l := r.URL.Query().Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil {
			return fmt.Errorf("%w: limit %q", ErrBadRequest, l)
		}
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	started := false
	err = s.st.Scan(prefix, bits, limit, func(e store.Entry) error {
		started = true
		line = store.AppendJSONL(line[:0], &e)
		_, err := bw.Write(line)
		return err
	})
	if err != nil {
		if !started {
			return err
		}
		// Too late for a status: end the stream with an error line, which
		// the client reports (a stream that simply stops looks complete).
		bw.Write(append([]byte(`{"error":`), strconv.Quote(err.Error())+"}\n"...))
	} else {
		bw.WriteString("{\"end\":true}\n")
	}
	return bw.Flush()
}

func (s *Server) count(w http.ResponseWriter, r *http.Request) error {
	prefix, bits, err := prefixArgs(r)
	if err != nil {
		return err
	}
	full, prefixes, err := s.st.Count(prefix, bits)
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]int64{"full": full, "prefixes": prefixes})
}

func (s *Server) verify(w http.ResponseWriter, r *http.Request) error {
	if err := s.st.Verify(); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) sync(w http.ResponseWriter, r *http.Request) error {
	if err := s.commit.sync(); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
