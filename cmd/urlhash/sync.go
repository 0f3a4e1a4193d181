package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/server"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/threatlist"
)

func syncCommand() *command {
	return &command{
		name:      "sync",
		usageLine: "sync --db DIR [--endpoint URL] [--threat-type T] [--key-file FILE] [--watch]\nsync --db DIR --api safebrowsing-v5 --list NAME... [flags]",
		short:     "keep a Web Risk or Safe Browsing v5 threat list up to date in an index",
		long: `Fetches the update of a threat list from the version the index holds
and applies it: the Web Risk Update API (GET /v1/threatLists:computeDiff,
the default) or Safe Browsing v5 (GET /v5/hashLists:batchGet). Removals
and additions (raw or Rice-delta coded) are applied to the sorted list, the
SHA-256 checksum of the result is checked, and only then does the index
take the new version: its prefix entries (4..31 bytes) and full entries
(32 bytes) become the list's, and the version token is recorded in the
index directory (urlhash.threatlists). A reader sees the old version or
the new one, never a mix. "urlhash lookup" and "urlhash serve" answer
from the list; "urlhash serve" also answers computeDiff from it.

Google's APIs need an API key (--key-file or WEBRISK_API_KEY): without
one sync refuses before it opens the index or uses the network (another
--endpoint, a urlhash serve, may need none).

Exit status: 0 once the index holds the new version; 2 on an error. A
checksum mismatch or a malformed answer leaves the index answering exactly
as before, and the next sync asks for a RESET (no version token); a sync
that fails leaves no index directory it created.
`,
		example: `$ WEBRISK_API_KEY=... urlhash sync --db malware --threat-type MALWARE
webrisk/MALWARE	RESET	+1084917 -0	1084917 entries	next 2026-11-25T18:55:12Z
$ urlhash lookup --db malware http://testsafebrowsing.appspot.com/s/malware.html
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(syncFlags)
			fs.StringVar(&o.db.dir, "db", "", "the index directory `DIR` (created when missing; required)")
			fs.StringVar(&o.api, "api", "webrisk", "the `API`: webrisk (default) or safebrowsing-v5")
			fs.enum("api", "webrisk", "safebrowsing-v5")
			fs.StringVar(&o.endpoint, "endpoint", "", "the API's base `URL` (default https://webrisk.googleapis.com, or https://safebrowsing.googleapis.com for safebrowsing-v5; a urlhash serve address works)")
			fs.StringVar(&o.threatType, "threat-type", "MALWARE", "webrisk: the threat `TYPE`, MALWARE (default), SOCIAL_ENGINEERING, UNWANTED_SOFTWARE or SOCIAL_ENGINEERING_EXTENDED_COVERAGE")
			fs.enum("threat-type", "MALWARE", "SOCIAL_ENGINEERING", "UNWANTED_SOFTWARE", "SOCIAL_ENGINEERING_EXTENDED_COVERAGE")
			fs.StringSliceVar(&o.lists, "list", nil, "safebrowsing-v5: a hash list `NAME` (se, mw, uws, ...); repeat it, or give more names as arguments")
			fs.StringVar(&o.keyFile, "key-file", "", "read the API key from `FILE` (default: the WEBRISK_API_KEY environment variable)")
			fs.IntVar(&o.maxDiff, "max-diff-entries", 0, "constraints.maxDiffEntries, `N` (v5: sizeConstraints.maxUpdateEntries)")
			fs.IntVar(&o.maxDatabase, "max-database-entries", 0, "constraints.maxDatabaseEntries, `N`")
			fs.BoolVar(&o.watch, "watch", false, "keep syncing: at recommendedNextDiff (webrisk) or after minimumWaitDuration (v5), with jitter, backing off after failures; the index is released between syncs")
			fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "per request, `DURATION` (default 5m)")
			fs.BoolVar(&o.asJSON, "json", false, "one object per sync: list, response, entries, version, checksum, next")
			fs.DurationVar(&o.db.wait, "wait", 0, "queue behind another urlhash using the index for up to `DURATION` (default 0: fail at once)")
			addCAFile(fs, &o.caFile)
			o.fs = fs
			return o.run
		},
	}
}

// syncFlags are sync's settings.
type syncFlags struct {
	db          dbFlags
	api         string
	endpoint    string
	threatType  string
	lists       []string
	keyFile     string
	maxDiff     int
	maxDatabase int
	watch       bool
	timeout     time.Duration
	asJSON      bool
	caFile      string // --ca-file: the CAs of an https:// --endpoint
	fs          *flagSet
}

type syncOutput struct {
	List     string `json:"list"`
	Response string `json:"response"`
	Added    int    `json:"added"`
	Removed  int    `json:"removed"`
	Entries  int    `json:"entries"`
	Version  string `json:"version"`
	Checksum string `json:"checksum"`
	Next     string `json:"next,omitempty"`
}

func (o *syncFlags) run(e *env, args []string) error {
	if o.db.dir == "" {
		return usagef("--db DIR is required")
	}
	if backend.IsPostgres(o.db.dir) || remote.IsLocation(o.db.dir) {
		return usagef("--db %s: sync keeps a list in an index directory", backend.Display(o.db.dir))
	}
	var profile *safebrowsing.Profile
	switch o.api {
	case "webrisk":
		if len(args) > 0 || len(o.lists) > 0 {
			return usagef("--list and list names apply to --api safebrowsing-v5")
		}
		if !server.IsWebRiskThreatType(o.threatType) {
			return usagef("--threat-type %q: want MALWARE, SOCIAL_ENGINEERING, UNWANTED_SOFTWARE or SOCIAL_ENGINEERING_EXTENDED_COVERAGE", o.threatType)
		}
		if o.endpoint == "" {
			o.endpoint = threatlist.WebRiskEndpoint
		}
		profile = safebrowsing.WebRisk
	case "safebrowsing-v5":
		o.lists = append(o.lists, args...)
		if len(o.lists) == 0 {
			return usagef("--api safebrowsing-v5 needs --list NAME")
		}
		if o.fs.Changed("threat-type") {
			return usagef("--threat-type applies to --api webrisk")
		}
		if o.endpoint == "" {
			o.endpoint = threatlist.SafeBrowsingEndpoint
		}
		profile = safebrowsing.V5
	default:
		return usagef("--api %q: want webrisk or safebrowsing-v5", o.api)
	}
	key := os.Getenv("WEBRISK_API_KEY")
	if o.keyFile != "" {
		b, err := os.ReadFile(o.keyFile)
		if err != nil {
			return fmt.Errorf("--key-file: %w", err)
		}
		if key = strings.TrimSpace(string(b)); key == "" {
			return fmt.Errorf("--key-file %s: empty key", o.keyFile)
		}
	}
	if key == "" && !o.fs.Changed("endpoint") {
		// Google answers 403 to a request without one: refused here,
		// before the index is opened or the network used. Another
		// endpoint (a urlhash serve without a token) may need none.
		return usagef("no API key: give --key-file FILE or set WEBRISK_API_KEY (%s needs one)", o.endpoint)
	}
	hc := &http.Client{Timeout: o.timeout}
	if o.caFile != "" {
		pool, err := readCAFile(o.caFile)
		if err != nil {
			return err
		}
		hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true, Proxy: http.ProxyFromEnvironment}
	}
	c := &threatlist.Client{Endpoint: o.endpoint, Key: key, HTTP: hc}
	s := &syncer{e: e, o: *o, c: c, profile: query.ProfileRecord(profile), now: time.Now}
	if !o.watch {
		_, err := s.once()
		return err
	}
	return s.watch(sleepCtx, rand.Float64)
}

// syncer runs syncs.
type syncer struct {
	e       *env
	o       syncFlags
	c       *threatlist.Client
	profile string
	now     func() time.Time
}

// once opens the index, syncs, closes it, and returns when to sync next
// (zero: the server did not say).
func (s *syncer) once() (next time.Time, err error) {
	bo := &backend.Options{Wait: s.o.db.wait}
	bo.Index.Profile = s.profile
	dir := noteNewDir(s.o.db.dir)
	b, err := s.o.db.openStore(s.e, bo)
	if err != nil {
		dir.abandon(s.e, nil)
		if errors.Is(err, store.ErrProfileMismatch) {
			return time.Time{}, fmt.Errorf("%w\nurlhash: hint: sync keeps a list in an index of profile %q (a new directory, or one made by sync)", err, s.profile)
		}
		return time.Time{}, err
	}
	defer func() {
		if err != nil {
			// A failed sync leaves no index directory it created empty.
			dir.abandon(s.e, b)
			return
		}
		err = b.Close()
	}()
	ls, err := threatlist.Open(s.e.ctx, b)
	if err != nil {
		return time.Time{}, err
	}
	ctx := s.e.ctx
	updates := map[string]*threatlist.Update{}
	if s.o.api == "webrisk" {
		u, err := ls.SyncWebRisk(ctx, s.c, threatlist.DiffRequest{
			ThreatType: s.o.threatType, MaxDiffEntries: s.o.maxDiff, MaxDatabaseEntries: s.o.maxDatabase,
		})
		if err != nil {
			return time.Time{}, err
		}
		updates[threatlist.WebRiskName(s.o.threatType)] = u
	} else {
		us, err := ls.SyncSafeBrowsing(ctx, s.c, threatlist.BatchGetRequest{
			Names: s.o.lists, MaxUpdateEntries: s.o.maxDiff, MaxDatabaseEntries: s.o.maxDatabase,
		}, s.now())
		if err != nil {
			return time.Time{}, err
		}
		for n, u := range us {
			updates[threatlist.SafeBrowsingName(n)] = u
		}
	}
	names := make([]string, 0, len(updates))
	for n := range updates {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		u := updates[n]
		st := ls.State(n)
		if next.IsZero() || (!u.Next.IsZero() && u.Next.Before(next)) {
			next = u.Next
		}
		out := syncOutput{List: n, Response: "DIFF", Added: u.Additions.Len(), Removed: len(u.Removals),
			Entries: st.List.Len(), Version: base64.StdEncoding.EncodeToString(st.Version)}
		if u.Reset {
			out.Response = "RESET"
		}
		sum := st.List.Checksum()
		out.Checksum = base64.StdEncoding.EncodeToString(sum[:])
		if !u.Next.IsZero() {
			out.Next = u.Next.UTC().Format(time.RFC3339)
		}
		if s.o.asJSON {
			if err := newJSONWriter(s.e.stdout).Encode(out); err != nil {
				return next, err
			}
			continue
		}
		line := fmt.Sprintf("%s\t%s\t+%d -%d\t%d entries", out.List, out.Response, out.Added, out.Removed, out.Entries)
		if out.Next != "" {
			line += "\tnext " + out.Next
		}
		if _, err := io.WriteString(s.e.stdout, line+"\n"); err != nil {
			return next, err
		}
	}
	return next, nil
}

// Timing of --watch.
const (
	// watchDefault is the wait when the server names no time.
	watchDefault = 30 * time.Minute
	// watchMinimum is the shortest wait between syncs.
	watchMinimum = 1 * time.Minute
	// backoffFirst and backoffMax bound the wait after failures: it
	// doubles from backoffFirst with each failure in a row, up to
	// backoffMax.
	backoffFirst = 1 * time.Minute
	backoffMax   = 2 * time.Hour
)

// nextWait returns how long --watch waits before the next sync: until next
// (the server's recommendedNextDiff, or now + minimumWaitDuration), never
// earlier, plus a jitter of up to a tenth of the wait (at most 5 minutes) so
// that a fleet started together spreads out; after failures in a row, an
// exponential backoff with the same jitter. random returns a number in
// [0, 1).
func nextWait(now, next time.Time, failures int, random func() float64) time.Duration {
	var d time.Duration
	if failures > 0 {
		d = backoffFirst << min(failures-1, 16)
		d = min(d, backoffMax)
	} else {
		d = watchDefault
		if !next.IsZero() {
			d = max(next.Sub(now), watchMinimum)
		}
	}
	jitter := min(d/10, 5*time.Minute)
	return d + time.Duration(random()*float64(jitter))
}

// watch syncs until the context ends.
func (s *syncer) watch(sleep func(context.Context, time.Duration) error, random func() float64) error {
	failures := 0
	for {
		next, err := s.once()
		if err != nil {
			if errors.Is(err, context.Canceled) || s.e.ctx.Err() != nil {
				return err
			}
			failures++
			s.e.warnf("sync: %v", err)
		} else {
			failures = 0
		}
		if err := sleep(s.e.ctx, nextWait(s.now(), next, failures, random)); err != nil {
			return nil // interrupted while waiting: the last sync is complete
		}
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// serveThreatLists makes the server answer computeDiff from the lists
// synced into the index directory dir. An update a crash interrupted is
// finished first (a read-only server refuses the index instead: it would
// answer from a mix of two versions).
func serveThreatLists(ctx context.Context, st store.Backend, dir string, readOnly bool, so *server.Options) error {
	if threatlist.Pending(dir) {
		if readOnly {
			return fmt.Errorf("%s: a threat-list update was interrupted\nurlhash: hint: run urlhash sync --db %s (or serve it writable) to finish it", dir, dir)
		}
		if _, err := threatlist.Open(ctx, st); err != nil {
			return err
		}
	}
	so.ThreatLists = func() (map[string]*threatlist.ListState, error) { return threatlist.ReadState(dir) }
	return nil
}

// refusePending refuses an index directory whose last threat-list update
// was interrupted: it may hold a mix of two versions until sync finishes it.
func refusePending(dir string) error {
	if dir != "" && threatlist.Pending(dir) {
		return fmt.Errorf("%s: a threat-list update was interrupted\nurlhash: hint: run urlhash sync --db %s to finish it", dir, dir)
	}
	return nil
}
