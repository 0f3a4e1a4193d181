package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// The Web Risk Lookup API (webrisk.googleapis.com/v1, REST), over an index
// of a Safe Browsing list, so that existing Web Risk clients can point at a
// private list: GET /v1/uris:search and GET /v1/hashes:search, with the
// request parameters and JSON answers of the Web Risk v1 reference.

// webRiskThreatTypes are the threat types of the Web Risk v1 API.
var webRiskThreatTypes = []string{"MALWARE", "SOCIAL_ENGINEERING", "UNWANTED_SOFTWARE", "SOCIAL_ENGINEERING_EXTENDED_COVERAGE"}

// IsWebRiskThreatType reports whether t names a Web Risk v1 threat type
// (MALWARE, SOCIAL_ENGINEERING, UNWANTED_SOFTWARE or
// SOCIAL_ENGINEERING_EXTENDED_COVERAGE).
func IsWebRiskThreatType(t string) bool { return slices.Contains(webRiskThreatTypes, t) }

// webRiskCacheFor is how long a client may cache an answer (expireTime,
// negativeExpireTime): a private list changes when its owner writes, so
// answers are cached briefly.
const webRiskCacheFor = 5 * time.Minute

// webRiskMaxHashes bounds the full hashes one hashes:search answers.
const webRiskMaxHashes = 1000

// webRiskError is an error in the shape of Google APIs, which Web Risk
// clients parse: {"error": {"code", "message", "status"}}.
type webRiskError struct {
	code          int
	status, msg   string
	internalCause error
}

func (e *webRiskError) Error() string { return e.msg }

func (e *webRiskError) Unwrap() error { return e.internalCause }

func badWebRiskRequest(format string, args ...any) error {
	return &webRiskError{code: http.StatusBadRequest, status: "INVALID_ARGUMENT", msg: fmt.Sprintf(format, args...), internalCause: wire.ErrBadRequest}
}

// webRisk wraps a Web Risk handler: its errors become *webRiskError,
// which handle answers in the Google API shape.
func webRisk(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		err := h(w, r)
		if _, ok := err.(*webRiskError); ok || err == nil {
			return err
		}
		_, status := wire.Kind(err)
		e := &webRiskError{code: status, status: "INTERNAL", msg: err.Error(), internalCause: err}
		if status < 500 {
			e.status = "FAILED_PRECONDITION"
		}
		return e
	}
}

// write answers the error.
func (e *webRiskError) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": e.code, "message": e.msg, "status": e.status}})
}

// webRiskList returns the Safe Browsing profile of the index and whether
// the request asks for the list's threat type; an index of another profile
// is an error. Threat types may be names or numbers (threatTypes=1), under
// camelCase or snake_case names (threat_types), as Google's API takes them.
func (s *Server) webRiskList(ctx context.Context, q url.Values) (*safebrowsing.Profile, bool, error) {
	var types []string
	for _, v := range q["threatTypes"] {
		t, err := enumName("threatTypes", v, threatTypeNames)
		if err != nil {
			return nil, false, err
		}
		types = append(types, t)
	}
	if len(types) == 0 {
		return nil, false, badWebRiskRequest("threatTypes is required")
	}
	recorded, err := s.st.Profile(ctx)
	if err != nil {
		return nil, false, err
	}
	profile, err := query.ParseProfile(recorded)
	p, ok := profile.(*safebrowsing.Profile)
	if err != nil || !ok || query.ProfileRecord(p) != recorded {
		return nil, false, &webRiskError{code: http.StatusBadRequest, status: "FAILED_PRECONDITION", internalCause: store.ErrProfileMismatch,
			msg: fmt.Sprintf("this index is no Safe Browsing list of this build (profile %q, want webrisk or safebrowsing-v5;unicode=%s)", recorded, safebrowsing.WebRisk.UnicodeVersion())}
	}
	return p, slices.Contains(types, s.o.threatType()), nil
}

func (o *Options) threatType() string {
	if o.ThreatType == "" {
		return "MALWARE"
	}
	return o.ThreatType
}

func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// checkURI refuses (400, with the reason) a URI that does not parse as a
// URL (net/url), "http://" assumed when it names no scheme. Safe
// Browsing's canonicalisation turns nearly any string into expressions
// ("not a url" into the host not%20a%20url): without the check, a
// client's mistake would be answered "not listed".
func checkURI(uri string) error {
	raw := strings.TrimSpace(uri)
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err == nil && u.Host == "" {
		err = errors.New("no host")
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return badWebRiskRequest("uri %q does not parse: %v", uri, err)
	}
	return nil
}

// searchURIs answers GET /v1/uris:search?uri=URI&threatTypes=TYPE: the
// URI's host-suffix/path-prefix expressions under the index's profile, a
// threat when a stored full hash is one of theirs; {} when none is.
func (s *Server) searchURIs(w http.ResponseWriter, r *http.Request) error {
	q := webRiskQuery(r)
	p, asked, err := s.webRiskList(r.Context(), q)
	if err != nil {
		return err
	}
	uri := q.Get("uri")
	if uri == "" {
		return badWebRiskRequest("uri is required")
	}
	if err := checkURI(uri); err != nil {
		return err
	}
	exprs, err := p.Hashes(uri)
	if err != nil {
		return badWebRiskRequest("uri: %v", err)
	}
	type threatURI struct {
		ThreatTypes []any  `json:"threatTypes"`
		ExpireTime  string `json:"expireTime"`
	}
	var out struct {
		Threat *threatURI `json:"threat,omitempty"`
	}
	if asked {
		hs := make([]hashkey.Hash, len(exprs))
		for i, e := range exprs {
			hs[i] = e.Hash
		}
		found, err := s.st.HasBatch(r.Context(), hs)
		if err != nil {
			return err
		}
		if slices.Contains(found, true) {
			out.Threat = &threatURI{ThreatTypes: []any{enumValue(s.o.threatType(), threatTypeNames, enumInts(q))}, ExpireTime: timestamp(time.Now().Add(webRiskCacheFor))}
		}
	}
	return writeJSON(w, out)
}

// searchHashes answers GET /v1/hashes:search?hashPrefix=BASE64&threatTypes=TYPE:
// the stored full hashes that start with the 4..32-byte prefix.
func (s *Server) searchHashes(w http.ResponseWriter, r *http.Request) error {
	q := webRiskQuery(r)
	_, asked, err := s.webRiskList(r.Context(), q)
	if err != nil {
		return err
	}
	prefix, err := decodeHashPrefix(q.Get("hashPrefix"))
	if err != nil {
		return err
	}
	type threatHash struct {
		ThreatTypes []any  `json:"threatTypes"`
		Hash        string `json:"hash"`
		ExpireTime  string `json:"expireTime"`
	}
	var out struct {
		Threats            []threatHash `json:"threats,omitempty"`
		NegativeExpireTime string       `json:"negativeExpireTime"`
	}
	now := time.Now()
	out.NegativeExpireTime = timestamp(now.Add(webRiskCacheFor))
	if asked {
		expire := timestamp(now.Add(webRiskCacheFor))
		err := s.st.Scan(r.Context(), prefix, 8*len(prefix), webRiskMaxHashes, func(e store.Entry) error {
			if !e.IsPrefix() {
				out.Threats = append(out.Threats, threatHash{ThreatTypes: []any{enumValue(s.o.threatType(), threatTypeNames, enumInts(q))},
					Hash: base64.StdEncoding.EncodeToString(e.Hash[:]), ExpireTime: expire})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return writeJSON(w, out)
}

// decodeHashPrefix decodes a hashPrefix parameter: base64, web-safe as the
// API asks of URIs or standard, padded or not; 4 to 32 bytes.
func decodeHashPrefix(s string) ([]byte, error) {
	if s == "" {
		return nil, badWebRiskRequest("hashPrefix is required")
	}
	enc := base64.RawURLEncoding
	if strings.ContainsAny(s, "+/") {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, badWebRiskRequest("hashPrefix %q: not base64: %v", s, err)
	}
	if len(b) < safebrowsing.MinPrefixLen || len(b) > hashkey.Size {
		return nil, badWebRiskRequest("hashPrefix %q: %d bytes, want 4 to 32", s, len(b))
	}
	return b, nil
}
