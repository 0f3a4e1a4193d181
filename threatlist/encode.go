package threatlist

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/urlhash/urlhash/threatlist/rice"
)

// DiffOptions says how EncodeDiff answers.
type DiffOptions struct {
	// Rice encodes 4-byte additions and the removal indices with Rice
	// deltas (the client listed RICE among its supportedCompressions);
	// otherwise they are sent raw. Additions of other lengths are raw.
	Rice bool
	// Next is the recommendedNextDiff; zero leaves it out.
	Next time.Time
}

// EncodeDiff returns the computeDiff answer that takes a client from old
// to cur: a DIFF, or a RESET when old is nil.
func EncodeDiff(old, cur *List, version []byte, o DiffOptions) *DiffResponse {
	r := &DiffResponse{NewVersionToken: version}
	var removals []int32
	additions := cur
	if old == nil {
		r.ResponseType = "RESET"
	} else {
		r.ResponseType = "DIFF"
		removals, additions = old.Diff(cur)
	}
	sum := cur.Checksum()
	r.Checksum = &struct {
		Sha256 Bytes `json:"sha256,omitempty"`
	}{sum[:]}
	if !o.Next.IsZero() {
		r.RecommendedNextDiff = o.Next.UTC().Format(time.RFC3339Nano)
	}
	if additions.Len() > 0 {
		r.Additions = &struct {
			RawHashes  []RawHashes `json:"rawHashes,omitempty"`
			RiceHashes *RiceDelta  `json:"riceHashes,omitempty"`
		}{}
		for _, size := range additions.Sizes() {
			raw := additions.Concat(size)
			if size == 4 && o.Rice {
				// Little-endian integers, sorted numerically.
				vs := make([]uint32, len(raw)/4)
				for i := range vs {
					vs[i] = binary.LittleEndian.Uint32(raw[4*i:])
				}
				slices.Sort(vs)
				if d, ok := riceDelta(vs); ok {
					r.Additions.RiceHashes = d
					continue
				}
			}
			r.Additions.RawHashes = append(r.Additions.RawHashes, RawHashes{PrefixSize: size, RawHashes: raw})
		}
	}
	if len(removals) > 0 {
		r.Removals = &struct {
			RawIndices *struct {
				Indices []int32 `json:"indices,omitempty"`
			} `json:"rawIndices,omitempty"`
			RiceIndices *RiceDelta `json:"riceIndices,omitempty"`
		}{}
		vs := make([]uint32, len(removals))
		for i, v := range removals {
			vs[i] = uint32(v)
		}
		if d, ok := riceDelta(vs); ok && o.Rice {
			r.Removals.RiceIndices = d
		} else {
			r.Removals.RawIndices = &struct {
				Indices []int32 `json:"indices,omitempty"`
			}{removals}
		}
	}
	return r
}

// riceDelta encodes sorted values with the Web Risk parameter range, and
// reports false when one delta would need too long a quotient (tens of
// millions of entries with one far larger gap): the caller sends them raw.
func riceDelta(vs []uint32) (*RiceDelta, bool) {
	k := rice.Parameter(len(vs)-1, uint64(vs[len(vs)-1]-vs[0]), 2, 28)
	first, count, data, err := rice.Encode32(vs, k)
	if err != nil {
		return nil, false
	}
	d := &RiceDelta{FirstValue: Uint64(first), EntryCount: count, EncodedData: data}
	if count > 0 {
		d.RiceParameter = k
	}
	return d, true
}
