package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/urlhash/urlhash/store"
)

// metrics are the server's Prometheus metrics, in a registry of its own
// (no global state): requests and their latency by endpoint and status,
// the fsyncs group commit ran, and the index's counts, read at scrape
// time.
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
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "urlhash_entries", Help: "Full entries in the index.",
		}, func() float64 {
			if s, err := st.Stats(); err == nil {
				return float64(s.Entries)
			}
			return -1
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "urlhash_filter_bytes", Help: "Size of the index's in-memory filter.",
		}, func() float64 {
			if s, err := st.Stats(); err == nil {
				return float64(s.FilterBytes)
			}
			return -1
		}),
	)
	return m
}

// handler serves the metrics in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
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
