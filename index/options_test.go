package index

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// TestValueBlockSizeBounds: Open refuses a ValueBlockSize outside
// [MinValueBlockSize, MaxValueBlockSize] (0 is the default), naming it,
// and opens an index with one inside that answers its values.
func TestValueBlockSizeBounds(t *testing.T) {
	for _, c := range []struct {
		size int
		ok   bool
	}{
		{0, true},
		{MinValueBlockSize, true},
		{MaxValueBlockSize, true},
		{MinValueBlockSize - 1, false},
		{MaxValueBlockSize + 1, false},
		{-1, false},
	} {
		db, err := Open(t.TempDir(), &Options{ValueBlockSize: c.size})
		if !c.ok {
			if !errors.Is(err, store.ErrInvalidOptions) || !strings.Contains(err.Error(), strconv.Itoa(c.size)) {
				t.Errorf("ValueBlockSize %d: Open = %v, want store.ErrInvalidOptions naming it", c.size, err)
			}
			if err == nil {
				db.Close()
			}
			continue
		}
		if err != nil {
			t.Fatalf("ValueBlockSize %d: %v", c.size, err)
		}
		e := store.Entry{Hash: hashOf("https://example.org/a"), Value: store.Value{Text: []byte("https://example.org/a")}}
		if err := db.PutBatch(t.Context(), []store.Entry{e}); err != nil {
			t.Fatal(err)
		}
		got, err := db.Get(t.Context(), e.Hash)
		if err != nil || string(got.Text) != "https://example.org/a" {
			t.Errorf("ValueBlockSize %d: Get = %+v, %v", c.size, got, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
