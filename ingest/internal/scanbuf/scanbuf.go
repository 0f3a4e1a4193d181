// Package scanbuf is the read buffer of ingest's streaming scanners (the
// XML scanner, the Turtle and TriG lexer): a window over the input that
// keeps the bytes not consumed yet and reads more behind them.
package scanbuf

import "io"

// Window is a read buffer: Buf[R:W] is read and not consumed yet, and Off
// is the input offset of Buf[0]. Scanners read Buf[R] and advance R
// themselves, in their hot loops; Fill reads more.
type Window struct {
	Rd   io.Reader
	Buf  []byte
	R, W int
	Off  int
	Err  error // what ended the input: io.EOF at its end
}

// New returns a window of size bytes over rd.
func New(rd io.Reader, size int) Window {
	return Window{Rd: rd, Buf: make([]byte, size)}
}

// Fill reads more input, keeping Buf[R:W]. It reports whether it added a
// byte; when not, Err says why. A reader that keeps returning nothing is
// an error (io.ErrNoProgress), not a loop.
func (b *Window) Fill() bool {
	if b.Err != nil {
		return false
	}
	if b.R > 0 {
		b.Off += b.R
		b.W = copy(b.Buf, b.Buf[b.R:b.W])
		b.R = 0
	}
	if b.W == len(b.Buf) {
		return true // full: never so when called for a byte more
	}
	for tries := 0; tries < 100; tries++ {
		n, err := b.Rd.Read(b.Buf[b.W:])
		b.W += n
		if err != nil {
			b.Err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	b.Err = io.ErrNoProgress
	return false
}
