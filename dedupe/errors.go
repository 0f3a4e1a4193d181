package dedupe

import (
	"errors"
	"fmt"
)

// ErrJournalBusy is returned, wrapped, by Open when Options.Journal is
// held by another client: two clients never share a journal file.
var ErrJournalBusy = errors.New("dedupe: journal in use by another client")

// ErrOtherIndex is returned, wrapped in an *IndexError, by Open when a
// journal holds a batch written against another index than the one open:
// a batch is finished only into the index it was meant for. Use errors.Is
// or errors.As.
var ErrOtherIndex = errors.New("dedupe: journal of another index")

// ErrInvalidOptions is returned, wrapped, by Open for options that
// exclude each other.
var ErrInvalidOptions = errors.New("dedupe: invalid options")

// IndexError reports a journal left by a client killed while it wrote a
// batch to one index, found by a client of another: the batch is left in
// the journal, neither finished nor dropped. Its inputs may be stored in
// the first index without having been reported; serving that index again
// at the same location and opening a client of it finishes the batch.
type IndexError struct {
	Journal string // the journal file
	Inputs  int    // the inputs of its batch
	Want    string // the identity of the index the batch was written to
	Have    string // the identity of the index open ("" when it tells none)
	Path    string // the location of the index open (store.Backend.Path)
}

func (e *IndexError) Error() string {
	have := e.Have
	if have == "" {
		have = "an index without identity"
	}
	return fmt.Sprintf("dedupe: journal %s holds a batch of %d inputs written to index %s; %s is %s",
		e.Journal, e.Inputs, e.Want, e.Path, have)
}

// Unwrap returns ErrOtherIndex.
func (e *IndexError) Unwrap() error { return ErrOtherIndex }
