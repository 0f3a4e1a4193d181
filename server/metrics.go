package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/urlhash/urlhash/store"
)

// metrics are the server's Prometheus metrics, in a registry of its own
// (no global state): requests and their latency by endpoint and status,
// the fsyncs group commit ran, and the index's counts and filter probes,
// read at scrape time.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(st store.Backend, c *committer) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "urlhash_requests_total", Help: "Requests served, by endpoint and HTTP status.",
		}, []string{"endpoint", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "urlhash_request_seconds", Help: "Request latency, by endpoint.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 18), // 50 µs .. 6.5 s
		}, []string{"endpoint"}),
	}
	m.reg.MustRegister(m.requests, m.latency,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "urlhash_fsyncs_total", Help: "Syncs run for writers (group commit shares each between writers).",
		}, func() float64 { return float64(c.syncs.Load()) }),
		newStatsCollector(st),
	)
	return m
}

// statsCollector reports the index's counts, from one Stats call per
// scrape.
type statsCollector struct {
	st                     store.Backend
	entries, filter, probe *prometheus.Desc
}

func newStatsCollector(st store.Backend) *statsCollector {
	return &statsCollector{
		st:      st,
		entries: prometheus.NewDesc("urlhash_entries", "Full entries in the index.", nil, nil),
		filter:  prometheus.NewDesc("urlhash_filter_bytes", "Size of the index's in-memory filter.", nil, nil),
		probe: prometheus.NewDesc("urlhash_filter_probes_total",
			"Lookups and add-if-absent checks by the filter's answer: absent (no read), found (let through, stored), "+
				"false_positive (let through, not stored: a read for nothing).", []string{"result"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.entries
	ch <- c.filter
	ch <- c.probe
}

// Collect implements prometheus.Collector.
func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	s, err := statsOf(context.Background(), c.st) // Collect takes no context
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.entries, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.entries, prometheus.GaugeValue, float64(s.Entries))
	ch <- prometheus.MustNewConstMetric(c.filter, prometheus.GaugeValue, float64(s.FilterBytes))
	for _, p := range []struct {
		result string
		n      int64
	}{{"absent", s.FilterAbsent}, {"found", s.FilterFound}, {"false_positive", s.FilterFalsePositives}} {
		ch <- prometheus.MustNewConstMetric(c.probe, prometheus.CounterValue, float64(p.n), p.result)
	}
}

// handler serves the metrics in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
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

// observe records one request.
func (m *metrics) observe(endpoint string, status int, start time.Time) {
	m.requests.WithLabelValues(endpoint, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(endpoint).Observe(time.Since(start).Seconds())
}
