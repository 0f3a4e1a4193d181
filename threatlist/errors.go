package threatlist

import "errors"

// Errors of the package. They are wrapped with the details: use errors.Is.
var (
	// ErrEntryLen is returned for a hash prefix shorter than MinEntryLen
	// or longer than MaxEntryLen bytes.
	ErrEntryLen = errors.New("threatlist: bad entry length")
	// ErrMalformed is returned when an update does not make sense: bad
	// JSON, Rice data that does not decode, a removal index out of range,
	// a missing field.
	ErrMalformed = errors.New("threatlist: malformed update")
	// ErrChecksum is returned when the list an update leads to does not
	// have the checksum the server sent with it.
	ErrChecksum = errors.New("threatlist: checksum mismatch")
	// ErrServer is returned when the server answers with an HTTP error.
	ErrServer = errors.New("threatlist: server error")
	// ErrState is returned when the saved state of the lists in an
	// index directory is damaged.
	ErrState = errors.New("threatlist: bad saved state")
)
