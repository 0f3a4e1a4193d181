package threatlist

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Default endpoints of the two APIs.
const (
	WebRiskEndpoint      = "https://webrisk.googleapis.com"
	SafeBrowsingEndpoint = "https://safebrowsing.googleapis.com"
)

// DefaultMaxResponse is the default Client.MaxResponse (128 MiB): a RESET
// of a million raw 4-byte prefixes is 5.3 MB of JSON, Rice-coded 2.3 MB.
const DefaultMaxResponse = 128 << 20

// Client fetches list updates over HTTP.
type Client struct {
	// Endpoint is the API's base URL, such as WebRiskEndpoint or a urlhash
	// server's address. Required.
	Endpoint string
	// Key is the API key, sent as the key= query parameter (omitted when
	// empty).
	Key string
	// HTTP is the client requests go through. Default
	// http.DefaultClient.
	HTTP *http.Client
	// MaxResponse bounds the bytes of an answer. Default
	// DefaultMaxResponse.
	MaxResponse int64
}

// DiffRequest is a computeDiff request.
type DiffRequest struct {
	// ThreatType is MALWARE, SOCIAL_ENGINEERING, UNWANTED_SOFTWARE or
	// SOCIAL_ENGINEERING_EXTENDED_COVERAGE.
	ThreatType string
	// Version is the version token the client holds; empty asks for a
	// RESET.
	Version []byte
	// MaxDiffEntries and MaxDatabaseEntries are the request's
	// constraints; zero leaves them out.
	MaxDiffEntries, MaxDatabaseEntries int
}

// ComputeDiff asks GET {Endpoint}/v1/threatLists:computeDiff for the update
// from req.Version, and decodes it. An HTTP error answer wraps ErrServer; an
// answer that does not decode wraps ErrMalformed.
func (c *Client) ComputeDiff(ctx context.Context, req DiffRequest) (*Update, error) {
	q := url.Values{}
	q.Set("threatType", req.ThreatType)
	if len(req.Version) > 0 {
		q.Set("versionToken", base64.StdEncoding.EncodeToString(req.Version))
	}
	q.Add("constraints.supportedCompressions", "RAW")
	q.Add("constraints.supportedCompressions", "RICE")
	if req.MaxDiffEntries > 0 {
		q.Set("constraints.maxDiffEntries", strconv.Itoa(req.MaxDiffEntries))
	}
	if req.MaxDatabaseEntries > 0 {
		q.Set("constraints.maxDatabaseEntries", strconv.Itoa(req.MaxDatabaseEntries))
	}
	var r DiffResponse
	if err := c.get(ctx, "/v1/threatLists:computeDiff", q, &r); err != nil {
		return nil, err
	}
	return r.Decode()
}

// get sends the request and decodes the JSON answer into v.
func (c *Client) get(ctx context.Context, path string, q url.Values, v any) error {
	if c.Endpoint == "" {
		return errors.New("threatlist: Client.Endpoint is required")
	}
	if c.Key != "" {
		q.Set("key", c.Key)
	}
	u := strings.TrimRight(c.Endpoint, "/") + path + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("threatlist: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("threatlist: %s: %w", redact(u), errors.Unwrap(err))
	}
	defer resp.Body.Close()
	max := c.MaxResponse
	if max <= 0 {
		max = DefaultMaxResponse
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return fmt.Errorf("threatlist: %s: reading the answer: %w", redact(u), err)
	}
	if int64(len(body)) > max {
		return fmt.Errorf("%w: %s: answer larger than %d bytes", ErrMalformed, redact(u), max)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
				Status  string `json:"status"`
			} `json:"error"`
		}
		msg := strings.TrimSpace(string(body))
		if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
			msg = e.Error.Status + ": " + e.Error.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return fmt.Errorf("%w: %s: %s: %s", ErrServer, redact(u), resp.Status, msg)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMalformed, redact(u), err)
	}
	return nil
}

// redact drops the query (which holds the key) from a URL for messages.
func redact(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}
