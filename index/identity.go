package index

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// metaIdentity records the index's identity: 16 random bytes.
const metaIdentity = "identity"

// IdentityLen is the length of an identity's text: 32 hex digits.
const IdentityLen = 32

// Identity returns the index's identity: 128 random bits, as 32 lowercase
// hex digits, drawn when the index was created (an index made before
// identities gets one at its first writable open) and never changed. Two
// indexes never share one: a restored or recovered copy is a new index
// with an identity of its own. A client that journals its writes
// (package dedupe) records it, so that a write is never finished into
// another index served at the same address. It is "" only for an index
// made before identities and opened read-only since.
func (db *DB) Identity() string { return db.identity }

// loadIdentity (step 9 of Open) trusts Badger: it reads the recorded
// identity, or draws one and records it durably when the index records
// none and is writable (an index made before identities): an identity a
// server gave out must not change after a crash.
func (db *DB) loadIdentity() error {
	var id []byte
	err := db.st.bdb.View(func(txn *badger.Txn) error {
		var err error
		id, err = getCopy(txn, metaKey(metaIdentity))
		return err
	})
	if err != nil {
		return err
	}
	if id != nil {
		db.identity = hex.EncodeToString(id)
		return nil
	}
	if db.opts.ReadOnly {
		return nil
	}
	id = make([]byte, IdentityLen/2)
	rand.Read(id)
	if err := db.st.update(func(txn *badger.Txn) error { return txn.Set(metaKey(metaIdentity), id) }); err != nil {
		return translate(err)
	}
	if !db.opts.InMemory {
		if err := db.st.bdb.Sync(); err != nil {
			return fmt.Errorf("index: recording the identity of %s: %w", db.path, translate(err))
		}
	}
	db.identity = hex.EncodeToString(id)
	return nil
}
