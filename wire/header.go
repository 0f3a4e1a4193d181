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

// Trailers of a backup answer: the version to pass as since to the next
// backup of the chain, and the error that cut the stream short.
const (
	TrailerBackupUntil = "Urlhash-Backup-Until"
	TrailerError       = "Urlhash-Error"
)
