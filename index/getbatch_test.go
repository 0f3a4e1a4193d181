package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestGetBatchValues: a batch of tens of thousands of hashes answers as
// Get does for each, in input order, its values copied out of the value
// blocks into shared arrays: present entries with text, data and times
// (in the key file and in the delta), absent hashes, repeats; and after
// a reopen.
func TestGetBatchValues(t *testing.T) {
	const getPart = 8192
	ctx := context.Background()
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	r := rand.New(rand.NewPCG(8, 9))
	hash := func() (h hashkey.Hash) {
		for i := 0; i < hashkey.Size; i += 8 {
			binary.LittleEndian.PutUint64(h[i:], r.Uint64())
		}
		return h
	}
	seen := time.Unix(1_700_000_000, 0)
	var loaded []store.Entry
	for i := range 3 * getPart {
		e := store.Entry{Hash: hash()}
		e.Value.Text = fmt.Appendf(nil, "https://example.org/%d/%s", i, bytes.Repeat([]byte("p"), i%40))
		switch i % 5 {
		case 1:
			e.Value.Data = []byte{byte(i), 1, 2}
		case 2:
			e.Value.Text = nil
		case 3:
			e.Value.FirstSeen, e.Value.LastSeen = seen, seen.Add(time.Hour)
		}
		loaded = append(loaded, e)
	}
	if _, err := db.Load(ctx, slices.Values(loaded)); err != nil {
		t.Fatal(err)
	}
	// More through AddBatch: in the delta.
	var added []store.Entry
	for i := range 1000 {
		added = append(added, store.Entry{Hash: hash(), Value: store.Value{Text: fmt.Appendf(nil, "https://example.net/%d", i)}})
	}
	if _, err := db.AddBatch(ctx, added); err != nil {
		t.Fatal(err)
	}
	var hs []hashkey.Hash
	for _, e := range slices.Concat(loaded, added) {
		hs = append(hs, e.Hash)
	}
	for range 5000 {
		hs = append(hs, hash()) // absent
	}
	hs = append(hs, hs[:3000]...) // repeats
	r.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
	check := func() {
		t.Helper()
		vs, ok, err := db.GetBatch(ctx, slices.Clone(hs))
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hs {
			v, err := db.Get(ctx, h)
			switch {
			case err == store.ErrNotFound:
				if ok[i] {
					t.Fatalf("%d: GetBatch found %x, Get did not", i, h[:4])
				}
			case err != nil:
				t.Fatal(err)
			case !ok[i] || !bytes.Equal(vs[i].Text, v.Text) || !bytes.Equal(vs[i].Data, v.Data) ||
				!vs[i].FirstSeen.Equal(v.FirstSeen) || !vs[i].LastSeen.Equal(v.LastSeen):
				t.Fatalf("%d: GetBatch %v %+v, Get %+v", i, ok[i], vs[i], v)
			}
		}
	}
	check()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, nil)
	defer db.Close()
	check()
}
