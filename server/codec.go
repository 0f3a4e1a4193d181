package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// ErrBadRequest is returned, wrapped, for a request body that does not
// decode.
var ErrBadRequest = errors.New("server: bad request")

// timesFlag, set in an entry's key-length byte, says that three varints
// follow its data: FirstSeen, LastSeen and Expires in unix seconds (0:
// none). An entry without times is encoded as before they existed.
const timesFlag = 0x80

// AppendEntry appends e in the protocol's entry encoding: the key's length
// (| timesFlag when the value has times), the key, uvarint len(Text),
// Text, uvarint len(Data), Data and, with timesFlag, the times.
func AppendEntry(dst []byte, e *store.Entry) []byte {
	k := e.Key()
	v := &e.Value
	times := v.HasTimes() || !v.Expires.IsZero()
	if times {
		dst = append(dst, byte(len(k))|timesFlag)
	} else {
		dst = append(dst, byte(len(k)))
	}
	dst = append(dst, k...)
	dst = binary.AppendUvarint(dst, uint64(len(v.Text)))
	dst = append(dst, v.Text...)
	dst = binary.AppendUvarint(dst, uint64(len(v.Data)))
	dst = append(dst, v.Data...)
	if times {
		dst = binary.AppendVarint(dst, store.UnixOf(v.FirstSeen))
		dst = binary.AppendVarint(dst, store.UnixOf(v.LastSeen))
		dst = binary.AppendVarint(dst, store.UnixOf(v.Expires))
	}
	return dst
}

// DecodeEntry decodes one entry from the start of b and returns the rest.
// The entry's value aliases b.
func DecodeEntry(b []byte) (store.Entry, []byte, error) {
	var e store.Entry
	if len(b) == 0 {
		return e, nil, fmt.Errorf("%w: empty entry", ErrBadRequest)
	}
	n := int(b[0] &^ timesFlag)
	times := b[0]&timesFlag != 0
	if n > hashkey.Size || len(b) < 1+n {
		return e, nil, fmt.Errorf("%w: key of %d bytes", ErrBadRequest, n)
	}
	copy(e.Hash[:], b[1:1+n])
	e.Len = n
	if err := e.Check(); err != nil || n == 0 {
		return e, nil, fmt.Errorf("%w: key of %d bytes", ErrBadRequest, n)
	}
	b = b[1+n:]
	var err error
	if e.Value.Text, b, err = decodeBytes(b); err != nil {
		return e, nil, err
	}
	if e.Value.Data, b, err = decodeBytes(b); err != nil {
		return e, nil, err
	}
	if times {
		for _, t := range []*time.Time{&e.Value.FirstSeen, &e.Value.LastSeen, &e.Value.Expires} {
			x, k := binary.Varint(b)
			if k <= 0 {
				return e, nil, fmt.Errorf("%w: bad time", ErrBadRequest)
			}
			*t, b = store.Unix(x), b[k:]
		}
	}
	if len(e.Value.Text) == 0 {
		e.Value.Text = nil
	}
	if len(e.Value.Data) == 0 {
		e.Value.Data = nil
	}
	return e, b, nil
}

func decodeBytes(b []byte) ([]byte, []byte, error) {
	l, k := binary.Uvarint(b)
	if k <= 0 || l > uint64(len(b)-k) {
		return nil, nil, fmt.Errorf("%w: bad length", ErrBadRequest)
	}
	return b[k : k+int(l) : k+int(l)], b[k+int(l):], nil
}

// DecodeEntries decodes a body of entries.
func DecodeEntries(b []byte) ([]store.Entry, error) {
	var out []store.Entry
	for len(b) > 0 {
		e, rest, err := DecodeEntry(b)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		b = rest
	}
	return out, nil
}

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
	{store.ErrTooLarge, "too_large", 413},
	{store.ErrReadOnly, "read_only", 403},
	{store.ErrProfileMismatch, "profile_mismatch", 409},
	{store.ErrDiskFull, "disk_full", 507},
	{store.ErrClosed, "closed", 503},
	{store.ErrCorrupt, "corrupt", 500},
	{store.ErrFormat, "format", 500},
	{store.ErrNoIndex, "no_index", 404},
}

// Kind returns the protocol's kind and HTTP status for err.
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
