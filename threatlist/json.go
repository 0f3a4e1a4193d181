package threatlist

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urlhash/urlhash/threatlist/rice"
)

// The JSON of the two protocols, as Google's REST references give it:
// int64 and uint64 fields travel as strings (numbers are accepted too),
// bytes as standard base64 (URL-safe accepted), zero values are omitted.

// Bytes is a bytes field: base64 in JSON.
type Bytes []byte

// MarshalJSON writes standard, padded base64 (one allocation: a list's
// hashes are megabytes).
func (b Bytes) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(b))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, b)
	return append(out, '"'), nil
}

// EncodedLen returns about how many bytes r takes in JSON, to size a
// buffer.
func (r *DiffResponse) EncodedLen() int {
	n := 1024
	if a := r.Additions; a != nil {
		for _, raw := range a.RawHashes {
			n += base64.StdEncoding.EncodedLen(len(raw.RawHashes)) + 64
		}
		if a.RiceHashes != nil {
			n += base64.StdEncoding.EncodedLen(len(a.RiceHashes.EncodedData)) + 128
		}
	}
	if rm := r.Removals; rm != nil {
		if rm.RawIndices != nil {
			n += 11 * len(rm.RawIndices.Indices)
		}
		if rm.RiceIndices != nil {
			n += base64.StdEncoding.EncodedLen(len(rm.RiceIndices.EncodedData)) + 128
		}
	}
	return n
}

// UnmarshalJSON reads standard or URL-safe base64, padded or not.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	d, err := DecodeBase64(s)
	if err != nil {
		return err
	}
	*b = d
	return nil
}

// DecodeBase64 decodes standard or URL-safe base64, padded or not, as
// Google's APIs accept it.
func DecodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64: %v", err)
	}
	return b, nil
}

// Uint64 is an int64 or uint64 field: a decimal string in JSON (a number
// is accepted).
type Uint64 uint64

// MarshalJSON writes a decimal string.
func (u Uint64) MarshalJSON() ([]byte, error) {
	return json.Marshal(strconv.FormatUint(uint64(u), 10))
}

// UnmarshalJSON reads a decimal string or number.
func (u *Uint64) UnmarshalJSON(data []byte) error {
	s := string(bytes.Trim(data, `"`))
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an unsigned integer: %s", data)
	}
	*u = Uint64(v)
	return nil
}

// Enum is an enum field: its name in JSON; a number is accepted, as with
// $alt=json;enum-encoding=int.
type Enum string

// UnmarshalJSON reads a name or a number (kept as its decimal digits;
// see EnumName).
func (e *Enum) UnmarshalJSON(data []byte) error {
	*e = Enum(bytes.Trim(data, `"`))
	return nil
}

// RiceDelta is Web Risk's RiceDeltaEncoding (and Safe Browsing v5's
// RiceDeltaEncoded32Bit, whose firstValue is a number and entriesCount
// the count: both spellings are read).
type RiceDelta struct {
	FirstValue    Uint64 `json:"firstValue,omitempty"`
	RiceParameter int    `json:"riceParameter,omitempty"`
	EntryCount    int    `json:"entryCount,omitempty"`
	EncodedData   Bytes  `json:"encodedData,omitempty"`
}

// RawHashes is Web Risk's RawHashes: hashes of one length, concatenated.
type RawHashes struct {
	PrefixSize int   `json:"prefixSize,omitempty"`
	RawHashes  Bytes `json:"rawHashes,omitempty"`
}

// DiffResponse is the answer of GET /v1/threatLists:computeDiff.
type DiffResponse struct {
	ResponseType Enum `json:"responseType,omitempty"`
	Additions    *struct {
		RawHashes  []RawHashes `json:"rawHashes,omitempty"`
		RiceHashes *RiceDelta  `json:"riceHashes,omitempty"`
	} `json:"additions,omitempty"`
	Removals *struct {
		RawIndices *struct {
			Indices []int32 `json:"indices,omitempty"`
		} `json:"rawIndices,omitempty"`
		RiceIndices *RiceDelta `json:"riceIndices,omitempty"`
	} `json:"removals,omitempty"`
	NewVersionToken Bytes `json:"newVersionToken,omitempty"`
	Checksum        *struct {
		Sha256 Bytes `json:"sha256,omitempty"`
	} `json:"checksum,omitempty"`
	RecommendedNextDiff string `json:"recommendedNextDiff,omitempty"`
}

// Update is one list's update, decoded.
type Update struct {
	// Reset says the list starts from empty (Web Risk RESET; v5
	// partialUpdate false).
	Reset bool
	// Removals are indices into the current list's lexicographic order.
	Removals []int32
	// Additions are the entries to add.
	Additions *List
	// Version is the new version token.
	Version []byte
	// Checksum is the SHA-256 of the list after the update. Nil (v5): the
	// list did not change.
	Checksum []byte
	// Next is when to ask again: Web Risk's recommendedNextDiff, or now
	// plus v5's minimumWaitDuration. Zero when the server gave none.
	Next time.Time
}

// EnumName maps an enum value sent as a number to its name in names
// (names[n] is the name of n); a name is returned unchanged.
func EnumName(v string, names []string) string {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n >= len(names) {
		return v
	}
	return names[n]
}

// responseTypes are the names of Web Risk's ResponseType values, by number
// (read only).
var responseTypes = []string{"RESPONSE_TYPE_UNSPECIFIED", "DIFF", "RESET"}

// Decode checks the answer and decodes it into an Update.
func (r *DiffResponse) Decode() (*Update, error) {
	u := &Update{Version: r.NewVersionToken}
	switch EnumName(string(r.ResponseType), responseTypes) {
	case "RESET":
		u.Reset = true
	case "DIFF":
	default:
		return nil, fmt.Errorf("%w: responseType %q", ErrMalformed, r.ResponseType)
	}
	if r.Checksum == nil || len(r.Checksum.Sha256) != 32 {
		return nil, fmt.Errorf("%w: no 32-byte checksum.sha256", ErrMalformed)
	}
	u.Checksum = r.Checksum.Sha256
	if r.RecommendedNextDiff != "" {
		t, err := time.Parse(time.RFC3339Nano, r.RecommendedNextDiff)
		if err != nil {
			return nil, fmt.Errorf("%w: recommendedNextDiff %q", ErrMalformed, r.RecommendedNextDiff)
		}
		u.Next = t
	}
	var b Builder
	if a := r.Additions; a != nil {
		for i, raw := range a.RawHashes {
			if err := b.AddConcat(raw.PrefixSize, raw.RawHashes); err != nil {
				return nil, fmt.Errorf("%w: additions.rawHashes[%d]: %v", ErrMalformed, i, err)
			}
		}
		if a.RiceHashes != nil {
			vs, err := decodeRice32(a.RiceHashes, 2, 28)
			if err != nil {
				return nil, fmt.Errorf("%w: additions.riceHashes: %v", ErrMalformed, err)
			}
			// Web Risk (and v4) take a 4-byte prefix as a little-endian
			// integer.
			raw := make([]byte, 4*len(vs))
			for i, v := range vs {
				binary.LittleEndian.PutUint32(raw[4*i:], v)
			}
			b.AddConcat(4, raw)
		}
	}
	u.Additions = b.List()
	if rm := r.Removals; rm != nil {
		if rm.RawIndices != nil {
			u.Removals = append(u.Removals, rm.RawIndices.Indices...)
		}
		if rm.RiceIndices != nil {
			vs, err := decodeRice32(rm.RiceIndices, 2, 28)
			if err != nil {
				return nil, fmt.Errorf("%w: removals.riceIndices: %v", ErrMalformed, err)
			}
			for _, v := range vs {
				if v > 1<<31-1 {
					return nil, fmt.Errorf("%w: removals.riceIndices: index %d", ErrMalformed, v)
				}
				u.Removals = append(u.Removals, int32(v))
			}
		}
	}
	if u.Reset && len(u.Removals) > 0 {
		return nil, fmt.Errorf("%w: a RESET with removals", ErrMalformed)
	}
	return u, nil
}

// MaxEntries bounds the entries of one Rice-coded field a client decodes
// (16,777,216): Google's lists hold a few million, and a hostile count is
// refused before anything is allocated for it.
const MaxEntries = 1 << 24

// decodeRice32 decodes 32-bit Rice data whose parameter, when there are
// deltas, is in lo..hi.
func decodeRice32(r *RiceDelta, lo, hi int) ([]uint32, error) {
	if r.EntryCount > MaxEntries {
		return nil, fmt.Errorf("%w: %d entries, at most %d", rice.ErrCount, r.EntryCount, MaxEntries)
	}
	if r.EntryCount > 0 && (r.RiceParameter < lo || r.RiceParameter > hi) {
		return nil, fmt.Errorf("%w: %d, want %d..%d", rice.ErrParameter, r.RiceParameter, lo, hi)
	}
	if r.FirstValue > 1<<32-1 {
		return nil, fmt.Errorf("%w: firstValue %d", rice.ErrOverflow, r.FirstValue)
	}
	return rice.Decode32(uint32(r.FirstValue), r.RiceParameter, r.EntryCount, r.EncodedData)
}
