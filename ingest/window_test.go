package ingest

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// stalledReader returns nothing, and no error, forever.
type stalledReader struct{}

func (stalledReader) Read([]byte) (int, error) { return 0, nil }

func TestWindowFill(t *testing.T) {
	for _, tc := range []struct {
		name string
		rd   io.Reader
		want string
		err  error
	}{
		{"whole", strings.NewReader("abc"), "abc", io.EOF},
		{"a byte at a time", iotest.OneByteReader(strings.NewReader("abc")), "abc", io.EOF},
		{"data with its error", iotest.DataErrReader(strings.NewReader("abc")), "abc", io.EOF},
		{"failing", iotest.ErrReader(errBoom), "", errBoom},
		{"stalled", stalledReader{}, "", io.ErrNoProgress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newWindow(tc.rd)
			var got []byte
			for b.fill() {
				got = append(got, b.buf[b.r:b.w]...)
				b.r = b.w
			}
			if string(got) != tc.want || !errors.Is(b.err, tc.err) {
				t.Errorf("read %q ending with %v, want %q ending with %v", got, b.err, tc.want, tc.err)
			}
			if b.off+b.r != len(tc.want) {
				t.Errorf("offset %d after %d bytes", b.off+b.r, len(tc.want))
			}
		})
	}
}

var errBoom = errors.New("boom")
