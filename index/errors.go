package index

import "errors"

// Sentinel errors. They may be wrapped with context; use errors.Is.
var (
	// ErrNotFound is returned when a key is not stored.
	ErrNotFound = errors.New("index: not found")
	// ErrNoIndex is returned when a directory holds no index and the caller
	// asked not to create one (Options.ReadOnly or Options.MustExist).
	ErrNoIndex = errors.New("index: no index in directory")
	// ErrLocked is returned when another process (or another DB in this
	// process) holds the directory lock.
	ErrLocked = errors.New("index: directory locked by another process")
	// ErrNeedsRecovery is returned by a read-only Open of an index that was
	// not closed cleanly (its write-ahead log must be truncated); one
	// writable Open recovers it.
	ErrNeedsRecovery = errors.New("index: not closed cleanly: open it writable once to recover")
	// ErrFormat is returned when the stored format version is newer than this
	// package understands, or the stored metadata is malformed.
	ErrFormat = errors.New("index: unsupported format")
	// ErrProfileMismatch is returned when Options.Profile differs from the
	// profile the index was created with.
	ErrProfileMismatch = errors.New("index: profile mismatch")
	// ErrClosed is returned when a DB is used after Close.
	ErrClosed = errors.New("index: closed")
	// ErrReadOnly is returned when a write is attempted on a read-only DB.
	ErrReadOnly = errors.New("index: read-only")
	// ErrPrefixLength is returned when a prefix entry is not 4..31 bytes long,
	// or a scan prefix is longer than a hash.
	ErrPrefixLength = errors.New("index: bad prefix length")
	// ErrInvalidOptions is returned by Options.Validate.
	ErrInvalidOptions = errors.New("index: invalid options")
	// ErrCorrupt is returned by Verify and by decoders when stored data is
	// inconsistent.
	ErrCorrupt = errors.New("index: corrupt")
)
