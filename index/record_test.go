package index

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/urlhash/urlhash/store"
)

// answerOf is a Record.Answer that spells which entries were new.
func answerOf(added []bool) []byte {
	b := []byte{'a'}
	for _, a := range added {
		if a {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
	}
	return b
}

func TestRecordedWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	es := entriesOf(randHashes(rand.New(rand.NewPCG(1, 2)), 3))
	rec := &Record{Key: "k1", TTL: time.Hour, Answer: answerOf}
	added, err := db.AddBatchRecorded(ctx, es[:2], rec)
	if err != nil || !added[0] || !added[1] {
		t.Fatalf("AddBatchRecorded = %v, %v", added, err)
	}
	// Present keys only: the record is kept all the same.
	if _, err := db.AddBatchRecorded(ctx, es[:1], &Record{Key: "k2", TTL: time.Hour, Answer: answerOf}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.VisitBatchRecorded(ctx, es[1:], 0, &Record{Key: "k3", TTL: time.Hour, Answer: answerOf}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutBatchRecorded(ctx, es[:1], &Record{Key: "k4", TTL: time.Hour, Answer: answerOf}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutRecord(&Record{Key: "k5", TTL: time.Hour, Answer: answerOf}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, nil)
	defer db.Close()
	for _, tc := range []struct{ key, want string }{
		{"k1", "a11"}, {"k2", "a0"}, {"k4", "a"}, {"k5", "a"},
		{"k3", "a11"}, // es[1], stored without times, is new to a visit
	} {
		got, ok, err := db.Recorded(tc.key)
		if err != nil || !ok || !bytes.Equal(got, []byte(tc.want)) {
			t.Errorf("Recorded(%s) = %q, %v, %v; want %q", tc.key, got, ok, err, tc.want)
		}
	}
	if _, ok, err := db.Recorded("nope"); ok || err != nil {
		t.Errorf("Recorded(nope) = %v, %v", ok, err)
	}
	// Records are no entries: counts and Verify ignore them.
	st, err := db.Stats(ctx)
	if err != nil || st.Entries != 3 {
		t.Errorf("Stats = %d entries, %v; want 3", st.Entries, err)
	}
	if err := db.Verify(ctx); err != nil {
		t.Error(err)
	}
	if _, err := db.AddBatchRecorded(ctx, es, &Record{Key: "", TTL: time.Hour, Answer: answerOf}); !errors.Is(err, store.ErrInvalidOptions) {
		t.Errorf("empty key: %v", err)
	}
}
