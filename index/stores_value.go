package index

import (
	"github.com/urlhash/urlhash/index/internal/keytable"
	"github.com/urlhash/urlhash/store"
)

// An entry in the key table (format 3) is a row: the key, its columns
// (first seen, last seen, expiry: unix seconds, 0 unset) and, when it has
// text or data, a value in the table's value files, which key lookups
// never read. The value is the valueVersion encoding of the text and data
// alone (appendValue of a Value without times); the times and the expiry
// are the columns, so that a revisit reads and writes columns only.

// tableCols returns the columns of v: its seen times as Value.SeenUnix
// gives them (one stands for both) and its expiry.
func tableCols(v *store.Value) keytable.Cols {
	first, last := v.SeenUnix()
	return keytable.Cols{First: first, Last: last, Expires: store.UnixOf(v.Expires)}
}

// tableValue returns the key table's value of v: its text and data
// encoded, nil when it has neither.
func tableValue(v *store.Value) []byte { return appendTableValue(nil, v) }

// appendTableValue appends tableValue(v) to b (nothing when v has
// neither text nor data).
func appendTableValue(b []byte, v *store.Value) []byte {
	if len(v.Text) == 0 && len(v.Data) == 0 {
		return b
	}
	return appendValue(b, store.Value{Text: v.Text, Data: v.Data})
}

// fromTable returns the value of a key-table row: its columns and its
// value (b, nil when it has none; the returned slices alias b).
func fromTable(c keytable.Cols, b []byte) (store.Value, error) {
	v, err := decodeValue(b)
	if err != nil {
		return store.Value{}, err
	}
	v.FirstSeen, v.LastSeen, v.Expires = store.Unix(c.First), store.Unix(c.Last), store.Unix(c.Expires)
	return v, nil
}

// widenCols widens o's column ranges to c and notes whether an entry has
// a value, for a key file written in one go (see keytable.IngestOptions).
func widenCols(o *keytable.IngestOptions, c keytable.Cols, hasValue bool) {
	for _, r := range []struct {
		r *keytable.ColRange
		x int64
	}{{&o.First, c.First}, {&o.Last, c.Last}, {&o.Expires, c.Expires}} {
		if r.x == 0 {
			continue
		}
		if r.r.Min == 0 || r.x < r.r.Min {
			r.r.Min = r.x
		}
		r.r.Max = max(r.r.Max, r.x)
	}
	o.Values = o.Values || hasValue
}
