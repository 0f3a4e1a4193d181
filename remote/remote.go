// Package remote is the client of a urlhash server (package server): a
// store.Backend whose operations are requests, so that query.Index and
// every command work on a server as on a directory. Every write it makes
// is durable when it returns (the server syncs before it answers, sharing
// fsyncs between clients).
package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// Options configures Open. A nil *Options means the defaults.
type Options struct {
	// Token is the server's bearer token. Default: none.
	Token string
	// Timeout bounds each request (scans and loads excepted). Default 5 min.
	Timeout time.Duration
	// Client is the HTTP client. Default: one with keep-alive connections.
	Client *http.Client
	// ReadOnly refuses every write with store.ErrReadOnly before it is
	// sent, as a read-only open of a directory does. Default false.
	ReadOnly bool
	// RootCAs, when not nil, are the certificate authorities an https://
	// server's certificate must chain to, in place of the system's (a
	// private CA: the CLI's --ca-file). Ignored when Client is set.
	// Default nil: the system's roots, which Go reads from SSL_CERT_FILE
	// and SSL_CERT_DIR where they are set (Linux and the BSDs).
	RootCAs *x509.CertPool
}

// ErrUnauthorized is returned, wrapped, when the server refuses the
// request's bearer token (401): none was given (Options.Token) or not the
// server's. Use errors.Is.
var ErrUnauthorized = errors.New("remote: missing or wrong bearer token")

// ErrServerSpeaksHTTPS is returned, wrapped, when an http:// location
// names a server that answers HTTPS: the location wants https://.
var ErrServerSpeaksHTTPS = errors.New("remote: the server speaks HTTPS")

// DB is a server's index. It is safe for concurrent use.
type DB struct {
	base     string // the location, as requests are sent to it
	shown    string // the location as errors show it: no password
	o        Options
	client   *http.Client
	closed   atomic.Bool
	identity string // the served index's, as Open found it
	// noGetBatch is set once the server answered /v1/get-batch
	// no_endpoint: it predates the endpoint.
	noGetBatch atomic.Bool
}

var _ store.Backend = (*DB)(nil)

// IsLocation reports whether location names a server (http:// or https://).
func IsLocation(location string) bool {
	return strings.HasPrefix(location, "http://") || strings.HasPrefix(location, "https://")
}

// Open connects to the server at location (http://HOST:PORT) and checks
// that it answers.
func Open(ctx context.Context, location string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	u, err := url.Parse(location)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: server location %q", store.ErrInvalidOptions, Redact(location))
	}
	base := strings.TrimSuffix(location, "/")
	db := &DB{base: base, shown: Redact(base), o: o, client: o.Client}
	if db.client == nil {
		db.client = &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second,
			TLSClientConfig: &tls.Config{RootCAs: o.RootCAs}, ForceAttemptHTTP2: true,
		}}
	}
	// /v1/health needs no token; with it (or from a server without one)
	// it names the profile and the index. A wrong token is refused at the
	// first operation (query.New reads the profile at once).
	var h struct {
		Status, Profile string
		Index           string
	}
	if err := db.call(ctx, "GET", wire.PathHealth, nil, &h); err != nil {
		return nil, err
	}
	db.identity = h.Index
	return db, nil
}

// userinfo matches the user information of a location that does not parse
// as a URL, up to the password's end.
var userinfo = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*://[^/@:]*):[^/@]*@`)

// Redact returns location as it may be shown in errors and logs: the
// password of http://user:password@host is replaced by "xxxxx".
func Redact(location string) string {
	u, err := url.Parse(location)
	if err != nil {
		return userinfo.ReplaceAllString(location, "${1}:xxxxx@")
	}
	if _, ok := u.User.Password(); !ok {
		return location // as written (url.URL.String would lower-case the scheme)
	}
	return u.Redacted()
}

// call sends a request and decodes a JSON answer into out (when not nil);
// an error answer becomes the store sentinel of its kind.
func (db *DB) call(ctx context.Context, method, path string, body []byte, out any) error {
	return db.callKey(ctx, method, path, body, "", out)
}

// callKey is call with an Idempotency-Key (none when key is empty).
func (db *DB) callKey(ctx context.Context, method, path string, body []byte, key string, out any) error {
	resp, err := db.doKey(ctx, method, path, body, key)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if b, ok := out.(*[]byte); ok {
		*b, err = io.ReadAll(resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (db *DB) do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	return db.doKey(ctx, method, path, body, "")
}

func (db *DB) doKey(ctx context.Context, method, path string, body []byte, key string) (*http.Response, error) {
	if db.closed.Load() {
		return nil, store.ErrClosed
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var cancel context.CancelFunc = func() {}
	// Streams (scan, load, backup) take as long as they take.
	if p, _, _ := strings.Cut(path, "?"); p != wire.PathScan && p != wire.PathLoad && p != wire.PathBackup {
		ctx, cancel = context.WithTimeout(ctx, db.o.Timeout)
	}
	req, err := http.NewRequestWithContext(ctx, method, db.base+path, bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, err
	}
	if key != "" {
		req.Header.Set(wire.HeaderIdempotencyKey, wire.FormatKey(key))
		// A batch with a key is meant for the index Open found: resent
		// after a crash, it must not reach another served here since.
		if db.identity != "" {
			req.Header.Set(wire.HeaderIndex, db.identity)
		}
	}
	return db.send(req, cancel)
}

func (db *DB) send(req *http.Request, cancel context.CancelFunc) (*http.Response, error) {
	if db.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+db.o.Token)
	}
	req.Header.Set("Content-Type", wire.ContentTypeBinary)
	resp, err := db.client.Do(req)
	if err != nil {
		cancel()
		if strings.HasPrefix(db.shown, "https://") && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
			return nil, fmt.Errorf("remote: %s: the server speaks plain HTTP: use %s (%w)", db.shown, "http://"+strings.TrimPrefix(db.shown, "https://"), err)
		}
		return nil, fmt.Errorf("remote: %s: %w", db.shown, err)
	}
	resp.Body = cancelOnClose{resp.Body, cancel}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		// Go's HTTPS server answers a plain HTTP request so, not in JSON.
		if resp.StatusCode == http.StatusBadRequest && bytes.HasPrefix(b, []byte("Client sent an HTTP request to an HTTPS server")) {
			return nil, fmt.Errorf("%w: use %s", ErrServerSpeaksHTTPS, "https://"+strings.TrimPrefix(db.shown, "http://"))
		}
		kind, msg, err := wire.ParseErrorBody(b)
		if err != nil {
			// Not a urlhash server's answer (a proxy's, another
			// server's): what it said, not why it is no JSON.
			return nil, fmt.Errorf("remote: %s: %s (not a urlhash server's answer: %q)", db.shown, resp.Status, firstLine(b))
		}
		if resp.StatusCode == http.StatusUnauthorized {
			return nil, fmt.Errorf("%w (from %s: %s)", ErrUnauthorized, db.shown, msg)
		}
		if s := wire.KindError(kind); s != nil {
			return nil, fmt.Errorf("%w (from %s: %s)", s, db.shown, msg)
		}
		return nil, fmt.Errorf("remote: %s: %s: %s", db.shown, resp.Status, msg)
	}
	return resp, nil
}

// firstLine returns the first line of an answer's body, at most 200 bytes.
func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return string(b[:min(len(b), 200)])
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error { err := c.ReadCloser.Close(); c.cancel(); return err }

// Get implements store.Backend.
func (db *DB) Get(ctx context.Context, h hashkey.Hash) (store.Value, error) {
	var b []byte
	if err := db.call(ctx, "POST", wire.PathGet, h[:], &b); err != nil {
		return store.Value{}, err
	}
	e, _, err := wire.DecodeEntry(b)
	return e.Value, err
}

// GetBatch implements store.Backend: one request (/v1/get-batch). A
// server older than that endpoint (no_endpoint) is asked one Get a hash,
// from then on.
func (db *DB) GetBatch(ctx context.Context, hs []hashkey.Hash) ([]store.Value, []bool, error) {
	vs, found := make([]store.Value, len(hs)), make([]bool, len(hs))
	// In parts of at most wire.MaxGetBatch, the most a server answers.
	for start := 0; start < len(hs) && !db.noGetBatch.Load(); start += wire.MaxGetBatch {
		part := hs[start:min(start+wire.MaxGetBatch, len(hs))]
		var b []byte
		err := db.call(ctx, "POST", wire.PathGetBatch, wire.AppendHashes(nil, part), &b)
		if err == nil {
			pv, pf, err := wire.ParseGetAnswer(b, part)
			if err != nil {
				return nil, nil, fmt.Errorf("remote: %s: %w", db.shown, err)
			}
			copy(vs[start:], pv)
			copy(found[start:], pf)
			if start+len(part) == len(hs) {
				return vs, found, nil
			}
			continue
		}
		if !errors.Is(err, wire.ErrNoEndpoint) || start > 0 {
			return nil, nil, err
		}
		db.noGetBatch.Store(true)
	}
	for i, h := range hs {
		v, err := db.Get(ctx, h)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, nil, err
		default:
			vs[i], found[i] = v, true
		}
	}
	return vs, found, nil
}

// HasBatch implements store.Backend.
func (db *DB) HasBatch(ctx context.Context, hs []hashkey.Hash) ([]bool, error) {
	var b []byte
	if err := db.call(ctx, "POST", wire.PathHas, wire.AppendHashes(nil, hs), &b); err != nil {
		return nil, err
	}
	return db.bools(b, len(hs))
}

// bools reads a batch answer to n questions.
func (db *DB) bools(b []byte, n int) ([]bool, error) {
	out, err := wire.ParseBools(b, n)
	if err != nil {
		return nil, fmt.Errorf("remote: %s: %w", db.shown, err)
	}
	return out, nil
}

// Match implements store.Backend.
func (db *DB) Match(ctx context.Context, h hashkey.Hash) (store.Match, bool, error) {
	var b []byte
	err := db.call(ctx, "POST", wire.PathMatch, h[:], &b)
	if errors.Is(err, store.ErrNotFound) {
		return store.Match{}, false, nil
	}
	if err != nil {
		return store.Match{}, false, err
	}
	e, _, err := wire.DecodeEntry(b)
	if err != nil {
		return store.Match{}, false, err
	}
	return store.Match{Len: e.Len, Value: e.Value}, true, nil
}

// Scan implements store.Backend: a streamed JSONL answer.
func (db *DB) Scan(ctx context.Context, prefix []byte, bits, limit int, fn func(store.Entry) error) error {
	q := url.Values{}
	q.Set(wire.ParamPrefix, hex.EncodeToString(prefix))
	q.Set(wire.ParamBits, strconv.Itoa(bits))
	q.Set(wire.ParamLimit, strconv.Itoa(limit))
	resp, err := db.do(ctx, "GET", wire.PathScan+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var fnErr error
	err = wire.ReadStream(resp.Body, func(e store.Entry) error {
		fnErr = fn(e)
		return fnErr
	})
	var se *wire.StreamError
	switch {
	case err == nil || err == fnErr:
		return err
	case errors.As(err, &se):
		return fmt.Errorf("%w (from %s: scan: %s)", store.ErrCorrupt, db.shown, se.Msg)
	}
	return fmt.Errorf("remote: %s: scan: %w", db.shown, err)
}

// prefixQuery returns the query of a prefix: prefix (hex), then bits.
func prefixQuery(prefix []byte, bits int) string {
	return wire.ParamPrefix + "=" + hex.EncodeToString(prefix) + "&" + wire.ParamBits + "=" + strconv.Itoa(bits)
}

// Count implements store.Backend.
func (db *DB) Count(ctx context.Context, prefix []byte, bits int) (full, prefixes int64, err error) {
	var c struct{ Full, Prefixes int64 }
	err = db.call(ctx, "GET", wire.PathCount+"?"+prefixQuery(prefix, bits), nil, &c)
	return c.Full, c.Prefixes, err
}

// PutBatch implements store.Backend; durable on return.
func (db *DB) PutBatch(ctx context.Context, es []store.Entry) error {
	if db.o.ReadOnly {
		return store.ErrReadOnly
	}
	b, err := wire.AppendEntries(nil, es)
	if err != nil {
		return err
	}
	return db.call(ctx, "POST", wire.PathPut, b, nil)
}

// AddBatch implements store.Backend; durable on return.
func (db *DB) AddBatch(ctx context.Context, es []store.Entry) ([]bool, error) {
	return db.answered(ctx, wire.PathAdd, es, "")
}

// Delete implements store.Backend; durable on return.
func (db *DB) Delete(ctx context.Context, e store.Entry) error {
	if db.o.ReadOnly {
		return store.ErrReadOnly
	}
	b, err := wire.AppendEntries(nil, []store.Entry{e})
	if err != nil {
		return err
	}
	return db.call(ctx, "POST", wire.PathDelete, b, nil)
}

// Load implements store.Backend: the entries stream to the server as
// JSONL; durable on return.
func (db *DB) Load(ctx context.Context, seq iter.Seq[store.Entry]) (store.LoadResult, error) {
	if db.o.ReadOnly {
		return store.LoadResult{}, store.ErrReadOnly
	}
	if db.closed.Load() {
		return store.LoadResult{}, store.ErrClosed
	}
	pr, pw := io.Pipe()
	// Whatever ends the request, the writer below stops at its next
	// write and lets seq go.
	defer pr.Close()
	go func() {
		bw := bufio.NewWriterSize(pw, 256<<10)
		var line []byte
		for e := range seq {
			if err := e.Check(); err != nil {
				pw.CloseWithError(err)
				return
			}
			line = store.AppendJSONL(line[:0], &e)
			if _, err := bw.Write(line); err != nil {
				return
			}
		}
		pw.CloseWithError(bw.Flush())
	}()
	req, err := http.NewRequestWithContext(ctx, "POST", db.base+wire.PathLoad, pr)
	if err != nil {
		return store.LoadResult{}, err
	}
	resp, err := db.send(req, func() {})
	if err != nil {
		return store.LoadResult{}, err
	}
	defer resp.Body.Close()
	var res store.LoadResult
	return res, json.NewDecoder(resp.Body).Decode(&res)
}

// Stats implements store.Backend.
func (db *DB) Stats(ctx context.Context) (store.Stats, error) {
	s, err := db.ServerStats(ctx)
	return s.Store(), err
}

// ServerStats returns the server's whole /v1/stats answer: Stats, and the
// index's filter and file figures when the server serves a Badger index
// (zero otherwise).
func (db *DB) ServerStats(ctx context.Context) (wire.Stats, error) {
	var s wire.Stats
	return s, db.call(ctx, "GET", wire.PathStats, nil, &s)
}

// Verify implements store.Backend.
func (db *DB) Verify(ctx context.Context) error {
	return db.call(ctx, "POST", wire.PathVerify, nil, nil)
}

// Sync implements store.Backend. Every write is durable when it returns
// already; Sync asks the server anyway, for writes other clients made.
func (db *DB) Sync(ctx context.Context) error { return db.call(ctx, "POST", wire.PathSync, nil, nil) }

// Close releases the client's connections; the server keeps the index.
// Later calls return store.ErrClosed.
func (db *DB) Close() error {
	db.closed.Store(true)
	db.client.CloseIdleConnections()
	return nil
}

// Identity returns the identity of the index the server served when Open
// connected (index.DB.Identity), "" for a server or an index that tells
// none. Writes sent with an Idempotency-Key name it (wire.HeaderIndex): a
// server that serves another index since refuses them with an error
// wrapping wire.ErrIndexMismatch.
func (db *DB) Identity() string { return db.identity }

// Path returns the server's location as it may be shown: without its
// password (Redact).
func (db *DB) Path() string { return db.shown }

// Profile implements store.Backend: the profile the server's index
// records. A server that does not answer is an error, never "" (which
// would mean the default profile).
func (db *DB) Profile(ctx context.Context) (string, error) {
	var b []byte
	if err := db.call(ctx, "GET", wire.PathProfile, nil, &b); err != nil {
		return "", err
	}
	return string(b), nil
}

// SetProfile implements store.Backend.
func (db *DB) SetProfile(ctx context.Context, name string) error {
	if db.o.ReadOnly {
		if name == "" {
			return nil
		}
		recorded, err := db.Profile(ctx)
		if err != nil {
			return err
		}
		if name == recorded {
			return nil // nothing to record: as on a read-only directory
		}
		return store.ErrReadOnly
	}
	return db.call(ctx, "POST", wire.PathProfile, []byte(name), nil)
}

// Backup writes a backup of the server's index to w, the file "urlhash
// backup" writes (index.DB.Backup): the changes after version since (0:
// every entry). It returns the since of the next backup of the chain. An
// answer cut short is an error (and the part written is no backup:
// restore refuses it).
func (db *DB) Backup(ctx context.Context, w io.Writer, since uint64) (until uint64, err error) {
	resp, err := db.do(ctx, "GET", wire.PathBackup+"?"+wire.ParamSince+"="+strconv.FormatUint(since, 10), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return 0, fmt.Errorf("remote: %s: backup: %w", db.shown, err)
	}
	if e := resp.Trailer.Get(wire.TrailerError); e != "" {
		return 0, fmt.Errorf("remote: %s: backup: %s", db.shown, e)
	}
	v := resp.Trailer.Get(wire.TrailerBackupUntil)
	if until, err = strconv.ParseUint(v, 10, 64); err != nil {
		return 0, fmt.Errorf("remote: %s: backup cut short (no %s trailer)", db.shown, wire.TrailerBackupUntil)
	}
	return until, nil
}
