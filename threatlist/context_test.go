package threatlist

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestApplyCancelled: an Apply whose context is done before it begins
// returns its error and changes nothing.
func TestApplyCancelled(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	v1 := randomList(t, r, 500)
	dir := t.TempDir()
	db := openIndex(t, dir)
	ls := openLists(t, db)
	name := WebRiskName("MALWARE")
	sum := v1.Checksum()
	u := map[string]*Update{name: {Reset: true, Additions: v1, Version: []byte("a"), Checksum: sum[:]}}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ls.Apply(ctx, u); !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply with a cancelled context: %v, want context.Canceled", err)
	}
	if Pending(dir) || indexEntries(t, db).Len() != 0 || len(ls.Version(name)) != 0 {
		t.Fatal("a cancelled Apply changed the lists")
	}
}
