package valuefile

import (
	"fmt"
	"slices"
)

// A Window reads a set of values given in any order, each block once: a
// key-order scan of a merged file, whose values are the runs of the
// files it copied blocks from and its own, plans a window of values
// (Plan), decodes their blocks in file order (Load), then takes each
// value in its own order (Value). A Cursor keeps a few blocks for a few
// runs; a file merged many times has more runs than that, and a cursor
// on it decodes a block for almost every value. It is not safe for
// concurrent use.
type Window struct {
	r      *Reader
	want   []int            // blocks planned, in the order planned
	held   map[int]*decoded // blocks loaded (or planned: nil)
	bytes  int64            // decoded bytes of the blocks planned
	free   []*decoded       // decoded blocks of earlier windows, for reuse
	frame  []byte
	shared map[int]bool // blocks taken from the cache (not reused)
}

// NewWindow returns an empty window on r.
func (r *Reader) NewWindow() *Window {
	return &Window{r: r, held: map[int]*decoded{}, shared: map[int]bool{}}
}

// Plan adds ordinal ord to the window and returns the decoded bytes of
// the blocks the window holds once loaded.
func (w *Window) Plan(ord uint32) (int64, error) {
	i, err := w.r.blockOf(ord)
	if err != nil {
		return w.bytes, err
	}
	if _, ok := w.held[i]; !ok {
		w.held[i] = nil
		w.want = append(w.want, i)
		w.bytes += int64(w.r.blocks[i].rawLen)
	}
	return w.bytes, nil
}

// Load decodes the blocks planned, in file order (or takes them from the
// cache), so that Value answers each ordinal planned.
func (w *Window) Load() error {
	slices.Sort(w.want)
	for _, i := range w.want {
		if w.held[i] != nil {
			continue
		}
		if d := w.r.cache.get(w.r.id, uint32(i)); d != nil {
			w.held[i], w.shared[i] = d, true
			continue
		}
		var d *decoded
		if n := len(w.free); n > 0 {
			d, w.free = w.free[n-1], w.free[:n-1]
		}
		d, err := w.r.decode(i, d, &w.frame)
		if err != nil {
			return err
		}
		w.held[i] = d
	}
	return nil
}

// Value returns the value of ordinal ord, planned and loaded, valid until
// Reset.
func (w *Window) Value(ord uint32) ([]byte, error) {
	i, err := w.r.blockOf(ord)
	if err != nil {
		return nil, err
	}
	d := w.held[i]
	if d == nil {
		return nil, fmt.Errorf("valuefile: %s: value %d read from a window that did not plan and load it", w.r.name, ord)
	}
	return d.value(ord - w.r.blocks[i].first), nil
}

// Reset empties the window, keeping its decoded blocks' memory for the
// next.
func (w *Window) Reset() {
	for i, d := range w.held {
		if d != nil && !w.shared[i] && len(w.free) < windowFree {
			w.free = append(w.free, d)
		}
	}
	clear(w.held)
	clear(w.shared)
	w.want, w.bytes = w.want[:0], 0
}

// windowFree bounds the decoded blocks a window keeps for reuse.
const windowFree = 64

// Planned returns the decoded bytes of the blocks planned.
func (w *Window) Planned() int64 { return w.bytes }
