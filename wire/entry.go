package wire

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// timesFlag, set in an entry's key-length byte, says that three varints
// follow its data: FirstSeen, LastSeen and Expires in unix seconds (0:
// none). An entry without times is encoded as before they existed.
const timesFlag = 0x80

// AppendEntry appends e in the protocol's entry encoding: the key's length
// (| 0x80 when the value has times), the key, uvarint len(Text), Text,
// uvarint len(Data), Data and, with 0x80, the times as three varints.
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

// entryLen returns the bytes AppendEntry appends for e.
func entryLen(e *store.Entry) int {
	v := &e.Value
	n := 1 + len(e.Key()) + uvarintLen(uint64(len(v.Text))) + len(v.Text) + uvarintLen(uint64(len(v.Data))) + len(v.Data)
	if v.HasTimes() || !v.Expires.IsZero() {
		for _, t := range []int64{store.UnixOf(v.FirstSeen), store.UnixOf(v.LastSeen), store.UnixOf(v.Expires)} {
			n += uvarintLen(uint64(t<<1) ^ uint64(t>>63)) // a varint is its zigzag uvarint
		}
	}
	return n
}

// uvarintLen returns the length of x's uvarint encoding.
func uvarintLen(x uint64) int { return max(1, (bits.Len64(x)+6)/7) }

// AppendEntries appends each entry of es (AppendEntry), after checking it
// (store.Entry.Check): a body of entries.
func AppendEntries(dst []byte, es []store.Entry) ([]byte, error) {
	// Grown once: a served batch is thousands of entries, and growing
	// by appends copied it about twice over (a quarter of a dedupe
	// client's CPU with the batch's entries).
	n := 0
	for i := range es {
		n += entryLen(&es[i])
	}
	dst = slices.Grow(dst, n)
	for i := range es {
		if err := es[i].Check(); err != nil {
			return dst, err
		}
		dst = AppendEntry(dst, &es[i])
	}
	return dst, nil
}

// DecodeEntry decodes one entry from the start of b and returns the rest.
// The entry's value aliases b. A malformed entry, or one whose times
// store.Value.Check refuses, is an error wrapping ErrBadRequest.
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
	// The key's length is all there is to check yet (e.Check would move e
	// to the heap).
	if n == 0 || n < hashkey.Size && store.CheckPrefixEntryLen(n) != nil {
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
		// Into an array, not through pointers to e: those would move
		// every entry decoded to the heap.
		var ts [3]int64
		for i := range ts {
			x, k := binary.Varint(b)
			if k <= 0 {
				return e, nil, fmt.Errorf("%w: bad time", ErrBadRequest)
			}
			ts[i], b = x, b[k:]
		}
		e.Value.FirstSeen, e.Value.LastSeen, e.Value.Expires = store.Unix(ts[0]), store.Unix(ts[1]), store.Unix(ts[2])
		if err := e.Value.Check(); err != nil {
			// Both: the kind stays bad_value (wire.Kind), and the
			// body is refused whole, before any backend sees it.
			return e, nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
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

// DecodeEntries decodes a body of entries. The values alias b.
func DecodeEntries(b []byte) ([]store.Entry, error) {
	// Counted first, so that the entries (160 bytes each) are allocated
	// once: growing the slice by appends copied each one about twice and
	// left as much garbage (a third of a served add's allocations).
	n := 0
	for rest := b; len(rest) > 0; n++ {
		var err error
		if _, rest, err = DecodeEntry(rest); err != nil {
			return nil, err
		}
	}
	out := make([]store.Entry, 0, n)
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

// bareEntryLen is the length of a bare full entry (no text, data or
// times): the key-length byte, the key, and zero text and data lengths.
const bareEntryLen = 1 + hashkey.Size + 2

// DecodeKeys decodes a body of entries that are all bare full keys (no
// text, data or times: a seen-set's), appending their keys to dst: what
// DecodeEntries decodes, without a store.Entry per key. ok is false, and
// dst is returned as it was, when the body holds anything else: decode it
// with DecodeEntries, which reports a malformed body.
func DecodeKeys(dst []hashkey.Hash, b []byte) (_ []hashkey.Hash, ok bool) {
	if len(b)%bareEntryLen != 0 {
		return dst, false
	}
	n := len(b) / bareEntryLen
	for i := 0; i < len(b); i += bareEntryLen {
		if b[i] != hashkey.Size || b[i+1+hashkey.Size] != 0 || b[i+2+hashkey.Size] != 0 {
			return dst, false
		}
	}
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	for j := range n {
		copy(dst[start+j][:], b[j*bareEntryLen+1:])
	}
	return dst, true
}

// AppendHashes appends the body of a question about hashes (/v1/has,
// /v1/get, /v1/get-batch, /v1/match): the hashes, 32 bytes each, back to back.
func AppendHashes(dst []byte, hs []hashkey.Hash) []byte {
	dst = slices.Grow(dst, len(hs)*hashkey.Size)
	for i := range hs {
		dst = append(dst, hs[i][:]...)
	}
	return dst
}

// ParseHashes decodes a body of hashes (AppendHashes). A body that is not
// whole hashes is an error wrapping ErrBadRequest.
func ParseHashes(b []byte) ([]hashkey.Hash, error) {
	if len(b)%hashkey.Size != 0 {
		return nil, fmt.Errorf("%w: body of %d bytes is not whole 32-byte hashes", ErrBadRequest, len(b))
	}
	hs := make([]hashkey.Hash, len(b)/hashkey.Size)
	for i := range hs {
		copy(hs[i][:], b[i*hashkey.Size:])
	}
	return hs, nil
}

// AppendBools appends a batch answer: one byte per question, in order, 1
// for yes (new, found) and 0 for no.
func AppendBools(dst []byte, answers []bool) []byte {
	for _, a := range answers {
		if a {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	}
	return dst
}

// ParseBools decodes a batch answer (AppendBools) to n questions. An
// answer of another length, or with a byte other than 0 and 1, is an error
// wrapping ErrBadAnswer.
func ParseBools(b []byte, n int) ([]bool, error) {
	if len(b) != n {
		return nil, fmt.Errorf("%w: %d answers for %d questions", ErrBadAnswer, len(b), n)
	}
	out := make([]bool, n)
	for i, v := range b {
		switch v {
		case 0:
		case 1:
			out[i] = true
		default:
			return nil, fmt.Errorf("%w: answer %d is byte %d", ErrBadAnswer, i, v)
		}
	}
	return out, nil
}

// AppendGetAnswer appends the answer to a batch get (/v1/get-batch) of
// hs: a batch answer (AppendBools) saying which are stored, then the
// entry of each stored one (AppendEntry: the full entry of its hash with
// its value vs[i]), in order.
func AppendGetAnswer(dst []byte, hs []hashkey.Hash, vs []store.Value, found []bool) []byte {
	dst = AppendBools(dst, found)
	for i := range hs {
		if found[i] {
			e := store.FullEntry(hs[i], vs[i])
			dst = AppendEntry(dst, &e)
		}
	}
	return dst
}

// ParseGetAnswer decodes the answer to a batch get of hs
// (AppendGetAnswer): the values (zero where not found) and which are
// found. The values alias b. An answer whose batch answer or entries do
// not decode, or whose entries are not the full entries of the found
// hashes, each once and in order, is an error wrapping ErrBadAnswer.
func ParseGetAnswer(b []byte, hs []hashkey.Hash) ([]store.Value, []bool, error) {
	if len(b) < len(hs) {
		return nil, nil, fmt.Errorf("%w: %d bytes for %d questions", ErrBadAnswer, len(b), len(hs))
	}
	found, err := ParseBools(b[:len(hs)], len(hs))
	if err != nil {
		return nil, nil, err
	}
	vs := make([]store.Value, len(hs))
	rest := b[len(hs):]
	for i := range hs {
		if !found[i] {
			continue
		}
		var e store.Entry
		if e, rest, err = DecodeEntry(rest); err != nil {
			return nil, nil, fmt.Errorf("%w: the entry of hash %d: %v", ErrBadAnswer, i, err)
		}
		if e.IsPrefix() || e.Hash != hs[i] {
			return nil, nil, fmt.Errorf("%w: the entry of hash %d (%s) is keyed %x", ErrBadAnswer, i, hs[i], e.Key())
		}
		vs[i] = e.Value
	}
	if len(rest) != 0 {
		return nil, nil, fmt.Errorf("%w: %d bytes after the entries", ErrBadAnswer, len(rest))
	}
	return vs, found, nil
}
