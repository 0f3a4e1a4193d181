package wire

import (
	"strings"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestEntryLen: AppendEntries grows its buffer by entryLen once, so
// entryLen must be the encoding's exact length.
func TestEntryLen(t *testing.T) {
	h := hashkey.Hash{1, 2, 3}
	seen := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, e := range []store.Entry{
		store.FullEntry(h, store.Value{}),
		{Hash: h, Len: 4},
		store.FullEntry(h, store.Value{Text: []byte("https://example.com/")}),
		store.FullEntry(h, store.Value{Text: []byte(strings.Repeat("x", 127)), Data: []byte(strings.Repeat("y", 128))}),
		store.FullEntry(h, store.Value{Data: []byte(strings.Repeat("z", 20000))}),
		store.FullEntry(h, store.Value{FirstSeen: seen, LastSeen: seen}),
		store.FullEntry(h, store.Value{Expires: time.Unix(1, 0)}),
		store.FullEntry(h, store.Value{FirstSeen: time.Unix(63, 0), LastSeen: time.Unix(64, 0), Expires: time.Unix(1<<40, 0)}),
	} {
		if got, want := entryLen(&e), len(AppendEntry(nil, &e)); got != want {
			t.Errorf("entryLen(%+v) = %d, want %d", e.Value, got, want)
		}
	}
}
