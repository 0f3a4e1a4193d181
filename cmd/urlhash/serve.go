package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/server"
)

func serveCommand() *command {
	return &command{
		name:    "serve",
		summary: "share one index between many processes over HTTP",
		usage: `Usage: urlhash serve --db DIR [--listen ADDR] [flags]

Owns the index in DIR and serves it over HTTP, so that any number of
processes (and hosts) use it at once: every command takes --db
http://ADDR and answers as on the directory. Writes are answered only
when durable; concurrent writers share fsyncs. Prints "urlhash: serving
DIR on http://ADDR" on stderr when ready. SIGINT or SIGTERM stop
accepting, finish the requests in flight (however long a load takes),
sync, close the index and exit 0; a second signal kills at once (what
was acknowledged stays durable).

The protocol (HTTP, binary batch bodies, JSONL scans) is in the README
and "go doc github.com/urlhash/urlhash/server".

Flags:
      --db DIR           the index directory (created if needed)
      --listen ADDR      address to listen on (default 127.0.0.1:7411;
                         port 0 picks a free one)
      --token-file FILE  require "Authorization: Bearer TOKEN" with the
                         token in FILE (required to listen beyond
                         loopback); clients read URLHASH_TOKEN
      --tls-cert FILE, --tls-key FILE
                         serve HTTPS
      --read-only        refuse writes (403)
      --max-body BYTES   largest request body (default 64 MiB)
      --max-in-flight N  requests served at once (default 64)
      --threat-type T    the Web Risk threat type of a Safe Browsing list
                         index (webrisk or safebrowsing-v5 profile), as
                         GET /v1/uris:search and /v1/hashes:search (the
                         Web Risk Lookup API) answer it: MALWARE,
                         SOCIAL_ENGINEERING, UNWANTED_SOFTWARE or
                         SOCIAL_ENGINEERING_EXTENDED_COVERAGE (default
                         MALWARE); GET /v1/threatLists:computeDiff serves
                         the lists "urlhash sync" keeps in DIR, or else
                         the index's entries as the list of this type
      --log-format F     text or json: structured log lines on stderr,
                         after the ready line (default text)
      --log-level L      debug (a line per request and per fsync), info
                         (start, stop), warn (also refused requests) or
                         error (default info)

Example:
  $ urlhash serve --db crawl.idx --listen 127.0.0.1:7411 &
  urlhash: serving crawl.idx on http://127.0.0.1:7411
  $ urlhash dedupe --db http://127.0.0.1:7411 < links.txt
`,
		run: runServe,
	}
}

func runServe(e *env, args []string) error {
	fs := newFlags("serve")
	dir := fs.String("db", "", "index directory")
	listen := fs.String("listen", "127.0.0.1:7411", "listen address")
	tokenFile := fs.String("token-file", "", "bearer token file")
	cert := fs.String("tls-cert", "", "TLS certificate")
	key := fs.String("tls-key", "", "TLS key")
	readOnly := fs.Bool("read-only", false, "refuse writes")
	maxBody := fs.Int64("max-body", 64<<20, "largest request body")
	maxInFlight := fs.Int("max-in-flight", 64, "requests at once")
	threatType := fs.String("threat-type", "MALWARE", "Web Risk threat type of the list")
	logFormat := fs.String("log-format", "text", "text or json")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	switch {
	case *dir == "":
		return usagef("--db DIR is required")
	case backend.IsPostgres(*dir) || remote.IsLocation(*dir):
		return usagef("serve owns an index directory; PostgreSQL and servers are shared already")
	case (*cert == "") != (*key == ""):
		return usagef("--tls-cert and --tls-key go together")
	case !server.IsWebRiskThreatType(*threatType):
		return usagef("--threat-type %q: want MALWARE, SOCIAL_ENGINEERING, UNWANTED_SOFTWARE or SOCIAL_ENGINEERING_EXTENDED_COVERAGE", *threatType)
	}
	logger, err := newLogger(e.stderr, *logFormat, *logLevel)
	if err != nil {
		return err
	}
	var token string
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return err
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return fmt.Errorf("%s: empty token", *tokenFile)
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if addr := ln.Addr().(*net.TCPAddr); !addr.IP.IsLoopback() && token == "" {
		ln.Close()
		return usagef("listening on %s, beyond loopback, needs --token-file", addr)
	}
	st, err := backend.Open(e.ctx, *dir, &backend.Options{ReadOnly: *readOnly})
	if err != nil {
		ln.Close()
		return err
	}
	so := &server.Options{Token: token, ReadOnly: *readOnly, MaxBody: *maxBody, MaxInFlight: *maxInFlight, Logger: logger, ThreatType: *threatType}
	if ix, ok := st.(*index.DB); ok {
		so.Backup = func(w io.Writer, since uint64) (uint64, error) {
			info, err := ix.Backup(w, since)
			return info.Until, err
		}
		if err := serveThreatLists(st, *dir, *readOnly, so); err != nil {
			st.Close()
			ln.Close()
			return err
		}
	}
	srv := &http.Server{
		Handler:           server.New(st, so),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	scheme := "http"
	if *cert != "" {
		scheme = "https"
	}
	fmt.Fprintf(e.stderr, "urlhash: serving %s on %s://%s\n", *dir, scheme, ln.Addr())
	started := time.Now()
	logger.Info("serving", "db", *dir, "addr", ln.Addr().String(), "tls", *cert != "", "read_only", *readOnly,
		"profile", st.Profile(), "token", token != "")
	done := make(chan error, 1)
	go func() {
		if *cert != "" {
			done <- srv.ServeTLS(ln, *cert, *key)
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
	closeStart := time.Now()
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
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	ho := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, usagef("--log-format %q: want text or json", format)
}
