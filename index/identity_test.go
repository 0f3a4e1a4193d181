package index

import (
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// TestIdentity: an index draws its identity at creation and keeps it
// across opens, read-only ones included; two indexes differ; an index
// made before identities gets one at its first writable open (none
// read-only before that).
func TestIdentity(t *testing.T) {
	isIdentity := func(id string) bool {
		b, err := hex.DecodeString(id)
		return err == nil && len(id) == IdentityLen && len(b) == IdentityLen/2
	}
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a := mustOpen(t, dirA, nil)
	idA := a.Identity()
	if !isIdentity(idA) {
		t.Fatalf("new index: identity %q, want %d hex digits", idA, IdentityLen)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := mustOpen(t, dirB, nil)
	if idB := b.Identity(); idB == idA || !isIdentity(idB) {
		t.Errorf("second index: identity %q, first %q: want another", idB, idA)
	}
	b.Close()
	for _, ro := range []bool{false, true} {
		db := mustOpen(t, dirA, &Options{ReadOnly: ro})
		if got := db.Identity(); got != idA {
			t.Errorf("reopened (read-only %v): identity %q, want %q", ro, got, idA)
		}
		db.Close()
	}
	if mem := openTestDB(t, true, nil); !isIdentity(mem.Identity()) {
		t.Errorf("in-memory index: identity %q", mem.Identity())
	}

	// An index of an older urlhash: no identity recorded.
	db := mustOpen(t, dirA, nil)
	if err := db.st.bdb.Update(func(txn *badger.Txn) error { return txn.Delete(metaKey(metaIdentity)) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = mustOpen(t, dirA, &Options{ReadOnly: true})
	if got := db.Identity(); got != "" {
		t.Errorf("older index, read-only: identity %q, want none", got)
	}
	db.Close()
	db = mustOpen(t, dirA, nil)
	idNew := db.Identity()
	db.Close()
	if !isIdentity(idNew) || idNew == idA {
		t.Errorf("older index, first writable open: identity %q (was %q), want a new one", idNew, idA)
	}
	db = mustOpen(t, dirA, &Options{ReadOnly: true})
	if got := db.Identity(); got != idNew {
		t.Errorf("after it: identity %q, want %q", got, idNew)
	}
	db.Close()
}
