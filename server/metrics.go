package server

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/urlhash/urlhash/frontier"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

// metrics are the server's Prometheus metrics, in a registry of its own
// (no global state): Go's and the process's standard collectors, the
// build, requests and their latency by endpoint and status, refusals by
// reason, the requests in flight and waiting, batch sizes, new and
// present keys, idempotency replays, the fsyncs group commit ran and
// their duration; and, read at scrape time, the index's counts, filter
// probes, disk bytes, free space, key-table merges and Badger
// compactions. A scrape reads no key and no file's contents (see
// index.DB.Activity and index.DB.DetailedStats).
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	refused  *prometheus.CounterVec
	// batches observes the keys (or URLs) of a batch request, by op.
	batches      *prometheus.HistogramVec
	has, get     prometheus.Observer
	add, visit   prometheus.Observer
	put          prometheus.Observer
	added        *prometheus.CounterVec
	fresh, found prometheus.Counter
	replays      prometheus.Counter
	fsync        prometheus.Histogram
	// waiting counts the requests waiting for a slot (Server.take).
	waiting atomic.Int64
}

// Batch ops, the op label of urlhash_batch_keys.
const (
	opHas   = "has"
	opGet   = "get"
	opAdd   = "add"
	opVisit = "visit"
	opPut   = "put"
)

func newMetrics(st store.Backend, c *committer, slots chan struct{}, version string, fr func(bool) (*frontier.Frontier, error)) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "urlhash_requests_total", Help: "Requests served, by endpoint and HTTP status.",
		}, []string{"endpoint", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "urlhash_request_seconds", Help: "Request latency, by endpoint.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18), // 50 µs .. 6.5 s
		}, []string{"endpoint"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "urlhash_requests_refused_total",
			Help: "Requests refused, by reason: the error kind of a 4xx answer other than not_found " +
				"(unauthorized, too_large, timeout, canceled, bad_request, read_only, key_reused, no_endpoint, ...), " +
				"or disk_full and closed.",
		}, []string{"reason"}),
		batches: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "urlhash_batch_keys", Help: "Keys (or URL lines) in a batch request, by op: has, get (get-batch), add, visit, put.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 11), // 1 .. 2^20
		}, []string{"op"}),
		added: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "urlhash_keys_added_total",
			Help: "Keys of add, visit and urls/add requests, by result: new (stored, or due for a revisit) or present.",
		}, []string{"result"}),
		replays: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "urlhash_idempotency_replays_total",
			Help: "Writes answered with the recorded answer of an earlier request with the same Idempotency-Key.",
		}),
		fsync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "urlhash_fsync_duration_seconds", Help: "Duration of the syncs group commit ran for writers.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18), // 50 µs .. 6.5 s
		}),
	}
	m.has, m.get = m.batches.WithLabelValues(opHas), m.batches.WithLabelValues(opGet)
	m.add = m.batches.WithLabelValues(opAdd)
	m.visit, m.put = m.batches.WithLabelValues(opVisit), m.batches.WithLabelValues(opPut)
	m.fresh, m.found = m.added.WithLabelValues("new"), m.added.WithLabelValues("present")
	c.seconds = m.fsync
	version, revision := buildVersion(version)
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.latency, m.refused, m.batches, m.added, m.replays, m.fsync,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "urlhash_build_info", Help: "The build of the server: always 1, with its version, VCS revision and Go toolchain.",
			ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()},
		}, func() float64 { return 1 }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "urlhash_fsyncs_total", Help: "Syncs run for writers (group commit shares each between writers).",
		}, func() float64 { return float64(c.syncs.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "urlhash_requests_in_flight", Help: "Requests being served, holding one of the slots (--max-in-flight).",
		}, func() float64 { return float64(len(slots)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "urlhash_requests_in_flight_limit", Help: "The slots for requests served at once (--max-in-flight).",
		}, func() float64 { return float64(cap(slots)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "urlhash_requests_waiting", Help: "Requests whose body has arrived, waiting for a slot.",
		}, func() float64 { return float64(m.waiting.Load()) }),
		newStatsCollector(st),
	)
	if fr != nil {
		m.reg.MustRegister(newFrontierCollector(fr))
	}
	return m
}

// buildVersion returns the version build_info reports (version, else the
// main module's, else "(devel)") and the VCS revision of the build ("" when
// not stamped).
func buildVersion(version string) (string, string) {
	revision := ""
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return cmp.Or(version, "(devel)"), revision
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			revision = s.Value
		}
	}
	return cmp.Or(version, bi.Main.Version, "(devel)"), revision
}

// statsCollector reports the index's counts, sizes and background work,
// from one Stats call (and, for an index directory, one Activity call)
// per scrape.
type statsCollector struct {
	st                               store.Backend
	entries, prefixes, filter, probe *prometheus.Desc
	disk, free, reserve              *prometheus.Desc
	merges, mergeSecs, mergeBytes    *prometheus.Desc
	compactions                      *prometheus.Desc
}

func newStatsCollector(st store.Backend) *statsCollector {
	return &statsCollector{
		st:       st,
		entries:  prometheus.NewDesc("urlhash_entries", "Full entries in the index.", nil, nil),
		prefixes: prometheus.NewDesc("urlhash_prefix_entries", "Prefix entries in the index.", nil, nil),
		filter:   prometheus.NewDesc("urlhash_filter_bytes", "Size of the index's in-memory filter.", nil, nil),
		probe: prometheus.NewDesc("urlhash_filter_probes_total",
			"Lookups and add-if-absent checks by the filter's answer: absent (no read), found (let through, stored), "+
				"false_positive (let through, not stored: a read for nothing).", []string{"result"}, nil),
		disk: prometheus.NewDesc("urlhash_disk_bytes", "Disk space of the index's files, as allocated.", nil, nil),
		free: prometheus.NewDesc("urlhash_filesystem_avail_bytes",
			"Space available to the server on the index's filesystem.", nil, nil),
		reserve: prometheus.NewDesc("urlhash_filesystem_reserve_bytes",
			"Free space the index keeps for Badger's flushes, compactions and close: writes are refused (disk_full) "+
				"when urlhash_filesystem_avail_bytes falls below it.", nil, nil),
		merges:     prometheus.NewDesc("urlhash_keytable_merges_total", "Key-table merges finished.", nil, nil),
		mergeSecs:  prometheus.NewDesc("urlhash_keytable_merge_seconds_total", "Time spent in key-table merges finished.", nil, nil),
		mergeBytes: prometheus.NewDesc("urlhash_keytable_merge_written_bytes_total", "Bytes of key files written by key-table merges.", nil, nil),
		compactions: prometheus.NewDesc("urlhash_badger_compactions_total",
			"Badger compactions finished, by the level compacted from.", []string{"level"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.entries, c.prefixes, c.filter, c.probe, c.disk, c.free, c.reserve,
		c.merges, c.mergeSecs, c.mergeBytes, c.compactions} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx := context.Background() // Collect takes no context
	s, err := statsOf(ctx, c.st)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.entries, err)
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge(c.entries, float64(s.Entries))
	gauge(c.prefixes, float64(s.PrefixEntries))
	gauge(c.filter, float64(s.FilterBytes))
	gauge(c.disk, float64(s.DiskBytes))
	counter(c.probe, float64(s.FilterAbsent), "absent")
	counter(c.probe, float64(s.FilterFound), "found")
	counter(c.probe, float64(s.FilterFalsePositives), "false_positive")
	db, ok := c.st.(*index.DB)
	if !ok {
		return
	}
	a, err := db.Activity(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.merges, err)
		return
	}
	counter(c.merges, float64(a.KeyTableMerges))
	counter(c.mergeSecs, a.KeyTableMergeTime.Seconds())
	counter(c.mergeBytes, float64(a.KeyTableMergeBytes))
	for level, n := range a.Compactions {
		counter(c.compactions, float64(n), strconv.Itoa(level))
	}
	if a.FreeBytes > 0 || a.ReserveBytes > 0 {
		gauge(c.free, float64(a.FreeBytes))
		gauge(c.reserve, float64(a.ReserveBytes))
	}
}

// handler serves the metrics in the Prometheus text format. A collector
// that fails (the index's figures, when it is closed or damaged) leaves
// its metrics out of the scrape, and its error in log: the others are
// still served, never a plain-text 500.
func (m *metrics) handler(log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelError),
	})
}

// statusWriter records the status a handler wrote and counts the bytes.
type statusWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *statusWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Flush lets streamed answers (scan) reach the client as they are written.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// observe records one request: its status and latency, and, when it was
// refused, its reason (the error kind).
func (m *metrics) observe(endpoint string, status int, kind string, start time.Time) {
	m.requests.WithLabelValues(endpoint, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(endpoint).Observe(time.Since(start).Seconds())
	if isRefusal(status, kind) {
		m.refused.WithLabelValues(kind).Inc()
	}
}

// isRefusal reports whether an answer with status and error kind refused
// its request (a limit or a rule of the server, or a request it could not
// serve), as against a key not found or a failure of the server (5xx).
func isRefusal(status int, kind string) bool {
	switch {
	case kind == "" || kind == "not_found":
		return false
	case status >= 400 && status < 500:
		return true
	}
	return kind == "disk_full" || kind == "closed"
}

// keysAdded counts the answers of an add, visit or urls/add: new or
// present.
func (m *metrics) keysAdded(added []bool) {
	n := 0
	for _, a := range added {
		if a {
			n++
		}
	}
	m.fresh.Add(float64(n))
	m.found.Add(float64(len(added) - n))
}
