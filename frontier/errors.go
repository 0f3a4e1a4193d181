package frontier

import (
	"errors"

	"github.com/urlhash/urlhash/store"
)

// ErrNotFound is returned when a queue or a URL asked for is not in the
// frontier. It may be wrapped; use errors.Is.
var ErrNotFound = errors.New("frontier: not found")

// ErrInvalid is returned when a parameter is out of range (a queue key
// too long, a negative delay). It may be wrapped; use errors.Is.
var ErrInvalid = errors.New("frontier: invalid argument")

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("frontier: closed")

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
