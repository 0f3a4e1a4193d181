package dedupe

import (
	"encoding/binary"
	"sync"

	"github.com/urlhash/urlhash/hashkey"
)

// batch is a batch on its way: admitted, journalled, written, answered,
// delivered.
type batch struct {
	inputs []Input
	skip   []bool   // skip[i]: inputs[i]'s identity is in an earlier batch in flight
	jn     *journal // its journal, or nil
	// hashes are the identities it sends (held while it is in flight),
	// set their index.
	hashes []hashkey.Hash
	set    keySet
	added  []bool // per entry sent: whether it was new
	err    error
	done   chan struct{} // closed once added and err are set
	// flushed, when set, marks no batch but a Flush: closed once every
	// batch before it is delivered (or will never be).
	flushed chan struct{}
}

// A pipe delivers the batches in flight in the order they were admitted,
// each once it is answered, from a goroutine of its own, so that an
// interactive producer gets its answers without sending more. It admits a
// batch when fewer than depth are in flight.
type pipe struct {
	slots   chan struct{}
	queue   chan *batch
	ended   chan struct{}
	deliver func(*batch) error

	mu sync.Mutex
	// inflight are the batches admitted and not yet delivered, in order.
	// The server may store a later batch before an earlier one: an
	// identity of an earlier batch in flight is not sent again (it is not
	// new, whatever the earlier batch's answer), so that the first input
	// of an identity is the one reported new, as with one batch at a
	// time. Each batch's identities are looked up in its keySet: a map of
	// all of them (an insert, a lookup and a delete a key) was most of the
	// client's CPU in a dedupe of present keys.
	inflight []*batch
	err      error // the first error of deliver, or of a write
}

func newPipe(depth int, deliver func(*batch) error) *pipe {
	p := &pipe{slots: make(chan struct{}, depth), queue: make(chan *batch, depth),
		ended: make(chan struct{}), deliver: deliver}
	go p.run()
	return p
}

// admit waits for a free slot and marks the identities of b that an
// earlier batch in flight holds.
func (p *pipe) admit(b *batch) error {
	p.slots <- struct{}{}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		<-p.slots
		return p.err
	}
	b.skip = make([]bool, len(b.inputs))
	if cap(p.slots) == 1 {
		return nil
	}
	b.hashes = make([]hashkey.Hash, 0, len(b.inputs))
	for i := range b.inputs {
		in := &b.inputs[i]
		if in.Err != nil {
			continue
		}
		h := &in.Entry.Hash
		for _, e := range p.inflight {
			if e.set.has(h) {
				b.skip[i] = true
				break
			}
		}
		if !b.skip[i] {
			// A repeat within b is sent twice: the backend answers it
			// new at most once.
			b.hashes = append(b.hashes, *h)
		}
	}
	b.set = newKeySet(b.hashes)
	p.inflight = append(p.inflight, b)
	return nil
}

// send queues b, admitted, for delivery.
func (p *pipe) send(b *batch) error {
	p.queue <- b
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// run delivers the batches in order. After an error it still waits for
// the batches in flight (they may be stored) and delivers none: their
// journals keep them for the next client.
func (p *pipe) run() {
	defer close(p.ended)
	for b := range p.queue {
		<-b.done
		p.mu.Lock()
		if len(p.inflight) > 0 && p.inflight[0] == b {
			p.inflight[0] = nil
			p.inflight = p.inflight[1:]
		}
		failed := p.err != nil
		p.mu.Unlock()
		if b.flushed != nil {
			close(b.flushed)
			<-p.slots
			continue
		}
		err := b.err
		if err == nil && !failed {
			err = p.deliver(b)
		}
		p.mu.Lock()
		if err != nil && p.err == nil {
			p.err = err
		}
		p.mu.Unlock()
		<-p.slots
	}
}

// error returns the first error of a delivery or of a write.
func (p *pipe) error() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// close waits for the batches in flight and returns the first error.
func (p *pipe) close() error {
	close(p.queue)
	<-p.ended
	return p.err
}

// keySet is a set of identities: a flat open-addressing table of their
// positions, indexed by their leading bytes (an identity is a hash
// already), built once and dropped whole.
//
// It is not the filter's overlay set (index/internal/filter's valueSet),
// though both probe linearly in a table at most half full: that one holds
// 8-byte values themselves, grows, is reset and hashes its values with a
// random seed against chosen keys; this one holds positions of 32-byte
// keys, which no slot holds, is sized once and compared whole. What they
// share is the six lines of the probe loop; a type over both would cost
// the filter's hot path an indirect call a probe.
type keySet struct {
	slots []int32 // 1 + a position in keys; 0: empty
	keys  []hashkey.Hash
	mask  uint64
}

func newKeySet(keys []hashkey.Hash) keySet {
	n := 1
	for n < 2*len(keys) {
		n <<= 1
	}
	s := keySet{slots: make([]int32, n), keys: keys, mask: uint64(n - 1)}
	for i := range keys {
		j := binary.LittleEndian.Uint64(keys[i][:8]) & s.mask
		for s.slots[j] != 0 {
			j = (j + 1) & s.mask
		}
		s.slots[j] = int32(i + 1)
	}
	return s
}

// has reports whether h is in the set.
func (s *keySet) has(h *hashkey.Hash) bool {
	if len(s.keys) == 0 {
		return false
	}
	for j := binary.LittleEndian.Uint64(h[:8]) & s.mask; ; j = (j + 1) & s.mask {
		v := s.slots[j]
		if v == 0 {
			return false
		}
		if s.keys[v-1] == *h {
			return true
		}
	}
}
