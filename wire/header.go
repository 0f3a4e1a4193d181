package wire

// Content types of the protocol's bodies (ContentTypeText is the URL
// batches').
const (
	// ContentTypeBinary is the Content-Type of entries, hashes and batch
	// answers.
	ContentTypeBinary = "application/octet-stream"
	// ContentTypeJSON is the Content-Type of JSON answers and errors.
	ContentTypeJSON = "application/json"
	// ContentTypeJSONL is the Content-Type of a JSONL stream.
	ContentTypeJSONL = "application/x-ndjson"
)

// HeaderIndex names the served index's identity (index.DB.Identity, 32 hex
// digits): the server sets it on every answer, and a client that means one
// index sets it on a request, which a server serving another refuses (412
// index_mismatch, ErrIndexMismatch). Journals of writes name it, so that
// a write resent after a crash reaches only the index it was meant for.
const HeaderIndex = "Urlhash-Index"

// Trailers of a backup answer: the version to pass as since to the next
// backup of the chain, and the error that cut the stream short.
const (
	TrailerBackupUntil = "Urlhash-Backup-Until"
	TrailerError       = "Urlhash-Error"
)
