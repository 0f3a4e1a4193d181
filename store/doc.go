// Package store is the vocabulary every urlhash backend speaks: the
// entries it keeps, the values they hold, the answers it gives, its
// statistics and sentinel errors, and the [Backend] interface that the
// embedded Badger index (package index), PostgreSQL (package pgindex) and
// the client of a urlhash server implement.
//
// It knows hashes and bytes, never URLs and never a particular engine: it
// links neither URL parsing nor Badger nor a database driver, so that each
// backend, and each program, links only what it uses. Package query joins
// a Backend with a URL profile.
//
// # Keys
//
// A full entry is keyed by a whole 32-byte hashkey.Hash. A prefix entry is
// keyed by its first MinPrefixEntryLen..MaxPrefixEntryLen bytes only: a
// Safe Browsing list's 4-byte prefixes, or a short or very-short hash
// received from elsewhere. Full and prefix entries live in separate
// keyspaces; a full entry and a prefix entry never shadow each other, and
// Backend.Match finds either.
//
// # Errors
//
// Backends return the sentinel errors of this package, wrapped with
// context: use errors.Is. No backend lets an engine's own error type
// escape.
package store
