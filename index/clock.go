package index

import (
	"fmt"
	"time"

	"github.com/urlhash/urlhash/internal/clockhook"
)

// The clock is a test hook, not an option: see Options.now and package
// internal/clockhook, through which tests outside this package set it.
func init() {
	clockhook.SetIndex = func(o any, now func() time.Time) {
		opts, ok := o.(*Options)
		if !ok {
			panic(fmt.Sprintf("clockhook.SetIndex: %T is not an *index.Options", o))
		}
		opts.now = now
	}
}
