package store_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/urlhash/urlhash/store"
)

// A value whose expiry an index could not store (or export) is refused
// before any backend sees it.
func ExampleValue_Check() {
	ok := store.Value{Expires: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	bad := store.Value{Expires: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	fmt.Println(ok.Check())
	fmt.Println(errors.Is(bad.Check(), store.ErrBadValue))
	// Output:
	// <nil>
	// true
}
