// Package server serves a store.Backend over HTTP, so that many processes
// share one index: the embedded Badger index admits one writer process,
// and "urlhash serve" is that process for all of them. Package remote is
// the client; it implements store.Backend, so every command and
// query.Index work on a server as on a directory (--db http://HOST:PORT).
//
// # Protocol
//
// Every endpoint is under /v1/. Requests and answers about many keys use a
// compact binary body (Content-Type application/octet-stream) that any
// language writes with its standard library; errors are JSON objects
// {"error": "...", "kind": "..."} with an HTTP status that says the kind,
// a path no endpoint serves (404 no_endpoint) and a wrong method (405
// method_not_allowed, with an Allow header) included.
//
//	GET  /v1/health                      {"status":"ok","profile":...,"index":ID}; without
//	                                     the token of a server that has one, {"status":"ok"}
//	GET  /v1/stats                       wire.Stats as JSON (snake_case names)
//	GET  /v1/profile                     the recorded profile, as text
//	POST /v1/profile                     record the body's profile (SetProfile)
//	POST /v1/has      N*32 hash bytes    N bytes, 1 present, 0 absent
//	POST /v1/get      32 hash bytes      the value: entry encoding, or 404
//	POST /v1/get-batch  N*32 hash bytes  N bytes, 1 present, 0 absent, then the
//	                                     entry of each present hash, in order
//	                                     (N at most wire.MaxGetBatch, else 400)
//	POST /v1/match    32 hash bytes      the matching entry (entry encoding), or 404
//	POST /v1/put      entries            204: stored and durable
//	POST /v1/add      entries            one byte per entry, 1 new, 0 present; durable
//	POST /v1/visit?revisit_after=DURATION  entries   one byte per entry, 1 new
//	                                     (absent, or last visited DURATION ago by
//	                                     the server's clock), 0 seen; durable
//	POST /v1/delete   one entry (key)    204, or 404
//	POST /v1/delete-prefix?prefix=HEX&bits=N  {"full":..,"prefixes":..}; durable
//	                                          (an empty prefix needs all=true)
//	POST /v1/load     JSONL entries      store.LoadResult as JSON
//	POST /v1/urls/add[?revisit_after=DURATION]  URL text, one a line
//	                                     one line per input line: new, present
//	                                     or invalid<TAB>REASON; durable
//	POST /v1/urls/has URL text, one a line   one line per input line: present,
//	                                     absent or invalid<TAB>REASON
//	GET  /v1/scan?prefix=HEX&bits=N&limit=N   JSONL entries, streamed
//	GET  /v1/count?prefix=HEX&bits=N          {"full":..,"prefixes":..}
//	POST /v1/verify                      204, or the damage
//	POST /v1/sync                        204 when everything acknowledged is durable
//	GET  /v1/backup?since=N              the file "urlhash backup" writes, streamed;
//	                                     trailer Urlhash-Backup-Until: the next since
//	GET  /v1/uris:search?uri=URI&threatTypes=T          Web Risk v1 Lookup API, on an
//	GET  /v1/hashes:search?hashPrefix=B64&threatTypes=T  index of a Safe Browsing list
//	GET  /v1/threatLists:computeDiff?threatType=T&versionToken=B64&...
//	                                     Web Risk v1 Update API: the list's diff
//	                                     from the version a client holds (or all
//	                                     of it), from the versions sync kept
//	GET  /metrics                        Prometheus text format: Go's and the process's
//	                                     collectors, build info, requests and latency
//	                                     by endpoint, refusals by reason, requests in
//	                                     flight and waiting, batch sizes, new and
//	                                     present keys, idempotency replays, fsyncs and
//	                                     their duration, entries, filter size and
//	                                     probes, disk bytes, free space and reserve,
//	                                     key-table merges, Badger compactions
//
// The paths and query parameters are constants of package wire (PathAdd,
// ParamRevisitAfter, ...). The revisit parameter of /v1/visit and
// /v1/urls/add is revisit_after; after, the name /v1/visit read first, is
// read too (both given must agree), and a repeat of a keyed request under
// either name is the same request.
//
// Every answer names the index served: Urlhash-Index, its identity (32 hex
// digits, drawn when the index was created; also "index" in /v1/health).
// A request that sends Urlhash-Index naming another index is refused with
// 412 (kind index_mismatch) before anything of it is applied: package
// remote names the index on the batches it sends with an Idempotency-Key,
// which a client resends after a crash.
//
// An entry is a key-length byte (32 for a full entry, 4..31 for a prefix
// entry), the key, a uvarint text length and the text, a uvarint data
// length and the data; a body is entries back to back. An entry whose
// value has seen times or an expiry sets bit 0x80 of the key-length byte
// and ends with three varints: first seen, last seen and expiry, in unix
// seconds (0: none); an entry without them is encoded as it always was. JSONL is the
// format of package store (store.AppendJSONL). Package wire holds every
// one of these encodings (entries, hashes, one-byte answers, the JSONL
// stream's end and error lines, error bodies, headers and trailers),
// shared with the client, package remote.
//
// # URLs as text
//
// /v1/urls/add and /v1/urls/has take URLs, not hashes, so that no client
// reimplements the URL Standard: the server hashes each line with the
// profile the index records (recording the default one in an index that
// records none, on the first add). The format is package wire's: UTF-8
// lines ended by LF, an optional CR before it dropped, a blank line
// answered invalid; lines and line counts are bounded (wire.MaxLineLen,
// wire.MaxLines) as well as the body. revisit_after (or after) gives
// urls/add the semantics of /v1/visit (dedupe --revisit-after).
//
// # The crawl frontier
//
// With Options.Frontier, the server is a crawl frontier's (package
// frontier) for a scrapy scheduler; a crawl= query parameter names the
// crawl (default DEFAULT), request ids are 32 hex digits, every POST takes
// an Idempotency-Key (a repeated claim gets the same requests), and every
// answer is given once what it reports is durable:
//
//	POST /v1/frontier/enqueue   body: JSON Lines {"url", "fingerprint" (2..64 hex digits, an
//	                            even number, optional: the identity instead of the URL's),
//	                            "queue" (default the URL's host), "priority" (int), "data"
//	                            (base64: the serialised request)}; answer: text/plain, a line
//	                            per input line: new, present (the crawl knows the identity) or
//	                            invalid TAB reason
//	POST /v1/frontier/claim     ?max=N (100) &per_queue=M (1) &lease=SECONDS (60) &wait=SECONDS
//	                            (0..30, 0): up to N due requests, at most M a queue, from
//	                            queues past their delay; answer: JSON Lines {"id", "url",
//	                            "queue", "priority", "data" (left out when none)}; a request
//	                            neither acked nor released within its lease is due again.
//	                            With nothing due, a wait answers once something is (enqueued,
//	                            released, due again) or the wait has passed (empty); it holds
//	                            no slot meanwhile, and beyond 4 x MaxInFlight waiting claims
//	                            a claim answers at once
//	POST /v1/frontier/ack       body: ids, one a line; answer per line: done, unknown or invalid:
//	                            completed, never handed out again
//	POST /v1/frontier/release   body: ids; answer per line: released (due at once) or unknown
//	POST /v1/frontier/extend    ?lease=SECONDS (60); body: ids; answer per line: extended (its
//	                            lease ends SECONDS from now) or unknown (not in transit: the
//	                            caller holds it no more)
//	POST /v1/frontier/delay     ?seconds=S [&queue=Q]: the politeness delay of a queue, or the
//	                            crawl's default; answer {"crawl","queue","seconds"}
//	GET  /v1/frontier/status    {"crawl","queued","due","in_transit","completed","queues"} and
//	                            "recounting":true while a restart's counts are made: the crawl
//	                            is idle when queued and in_transit are 0
//	POST /v1/frontier/delete    deletes the whole crawl (queued, in transit, completed, its
//	                            delays); answer {"crawl","deleted"} (the URLs it knew)
//
// /metrics then reports per crawl urlhash_frontier_queued, _in_transit,
// _completed, _queues, _puts_total and _gets_total.
//
// # Exactly-once writes
//
// Every write (put, add, visit, delete, delete-prefix, load, urls/add)
// may carry an Idempotency-Key header (the IETF httpapi draft: a quoted
// string, or a bare token; at most 255 bytes). The server keeps the answer
// of the first request with the key for Options.IdempotencyTTL (24 hours
// by default), and answers a repeat with it, byte for byte; a repeat that
// arrives while the first is being applied waits for it (where the draft
// answers 409). A repeat whose method, path, query or body differ is
// refused with 422 (kind key_reused). Error answers are not kept: a
// repeat of a failed request runs again.
//
// For add, visit, put and urls/add the answer is stored in the same
// ordered index write as the keys, after them (index.Record): once a key
// of the batch is readable, so is the answer, so that a client that resends
// a batch after a crash of either side is never told "present" for a key
// that its own first attempt stored. A batch of present keys only stores
// its answer just after answering, still holding the key. Delete,
// delete-prefix and load store their answer after the write, before its
// fsync: a crash between the two makes a repeat run again (a delete then
// answers 404). Answers live in the index's metadata keyspace, with a
// Badger TTL, outside backups and counts; their space is bounded by the
// writes of IdempotencyTTL.
//
// # Durability
//
// A write (put, add, visit, delete, delete-prefix, load) is answered only
// once it is durable; a write that stored nothing (every key present) is
// answered without an fsync, unless a write that may have stored its keys
// has not been synced yet.
// Concurrent writers share fsyncs (group commit): a write waits for one
// Sync that starts after it, and one Sync serves every write that came
// before it started. A load refused midway (a malformed line, a body cut
// short) may have stored the lines before it; sending it again is safe,
// since a load adds only absent keys.
//
// # Slow and bad clients
//
// A request takes one of Options.MaxInFlight slots only once its whole
// body has arrived, read under Options.BodyTimeout (408 after it) and
// within Options.MaxBuffered bytes of bodies held at once; a Content-Length
// over Options.MaxBody is answered 413 at once, a body cut short 400. A
// load streams its body while it is served: it may pause at most
// BodyTimeout, and loads take at most a quarter of the slots. GET
// /v1/health and /metrics take no slot, so they answer whatever the other
// clients do.
//
// # Memory
//
// Bodies of a known length are read into buffers kept for the next
// request (size classes up to 4 MiB). An add whose entries are all bare
// full keys (a seen-set's) is decoded into a reused slice of keys and
// given to the index without an entry per key (index.DB.AddKeys), and at
// most GOMAXPROCS such adds run at once: the others wait holding only
// their bodies.
//
// # Logs
//
// Options.Logger gets one structured line per request (method, path,
// status, duration, bytes in and out, remote address, and the error kind
// of a failed one) and one per group-commit fsync: at level Debug for
// the normal case, so that a busy server logs only what goes wrong at
// Info.
//
// # Security
//
// The server listens on loopback by default; to listen elsewhere it
// requires a bearer token (compared in constant time) on every request
// but GET /v1/health, which answers a request without it {"status":"ok"}
// and nothing else (no profile, no identity), for liveness probes. A
// request without the token,
// or with another, is answered 401 {"error","kind":"unauthorized"} whose
// message says how to send it. Request bodies,
// header time, idle time and the requests in flight are bounded; a
// malformed request gets a 4xx answer and disturbs no other client.
package server
