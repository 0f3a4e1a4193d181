package pgindex

import (
	"fmt"
	"time"

	"github.com/urlhash/urlhash/store"
)

// Default option values.
const (
	// DefaultSchema is the default Options.Schema.
	DefaultSchema = "urlhash"
	// DefaultBatchSize is the default Options.BatchSize: rows per
	// statement of the batch methods.
	DefaultBatchSize = 10_000
)

// Options configures Open. A nil *Options or a zero field means the default
// documented on the field. Open copies the struct; later changes have no
// effect.
type Options struct {
	// Schema is the PostgreSQL schema that holds the index's tables, so
	// that several indexes can share a database. It must be a lowercase
	// SQL identifier: a letter or '_', then letters, digits or '_', at
	// most 63 bytes. Default "urlhash" (DefaultSchema).
	Schema string

	// Profile names the hashing profile (and digest) of the identities the
	// index holds, as index.Options.Profile: recorded when the index is
	// created (or first opened writable with a non-empty Profile); a later
	// Open with a different non-empty Profile fails with
	// store.ErrProfileMismatch. Empty means "any".
	Profile string

	// ReadOnly opens an existing index without writing to it: no schema
	// is created (a missing index gives store.ErrNoIndex) and writes
	// return store.ErrReadOnly. Default false.
	ReadOnly bool

	// MustExist makes a writable Open refuse (store.ErrNoIndex) a schema
	// that holds no index instead of creating one. Default false.
	MustExist bool

	// MaxConns bounds the connection pool. Default 0: pgxpool's default
	// (the larger of 4 and the number of CPUs), or pool_max_conns from the
	// connection string.
	MaxConns int32

	// BatchSize is the number of rows sent in one statement by
	// HasBatch, PutBatch and AddBatch; longer batches are split,
	// each part its own transaction. Default 10000 (DefaultBatchSize).
	BatchSize int

	// Now is the clock of the times the index records (VisitBatch) and
	// of expiry: rows whose expires_at (unix seconds) is Now or earlier
	// read as absent. Default time.Now.
	Now func() time.Time
}

// Validate reports whether the options are consistent.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.Schema != "" && !isIdentifier(o.Schema) {
		return fmt.Errorf("%w: schema %q is not a lowercase SQL identifier", store.ErrInvalidOptions, o.Schema)
	}
	if len(o.Profile) > 255 {
		return fmt.Errorf("%w: Profile longer than 255 bytes", store.ErrInvalidOptions)
	}
	if o.MaxConns < 0 {
		return fmt.Errorf("%w: negative MaxConns %d", store.ErrInvalidOptions, o.MaxConns)
	}
	if o.BatchSize < 0 {
		return fmt.Errorf("%w: negative BatchSize %d", store.ErrInvalidOptions, o.BatchSize)
	}
	return nil
}

// withDefaults returns a copy of o with defaults filled in.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Schema == "" {
		c.Schema = DefaultSchema
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	return c
}

// isIdentifier reports whether s is a lowercase SQL identifier that needs
// no quoting.
func isIdentifier(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
