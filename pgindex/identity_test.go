package pgindex

import (
	"context"
	"testing"
)

// TestIdentity: the first Open draws the index's identity, every later
// one (concurrent or read-only) reads the same; another schema is
// another index; an index made before identities gets one at its first
// writable Open.
func TestIdentity(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	a := openSchema(t, &Options{Schema: schema})
	id := a.Identity()
	if len(id) != 32 {
		t.Fatalf("identity %q, want 32 hex digits", id)
	}
	if got := openSchema(t, &Options{Schema: schema}).Identity(); got != id {
		t.Errorf("second Open: identity %q, want %q", got, id)
	}
	if got := openSchema(t, &Options{Schema: schema, ReadOnly: true}).Identity(); got != id {
		t.Errorf("read-only Open: identity %q, want %q", got, id)
	}
	if got := openTestDB(t, nil).Identity(); got == id || len(got) != 32 {
		t.Errorf("another schema: identity %q (first %q), want another", got, id)
	}
	if _, err := a.pool.Exec(ctx, `DELETE FROM `+a.meta+` WHERE name = 'identity'`); err != nil {
		t.Fatal(err)
	}
	if got := openSchema(t, &Options{Schema: schema, ReadOnly: true}).Identity(); got != "" {
		t.Errorf("older index, read-only: identity %q, want none", got)
	}
	got := openSchema(t, &Options{Schema: schema}).Identity()
	if len(got) != 32 || got == id {
		t.Errorf("older index, writable Open: identity %q (was %q), want a new one", got, id)
	}
}
