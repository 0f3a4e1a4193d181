// Package clockhook lets the module's tests run an embedded index on a fake
// clock (package internal/fakeclock) without a public option: the clock of
// an index.Options is an unexported field, and package index installs
// SetIndex, the one way to set it from outside the package, when it is
// initialised. Nothing else assigns SetIndex.
package clockhook

import "time"

// SetIndex sets the clock of o, which must be an *index.Options (package
// index imports this package, so it cannot be named here): the clock of the
// times the index records and of expiry, time.Now when unset. It is nil
// until package index is initialised, which any program that has an
// index.Options to pass has done.
var SetIndex func(o any, now func() time.Time)
