// Package backend opens the store.Backend that a location names: a
// directory for the embedded Badger index (package index), a postgres://
// connection string for PostgreSQL and compatible engines (package
// pgindex), or http(s)://HOST:PORT for a urlhash server (package remote). It is the one place that knows every backend; a
// program that uses only one of them imports that package instead and
// links nothing of the others.
package backend

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/pgindex"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
)

// Options configures Open. A nil *Options means the defaults.
type Options struct {
	// ReadOnly opens an existing index without writing to it; MustExist
	// refuses (store.ErrNoIndex) to create one. Both default false.
	ReadOnly, MustExist bool

	// Wait is how long Open retries while another process holds the
	// index (store.ErrLocked). Default 0: fail at once.
	Wait time.Duration

	// Index is passed to index.Open for a directory; its ReadOnly and
	// MustExist fields are set from the fields above. (Package query
	// records and checks the profile; see store.Backend.SetProfile.)
	Index index.Options

	// Postgres is passed to pgindex.Open for a connection string, its
	// ReadOnly and MustExist set likewise.
	Postgres pgindex.Options

	// Remote is passed to remote.Open for a server location, its
	// ReadOnly set likewise. The token is Remote.Token: the library
	// reads no environment (the CLI passes URLHASH_TOKEN).
	Remote remote.Options
}

// IsPostgres reports whether location names a PostgreSQL index (a
// postgres:// or postgresql:// connection string) rather than a directory.
func IsPostgres(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// Display returns location as it may be shown: the password of a
// connection string or of a server location is hidden.
func Display(location string) string {
	switch {
	case IsPostgres(location) || looksLikeKeywordValue(location):
		return pgindex.Redact(location)
	case strings.Contains(location, "://"):
		return remote.Redact(location)
	}
	return location
}

// keywordValue matches a libpq keyword/value connection string's first
// pair, such as "host=db" or "dbname = x".
var keywordValue = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|sslmode|service|application_name|connect_timeout)\s*=`)

func looksLikeKeywordValue(location string) bool { return keywordValue.MatchString(location) }

// urlLike matches the start of a location that looks like a URL: a
// scheme of two or more characters (one is a Windows drive letter), a
// colon and a slash.
var urlLike = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]+):/`)

// checkScheme refuses a location that looks like a URL but is none that
// Open takes (HTTP://, http:/host, ftp://...): as a directory name it
// would silently become a local index.
func checkScheme(location string) error {
	m := urlLike.FindStringSubmatch(location)
	if m == nil || remote.IsLocation(location) || IsPostgres(location) {
		return nil
	}
	scheme := m[1]
	switch lower := strings.ToLower(scheme); {
	case !strings.HasPrefix(location[len(scheme):], "://"):
		return fmt.Errorf("%w: %q looks like a URL with a broken scheme (want http://HOST:PORT, https://, postgres:// or a directory)", ErrLocation, Display(location))
	case lower == "http" || lower == "https" || lower == "postgres" || lower == "postgresql":
		return fmt.Errorf("%w: %q: write the scheme in lower case, %s://", ErrLocation, Display(location), lower)
	}
	return fmt.Errorf("%w: %q: scheme %s: is not one urlhash reads (want http://HOST:PORT, https://, postgres:// or a directory)", ErrLocation, Display(location), scheme)
}

// ErrLocation is returned, wrapped, for a location Open does not accept.
var ErrLocation = errors.New("backend: unsupported location")

// CheckLocation returns an error wrapping ErrLocation when Open would
// refuse location for its form alone: empty, a PostgreSQL keyword/value
// string, or something that looks like a URL with a scheme Open does not
// take or a broken one (HTTP://, http:/host, ftp://). Open checks it
// first; a caller that does more before Open (checking a new directory's
// parent) may check it earlier.
func CheckLocation(location string) error {
	switch {
	case location == "":
		return fmt.Errorf("%w: empty location", ErrLocation)
	case looksLikeKeywordValue(location):
		// A directory of that name would be created silently, with the
		// password in its name.
		return fmt.Errorf("%w: %q looks like a PostgreSQL keyword/value connection string; write it as postgres://USER@HOST/DB?sslmode=...", ErrLocation, pgindex.Redact(location))
	}
	return checkScheme(location)
}

// Open opens (or, unless ReadOnly or MustExist, creates) the index at
// location. ctx bounds the opening, including the Wait for a lock.
func Open(ctx context.Context, location string, opts *Options) (store.Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := CheckLocation(location); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(o.Wait)
	for {
		b, err := open(ctx, location, &o)
		if !errors.Is(err, store.ErrLocked) || !time.Now().Before(deadline) {
			return b, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func open(ctx context.Context, location string, o *Options) (store.Backend, error) {
	if remote.IsLocation(location) {
		ro := o.Remote
		ro.ReadOnly = o.ReadOnly
		db, err := remote.Open(ctx, location, &ro)
		if err != nil {
			return nil, err
		}
		return db, nil
	}
	if IsPostgres(location) {
		po := o.Postgres
		po.ReadOnly, po.MustExist = o.ReadOnly, o.MustExist
		db, err := pgindex.Open(ctx, location, &po)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return db, nil
	}
	io := o.Index
	io.ReadOnly, io.MustExist = o.ReadOnly, o.MustExist
	db, err := index.Open(location, &io)
	if err != nil {
		return nil, err
	}
	return db, nil
}
