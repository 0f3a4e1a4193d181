package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/internal/atomicfile"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/server"
)

// serveGCPercent is serve's GOGC unless the environment sets one.
const serveGCPercent = 10

func serveCommand() *command {
	return &command{
		name:      "serve",
		usageLine: "serve --db DIR [--listen ADDR] [flags]",
		short:     "share one index between many processes over HTTP",
		long: `Owns the index in DIR and serves it over HTTP, so that any number of
processes (and hosts) use it at once: every command takes --db
http://ADDR and answers as on the directory. Writes are answered only
when durable; concurrent writers share fsyncs. Prints "urlhash: serving
DIR on http://ADDR" on stderr when ready, and records the address in
DIR/urlhash.serve, so that a command given --db DIR while it serves says
which --db to use instead. The line comes once it can answer: the TLS
certificate and key loaded, the address bound, the index open; a start
that fails before (a bad TLS file, the port taken) exits 2 and leaves no
index directory it created. SIGINT or SIGTERM stop accepting, finish the
requests in flight (however long a load takes), sync, close the index and
exit 0; a second signal kills at once (what was acknowledged stays
durable).

The server runs Go's collector at GOGC 10 (a heap at most a tenth above
what is live) unless GOGC is set in its environment; --memory-limit adds
a soft limit on top.

Logs go to stderr after the ready line: --log-format json writes one JSON
object a line, net/http's own lines (a failed TLS handshake) included, and
each duration in seconds as NAME_seconds (and, for one release, in
nanoseconds as NAME). GET /metrics serves Prometheus metrics; the
repository's monitoring/ holds a Grafana dashboard and alert rules.

The protocol (HTTP, binary batch bodies, JSONL scans) is in the README
and "go doc github.com/urlhash/urlhash/server".
`,
		example: `$ urlhash serve --db crawl.idx --listen 127.0.0.1:7411 &
urlhash: serving crawl.idx on http://127.0.0.1:7411
$ urlhash dedupe --db http://127.0.0.1:7411 < links.txt
`,
		flagsOnly: true,
		drains:    true,
		setFlags: func(fs *flagSet) runFunc {
			o := new(serveOptions)
			fs.StringVar(&o.db.dir, "db", "", "the index directory `DIR` (created if needed; required)")
			fs.StringVar(&o.listen, "listen", "127.0.0.1:7411", "`ADDR`ess to listen on (default 127.0.0.1:7411; port 0 picks a free one)")
			fs.StringVar(&o.tokenFile, "token-file", "", "require \"Authorization: Bearer TOKEN\" with the token in `FILE` (required to listen beyond loopback); clients read URLHASH_TOKEN")
			fs.StringVar(&o.cert, "tls-cert", "", "serve HTTPS with the certificate in `FILE` (with --tls-key)")
			fs.StringVar(&o.key, "tls-key", "", "the TLS key `FILE` (with --tls-cert)")
			fs.BoolVar(&o.readOnly, "read-only", false, "refuse writes (403)")
			o.db.addKeyTable(fs)
			fs.Int64Var(&o.maxBody, "max-body", 64<<20, "largest request body in `BYTES` (default 64 MiB)")
			fs.IntVar(&o.maxInFlight, "max-in-flight", 64, "`N` requests served at once (default 64)")
			fs.Int64Var(&o.memoryLimit, "memory-limit", 0, "a soft limit on the server's Go memory in `MIB` (default 0: none): the collector runs more often as the heap nears it (Go's GOMEMLIMIT), trading CPU for resident memory; the heap may still exceed it")
			fs.StringVar(&o.threatType, "threat-type", "MALWARE", "the Web Risk threat `TYPE` of a Safe Browsing list index (webrisk or safebrowsing-v5 profile), as GET /v1/uris:search and /v1/hashes:search (the Web Risk Lookup API) answer it: MALWARE, SOCIAL_ENGINEERING, UNWANTED_SOFTWARE or SOCIAL_ENGINEERING_EXTENDED_COVERAGE (default MALWARE); GET /v1/threatLists:computeDiff serves the lists \"urlhash sync\" keeps in DIR, or else the index's entries as the list of this type")
			fs.enum("threat-type", "MALWARE", "SOCIAL_ENGINEERING", "UNWANTED_SOFTWARE", "SOCIAL_ENGINEERING_EXTENDED_COVERAGE")
			fs.StringVar(&o.logFormat, "log-format", "text", "`FORMAT` of the structured log lines on stderr, after the ready line: text or json (default text)")
			fs.enum("log-format", "text", "json")
			fs.StringVar(&o.frontier, "frontier", "", "also serve the crawl frontier (DIR/urlhash.frontier) as crawler-commons' URL Frontier gRPC service, in plaintext on `ADDR` (port 0 picks a free one; beyond loopback it needs --token-file, sent as \"authorization: Bearer TOKEN\" metadata); prints \"urlhash: frontier on grpc://HOST:PORT\" on stderr when ready. The /v1/frontier/ HTTP endpoints serve the same frontier either way")
			fs.StringVar(&o.logLevel, "log-level", "info", "`LEVEL`: debug (a line per request and per fsync), info (start, stop), warn (also refused requests) or error (default info)")
			fs.enum("log-level", "debug", "info", "warn", "error")
			return o.run
		},
	}
}

type serveOptions struct {
	db                              dbFlags
	listen, tokenFile, cert, key    string
	readOnly                        bool
	maxBody                         int64
	maxInFlight                     int
	memoryLimit                     int64 // MiB, 0: none
	threatType, logFormat, logLevel string
	frontier                        string // the gRPC address, "" for none
}

func (o *serveOptions) run(e *env, _ []string) error {
	switch {
	case o.db.dir == "":
		return usagef("--db DIR is required")
	case backend.IsPostgres(o.db.dir) || remote.IsLocation(o.db.dir):
		return usagef("serve owns an index directory; PostgreSQL and servers are shared already")
	case (o.cert == "") != (o.key == ""):
		return usagef("--tls-cert and --tls-key go together")
	case !server.IsWebRiskThreatType(o.threatType):
		return usagef("--threat-type %q: want MALWARE, SOCIAL_ENGINEERING, UNWANTED_SOFTWARE or SOCIAL_ENGINEERING_EXTENDED_COVERAGE", o.threatType)
	case o.memoryLimit < 0 || o.memoryLimit > math.MaxInt64>>20:
		return usagef("--memory-limit %d: want MiB, 0 (none) or more", o.memoryLimit)
	}
	if o.memoryLimit > 0 {
		// The process's setting, restored for the tests that run serve
		// in-process.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(o.memoryLimit << 20))
	}
	if os.Getenv("GOGC") == "" {
		// The server keeps its working memory for reuse and allocates
		// little per request, and what it keeps (the filter, the key
		// table's delta and buckets, body buffers) holds no pointers, so
		// a tight pacing of the collector costs little CPU: "go run
		// ./bench/shared" (1M URLs, 4 clients) peaked at 120 MiB with
		// GOGC 25 against 161-176 MiB with Go's 100 (srv-mem), and on the
		// final code at RssAnon 32 MiB with GOGC 10 against 40 with 25,
		// for 1.35x and 1.49x Redis's throughput. GOGC, when set, wins.
		defer debug.SetGCPercent(debug.SetGCPercent(serveGCPercent))
	}
	logger, level, err := newLeveledLogger(e.stderr, o.logFormat, o.logLevel)
	if err != nil {
		return err
	}
	var token string
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return err
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return fmt.Errorf("%s: empty token", o.tokenFile)
		}
	}
	// Everything that can refuse to start does before the ready line:
	// the certificate and key load, the address is bound, the index opens.
	var tlsConfig *tls.Config
	if o.cert != "" {
		cert, err := tls.LoadX509KeyPair(o.cert, o.key)
		if err != nil {
			return fmt.Errorf("--tls-cert %s, --tls-key %s: %w", o.cert, o.key, err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	if addr := ln.Addr().(*net.TCPAddr); !addr.IP.IsLoopback() && token == "" {
		return usagef("listening on %s, beyond loopback, needs --token-file", addr)
	}
	dir := noteNewDir(o.db.dir)
	st, err := o.db.openStore(e, &backend.Options{ReadOnly: o.readOnly})
	if err != nil {
		dir.abandon(e, nil)
		return err
	}
	// A start that fails from here on leaves no directory it created.
	fail := func(err error) error {
		dir.abandon(e, st)
		return err
	}
	profile, err := st.Profile(e.ctx)
	if err != nil {
		return fail(err)
	}
	so := &server.Options{Token: token, ReadOnly: o.readOnly, MaxBody: o.maxBody, MaxInFlight: o.maxInFlight, Logger: logger, ThreatType: o.threatType,
		Version: buildStamp().Version} // a release build's, stamped by the linker
	var fr *servedFrontier
	var gln net.Listener
	if o.frontier != "" && o.readOnly {
		return fail(usagef("--frontier writes its own index: not with --read-only"))
	}
	if !o.readOnly {
		if fr, err = newServedFrontier(o.db.dir, profile, logger, level); err != nil {
			return fail(err)
		}
		defer fr.close()
		so.Frontier = fr.get
	}
	if o.frontier != "" {
		if gln, err = net.Listen("tcp", o.frontier); err != nil {
			return fail(err)
		}
		defer gln.Close()
		if addr := gln.Addr().(*net.TCPAddr); !addr.IP.IsLoopback() && token == "" {
			return fail(usagef("--frontier on %s, beyond loopback, needs --token-file", addr))
		}
		fr.node = gln.Addr().String()
	}
	if fr != nil && (gln != nil || fr.exists()) {
		if _, err := fr.get(true); err != nil {
			return fail(err)
		}
	}
	if ix, ok := st.(*index.DB); ok {
		so.Backup = func(w io.Writer, since uint64) (uint64, error) {
			info, err := ix.Backup(w, since)
			return info.Until, err
		}
		if err := serveThreatLists(e.ctx, st, o.db.dir, o.readOnly, so); err != nil {
			return fail(err)
		}
	}
	h := server.New(st, so)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          httpErrorLog(logger),
		TLSConfig:         tlsConfig,
	}
	srv.RegisterOnShutdown(h.StopWaiting) // claims waiting for requests answer at once
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	// Another command that finds the index locked names the address
	// (a server killed outright leaves the file, but not the lock).
	served := filepath.Join(o.db.dir, serveFile)
	// Written whole, then renamed: a reader never sees it half written.
	if err := atomicfile.WriteFile(served, []byte(fmt.Sprintf("%s://%s\n", scheme, ln.Addr())), 0o644); err != nil {
		logger.Debug("recording the address", "error", err) // read-only media: no hint, nothing worse
	}
	defer os.Remove(served)
	fmt.Fprintf(e.stderr, "urlhash: serving %s on %s://%s\n", o.db.dir, scheme, ln.Addr())
	stopGRPC := func() {}
	if gln != nil {
		f, _ := fr.get(false)
		stopGRPC = serveGRPC(gln, f, token, logger)
		fmt.Fprintf(e.stderr, "urlhash: frontier on grpc://%s\n", gln.Addr())
	}
	started := time.Now()
	logger.Info("serving", "db", o.db.dir, "addr", ln.Addr().String(), "tls", tlsConfig != nil, "read_only", o.readOnly,
		"profile", profile, "token", token != "")
	done := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			done <- srv.ServeTLS(ln, "", "") // the certificate loaded above
		} else {
			done <- srv.Serve(ln)
		}
	}()
	select {
	case err = <-done:
	case <-e.ctx.Done():
		// Stop accepting, let the requests in flight finish (however long
		// a load takes: a second signal kills), then sync and close the
		// index.
		logger.Info("stopping", "reason", context.Cause(e.ctx).Error())
		err = srv.Shutdown(context.Background())
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	stopGRPC()
	closeStart := time.Now()
	if fr != nil {
		if ferr := fr.close(); err == nil {
			err = ferr
		}
	}
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		logger.Error("stopped", "error", err, "uptime", time.Since(started))
	} else {
		logger.Info("stopped", "close", time.Since(closeStart), "uptime", time.Since(started))
	}
	return err
}

// newLogger returns the server's logger: format text or json, level
// debug, info, warn or error, on w.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	l, _, err := newLeveledLogger(w, format, level)
	return l, err
}

// newLeveledLogger is newLogger with the level it reads, which the
// frontier's SetLogLevel changes.
func newLeveledLogger(w io.Writer, format, level string) (*slog.Logger, *slog.LevelVar, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	v := new(slog.LevelVar)
	v.Set(lv)
	ho := &slog.HandlerOptions{Level: v}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), v, nil
	case "json":
		ho.ReplaceAttr = secondsToo
		return slog.New(slog.NewJSONHandler(w, ho)), v, nil
	}
	return nil, nil, usagef("--log-format %q: want text or json", format)
}

// secondsToo is the JSON log's ReplaceAttr: a duration (slog.Duration,
// which JSON writes as bare nanoseconds) is written in seconds as a float
// under its name with "_seconds" appended ("duration_seconds": 0.0012),
// and still in nanoseconds under its name for one release (CHANGELOG.md).
func secondsToo(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	d := a.Value.Duration()
	return slog.Attr{Value: slog.GroupValue(slog.Int64(a.Key, int64(d)), slog.Float64(a.Key+"_seconds", d.Seconds()))}
}

// httpErrorLog returns the log net/http writes its own lines to (a TLS
// handshake that failed, an error accepting a connection, a handler's
// panic): the server's logger, at level warn, with "component":
// "net/http", so that with --log-format json they are JSON lines like the
// others.
func httpErrorLog(logger *slog.Logger) *log.Logger {
	return slog.NewLogLogger(logger.With("component", "net/http").Handler(), slog.LevelWarn)
}
