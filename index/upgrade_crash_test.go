package index

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/internal/fakeclock"
	"github.com/urlhash/urlhash/store"
)

// TestUpgradeCrash: a crash in the upgrade to format 3 between the new
// key file (synced) and Badger's drop of the entries it copied leaves
// every entry in both stores. The crash's image opens, answers with
// Badger's entries, upgrades again and loses nothing: values, times,
// expiries, counts, and the key table's own entries.
func TestUpgradeCrash(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(fakeclock.Start())
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{now: clock.Now})
	bare := []hashkey.Hash{hashOf("bare1"), hashOf("bare2")}
	if _, err := db.AddBatch(ctx, []store.Entry{store.FullEntry(bare[0], store.Value{}), store.FullEntry(bare[1], store.Value{})}); err != nil {
		t.Fatal(err)
	}
	// A format 2 index: entries with values in Badger.
	seen := clock.Now().Truncate(time.Second)
	legacy := map[hashkey.Hash]store.Value{
		hashOf("text"):    {Text: []byte("https://example.com/")},
		hashOf("data"):    {Data: []byte{1, 2, 3}},
		hashOf("times"):   {FirstSeen: seen.Add(-time.Hour), LastSeen: seen},
		hashOf("expires"): {Text: []byte("t"), Expires: seen.Add(24 * time.Hour)},
		hashOf("bare3"):   {},
	}
	for h, v := range legacy {
		putLegacy(t, db, h, v)
	}
	if err := db.markTTL(); err != nil { // as a write of an expiring entry does
		t.Fatal(err)
	}
	if err := db.st.recordFormat(formatKeyTable); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	errCrash := errors.New("crash")
	var crashed string
	_, err := Open(dir, &Options{now: clock.Now, upgradeCrash: func() error {
		crashed = copyDir(t, dir)
		return errCrash
	}})
	if !errors.Is(err, errCrash) || crashed == "" {
		t.Fatalf("Open with a crash in the upgrade: %v", err)
	}
	for _, d := range []string{crashed, dir} {
		db := mustOpen(t, d, &Options{now: clock.Now})
		for h, want := range legacy {
			v, err := db.Get(ctx, h)
			if err != nil || string(v.Text) != string(want.Text) || string(v.Data) != string(want.Data) ||
				!v.FirstSeen.Equal(want.FirstSeen) || !v.LastSeen.Equal(want.LastSeen) || !v.Expires.Equal(want.Expires) {
				t.Fatalf("%s: get %x after the crash: %+v, %v; want %+v", d, h[:4], v, err, want)
			}
		}
		for _, h := range bare {
			if ok, err := db.Has(ctx, h); !ok || err != nil {
				t.Fatalf("%s: has %x after the crash: %v, %v", d, h[:4], ok, err)
			}
		}
		st, err := db.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(len(bare) + len(legacy)); st.Entries != want || st.Expiring != 1 || st.FormatVersion != formatValues {
			t.Fatalf("%s: %d entries (%d expiring), format %d; want %d (1), format %d", d, st.Entries, st.Expiring, st.FormatVersion, want, formatValues)
		}
		if none, err := db.st.badgerHoldsNoFullEntries(); !none || err != nil {
			t.Fatalf("%s: Badger still holds full entries after the upgrade (%v)", d, err)
		}
		if err := db.Verify(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
