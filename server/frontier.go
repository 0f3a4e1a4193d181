package server

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/urlhash/urlhash/frontier"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// The crawl frontier's endpoints (a scrapy scheduler's): enqueue requests,
// claim due ones with a lease (waiting for them, wait=), ack, release or
// extend them, set the politeness delay, ask what is left, delete the
// crawl. Every write takes an Idempotency-Key, whose answer is kept after
// the frontier's write (afterWrite).
func (s *Server) handleFrontier() {
	s.handle("POST "+wire.PathFrontierEnqueue, buffered, s.frontierWrite(s.enqueue))
	s.handle("POST "+wire.PathFrontierClaim, polled, s.frontierWrite(s.claim))
	s.handle("POST "+wire.PathFrontierAck, buffered, s.frontierWrite(s.idLines(idAck)))
	s.handle("POST "+wire.PathFrontierRelease, buffered, s.frontierWrite(s.idLines(idRelease)))
	s.handle("POST "+wire.PathFrontierExtend, buffered, s.frontierWrite(s.idLines(idExtend)))
	s.handle("POST "+wire.PathFrontierDelay, buffered, s.frontierWrite(s.frontierDelay))
	s.handle("GET "+wire.PathFrontierStatus, buffered, s.frontierStatus)
	s.handle("POST "+wire.PathFrontierDelete, buffered, s.frontierWrite(s.frontierDelete))
}

// frontierFunc is a frontier write: it returns its answer.
type frontierFunc func(f *frontier.Frontier, r *http.Request, body []byte) (answer, error)

func (s *Server) frontier() (*frontier.Frontier, error) {
	if s.o.Frontier == nil {
		return nil, fmt.Errorf("%w: this server serves no frontier", store.ErrNotFound)
	}
	return s.o.Frontier(true)
}

func (s *Server) frontierWrite(fn frontierFunc) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		f, err := s.frontier()
		if err != nil {
			return err
		}
		return s.write(w, r, afterWrite, func(r *http.Request, body []byte, g *recording) (answer, error) {
			a, err := fn(f, r, body)
			// The frontier made its writes durable itself: the index's
			// fsync is needed only for the answer kept for an
			// Idempotency-Key.
			a.fresh = g != nil
			return a, frontierError(err)
		})
	}
}

// frontierError gives the frontier's errors the protocol's kinds.
func frontierError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, frontier.ErrNotFound):
		return fmt.Errorf("%w: %v", store.ErrNotFound, err)
	case errors.Is(err, frontier.ErrInvalid):
		return fmt.Errorf("%w: %v", wire.ErrBadRequest, err)
	case errors.Is(err, frontier.ErrClosed):
		return fmt.Errorf("%w: %v", store.ErrClosed, err)
	}
	return err
}

// enqueueLine is one line of an enqueue body.
type enqueueLine struct {
	URL         string `json:"url"`
	Fingerprint string `json:"fingerprint"`
	Queue       string `json:"queue"`
	Priority    int32  `json:"priority"`
	Data        []byte `json:"data"` // base64
}

// lines splits a body into lines (LF; a CR before it is dropped; a last
// line may end without LF). The lines alias body.
func lines(body []byte) ([][]byte, error) {
	if len(body) == 0 {
		return nil, nil
	}
	out := bytes.Split(bytes.TrimSuffix(body, []byte{'\n'}), []byte{'\n'})
	if len(out) > wire.MaxFrontierLines {
		return nil, fmt.Errorf("%w: more than %d lines", wire.ErrBadRequest, wire.MaxFrontierLines)
	}
	for i, l := range out {
		out[i] = bytes.TrimSuffix(l, []byte{'\r'})
	}
	return out, nil
}

func (s *Server) enqueue(f *frontier.Frontier, r *http.Request, body []byte) (answer, error) {
	crawl := r.URL.Query().Get("crawl")
	ls, err := lines(body)
	if err != nil {
		return answer{}, err
	}
	reasons := make([]string, len(ls))
	pos := make([]int, len(ls))
	var items []frontier.Item
	for i, l := range ls {
		pos[i] = -1
		var e enqueueLine
		if err := json.Unmarshal(l, &e); err != nil {
			reasons[i] = "not a JSON object: " + err.Error()
			continue
		}
		it := frontier.Item{Info: frontier.URLInfo{URL: e.URL, Key: e.Queue, Crawl: crawl, Priority: e.Priority, Data: e.Data}}
		if e.Fingerprint != "" {
			fp, err := hex.DecodeString(e.Fingerprint)
			if err != nil || len(fp) > 32 {
				reasons[i] = fmt.Sprintf("fingerprint %q: want 2..64 hex digits, an even number", e.Fingerprint)
				continue
			}
			it.Fingerprint = fp
		}
		pos[i] = len(items)
		items = append(items, it)
	}
	res, err := f.Put(r.Context(), items)
	if err != nil {
		return answer{}, err
	}
	a := answer{status: http.StatusOK, ctype: wire.ContentTypeText}
	for i := range ls {
		switch {
		case pos[i] < 0:
			a.body = wire.AppendAnswer(a.body, wire.Invalid, reasons[i])
		case res[pos[i]].Status == frontier.PutInvalid:
			a.body = wire.AppendAnswer(a.body, wire.Invalid, res[pos[i]].Err.Error())
		case res[pos[i]].Status == frontier.PutPresent:
			a.body = wire.AppendAnswer(a.body, wire.Present, "")
		default:
			a.body = wire.AppendAnswer(a.body, wire.New, "")
		}
	}
	return a, nil
}

// claimed is one line of a claim's answer.
type claimed struct {
	ID       string `json:"id"`
	URL      string `json:"url"`
	Queue    string `json:"queue"`
	Priority int32  `json:"priority"`
	Data     []byte `json:"data,omitempty"` // absent when none was enqueued
}

// intArg returns the query argument name as an integer in lo..hi, or def.
func intArg(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%w: %s=%q: want an integer in %d..%d", wire.ErrBadRequest, name, v, lo, hi)
	}
	return n, nil
}

// secondsArg returns the query argument name as a duration in seconds
// (fractional allowed, 0..max), or def.
func secondsArg(r *http.Request, name string, def time.Duration, maxSec float64) (time.Duration, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || x < 0 || x > maxSec {
		return 0, fmt.Errorf("%w: %s=%q: want seconds in 0..%g", wire.ErrBadRequest, name, v, maxSec)
	}
	return time.Duration(x * float64(time.Second)), nil
}

// leaseArg returns a request's lease= (default, and 0: 60 s).
func leaseArg(r *http.Request) (time.Duration, error) {
	lease, err := secondsArg(r, "lease", 60*time.Second, 7*24*3600)
	if lease == 0 {
		lease = 60 * time.Second
	}
	return lease, err
}

// Bounds of a claim's wait: at most maxClaimWait; it looks again at
// least every claimPollMax (a change the frontier does not signal, such as
// a restart's recount) and at most every claimPollMin (a queue that may
// hand out but did not: read by another claim meanwhile).
const (
	maxClaimWait = 30
	claimPollMin = 50 * time.Millisecond
	claimPollMax = time.Second
)

func (s *Server) claim(f *frontier.Frontier, r *http.Request, _ []byte) (answer, error) {
	n, err := intArg(r, "max", 100, 1, 10000)
	if err != nil {
		return answer{}, err
	}
	per, err := intArg(r, "per_queue", 1, 1, 10000)
	if err != nil {
		return answer{}, err
	}
	lease, err := leaseArg(r)
	if err != nil {
		return answer{}, err
	}
	wait, err := secondsArg(r, "wait", 0, maxClaimWait)
	if err != nil {
		return answer{}, err
	}
	p := frontier.GetParams{Crawl: r.URL.Query().Get("crawl"), MaxURLs: n, MaxPerQueue: per, Transit: lease}
	hs, err := s.getURLs(f, r, p, wait)
	if err != nil {
		return answer{}, err
	}
	a := answer{status: http.StatusOK, ctype: "application/x-ndjson"}
	for _, h := range hs {
		b, err := json.Marshal(claimed{ID: h.ID.String(), URL: h.Info.URL, Queue: h.Info.Key, Priority: h.Info.Priority, Data: h.Info.Data})
		if err != nil {
			return answer{}, err
		}
		a.body = append(append(a.body, b...), '\n')
	}
	return a, nil
}

// getURLs hands out what p selects, in a slot; with a wait, when nothing
// is due, it waits (in no slot) until something may be (frontier.NextDue)
// or changes (frontier.Changes), and looks again, until wait has passed or
// the client has gone. Claims beyond the bound of waiters do not wait.
func (s *Server) getURLs(f *frontier.Frontier, r *http.Request, p frontier.GetParams, wait time.Duration) ([]frontier.Handed, error) {
	if wait > 0 {
		select {
		case <-s.stopWait:
			wait = 0
		case s.waiters <- struct{}{}:
			defer func() { <-s.waiters }()
		default:
			wait = 0
		}
	}
	deadline := time.Now().Add(wait)
	for {
		changed := f.Changes()
		release, err := s.slot(r)
		if err != nil {
			return nil, err
		}
		hs, err := f.GetURLs(r.Context(), p)
		release()
		left := time.Until(deadline)
		if err != nil || len(hs) > 0 || left <= 0 {
			return hs, err
		}
		step := min(left, claimPollMax)
		if t := f.NextDue(p); !t.IsZero() {
			step = min(step, max(claimPollMin, time.Until(t)))
		}
		timer := time.NewTimer(step)
		select {
		case <-changed:
		case <-timer.C:
		case <-s.stopWait:
			deadline = time.Now() // one more look, then the answer
		case <-r.Context().Done():
			timer.Stop()
			return nil, r.Context().Err()
		}
		timer.Stop()
	}
}

// idOp is what an endpoint of request ids does with them.
type idOp uint8

const (
	idAck idOp = iota
	idRelease
	idExtend
)

// idLines returns the handler of ack (complete), release or extend: a
// body of request ids, an answer a line.
func (s *Server) idLines(op idOp) frontierFunc {
	yes := [...]string{idAck: "done", idRelease: "released", idExtend: "extended"}[op]
	return func(f *frontier.Frontier, r *http.Request, body []byte) (answer, error) {
		var lease time.Duration
		if op == idExtend {
			var err error
			if lease, err = leaseArg(r); err != nil {
				return answer{}, err
			}
		}
		ls, err := lines(body)
		if err != nil {
			return answer{}, err
		}
		ids := make([]frontier.ID, 0, len(ls))
		bad := make([]error, len(ls))
		for i, l := range ls {
			id, err := frontier.ParseID(string(l))
			if err != nil {
				bad[i] = err
				continue
			}
			ids = append(ids, id)
		}
		var found []bool
		crawl := r.URL.Query().Get("crawl")
		switch op {
		case idAck:
			found, err = f.Complete(r.Context(), crawl, ids)
		case idRelease:
			found, err = f.Release(r.Context(), crawl, ids)
		case idExtend:
			found, err = f.Extend(r.Context(), crawl, ids, lease)
		}
		if err != nil {
			return answer{}, err
		}
		a := answer{status: http.StatusOK, ctype: wire.ContentTypeText}
		k := 0
		for i := range ls {
			switch {
			case bad[i] != nil:
				a.body = wire.AppendAnswer(a.body, wire.Invalid, bad[i].Error())
				continue
			case found[k]:
				a.body = append(a.body, yes+"\n"...)
			default:
				a.body = append(a.body, "unknown\n"...)
			}
			k++
		}
		return a, nil
	}
}

func (s *Server) frontierDelay(f *frontier.Frontier, r *http.Request, _ []byte) (answer, error) {
	if r.URL.Query().Get("seconds") == "" {
		return answer{}, fmt.Errorf("%w: seconds= is required", wire.ErrBadRequest)
	}
	d, err := secondsArg(r, "seconds", 0, 365*24*3600)
	if err != nil {
		return answer{}, err
	}
	crawl, queue := r.URL.Query().Get("crawl"), r.URL.Query().Get("queue")
	if err := f.SetDelay(r.Context(), crawl, queue, d); err != nil {
		return answer{}, err
	}
	b, err := json.Marshal(map[string]any{"crawl": frontierCrawl(crawl), "queue": queue, "seconds": d.Seconds()})
	if err != nil {
		return answer{}, err
	}
	return answer{status: http.StatusOK, ctype: "application/json", body: append(b, '\n')}, nil
}

func (s *Server) frontierDelete(f *frontier.Frontier, r *http.Request, _ []byte) (answer, error) {
	crawl := r.URL.Query().Get("crawl")
	n, err := f.DeleteCrawl(r.Context(), crawl)
	if err != nil {
		return answer{}, err
	}
	b, err := json.Marshal(map[string]any{"crawl": frontierCrawl(crawl), "deleted": n.URLs})
	if err != nil {
		return answer{}, err
	}
	return answer{status: http.StatusOK, ctype: "application/json", body: append(b, '\n')}, nil
}

func frontierCrawl(c string) string {
	if c == "" {
		return frontier.DefaultCrawl
	}
	return c
}

// frontierStatusBody is the answer of GET /v1/frontier/status.
type frontierStatusBody struct {
	Crawl      string `json:"crawl"`
	Queued     int64  `json:"queued"`
	Due        int64  `json:"due"`
	InTransit  int64  `json:"in_transit"`
	Completed  int64  `json:"completed"`
	Queues     int64  `json:"queues"`
	Recounting bool   `json:"recounting,omitempty"`
}

func (s *Server) frontierStatus(w http.ResponseWriter, r *http.Request) error {
	f, err := s.frontier()
	if err != nil {
		return err
	}
	crawl := r.URL.Query().Get("crawl")
	st, err := f.Stats(crawl, "")
	if err != nil {
		return frontierError(err)
	}
	return writeJSON(w, frontierStatusBody{Crawl: st.Crawl, Queued: st.Size - st.InTransit, Due: f.Due(crawl), InTransit: st.InTransit,
		Completed: st.Completed, Queues: st.Queues, Recounting: st.Recounting})
}

// frontierCollector reports the frontier's counts per crawl, read at
// scrape time, once the frontier is open.
type frontierCollector struct {
	fr                                             func(bool) (*frontier.Frontier, error)
	queued, transit, completed, queues, puts, gets *prometheus.Desc
}

func newFrontierCollector(fr func(bool) (*frontier.Frontier, error)) *frontierCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("urlhash_frontier_"+name, help, []string{"crawl"}, nil)
	}
	return &frontierCollector{fr: fr,
		queued:    d("queued", "URLs of the crawl waiting in its queues (due now or later), not in transit."),
		transit:   d("in_transit", "URLs of the crawl handed out and neither updated nor expired."),
		completed: d("completed", "URLs of the crawl completed: never handed out again."),
		queues:    d("queues", "Queues of the crawl."),
		puts:      d("puts_total", "URLs put new into the crawl since the server started (gRPC and HTTP)."),
		gets:      d("gets_total", "URLs of the crawl handed out since the server started (gRPC and HTTP)."),
	}
}

// Describe implements prometheus.Collector.
func (c *frontierCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.queued, c.transit, c.completed, c.queues, c.puts, c.gets} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *frontierCollector) Collect(ch chan<- prometheus.Metric) {
	f, err := c.fr(false)
	if err != nil || f == nil {
		return
	}
	for _, s := range f.AllStats() {
		for _, m := range []struct {
			d *prometheus.Desc
			t prometheus.ValueType
			v int64
		}{
			{c.queued, prometheus.GaugeValue, s.Size - s.InTransit},
			{c.transit, prometheus.GaugeValue, s.InTransit},
			{c.completed, prometheus.GaugeValue, s.Completed},
			{c.queues, prometheus.GaugeValue, s.Queues},
			{c.puts, prometheus.CounterValue, s.Puts},
			{c.gets, prometheus.CounterValue, s.Gets},
		} {
			ch <- prometheus.MustNewConstMetric(m.d, m.t, float64(m.v), s.Crawl)
		}
	}
}
