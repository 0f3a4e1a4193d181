package frontier

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/urlhash"
	"github.com/urlhash/urlhash/index"
)

// Defaults of Options and of the calls' parameters, as the url-frontier
// reference service has them.
const (
	// DefaultDelay is a queue's politeness delay until SetDelay sets one:
	// 1 s.
	DefaultDelay = time.Second
	// DefaultTransit is how long a URL handed out stays in transit when
	// GetParams.Transit is 0: 30 s.
	DefaultTransit = 30 * time.Second
	// DefaultCrawl is the crawl of an empty crawl ID.
	DefaultCrawl = "DEFAULT"
	// MaxKeyLen is the longest queue key; a longer one is refused.
	MaxKeyLen = 255
	// DefaultMaxInTransit is the default Options.MaxInTransit.
	DefaultMaxInTransit = 1 << 20
)

// Options configures Open. A nil *Options or a zero field means the
// default documented on the field.
type Options struct {
	// Profile computes a URL's identity: two URLs with one identity are
	// one URL of a crawl. Default urlhash.Default (the URL Standard's
	// canonical form); urlhash serve passes the profile its index
	// records.
	Profile hashkey.Profile
	// Index configures the frontier's own index (its directory is
	// Open's). Default: index.Options with a 64 MiB value cache, a 16 MiB
	// index cache, value blocks of 4 KiB, the key table, and Profile
	// recorded.
	Index *index.Options
	// Logger receives the frontier's log lines. Default slog.Default().
	Logger *slog.Logger
	// LogLevel, when set, is the level SetLogLevel changes (the logger's
	// handler should read it). Default: none; SetLogLevel then only logs.
	LogLevel *slog.LevelVar
	// MaxInTransit bounds the URLs in transit at once, which the frontier
	// holds in memory (about 100 bytes each): GetURLs hands out nothing
	// more while they reach it. Default DefaultMaxInTransit (1,048,576).
	MaxInTransit int
	// Node is what ListNodes answers: this frontier's address. Default
	// "localhost".
	Node string

	// now is the clock (tests set a fake one). Default time.Now.
	now func() time.Time
	// noRecount leaves the counts of a reopened frontier uncounted (tests
	// of the first GetURLs after a restart).
	noRecount bool
}

// Validate reports whether the options are consistent.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.Index != nil {
		if o.Index.ReadOnly {
			return fmt.Errorf("frontier: the frontier's index cannot be read-only")
		}
		return o.Index.Validate()
	}
	return nil
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Profile == nil {
		c.Profile = urlhash.Default
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxInTransit <= 0 {
		c.MaxInTransit = DefaultMaxInTransit
	}
	if c.Node == "" {
		c.Node = "localhost"
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}
