package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urlhash/urlhash/frontier"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/threatlist"
	"github.com/urlhash/urlhash/wire"
	"golang.org/x/sync/semaphore"
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
	// MaxInFlight bounds the requests served at once; more wait. A request
	// takes its slot only once its body has arrived, so that slow clients
	// hold no slot; /v1/health and /metrics take none. Bulk loads, whose
	// bodies stream while they are served, share a quarter of the slots
	// (at least one). A frontier claim that waits (wait=) holds no slot
	// while it waits; at most 4 x MaxInFlight wait at once, and a claim
	// beyond them answers at once. Default 64.
	MaxInFlight int
	// BodyTimeout bounds how long a request body may take to arrive
	// whole, and how long a load's streamed body may pause; a client
	// slower than that is answered 408. Default 30 s.
	BodyTimeout time.Duration
	// MaxBuffered bounds the bytes of request bodies held at once (read
	// before their requests are served): a request waits until its body
	// fits. Default 4 x MaxBody.
	MaxBuffered int64
	// Backup, when set, serves GET /v1/backup: it writes a backup of the
	// changes after version since to w and returns the since of the next
	// backup (index.DB.Backup). Default: none, and /v1/backup is refused.
	Backup func(w io.Writer, since uint64) (until uint64, err error)
	// ThreatType is the Web Risk threat type of the list an index of a
	// Safe Browsing profile holds, as /v1/uris:search and
	// /v1/hashes:search answer it (see IsWebRiskThreatType). Default
	// MALWARE.
	ThreatType string
	// ThreatLists, when set, returns the threat lists synced into the
	// index (threatlist.ReadState of its directory), which GET
	// /v1/threatLists:computeDiff serves with their version tokens and
	// kept versions. It is called once, at the first such request. When it
	// is not set or returns no list, computeDiff serves the index's own
	// prefix and full entries as the list of ThreatType.
	ThreatLists func() (map[string]*threatlist.ListState, error)
	// ListRefresh is how long computeDiff reuses the list it built from the
	// index's own entries before it reads them again (a change in between
	// becomes a new version, to which clients get a DIFF). Default 10
	// seconds; a negative value reads them at every request.
	ListRefresh time.Duration
	// Logger receives one line per request ("request": method, path,
	// status, duration, bytes_in, bytes_out, remote, and kind and error
	// for a failed one) at level Debug when answered, Warn for a client
	// error other than not_found, Error for a server error; and one per
	// group-commit fsync ("sync", Debug; Error when it fails); and, at
	// Error, a /metrics collector that failed. Default: slog's.
	Logger *slog.Logger
	// IdempotencyTTL is how long the answer to a write that carried an
	// Idempotency-Key is kept for its repeats, at least. Default 24h.
	IdempotencyTTL time.Duration
	// Version is the build's version, as /metrics reports it
	// (urlhash_build_info). Default: the main module's version
	// (runtime/debug.ReadBuildInfo).
	Version string
	// Frontier, when set, returns the crawl frontier that the
	// /v1/frontier/ endpoints serve and /metrics reports: with open set
	// it opens the frontier if needed (an endpoint's first request), else
	// it returns nil while the frontier is not open. Default: none, and
	// the endpoints answer 404.
	Frontier func(open bool) (*frontier.Frontier, error)
}

// Server is an http.Handler over a store.Backend.
type Server struct {
	st       store.Backend
	o        Options
	commit   *committer
	metrics  *metrics
	slots    chan struct{}
	loads    chan struct{}       // the slots a load may take, besides one of slots
	bodies   *semaphore.Weighted // the bytes of bodies read ahead of their slots
	mux      *http.ServeMux
	diff     diffLists
	keys     keys          // idempotency keys being answered
	records  recorder      // where answers to idempotency keys are kept
	urls     urlProfile    // the profile /v1/urls/* hash with
	bufs     bodyPool      // request bodies (see buffers.go)
	batches  sync.Pool     // *keyBatch, for bare-key adds
	adders   chan struct{} // the bare-key adds running at once (addKeys)
	waiters  chan struct{} // the frontier claims waiting at once (claim's wait=)
	stopWait chan struct{} // closed by StopWaiting
	stopOnce sync.Once
	// identity is the served index's (wire.HeaderIndex), "" when it
	// records none.
	identity string
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
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 30 * time.Second
	}
	if o.MaxBuffered <= 0 {
		o.MaxBuffered = 4 * o.MaxBody
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.IdempotencyTTL <= 0 {
		o.IdempotencyTTL = 24 * time.Hour
	}
	s := &Server{st: st, o: o, commit: newCommitter(st, o.Logger), slots: make(chan struct{}, o.MaxInFlight),
		loads: make(chan struct{}, max(1, o.MaxInFlight/4)), adders: make(chan struct{}, max(2, runtime.GOMAXPROCS(0))), waiters: make(chan struct{}, 4*o.MaxInFlight), stopWait: make(chan struct{}), bodies: semaphore.NewWeighted(max(o.MaxBuffered, o.MaxBody)), mux: http.NewServeMux()}
	s.records = newRecords(st)
	s.identity = identityOf(st)
	s.metrics = newMetrics(st, s.commit, s.slots, o.Version, o.Frontier)
	metrics := s.metrics.handler(o.Logger)
	s.handle("GET "+wire.PathMetrics, unmetered, func(w http.ResponseWriter, r *http.Request) error {
		metrics.ServeHTTP(w, r)
		return nil
	})
	s.handle("GET "+wire.PathHealth, public, s.health)
	s.handle("GET "+wire.PathStats, buffered, s.stats)
	s.handle("GET "+wire.PathProfile, buffered, s.profile)
	s.handle("POST "+wire.PathProfile, buffered, s.setProfile)
	s.handle("POST "+wire.PathHas, buffered, s.has)
	s.handle("POST "+wire.PathGet, buffered, s.get)
	s.handle("POST "+wire.PathGetBatch, buffered, s.getBatch)
	s.handle("POST "+wire.PathMatch, buffered, s.match)
	s.handle("POST "+wire.PathPut, buffered, s.put)
	s.handle("POST "+wire.PathAdd, buffered, s.add)
	s.handle("POST "+wire.PathDelete, buffered, s.delete)
	s.handle("POST "+wire.PathVisit, buffered, s.visit)
	s.handle("POST "+wire.PathDeletePrefix, buffered, s.deletePrefix)
	s.handle("POST "+wire.PathLoad, streamed, s.load)
	s.handle("POST "+wire.PathURLsAdd, buffered, s.urlsAdd)
	s.handle("POST "+wire.PathURLsHas, buffered, s.urlsHas)
	s.handle("GET "+wire.PathScan, buffered, s.scan)
	s.handle("GET "+wire.PathCount, buffered, s.count)
	s.handle("POST "+wire.PathVerify, buffered, s.verify)
	s.handle("POST "+wire.PathSync, buffered, s.sync)
	s.handle("GET "+wire.PathBackup, buffered, s.backup)
	s.handle("GET "+wire.PathSearchURIs, webRiskAPI, s.searchURIs)
	s.handle("GET "+wire.PathSearchHashes, webRiskAPI, s.searchHashes)
	s.handle("GET "+wire.PathComputeDiff, webRiskAPI, s.computeDiff)
	s.handleFrontier()
	s.handle("/", unmetered, s.noEndpoint) // what no endpoint matches: 404 or 405 in JSON
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

type handler func(w http.ResponseWriter, r *http.Request) error

// route is how handle admits a request to its endpoint's handler.
type route uint8

const (
	// buffered: the body is read whole first (readBody), under a deadline
	// and within the bytes buffered at once; only then a slot.
	buffered route = iota
	// unmetered: always answered (/v1/health, /metrics): no slot.
	unmetered
	// streamed: the body streams while it is served (/v1/load), pausing
	// at most BodyTimeout; a load slot, then a slot.
	streamed
	// webRiskAPI: buffered, and Google's Web Risk API: the API key as its
	// clients send it, errors as it writes them (webRisk).
	webRiskAPI
	// public: unmetered, and answered without the token (/v1/health, for
	// liveness probes: it says nothing but that the server answers).
	public
	// polled: buffered, but the handler takes a slot itself (s.slot) for
	// each piece of work, so that a long poll (a frontier claim's wait)
	// waits without one.
	polled
)

func (s *Server) handle(pattern string, rt route, h handler) {
	endpoint := pattern[strings.IndexByte(pattern, ' ')+1:]
	if rt == webRiskAPI {
		h = webRisk(h)
	}
	s.mux.HandleFunc(pattern, func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w := &statusWriter{ResponseWriter: rw, status: http.StatusOK}
		body := &countingReader{r: r.Body}
		r.Body = body
		var kind string
		var failure error
		defer func() {
			s.metrics.observe(endpoint, w.status, kind, start)
			s.logRequest(r, w, body.n, start, kind, failure)
		}()
		if s.o.Token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok && rt == webRiskAPI {
				// Web Risk clients send their API key as ?key= (the Go
				// client) or in the x-goog-api-key header (the Node
				// client in REST mode).
				got, ok = webRiskKey(r)
			}
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.o.Token)) != 1 {
				if rt == public {
					// A liveness probe without the token: the status
					// and nothing else (no profile, no identity).
					writeJSON(w, map[string]string{"status": "ok"})
					return
				}
				kind = "unauthorized"
				if rt == webRiskAPI {
					(&webRiskError{code: http.StatusUnauthorized, status: "UNAUTHENTICATED", msg: "missing or wrong API key"}).write(w)
					return
				}
				writeError(w, http.StatusUnauthorized, kind, unauthorizedHint)
				return
			}
		}
		release, err := s.admitIndexed(w, rw, r, rt)
		if err == nil {
			defer release()
			err = h(w, r)
		}
		if err == nil {
			return
		}
		var status int
		kind, status = wire.Kind(err)
		var mbe *http.MaxBytesError
		switch {
		case errors.Is(err, errGone), errors.Is(err, context.Canceled) && r.Context().Err() != nil:
			// Gone while waiting, or the backend call its request's
			// context ended: the logs and metrics say so (nginx's
			// "client closed"), not as a failure of the server.
			w.status, kind, failure = 499, "canceled", r.Context().Err()
			return
		case errors.As(err, &mbe):
			// The body is not read: the connection cannot go on.
			kind, status = "too_large", http.StatusRequestEntityTooLarge
			w.Header().Set("Connection", "close")
		case errors.Is(err, errSlowBody):
			kind, status = "timeout", http.StatusRequestTimeout
			w.Header().Set("Connection", "close")
		}
		failure = err
		if wre := (*webRiskError)(nil); errors.As(err, &wre) {
			wre.write(w)
			return
		}
		writeError(w, status, kind, err.Error())
	})
}

// admit readies a request for its handler as its route says: its body
// read (buffered) or bounded in its pauses (streamed), then its slots
// taken. release gives back what it took.
func (s *Server) admit(rw http.ResponseWriter, r *http.Request, rt route) (release func(), err error) {
	switch rt {
	case unmetered, public:
		return func() {}, nil
	case streamed:
		r.Body = &idleReader{r: r.Body, rc: http.NewResponseController(rw), idle: s.o.BodyTimeout}
		if err := s.take(r, s.loads); err != nil {
			return nil, err
		}
		if err := s.take(r, s.slots); err != nil {
			<-s.loads
			return nil, err
		}
		return func() { <-s.slots; <-s.loads }, nil
	}
	done, err := s.readBody(rw, r)
	if err != nil {
		return nil, err
	}
	if rt == polled {
		return done, nil
	}
	if err := s.take(r, s.slots); err != nil {
		done()
		return nil, err
	}
	return func() { <-s.slots; done() }, nil
}

// errGone is the client going away while its request waits for a slot
// or for room for its body.
var errGone = errors.New("server: client gone while waiting")

// errSlowBody is a request body that took longer than Options.BodyTimeout
// to arrive (or a load's body that paused that long).
var errSlowBody = errors.New("server: request body too slow")

// StopWaiting ends the waits of long polls (frontier claims with wait=):
// each answers at once with what is due, so that a shutdown need not wait
// for them (http.Server.RegisterOnShutdown). Later claims do not wait.
func (s *Server) StopWaiting() { s.stopOnce.Do(func() { close(s.stopWait) }) }

// slot takes a slot for a polled route's work; release gives it back.
func (s *Server) slot(r *http.Request) (release func(), err error) {
	if err := s.take(r, s.slots); err != nil {
		return nil, err
	}
	return func() { <-s.slots }, nil
}

// take waits for a slot of slots, or for the client to go.
func (s *Server) take(r *http.Request, slots chan struct{}) error {
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	s.metrics.waiting.Add(1)
	defer s.metrics.waiting.Add(-1)
	select {
	case slots <- struct{}{}:
		return nil
	case <-r.Context().Done():
		return errGone
	}
}

// readBody reads the whole request body, within MaxBody, under
// BodyTimeout, once the bytes buffered at once leave room for it (its
// Content-Length, or MaxBody when it has none), and hands it to the
// handler from memory. release gives the room back.
func (s *Server) readBody(rw http.ResponseWriter, r *http.Request) (release func(), err error) {
	if r.ContentLength == 0 {
		return func() {}, nil
	}
	if r.ContentLength > s.o.MaxBody {
		return nil, &http.MaxBytesError{Limit: s.o.MaxBody}
	}
	n := r.ContentLength
	if n < 0 {
		n = s.o.MaxBody
	}
	if err := s.bodies.Acquire(r.Context(), n); err != nil {
		return nil, errGone
	}
	rc := http.NewResponseController(rw)
	rc.SetReadDeadline(time.Now().Add(s.o.BodyTimeout)) // unsupported (tests' recorders): no deadline
	var b []byte
	var buf *[]byte // pooled, when the length is known
	body := http.MaxBytesReader(rw, r.Body, s.o.MaxBody)
	if r.ContentLength > 0 {
		buf = s.bufs.get(int(r.ContentLength))
		var k int
		k, err = io.ReadFull(body, *buf)
		b = (*buf)[:k]
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	} else {
		b, err = io.ReadAll(body)
	}
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		s.bodies.Release(n)
		if buf != nil {
			s.bufs.put(buf)
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, fmt.Errorf("%w: not whole after %v (%d bytes)", errSlowBody, s.o.BodyTimeout, len(b))
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("%w: body cut short after %d of %d bytes", wire.ErrBadRequest, len(b), r.ContentLength)
		}
		return nil, err
	}
	r.Body = &memBody{Reader: bytes.NewReader(b), b: b}
	return func() {
		s.bodies.Release(n)
		if buf != nil {
			s.bufs.put(buf) // the handler is done with the body
		}
	}, nil
}

// memBody is a request body readBody read whole, which bodyBytes hands to
// a handler as it is.
type memBody struct {
	*bytes.Reader
	b []byte
}

func (*memBody) Close() error { return nil }

// bodyBytes returns the request body: the bytes readBody read (not copied
// again), or else all of r.Body.
func bodyBytes(r *http.Request) ([]byte, error) {
	if m, ok := r.Body.(*memBody); ok {
		return m.b, nil
	}
	return io.ReadAll(r.Body)
}

// idleReader is a streamed body (a load) that may pause at most idle
// between reads.
type idleReader struct {
	r    io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
}

func (b *idleReader) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(b.idle))
	n, err := b.r.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("%w: it paused for %v", errSlowBody, b.idle)
	}
	return n, err
}

func (b *idleReader) Close() error { return b.r.Close() }

// logRequest writes the request's log line: Debug when it was answered
// (a key not found included), Warn for another client error, Error for a
// server error.
func (s *Server) logRequest(r *http.Request, w *statusWriter, in int64, start time.Time, kind string, err error) {
	level := slog.LevelDebug
	switch {
	case w.status >= 500:
		level = slog.LevelError
	case w.status >= 400 && kind != "not_found":
		level = slog.LevelWarn
	}
	ctx := r.Context()
	if !s.o.Logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", w.status),
		slog.Duration("duration", time.Since(start)), slog.Int64("bytes_in", in), slog.Int64("bytes_out", w.n),
		slog.String("remote", r.RemoteAddr),
	}
	if kind != "" {
		attrs = append(attrs, slog.String("kind", kind))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	s.o.Logger.LogAttrs(ctx, level, "request", attrs...)
}

// countingReader counts the bytes of a request body read.
type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	w.Header().Set("Content-Type", wire.ContentTypeJSON)
	w.WriteHeader(status)
	w.Write(wire.AppendErrorBody(nil, kind, msg))
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

// unauthorizedHint is the message of a 401 answer: what was wrong, and how
// to send a token.
const unauthorizedHint = `server: missing or wrong bearer token: send the header "Authorization: Bearer TOKEN" with the token in the server's --token-file (urlhash commands and the Python client read it from URLHASH_TOKEN)`

// health answers the status, the profile and the index's identity to a
// request the token admits; handle answers one without it the status
// only.
func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	p, err := s.st.Profile(r.Context())
	if err != nil {
		return err
	}
	h := map[string]string{"status": "ok", "profile": p}
	if s.identity != "" {
		h["index"] = s.identity
	}
	return writeJSON(w, h)
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	st, err := statsOf(r.Context(), s.st)
	if err != nil {
		return err
	}
	return writeJSON(w, st)
}

func (s *Server) profile(w http.ResponseWriter, r *http.Request) error {
	p, err := s.st.Profile(r.Context())
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, p)
	return err
}

func (s *Server) setProfile(w http.ResponseWriter, r *http.Request) error {
	name, err := bodyBytes(r)
	if err != nil {
		return err
	}
	recorded, err := s.st.Profile(r.Context())
	if err != nil {
		return err
	}
	if recorded != string(name) {
		if err := s.writable(); err != nil {
			return err
		}
	}
	if err := s.st.SetProfile(r.Context(), string(name)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func readHashes(r *http.Request) ([]hashkey.Hash, error) {
	b, err := bodyBytes(r)
	if err != nil {
		return nil, err
	}
	return wire.ParseHashes(b)
}

func (s *Server) has(w http.ResponseWriter, r *http.Request) error {
	hs, err := readHashes(r)
	if err != nil {
		return err
	}
	s.metrics.has.Observe(float64(len(hs)))
	found, err := s.st.HasBatch(r.Context(), hs)
	if err != nil {
		return err
	}
	a := boolsAnswer(found)
	return writeAnswer(w, &a)
}

func oneHash(r *http.Request) (hashkey.Hash, error) {
	hs, err := readHashes(r)
	if err == nil && len(hs) != 1 {
		err = fmt.Errorf("%w: want one hash", wire.ErrBadRequest)
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
	v, err := s.st.Get(r.Context(), h)
	if err != nil {
		return err
	}
	e := store.FullEntry(h, v)
	_, err = w.Write(wire.AppendEntry(nil, &e))
	return err
}

func (s *Server) getBatch(w http.ResponseWriter, r *http.Request) error {
	hs, err := readHashes(r)
	if err != nil {
		return err
	}
	if len(hs) > wire.MaxGetBatch {
		return fmt.Errorf("%w: %d hashes, at most %d a request", wire.ErrBadRequest, len(hs), wire.MaxGetBatch)
	}
	s.metrics.get.Observe(float64(len(hs)))
	vs, found, err := s.st.GetBatch(r.Context(), hs)
	if err != nil {
		return err
	}
	_, err = w.Write(wire.AppendGetAnswer(nil, hs, vs, found))
	return err
}

func (s *Server) match(w http.ResponseWriter, r *http.Request) error {
	h, err := oneHash(r)
	if err != nil {
		return err
	}
	m, ok, err := s.st.Match(r.Context(), h)
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
	_, err = w.Write(wire.AppendEntry(nil, &e))
	return err
}

func prefixArgs(r *http.Request) ([]byte, int, error) {
	q := r.URL.Query()
	var prefix []byte
	if p := q.Get(wire.ParamPrefix); p != "" {
		var err error
		if prefix, err = hex.DecodeString(p + strings.Repeat("0", len(p)%2)); err != nil {
			return nil, 0, fmt.Errorf("%w: prefix %q", wire.ErrBadRequest, p)
		}
	}
	bits := 8 * len(prefix)
	if b := q.Get(wire.ParamBits); b != "" {
		var err error
		if bits, err = strconv.Atoi(b); err != nil {
			return nil, 0, fmt.Errorf("%w: bits %q", wire.ErrBadRequest, b)
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
	if l := r.URL.Query().Get(wire.ParamLimit); l != "" {
		if limit, err = strconv.Atoi(l); err != nil {
			return fmt.Errorf("%w: limit %q", wire.ErrBadRequest, l)
		}
	}
	w.Header().Set("Content-Type", wire.ContentTypeJSONL)
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	started := false
	err = s.st.Scan(r.Context(), prefix, bits, limit, func(e store.Entry) error {
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
		bw.Write(wire.AppendStreamError(nil, err.Error()))
	} else {
		bw.Write(wire.AppendStreamEnd(nil))
	}
	return bw.Flush()
}

func (s *Server) count(w http.ResponseWriter, r *http.Request) error {
	prefix, bits, err := prefixArgs(r)
	if err != nil {
		return err
	}
	full, prefixes, err := s.st.Count(r.Context(), prefix, bits)
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]int64{"full": full, "prefixes": prefixes})
}

func (s *Server) verify(w http.ResponseWriter, r *http.Request) error {
	if err := s.st.Verify(r.Context()); err != nil {
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

// backup streams index.Backup: the backup file's bytes, then the trailer
// wire.TrailerBackupUntil; an error after the first byte is the trailer
// wire.TrailerError (the file is cut, and restore would refuse it).
func (s *Server) backup(w http.ResponseWriter, r *http.Request) error {
	if s.o.Backup == nil {
		return fmt.Errorf("%w: this server makes no backups", store.ErrInvalidOptions)
	}
	var since uint64
	if v := r.URL.Query().Get(wire.ParamSince); v != "" {
		var err error
		if since, err = strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf("%w: since %q", wire.ErrBadRequest, v)
		}
	}
	w.Header().Set("Trailer", wire.TrailerBackupUntil+", "+wire.TrailerError)
	w.Header().Set("Content-Type", wire.ContentTypeBinary)
	cw := &countingWriter{w: w}
	until, err := s.o.Backup(cw, since)
	if err != nil {
		if cw.n == 0 {
			w.Header().Del("Trailer")
			return err
		}
		w.Header().Set(wire.TrailerError, err.Error())
		s.o.Logger.Error("backup cut short", "since", since, "bytes", cw.n, "error", err)
		return nil
	}
	w.Header().Set(wire.TrailerBackupUntil, strconv.FormatUint(until, 10))
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
