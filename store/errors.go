package store

import "errors"

// Sentinel errors. Backends wrap them with context; use errors.Is.
var (
	// ErrNotFound is returned when a key is not stored.
	ErrNotFound = errors.New("store: not found")
	// ErrNoIndex is returned when a location holds no index and the caller
	// asked not to create one (a read-only open, or one that must exist).
	ErrNoIndex = errors.New("store: no index")
	// ErrLocked is returned when another process holds the index's lock.
	ErrLocked = errors.New("store: index locked by another process")
	// ErrNeedsRecovery is returned by a read-only open of an index that was
	// not closed cleanly; the next writable open recovers it.
	ErrNeedsRecovery = errors.New("store: index not closed cleanly")
	// ErrFormat is returned when the stored format version is newer than
	// this program understands, or the stored metadata is malformed.
	ErrFormat = errors.New("store: unsupported format")
	// ErrProfileMismatch is returned when an index is opened with a profile
	// other than the one it was created with.
	ErrProfileMismatch = errors.New("store: profile mismatch")
	// ErrClosed is returned when a backend is used after Close.
	ErrClosed = errors.New("store: closed")
	// ErrReadOnly is returned when a write is attempted on a read-only
	// backend.
	ErrReadOnly = errors.New("store: read-only")
	// ErrPrefixLength is returned when a prefix entry is not
	// MinPrefixEntryLen..MaxPrefixEntryLen bytes long, or a scan prefix is
	// longer than a hash.
	ErrPrefixLength = errors.New("store: bad prefix length")
	// ErrInvalidOptions is returned by a backend's Options.Validate.
	ErrInvalidOptions = errors.New("store: invalid options")
	// ErrTooLarge is returned when a value is larger than the backend
	// holds (an in-memory index: about 1 MiB).
	ErrTooLarge = errors.New("store: value too large")
	// ErrBadValue is returned when a value cannot be stored as given: a
	// time outside MinTime..MaxTime.
	ErrBadValue = errors.New("store: bad value")
	// ErrCorrupt is returned when stored data is damaged or inconsistent.
	// The error names the damage (a file, a key) where the backend knows it.
	ErrCorrupt = errors.New("store: corrupt")
	// ErrDiskFull is returned when a write is refused because the free
	// space left for the index is below what it needs to keep working
	// (flushing, compacting, closing); nothing of the refused write is
	// stored, and what was written before stays readable.
	ErrDiskFull = errors.New("store: no space left on device")
	// ErrNotIndex is returned when a location that should be created as a
	// new index already holds something else (a non-empty directory that
	// holds no index).
	ErrNotIndex = errors.New("store: not an index")
)
