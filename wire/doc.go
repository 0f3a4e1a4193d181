// Package wire is urlhash's HTTP protocol on the wire: the encodings that
// both the server (package server) and its clients (package remote, the
// CLI) speak, so that a client links neither the server, package query
// nor Prometheus. It imports only hashkey and store. Every encoding is
// pinned byte for byte by testdata/golden.txt.
//
// # Entries and answers
//
// An entry (AppendEntry, DecodeEntry) is a key-length byte (32 for a full
// entry, 4..31 for a prefix entry), the key, a uvarint text length and
// the text, a uvarint data length and the data. An entry whose value has
// seen times or an expiry sets bit 0x80 of the key-length byte and ends
// with three varints: first seen, last seen and expiry, in unix seconds
// (0: none). A body of entries (AppendEntries, DecodeEntries) is entries
// back to back; a body of hashes (AppendHashes, ParseHashes) is 32-byte
// hashes back to back. A batch answer (AppendBools, ParseBools) is one
// byte per question, in order: 1 yes (new, found), 0 no; any other byte,
// or another count, is refused (ErrBadAnswer). The answer to a batch get
// (AppendGetAnswer, ParseGetAnswer) is a batch answer, 1 found, followed
// by the entry of each hash found, in order.
//
// # Errors
//
// An error answer is JSON, {"error":MSG,"kind":KIND} (AppendErrorBody,
// ParseErrorBody), with the HTTP status of its kind. Kind maps an error to
// its kind and status, and KindError a kind back to the sentinel error
// (store.ErrNotFound is "not_found", 404; ErrBadRequest "bad_request",
// 400; ErrKeyReused "key_reused", 422; ...), so that a client returns the
// error the server's backend returned. A path the server serves nothing at
// is ErrNoEndpoint ("no_endpoint", 404: never "not_found", which is about
// a key), a method it does not serve the path with ErrMethodNotAllowed
// ("method_not_allowed", 405, with an Allow header).
//
// # JSONL streams
//
// A scan answer is a stream of JSONL entries (store.AppendJSONL), one a
// line, ended by one line that says how it ended: {"end":true}
// (AppendStreamEnd) or, when the server failed after its status was
// sent, {"error":"MSG"} (AppendStreamError). ReadStream reads one; a
// stream without its end line is cut short (ErrStreamCut), never taken
// for complete. A load body is JSONL entries without an end line
// (NewLineScanner). Lines are bounded by MaxJSONLLine.
//
// # URL batches
//
// The text/plain URL batches of /v1/urls/add and /v1/urls/has
// (AppendAnswer, SplitLines): a request body is UTF-8 text, one URL per line, each line ended by LF
// (an optional CR before it is dropped; the last line may lack its LF). An
// answer is text/plain with one line per input line, in order:
//
//	new | present | absent | invalid<TAB>REASON
//
// A blank line is answered invalid. Lines are bounded (MaxLineLen), and so
// are the lines of one request (MaxLines); REASON never holds a tab, CR or
// LF.
//
// # Idempotency keys
//
// A write request may carry "Idempotency-Key: KEY" (the IETF httpapi
// Idempotency-Key draft: the value is a Structured Field string, quoted,
// and a bare token is taken too). The server keeps the first answer to a
// key with the write, durably, for at least 24 hours, and answers a repeat
// with it byte for byte, waiting while the first is still being applied.
// A repeat whose method, path, query or body differ (RequestDigest) is
// refused with 422 Unprocessable Content (ErrKeyReused).
//
// # Routes, parameters and headers
//
// Every route's path (PathAdd, PathVisit, ...) and query parameter
// (ParamPrefix, ParamRevisitAfter, ...) is a constant here, which the
// server routes by and the client sends. The revisit parameter is
// revisit_after on /v1/visit and /v1/urls/add alike; after, the name
// /v1/visit read first, is read too (ParamRevisitAfterAlias).
//
// The Content-Types (ContentTypeBinary, ContentTypeJSON, ContentTypeJSONL,
// ContentTypeText), the served index's identity (HeaderIndex, on every
// answer; a request naming another index is refused, ErrIndexMismatch),
// the body of /v1/stats (Stats) and a backup answer's trailers
// (TrailerBackupUntil, TrailerError) are named here too.
package wire
