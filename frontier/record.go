package frontier

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/urlhash/urlhash/store"
)

// state is where a URL stands in its queue.
type state byte

const (
	stateQueued    state = 0 // its due key is in the queue's due order
	stateCompleted state = 2 // done: a done key, no due key (a record that says queued may be completed too: see updateLocked)
)

// record is what the frontier keeps of a URL (the value of its record
// entry): the URL's text is the value's Text, its creation time the
// value's FirstSeen, and the time of its last change (due time or
// completion, in seconds) its LastSeen.
type record struct {
	state    state
	due      int64 // the due key's time (unix ns); 0 when completed
	crawl    string
	key      string // its queue
	priority int32
	data     []byte
	metadata map[string][]string
}

// Record encodings (the value's Data): tagRecord, version 1, state, due
// (8 bytes big-endian), then uvarint-prefixed crawl and key, a varint
// priority, uvarint-prefixed data, and the metadata: uvarint count, then
// for each key in order its uvarint-prefixed name, a uvarint count of
// values and each value uvarint-prefixed.
const (
	tagRecord      = 'U'
	tagQueue       = 'Q'
	tagCrawl       = 'C'
	tagFrontier    = 'F'
	tagIntent      = 'I'
	recordVersion  = 1
	maxFieldLength = 1 << 20
)

func appendString[S string | []byte](b []byte, s S) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (r *record) appendBinary(b []byte) []byte {
	if b == nil {
		b = make([]byte, 0, 3+8+3*binary.MaxVarintLen32+len(r.crawl)+len(r.key)+len(r.data)+1)
	}
	b = append(b, tagRecord, recordVersion, byte(r.state))
	b = binary.BigEndian.AppendUint64(b, uint64(r.due))
	b = appendString(b, r.crawl)
	b = appendString(b, r.key)
	b = binary.AppendVarint(b, int64(r.priority))
	b = appendString(b, r.data)
	if len(r.metadata) == 0 {
		return append(b, 0)
	}
	names := make([]string, 0, len(r.metadata))
	for k := range r.metadata {
		names = append(names, k)
	}
	sort.Strings(names)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, k := range names {
		b = appendString(b, k)
		vs := r.metadata[k]
		b = binary.AppendUvarint(b, uint64(len(vs)))
		for _, v := range vs {
			b = appendString(b, v)
		}
	}
	return b
}

// reader decodes the fields of an encoding, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (d *reader) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: frontier: a truncated or malformed entry", store.ErrCorrupt)
	}
	d.b = nil
}

func (d *reader) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *reader) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *reader) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *reader) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *reader) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) || n > maxFieldLength {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func parseRecord(b []byte) (record, error) {
	var r record
	d := reader{b: b}
	if d.byte() != tagRecord || d.byte() != recordVersion {
		return r, fmt.Errorf("%w: frontier: not a URL record", store.ErrCorrupt)
	}
	r.state = state(d.byte())
	r.due = int64(d.uint64())
	r.crawl = string(d.bytes())
	r.key = string(d.bytes())
	r.priority = int32(d.varint())
	if data := d.bytes(); len(data) > 0 {
		r.data = append([]byte(nil), data...)
	}
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
	}
	for range n {
		if r.metadata == nil {
			r.metadata = make(map[string][]string, n)
		}
		k := string(d.bytes())
		m := d.uvarint()
		if m > uint64(len(d.b)) {
			d.fail()
			break
		}
		vs := make([]string, 0, m)
		for range m {
			vs = append(vs, string(d.bytes()))
		}
		r.metadata[k] = vs
	}
	if d.err == nil && (r.state != stateQueued && r.state != stateCompleted || len(d.b) != 0) {
		d.fail()
	}
	return r, d.err
}

// contentSum returns a hash of what a record holds besides its state:
// a Known item whose sum is its record's leaves the record as it is.
func contentSum(priority int32, data []byte, md map[string][]string) uint64 {
	h := fnv.New64a()
	var b [binary.MaxVarintLen64]byte
	h.Write(b[:binary.PutVarint(b[:], int64(priority))])
	h.Write(b[:binary.PutUvarint(b[:], uint64(len(data)))])
	h.Write(data)
	names := make([]string, 0, len(md))
	for k := range md {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		h.Write(b[:binary.PutUvarint(b[:], uint64(len(k)))])
		h.Write([]byte(k))
		h.Write(b[:binary.PutUvarint(b[:], uint64(len(md[k])))])
		for _, v := range md[k] {
			h.Write(b[:binary.PutUvarint(b[:], uint64(len(v)))])
			h.Write([]byte(v))
		}
	}
	return h.Sum64()
}

// queueSettings is a queue's meta entry: what SetDelay, BlockQueueUntil
// and SetCrawlLimit set, with the queue's crawl and key. A queue's meta
// entry is written when the queue is created, so that a restart finds
// every queue without reading its URLs.
type queueSettings struct {
	delay        int64 // ns; -1: the crawl's default
	blockedUntil int64 // unix seconds; 0: not blocked
	limit        uint64
}

// Meta encodings (the value's Data): a tag, version 1, then the fields.
// Queue: delay as a varint (ns, -1 the crawl's), blocked-until and limit as
// uvarints; its Text is crawl, NUL, key. Crawl: its default delay as a
// varint; its Text is the crawl. Frontier: the active flag, one byte.
// Intent: a uvarint count of ids, then the ids (16 bytes each); its Text
// is "intent" (see intent.go).
func (q *queueSettings) appendBinary(b []byte) []byte {
	b = append(b, tagQueue, recordVersion)
	b = binary.AppendVarint(b, q.delay)
	b = binary.AppendUvarint(b, uint64(q.blockedUntil))
	return binary.AppendUvarint(b, q.limit)
}

func parseQueueSettings(b []byte) (queueSettings, error) {
	d := reader{b: b}
	var q queueSettings
	if d.byte() != tagQueue || d.byte() != recordVersion {
		return q, fmt.Errorf("%w: frontier: not a queue entry", store.ErrCorrupt)
	}
	q.delay = d.varint()
	q.blockedUntil = int64(d.uvarint())
	q.limit = d.uvarint()
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	return q, d.err
}
