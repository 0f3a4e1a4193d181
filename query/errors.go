package query

import "errors"

// ErrBadPrefix is returned, wrapped, when a scan prefix is not 1..64 hex
// digits. Use errors.Is.
var ErrBadPrefix = errors.New("query: bad prefix")
