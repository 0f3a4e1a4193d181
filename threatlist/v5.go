package threatlist

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/urlhash/urlhash/threatlist/rice"
)

// Safe Browsing v5 hash lists (GET /v5/hashLists:batchGet). v5 reads a
// hash's bytes as a big-endian integer, so the decoded values are in byte
// order already; each list holds hashes of one length.

// v5Rice is RiceDeltaEncoded32Bit, 64Bit, 128Bit or 256Bit: the first
// value's fields differ by width.
type v5Rice struct {
	FirstValue           Uint64 `json:"firstValue,omitempty"`
	FirstValueHi         Uint64 `json:"firstValueHi,omitempty"`
	FirstValueLo         Uint64 `json:"firstValueLo,omitempty"`
	FirstValueFirstPart  Uint64 `json:"firstValueFirstPart,omitempty"`
	FirstValueSecondPart Uint64 `json:"firstValueSecondPart,omitempty"`
	FirstValueThirdPart  Uint64 `json:"firstValueThirdPart,omitempty"`
	FirstValueFourthPart Uint64 `json:"firstValueFourthPart,omitempty"`
	RiceParameter        int    `json:"riceParameter,omitempty"`
	EntriesCount         int    `json:"entriesCount,omitempty"`
	EncodedData          Bytes  `json:"encodedData,omitempty"`
}

// HashList is a v5 HashList as batchGet answers it.
type HashList struct {
	Name                    string  `json:"name"`
	Version                 Bytes   `json:"version,omitempty"`
	PartialUpdate           bool    `json:"partialUpdate,omitempty"`
	CompressedRemovals      *v5Rice `json:"compressedRemovals,omitempty"`
	MinimumWaitDuration     string  `json:"minimumWaitDuration,omitempty"`
	Sha256Checksum          Bytes   `json:"sha256Checksum,omitempty"`
	AdditionsFourBytes      *v5Rice `json:"additionsFourBytes,omitempty"`
	AdditionsEightBytes     *v5Rice `json:"additionsEightBytes,omitempty"`
	AdditionsSixteenBytes   *v5Rice `json:"additionsSixteenBytes,omitempty"`
	AdditionsThirtyTwoBytes *v5Rice `json:"additionsThirtyTwoBytes,omitempty"`
}

// BatchGetResponse is the answer of GET /v5/hashLists:batchGet.
type BatchGetResponse struct {
	HashLists []HashList `json:"hashLists"`
}

// v5Widths are the additions' fields by hash length, with the Rice
// parameter range the v5 reference gives for each.
var v5Widths = []struct {
	size   int
	lo, hi int
}{{4, 3, 30}, {8, 35, 62}, {16, 99, 126}, {32, 227, 254}}

// Decode checks the list and decodes it into an Update. now is the time
// minimumWaitDuration counts from.
func (h *HashList) Decode(now time.Time) (*Update, error) {
	u := &Update{Reset: !h.PartialUpdate, Version: h.Version}
	if len(h.Sha256Checksum) > 0 {
		if len(h.Sha256Checksum) != 32 {
			return nil, fmt.Errorf("%w: list %s: %d-byte sha256Checksum", ErrMalformed, h.Name, len(h.Sha256Checksum))
		}
		u.Checksum = h.Sha256Checksum
	}
	if h.MinimumWaitDuration != "" {
		d, err := parseDuration(h.MinimumWaitDuration)
		if err != nil {
			return nil, fmt.Errorf("%w: list %s: minimumWaitDuration %q", ErrMalformed, h.Name, h.MinimumWaitDuration)
		}
		u.Next = now.Add(d)
	}
	adds := []*v5Rice{h.AdditionsFourBytes, h.AdditionsEightBytes, h.AdditionsSixteenBytes, h.AdditionsThirtyTwoBytes}
	var b Builder
	seen := false
	for i, a := range adds {
		if a == nil {
			continue
		}
		if seen {
			return nil, fmt.Errorf("%w: list %s: additions of more than one hash length", ErrMalformed, h.Name)
		}
		seen = true
		w := v5Widths[i]
		raw, err := a.decode(w.size, w.lo, w.hi)
		if err != nil {
			return nil, fmt.Errorf("%w: list %s: %d-byte additions: %v", ErrMalformed, h.Name, w.size, err)
		}
		b.AddConcat(w.size, raw)
	}
	u.Additions = b.List()
	if r := h.CompressedRemovals; r != nil {
		if u.Reset {
			return nil, fmt.Errorf("%w: list %s: removals in a full update", ErrMalformed, h.Name)
		}
		if r.EntriesCount > 0 && (r.RiceParameter < 3 || r.RiceParameter > 30) {
			return nil, fmt.Errorf("%w: list %s: removals: %w: %d, want 3..30", ErrMalformed, h.Name, rice.ErrParameter, r.RiceParameter)
		}
		if r.FirstValue > 1<<31-1 || r.EntriesCount > MaxEntries {
			return nil, fmt.Errorf("%w: list %s: removal index %d, %d removals", ErrMalformed, h.Name, r.FirstValue, r.EntriesCount)
		}
		vs, err := rice.Decode32(uint32(r.FirstValue), r.RiceParameter, r.EntriesCount, r.EncodedData)
		if err != nil {
			return nil, fmt.Errorf("%w: list %s: removals: %v", ErrMalformed, h.Name, err)
		}
		for _, v := range vs {
			if v > 1<<31-1 {
				return nil, fmt.Errorf("%w: list %s: removal index %d", ErrMalformed, h.Name, v)
			}
			u.Removals = append(u.Removals, int32(v))
		}
	}
	return u, nil
}

// decode returns the size-byte big-endian values, concatenated.
func (r *v5Rice) decode(size, lo, hi int) ([]byte, error) {
	if r.EntriesCount > MaxEntries {
		return nil, fmt.Errorf("%w: %d entries, at most %d", rice.ErrCount, r.EntriesCount, MaxEntries)
	}
	if r.EntriesCount > 0 && (r.RiceParameter < lo || r.RiceParameter > hi) {
		return nil, fmt.Errorf("%w: %d, want %d..%d", rice.ErrParameter, r.RiceParameter, lo, hi)
	}
	switch size {
	case 4:
		if r.FirstValue > 1<<32-1 {
			return nil, fmt.Errorf("%w: firstValue %d", rice.ErrOverflow, r.FirstValue)
		}
		vs, err := rice.Decode32(uint32(r.FirstValue), r.RiceParameter, r.EntriesCount, r.EncodedData)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.BigEndian.PutUint32(out[4*i:], v)
		}
		return out, nil
	case 8:
		vs, err := rice.Decode64(uint64(r.FirstValue), r.RiceParameter, r.EntriesCount, r.EncodedData)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 8*len(vs))
		for i, v := range vs {
			binary.BigEndian.PutUint64(out[8*i:], v)
		}
		return out, nil
	case 16:
		first := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(r.FirstValueHi)), uint64(r.FirstValueLo))
		return rice.DecodeWide(16, first, r.RiceParameter, r.EntriesCount, r.EncodedData)
	default:
		var first []byte
		for _, p := range []Uint64{r.FirstValueFirstPart, r.FirstValueSecondPart, r.FirstValueThirdPart, r.FirstValueFourthPart} {
			first = binary.BigEndian.AppendUint64(first, uint64(p))
		}
		return rice.DecodeWide(32, first, r.RiceParameter, r.EntriesCount, r.EncodedData)
	}
}

// parseDuration reads a protobuf Duration in JSON: decimal seconds with
// an "s" suffix ("1.5s").
func parseDuration(s string) (time.Duration, error) {
	if !strings.HasSuffix(s, "s") {
		return 0, fmt.Errorf("no s suffix")
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "s"), 64)
	if err != nil || f < 0 || f > 1e9 {
		return 0, fmt.Errorf("bad duration")
	}
	return time.Duration(f * float64(time.Second)), nil
}

// BatchGetRequest is a batchGet request.
type BatchGetRequest struct {
	// Names are the lists, such as "se" or "mw".
	Names []string
	// Versions maps a list's name to the version the client holds; a list
	// with none gets a full update.
	Versions map[string][]byte
	// MaxUpdateEntries and MaxDatabaseEntries are the size constraints;
	// zero leaves them out.
	MaxUpdateEntries, MaxDatabaseEntries int
}

// BatchGet asks GET {Endpoint}/v5/hashLists:batchGet for the lists' updates,
// and decodes them, in the order of req.Names. now is the time
// minimumWaitDuration counts from.
func (c *Client) BatchGet(ctx context.Context, req BatchGetRequest, now time.Time) (map[string]*Update, error) {
	q := url.Values{}
	for _, n := range req.Names {
		q.Add("names", n)
		if v := req.Versions[n]; len(v) > 0 {
			// url.Values percent-encodes '+' and '/'.
			q.Add("version", base64.StdEncoding.EncodeToString(v))
		}
	}
	if req.MaxUpdateEntries > 0 {
		q.Set("sizeConstraints.maxUpdateEntries", strconv.Itoa(req.MaxUpdateEntries))
	}
	if req.MaxDatabaseEntries > 0 {
		q.Set("sizeConstraints.maxDatabaseEntries", strconv.Itoa(req.MaxDatabaseEntries))
	}
	var r BatchGetResponse
	if err := c.get(ctx, "/v5/hashLists:batchGet", q, &r); err != nil {
		return nil, err
	}
	out := make(map[string]*Update, len(r.HashLists))
	for i := range r.HashLists {
		h := &r.HashLists[i]
		u, err := h.Decode(now)
		if err != nil {
			return nil, err
		}
		out[h.Name] = u
	}
	for _, n := range req.Names {
		if out[n] == nil {
			return nil, fmt.Errorf("%w: no hash list %q in the answer", ErrMalformed, n)
		}
	}
	return out, nil
}
