package ingest

import "io"

// window is the read buffer of a streaming scanner: buf[r:w] is read and
// not yet consumed, and off is the input offset of buf[0].
type window struct {
	rd   io.Reader
	buf  []byte
	r, w int
	off  int
	err  error // what ended the input, io.EOF at its end
}

func newWindow(rd io.Reader) window {
	return window{rd: rd, buf: make([]byte, readBufSize)}
}

// fill reads more input, keeping buf[r:w]. It reports whether it added a
// byte; when not, err says why. A reader that keeps returning nothing is
// an error (io.ErrNoProgress), not a loop.
func (b *window) fill() bool {
	if b.err != nil {
		return false
	}
	if b.r > 0 {
		b.off += b.r
		b.w = copy(b.buf, b.buf[b.r:b.w])
		b.r = 0
	}
	if b.w == len(b.buf) {
		return true // full: never so when called for a byte more
	}
	for tries := 0; tries < 100; tries++ {
		n, err := b.rd.Read(b.buf[b.w:])
		b.w += n
		if err != nil {
			b.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	b.err = io.ErrNoProgress
	return false
}
