// Package wire holds the parts of urlhash's HTTP protocol that both the
// server (package server) and its clients (package remote, the CLI) speak,
// so that neither imports the other: the text/plain URL batches of
// /v1/urls/add and /v1/urls/has, the Idempotency-Key header that makes
// a write exactly-once, and the body of /v1/stats (Stats).
//
// # URL batches
//
// A request body is UTF-8 text, one URL per line, each line ended by LF
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
// refused with 422 Unprocessable Content.
package wire
