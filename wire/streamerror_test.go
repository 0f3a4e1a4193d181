package wire

import (
	"bytes"
	"errors"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// TestStreamErrorMessages: the error record carries any message to
// ReadStream, whatever bytes it holds (valid UTF-8 kept as is).
func TestStreamErrorMessages(t *testing.T) {
	for _, msg := range []string{
		"index: corrupt: \"x\"\n",
		"bell \a and nul \x00 in a path",
		"tab\tand DEL \x7f and line sep \u2028",
		`<a&b> é`,
	} {
		var se *StreamError
		err := ReadStream(bytes.NewReader(AppendStreamError(nil, msg)), func(store.Entry) error { return nil })
		if !errors.As(err, &se) || se.Msg != msg {
			t.Errorf("ReadStream(AppendStreamError(%q)) = %v, want the StreamError", msg, err)
		}
	}
}
