// Package threatlist keeps a local copy of a Google threat list up to date:
// the Web Risk Update API (threatLists.computeDiff) and Safe Browsing v5
// (hashLists.batchGet), client and server side.
//
// # Basics
//
// A List is a sorted set of hash prefixes. An update from the server holds
// removals (indices into the current list's lexicographic order) and
// additions (raw hashes or Rice-delta coded ones), a new version token and
// the SHA-256 checksum of the list the client must end up with; List.Apply
// applies it and the checksum decides whether it is kept. A RESET (Web Risk)
// or a full update (v5, partialUpdate false) starts from an empty list.
//
// Client fetches updates over HTTP (ComputeDiff, BatchGet); EncodeDiff
// builds the computeDiff answer a server sends. Lists, from Open, applies
// updates to an index in a directory (package index) and keeps the lists'
// state beside it (SyncWebRisk, SyncSafeBrowsing, Apply).
//
// # Persistence and atomicity
//
// The state of the lists synced into an index (each list's entries,
// version token and checksum, and a few previous versions so that a server
// can send a DIFF) is the file urlhash.threatlists in the index directory,
// replaced atomically (written aside, fsynced, renamed). The entries are
// also the index's own prefix entries (4..31 bytes) and full entries (32
// bytes), so that lookup and the Web Risk Lookup API answer from them.
//
// An update is applied in this order: the new state is written to
// urlhash.threatlists.next (the commit point); the index is changed
// (removals first, then additions) and synced; the new state file is
// renamed over the old one. A crash before the commit point leaves the old
// list; a crash after it leaves a state file the next Open finishes first,
// and Pending reports it so that readers refuse the index until then rather
// than answer from a mix of two versions. The caller holds the index open
// writable while it applies an update, which is the index's exclusive lock:
// no other process reads the index meanwhile. Within the process, readers
// of the index must not run during Apply (the urlhash commands never do).
package threatlist
