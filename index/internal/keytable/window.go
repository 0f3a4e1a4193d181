package keytable

import "github.com/urlhash/urlhash/index/internal/valuefile"

// valueWindow yields entries in key order with the values of their files
// read in windows: it holds up to valueWindowEntries entries, or those
// whose values' blocks decode to valueWindowBytes, reads their values
// file by file in ordinal order (each block once), then calls fn with
// each in the order added. A merged file keeps its values in as many
// runs as it had merges (each copies the older blocks as they are and
// appends its own), and a key-order read through a cursor of a few
// blocks decoded a block for almost every value: the frontier's queue
// entries at each Open, a merge that rewrites a file.
type valueWindow struct {
	entries []Entry
	vals    []dval
	read    []bool // the entry's value is read from its file
	windows map[*keyFile]*valuefile.Window
	bytes   int64 // decoded bytes planned, all windows
	fn      func(e *Entry, v dval) error
}

const (
	valueWindowEntries = 1 << 15
	valueWindowBytes   = 4 << 20
)

func newValueWindow(fn func(e *Entry, v dval) error) *valueWindow {
	return &valueWindow{windows: map[*keyFile]*valuefile.Window{}, fn: fn}
}

// add yields e, whose value is v, with e.Value set when want is and it
// has one: read from its file when v is in one, the delta's bytes when
// not. An entry whose value is in a file is held until the window is full,
// and so is every entry after it; one that reads nothing from a file goes
// at once while nothing is held (a scan of key-only entries, a merge that
// copies its blocks, never wait).
func (vw *valueWindow) add(e *Entry, v dval, want bool) error {
	read := want && v.has()
	if !vw.holds() && !(read && v.f != nil) {
		if read {
			e.Value = v.b
		}
		return vw.fn(e, v)
	}
	if read && v.f != nil {
		w := vw.windows[v.f]
		if w == nil {
			w = v.f.vals.NewWindow()
			vw.windows[v.f] = w
		}
		before := w.Planned()
		after, err := w.Plan(v.ord - 1)
		if err != nil {
			return err
		}
		vw.bytes += after - before
	}
	vw.entries = append(vw.entries, *e)
	vw.vals = append(vw.vals, v)
	vw.read = append(vw.read, read)
	if len(vw.entries) >= valueWindowEntries || vw.bytes >= valueWindowBytes {
		return vw.flush()
	}
	return nil
}

// flush reads the values held and yields the entries in the order added.
func (vw *valueWindow) flush() error {
	for _, w := range vw.windows {
		if err := w.Load(); err != nil {
			return err
		}
	}
	var err error
	for j := range vw.entries {
		e, v := &vw.entries[j], &vw.vals[j]
		switch {
		case !vw.read[j]:
		case v.f == nil:
			e.Value = v.b
		default:
			e.Value, err = vw.windows[v.f].Value(v.ord - 1)
		}
		if err == nil {
			err = vw.fn(e, *v)
		}
		if err != nil {
			break
		}
	}
	for _, w := range vw.windows {
		w.Reset()
	}
	clear(vw.entries)
	vw.entries, vw.vals, vw.read, vw.bytes = vw.entries[:0], vw.vals[:0], vw.read[:0], 0
	return err
}

// holds reports whether entries are held, not yet yielded.
func (vw *valueWindow) holds() bool { return len(vw.entries) > 0 }
