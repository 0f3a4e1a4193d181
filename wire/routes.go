package wire

// The protocol's routes: package server serves each path, package remote
// sends to it. Every path is under /v1/ but /metrics.
const (
	PathHealth       = "/v1/health"        // GET: {"status","profile","index"}
	PathStats        = "/v1/stats"         // GET: Stats as JSON
	PathProfile      = "/v1/profile"       // GET: the recorded profile; POST: record one
	PathHas          = "/v1/has"           // POST hashes: one answer byte a hash
	PathGet          = "/v1/get"           // POST a hash: its entry, or 404
	PathGetBatch     = "/v1/get-batch"     // POST hashes (at most MaxGetBatch): one answer byte a hash, then the found ones' entries
	PathMatch        = "/v1/match"         // POST a hash: the matching entry, or 404
	PathPut          = "/v1/put"           // POST entries: 204
	PathAdd          = "/v1/add"           // POST entries: one answer byte an entry, 1 new
	PathVisit        = "/v1/visit"         // POST entries ?revisit_after=: as PathAdd
	PathDelete       = "/v1/delete"        // POST one entry: 204, or 404
	PathDeletePrefix = "/v1/delete-prefix" // POST ?prefix=&bits=[&all=true]: the counts removed
	PathLoad         = "/v1/load"          // POST JSONL entries, streamed: store.LoadResult
	PathURLsAdd      = "/v1/urls/add"      // POST URL text ?revisit_after=: new, present or invalid a line
	PathURLsHas      = "/v1/urls/has"      // POST URL text: present, absent or invalid a line
	PathScan         = "/v1/scan"          // GET ?prefix=&bits=&limit=: JSONL entries, streamed
	PathCount        = "/v1/count"         // GET ?prefix=&bits=: {"full","prefixes"}
	PathVerify       = "/v1/verify"        // POST: 204, or the damage
	PathSync         = "/v1/sync"          // POST: 204 once everything acknowledged is durable
	PathBackup       = "/v1/backup"        // GET ?since=: the backup file, streamed, and its trailers
	PathMetrics      = "/metrics"          // GET: Prometheus text format

	// The crawl frontier's, for a scrapy scheduler (package server's
	// documentation has the contract); each takes ?crawl=.
	PathFrontierEnqueue = "/v1/frontier/enqueue" // POST JSON Lines of requests: new, present or invalid a line
	PathFrontierClaim   = "/v1/frontier/claim"   // POST ?max=&per_queue=&lease=&wait=: JSON Lines of claimed requests
	PathFrontierAck     = "/v1/frontier/ack"     // POST ids a line: done, unknown or invalid a line
	PathFrontierRelease = "/v1/frontier/release" // POST ids a line: released, unknown or invalid a line
	PathFrontierExtend  = "/v1/frontier/extend"  // POST ?lease=, ids a line: extended, unknown or invalid a line
	PathFrontierDelay   = "/v1/frontier/delay"   // POST ?seconds=[&queue=]: {"crawl","queue","seconds"}
	PathFrontierStatus  = "/v1/frontier/status"  // GET: {"crawl","queued","due","in_transit","completed","queues"}
	PathFrontierDelete  = "/v1/frontier/delete"  // POST: the whole crawl; {"crawl","deleted"}

	// Google's Web Risk v1 API, served on an index of a Safe Browsing
	// list: its paths and parameters are Google's (package threatlist).
	PathSearchURIs   = "/v1/uris:search"
	PathSearchHashes = "/v1/hashes:search"
	PathComputeDiff  = "/v1/threatLists:computeDiff"
)

// The protocol's query parameters.
const (
	ParamPrefix = "prefix" // a key prefix in hex (an odd digit count is padded with 0)
	ParamBits   = "bits"   // how many leading bits of prefix count (default: all its digits')
	ParamLimit  = "limit"  // at most this many entries (0: all)
	ParamAll    = "all"    // "true": an empty prefix means every entry (delete-prefix)
	ParamSince  = "since"  // the backup version to start after (0: a full backup)
	// ParamRevisitAfter is a Go duration ("24h"): visit with this
	// revisitAfter (absent or 0: never revisit).
	ParamRevisitAfter = "revisit_after"
	// ParamRevisitAfterAlias is the name /v1/visit read before the two
	// routes took one: still read, and refused when it disagrees with
	// ParamRevisitAfter.
	ParamRevisitAfterAlias = "after"
)
