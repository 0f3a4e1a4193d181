package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/threatlist"
)

// The Web Risk Update API (GET /v1/threatLists:computeDiff) over the list an
// index holds, so that official clients, and urlhash sync, keep a copy of a
// private list: the list synced into the index from Google (its version
// tokens and a few previous versions, see threatlist), or else the index's
// own prefix and full entries.

// webRiskRecommendedNext is the recommendedNextDiff of an answer: how soon
// a client should ask again.
const webRiskRecommendedNext = 30 * time.Minute

// ownListTTL is the default Options.ListRefresh.
const ownListTTL = 10 * time.Second

// webRiskParams maps the snake_case names Google's APIs accept (and the Go
// client sends), and alt, to the names the server reads; other names are
// read as they are.
var webRiskParams = map[string]string{
	"threat_type":                        "threatType",
	"threat_types":                       "threatTypes",
	"version_token":                      "versionToken",
	"hash_prefix":                        "hashPrefix",
	"constraints.supported_compressions": "constraints.supportedCompressions",
	"constraints.max_diff_entries":       "constraints.maxDiffEntries",
	"constraints.max_database_entries":   "constraints.maxDatabaseEntries",
	"alt":                                "$alt",
}

// webRiskQuery returns the request's query parameters under their
// camelCase names.
func webRiskQuery(r *http.Request) url.Values {
	q := url.Values{}
	for k, vs := range r.URL.Query() {
		if n, ok := webRiskParams[k]; ok {
			k = n
		}
		q[k] = append(q[k], vs...)
	}
	return q
}

// enumInts reports whether the client asked for enums as numbers
// ($alt=json;enum-encoding=int, as Google's Node client in REST mode does).
func enumInts(q url.Values) bool {
	return strings.Contains(q.Get("$alt"), "enum-encoding=int")
}

// threatTypeNames are the Web Risk ThreatType values by number.
var threatTypeNames = append([]string{"THREAT_TYPE_UNSPECIFIED"}, webRiskThreatTypes...)

// compressionNames are the Web Risk CompressionType values by number.
var compressionNames = []string{"COMPRESSION_TYPE_UNSPECIFIED", "RAW", "RICE"}

// enumName returns the name of an enum value given as a name or a number,
// or an INVALID_ARGUMENT error naming the parameter.
func enumName(param, v string, names []string) (string, error) {
	n := threatlist.EnumName(v, names)
	if !slices.Contains(names[1:], n) {
		what := "value"
		if strings.HasPrefix(param, "threatType") {
			what = "threat type"
		}
		return "", badWebRiskRequest("%s: unknown %s %q", param, what, v)
	}
	return n, nil
}

// enumValue is an enum in an answer: its name, or its number when the
// client asked for numbers.
func enumValue(name string, names []string, ints bool) any {
	if ints {
		return slices.Index(names, name)
	}
	return name
}

// diffLists is the lists the server answers computeDiff from.
type diffLists struct {
	mu     sync.Mutex
	synced map[string]*threatlist.ListState // read once from Options.ThreatLists
	loaded bool
	own    *threatlist.ListState // built from the index's entries
	ownAt  time.Time
	// bodies caches encoded answers (a million-prefix RESET is megabytes
	// of JSON that every new client asks for), by key; at most
	// bodyCacheBytes in all.
	bodies    map[string][]byte
	bodyBytes int
	bodyMin   int64 // the minute the cached answers were encoded in
}

// bodyCacheBytes bounds the encoded answers the server keeps.
const bodyCacheBytes = 32 << 20

// cached returns the answer for key cached in minute min (answers carry
// their recommendedNextDiff: they are reused within a minute only).
func (d *diffLists) cached(key string, min int64) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bodyMin != min {
		return nil, false
	}
	b, ok := d.bodies[key]
	return b, ok
}

// keep caches an answer encoded in minute min, dropping the others when
// they are older or the cache is full.
func (d *diffLists) keep(key string, min int64, b []byte) {
	if len(b) > bodyCacheBytes/2 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bodies == nil || d.bodyMin != min || d.bodyBytes+len(b) > bodyCacheBytes {
		d.bodies, d.bodyBytes, d.bodyMin = map[string][]byte{}, 0, min
	}
	d.bodies[key] = b
	d.bodyBytes += len(b)
}

// diffList returns the state of the list of threat type t: the synced list, or
// the index's own list when t is the server's threat type and nothing was
// synced; nil when there is none.
func (s *Server) diffList(ctx context.Context, t string) (*threatlist.ListState, error) {
	d := &s.diff
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.loaded {
		if s.o.ThreatLists != nil {
			m, err := s.o.ThreatLists()
			if err != nil {
				return nil, err
			}
			d.synced = m
		}
		d.loaded = true
	}
	if ls := d.synced[threatlist.WebRiskName(t)]; ls != nil {
		return ls, nil
	}
	if len(d.synced) > 0 || t != s.o.threatType() {
		return nil, nil
	}
	ttl := s.o.ListRefresh
	if ttl == 0 {
		ttl = ownListTTL
	}
	if d.own != nil && time.Since(d.ownAt) < ttl {
		return d.own, nil
	}
	var b threatlist.Builder
	err := s.st.Scan(ctx, nil, 0, 0, func(e store.Entry) error { return b.Add(e.Key()) })
	if err != nil {
		return nil, err
	}
	l := b.List()
	sum := l.Checksum()
	version := ownVersion(sum)
	if d.own == nil {
		d.own = &threatlist.ListState{Name: threatlist.WebRiskName(t), Version: version, List: l}
	} else if string(d.own.Version) != string(version) {
		// The index changed: the list held so far becomes a previous
		// version, to which clients holding it get a DIFF.
		d.own = d.own.Next(version, l)
	}
	d.ownAt = time.Now()
	return d.own, nil
}

// ownVersion is the version token of the index's own list: the leading
// bytes of its checksum, so that it changes with the list and survives a
// restart.
func ownVersion(sum [sha256.Size]byte) []byte { return append([]byte("own"), sum[:13]...) }

// computeDiff answers GET /v1/threatLists:computeDiff?threatType=T&versionToken=V:
// a DIFF from the version the client holds when the server keeps it, a
// RESET otherwise, raw or Rice-coded as the client supports.
func (s *Server) computeDiff(w http.ResponseWriter, r *http.Request) error {
	q := webRiskQuery(r)
	tv := q.Get("threatType")
	if tv == "" {
		return badWebRiskRequest("threatType is required")
	}
	t, err := enumName("threatType", tv, threatTypeNames)
	if err != nil {
		return err
	}
	useRice := false
	for _, c := range q["constraints.supportedCompressions"] {
		n, err := enumName("constraints.supportedCompressions", c, compressionNames)
		if err != nil {
			return err
		}
		useRice = useRice || n == "RICE"
	}
	for _, p := range []string{"constraints.maxDiffEntries", "constraints.maxDatabaseEntries"} {
		if v := q.Get(p); v != "" {
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				return badWebRiskRequest("%s: %q is not a non-negative integer", p, v)
			}
		}
	}
	var token []byte
	if v := q.Get("versionToken"); v != "" {
		if token, err = threatlist.DecodeBase64(v); err != nil {
			return badWebRiskRequest("versionToken: %v", err)
		}
	}
	ls, err := s.diffList(r.Context(), t)
	if err != nil {
		return err
	}
	if ls == nil {
		return &webRiskError{code: http.StatusNotFound, status: "NOT_FOUND", internalCause: store.ErrNotFound,
			msg: fmt.Sprintf("no %s list is served here", t)}
	}
	if v := q.Get("constraints.maxDatabaseEntries"); v != "" {
		// The list is served whole or not at all: a client that cannot
		// hold it is told so.
		if n, _ := strconv.Atoi(v); n > 0 && ls.List.Len() > n {
			return badWebRiskRequest("constraints.maxDatabaseEntries %d: the list holds %d entries", n, ls.List.Len())
		}
	}
	old, kept := ls.At(token)
	if !kept {
		token = nil
	}
	// An answer depends on the list's version, the client's and the
	// encodings asked for; recommendedNextDiff is the time it was
	// encoded (cached answers are reused for a minute at most).
	ints := enumInts(q)
	key := fmt.Sprintf("%s\x00%x\x00%x\x00%v%v", ls.Name, ls.Version, token, useRice, ints)
	minute := time.Now().Unix() / 60
	if b, ok := s.diff.cached(key, minute); ok {
		w.Header().Set("Content-Type", "application/json")
		_, err := w.Write(b)
		return err
	}
	resp := threatlist.EncodeDiff(old, ls.List, ls.Version, threatlist.DiffOptions{Rice: useRice, Next: time.Now().Add(webRiskRecommendedNext)})
	body := resp.AppendJSON(make([]byte, 0, resp.EncodedLen()), ints)
	body = append(body, '\n')
	s.diff.keep(key, minute, body)
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(body)
	return err
}

// webRiskKey returns the API key of a Web Risk request: the key query
// parameter or the x-goog-api-key header.
func webRiskKey(r *http.Request) (string, bool) {
	if k := r.Header.Get("X-Goog-Api-Key"); k != "" {
		return k, true
	}
	k := r.URL.Query().Get("key")
	return k, k != ""
}
