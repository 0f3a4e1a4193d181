package scanbuf

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

var errBoom = errors.New("boom")

func TestFill(t *testing.T) {
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
			b := New(tc.rd, 2)
			var got []byte
			for b.Fill() {
				got = append(got, b.Buf[b.R:b.W]...)
				b.R = b.W
			}
			if string(got) != tc.want || !errors.Is(b.Err, tc.err) {
				t.Errorf("read %q ending with %v, want %q ending with %v", got, b.Err, tc.want, tc.err)
			}
			if b.Off+b.R != len(tc.want) {
				t.Errorf("offset %d after %d bytes", b.Off+b.R, len(tc.want))
			}
		})
	}
}
