package wire

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urlhash/urlhash/store"
)

// ErrBadRequest is returned, wrapped, for a request body that does not
// decode (400 bad_request). Its text names the server, which says it.
var ErrBadRequest = errors.New("server: bad request")

// ErrKeyReused is returned, wrapped, for a request whose Idempotency-Key
// was used by a request with another method, path, query or body (422
// key_reused).
var ErrKeyReused = errors.New("server: idempotency key reused for another request")

// ErrNoEndpoint is returned, wrapped, for a request to a path the server
// serves nothing at (404 no_endpoint): an older or newer server, or a
// wrong base URL; never "not found" about a key.
var ErrNoEndpoint = errors.New("server: no such endpoint")

// ErrMethodNotAllowed is returned, wrapped, for a request whose path the
// server serves with other methods only (405 method_not_allowed; the
// answer's Allow header lists them).
var ErrMethodNotAllowed = errors.New("server: method not allowed")

// ErrIndexMismatch is returned, wrapped, for a request whose HeaderIndex
// names another index than the one served (412 index_mismatch): a write
// meant for one index never reaches another served at the same address.
var ErrIndexMismatch = errors.New("server: another index is served here")

// ErrBadAnswer is returned, wrapped, for an answer that does not decode:
// the client cannot tell what the server did.
var ErrBadAnswer = errors.New("wire: bad answer")

// errorKinds map sentinel errors to the protocol's kinds and statuses, in
// the order they are tried.
var errorKinds = []struct {
	err    error
	kind   string
	status int
}{
	{store.ErrNotFound, "not_found", 404},
	{store.ErrPrefixLength, "prefix_length", 400},
	{store.ErrBadValue, "bad_value", 400},
	{store.ErrInvalidOptions, "invalid", 400},
	{ErrBadRequest, "bad_request", 400},
	{ErrKeyReused, "key_reused", 422},
	{ErrNoEndpoint, "no_endpoint", 404},
	{ErrMethodNotAllowed, "method_not_allowed", 405},
	{ErrIndexMismatch, "index_mismatch", 412},
	{store.ErrTooLarge, "too_large", 413},
	{store.ErrReadOnly, "read_only", 403},
	{store.ErrProfileMismatch, "profile_mismatch", 409},
	{store.ErrDiskFull, "disk_full", 507},
	{store.ErrClosed, "closed", 503},
	{store.ErrCorrupt, "corrupt", 500},
	{store.ErrFormat, "format", 500},
	{store.ErrNoIndex, "no_index", 404},
}

// Kind returns the protocol's kind and HTTP status for err: "internal"
// and 500 for an error of no kind.
func Kind(err error) (string, int) {
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return k.kind, k.status
		}
	}
	return "internal", 500
}

// KindError returns the sentinel error of a kind, or nil.
func KindError(kind string) error {
	for _, k := range errorKinds {
		if k.kind == kind {
			return k.err
		}
	}
	return nil
}

// errorBody is the JSON body of an error answer; its field order is the
// encoding's.
type errorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// AppendErrorBody appends the body of an error answer (Content-Type
// application/json): {"error":MSG,"kind":KIND} and a LF.
func AppendErrorBody(dst []byte, kind, msg string) []byte {
	b, _ := json.Marshal(errorBody{Error: msg, Kind: kind}) // two strings always encode
	return append(append(dst, b...), '\n')
}

// ParseErrorBody decodes the body of an error answer. A body that is no
// error answer is an error wrapping ErrBadAnswer.
func ParseErrorBody(b []byte) (kind, msg string, err error) {
	var e errorBody
	if err := json.Unmarshal(b, &e); err != nil {
		return "", "", fmt.Errorf("%w: error body: %v", ErrBadAnswer, err)
	}
	return e.Kind, e.Error, nil
}
