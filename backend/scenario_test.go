package backend_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/internal/clockhook"
	"github.com/urlhash/urlhash/internal/fakeclock"
	"github.com/urlhash/urlhash/internal/golden"
	"github.com/urlhash/urlhash/internal/pgtest"
	"github.com/urlhash/urlhash/pgindex"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/server"
	"github.com/urlhash/urlhash/store"
)

// TestScenario runs each script in testdata/scenarios against every
// backend in scenarioBackends, each with a new, empty index; the expected
// output is the same for all of them. Regenerate it with
//
//	go test ./backend -run Scenario -update
//
// which rewrites each file from the first backend that runs and checks the
// others against it (add /FILE/BACKEND to -run to write from another one).
//
// # Keys
//
// A key is written in hex. A full key is 64 digits, or fewer followed by
// ".." to fill the rest of the 32 bytes with zeros (aabb.. is aabb and 30
// zero bytes); output writes full keys that end in zero bytes that way.
// Any other even number of digits is a prefix entry's key.
//
// # Commands
//
// Commands that take entries read one a line: KEY [text=TEXT] [data=HEX]
// [ttl=DURATION], TEXT bare or Go-quoted; a quoted TEXT or a HEX followed
// by *N is repeated N times; ttl sets Expires to the scenario clock plus
// DURATION. Values print as text="..." data=HEX first=+D last=+D
// expires=+D (times as offsets from the clock's start,
// 2030-01-01T00:00:00Z), leaving out an empty part, or (empty); a part
// longer than 64 bytes prints as its length and the start of its SHA-256.
//
// # Clock
//
// Every backend of a scenario runs on one fake clock (an index's through
// internal/clockhook, pgindex.Options.Now, the server's index), which starts at
// 2030-01-01T00:00:00Z, after the wall clock that Badger also applies to
// expiry, and moves only by advance. Errors print as the first sentinel of
// store/errors.go they wrap ("error: store: not found"), so that no
// backend's wording reaches the expected output.
//
//	put              PutBatch of the entries (full or prefix, by key): ok
//	put-prefix       PutBatch, each key a prefix entry whatever its length
//	                 (a 32-byte one prints store.PrefixEntry's error)
//	add              AddBatch: KEY: new | present, per entry
//	load             Load of the entries: added=N present=N
//	get              Get of each full key: KEY: VALUE
//	get-batch        GetBatch of the full keys: KEY: VALUE | absent, per
//	                 key, or (none)
//	has              HasBatch of the full keys: KEY: true | false
//	match            Match of each full key: KEY: full VALUE | prefix P VALUE | none
//	delete           Delete of each key (full or prefix): KEY: ok
//	delete-prefix [prefix=HEX] [bits=N]
//	                 DeletePrefix: full=N prefix=N
//	visit [after=DURATION]
//	                 VisitBatch with revisitAfter DURATION (default 0):
//	                 KEY: new | seen, per entry
//	advance DURATION move the clock on: now=+D
//	scan [prefix=HEX] [bits=N] [limit=N]
//	                 Scan: full KEY VALUE | prefix KEY VALUE, or (none);
//	                 bits defaults to 4 per digit (0 without a prefix)
//	count [prefix=HEX] [bits=N]
//	                 Count: full=N prefix=N
//	stats            Stats: entries=N prefix-entries=N profile="P" format=N
//	                 [expiring=N] (when not 0)
//	verify, sync     Verify, Sync: ok
//	profile          Profile: "P"
//	set-profile NAME SetProfile (NAME bare or Go-quoted): ok
//	close            Close: ok
//	reopen           close (unless closed) and open the index again: ok;
//	                 a no-op on an open in-memory index (which cannot
//	                 be reopened once closed: the test fails)
func TestScenario(t *testing.T) {
	golden.Rewrite(t)
	rewrite := flag.Lookup("rewrite")
	rewriting := rewrite != nil && rewrite.Value.String() == "true"
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		// With -update the first backend that runs writes the expected
		// output and the others are checked against it.
		wrote := false
		for _, b := range scenarioBackends {
			if rewriting {
				setFlag(t, rewrite, !wrote)
			}
			t.Run(b.name, func(t *testing.T) {
				clock := fakeclock.New(fakeclock.Start())
				s := &scenario{backend: b, open: b.setup(t, clock.Now), clock: clock}
				t.Cleanup(func() {
					if s.db != nil && !s.closed {
						s.db.Close()
					}
				})
				s.reopen(t)
				wrote = true
				datadriven.RunTest(t, path, s.run)
				t.Logf("%d commands", s.commands)
			})
		}
		if rewriting {
			setFlag(t, rewrite, true)
		}
	})
}

func setFlag(t *testing.T, f *flag.Flag, v bool) {
	if err := f.Value.Set(strconv.FormatBool(v)); err != nil {
		t.Fatal(err)
	}
}

// scenarioBackends are the backends every scenario runs against. Adding a
// backend is one entry.
var scenarioBackends = []scenarioBackend{
	{name: "badger-memory", setup: badgerMemory, volatile: true},
	{name: "badger-disk", setup: badgerDisk, keyTable: true},
	{name: "badger-no-key-table", setup: badgerNoKeyTable},
	{name: "postgres", setup: postgres},
	{name: "http", setup: httpServer, keyTable: true},
}

type scenarioBackend struct {
	name string
	// setup prepares a new, empty index for one scenario file (skipping
	// t when the backend is unavailable) and returns the function that
	// opens it. Each call of open after the first opens the same index
	// again, which must then hold what was written before.
	setup func(t testing.TB, now func() time.Time) (open func() (store.Backend, error))
	// volatile marks a backend whose index does not outlive Close (in
	// memory): reopen leaves an open index as it is.
	volatile bool
	// keyTable marks an index with a key table, which records format 2
	// where the expected outputs (of the other backends) say 1: stats
	// prints its format less one.
	keyTable bool
}

func badgerMemory(t testing.TB, now func() time.Time) func() (store.Backend, error) {
	return func() (store.Backend, error) {
		return index.Open("", clockedOptions(&index.Options{InMemory: true}, now))
	}
}

func badgerDisk(t testing.TB, now func() time.Time) func() (store.Backend, error) {
	dir := t.TempDir()
	return func() (store.Backend, error) { return index.Open(dir, clockedOptions(&index.Options{}, now)) }
}

// clockedOptions returns o with now as its clock: the index's clock is a
// test hook, not an option.
func clockedOptions(o *index.Options, now func() time.Time) *index.Options {
	clockhook.SetIndex(o, now)
	return o
}

// badgerNoKeyTable is badgerDisk with every entry in Badger
// (index.Options.NoKeyTable).
func badgerNoKeyTable(t testing.TB, now func() time.Time) func() (store.Backend, error) {
	dir := t.TempDir()
	return func() (store.Backend, error) {
		return index.Open(dir, clockedOptions(&index.Options{NoKeyTable: true}, now))
	}
}

// httpServer serves an index on disk with package server; the backend is
// its client (package remote).
func httpServer(t testing.TB, now func() time.Time) func() (store.Backend, error) {
	db, err := index.Open(t.TempDir(), clockedOptions(&index.Options{}, now))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(server.New(db, nil))
	t.Cleanup(func() { ts.Close(); db.Close() })
	return func() (store.Backend, error) { return remote.Open(context.Background(), ts.URL, nil) }
}

func postgres(t testing.TB, now func() time.Time) func() (store.Backend, error) {
	url := pgtest.URL(t)
	schema := pgtest.Schema(t, url)
	return func() (store.Backend, error) {
		return pgindex.Open(context.Background(), url, &pgindex.Options{Schema: schema, Now: now})
	}
}

// scenario is the state of one scenario file on one backend.
type scenario struct {
	backend  scenarioBackend
	open     func() (store.Backend, error)
	db       store.Backend
	closed   bool
	commands int
	clock    *fakeclock.Clock
}

// reopen opens the index for the first time, or again.
func (s *scenario) reopen(t testing.TB) error {
	if s.db != nil {
		if s.backend.volatile {
			if s.closed {
				t.Fatalf("reopen after close: %s keeps nothing across Close", s.backend.name)
			}
			return nil
		}
		if !s.closed {
			if err := s.db.Close(); err != nil {
				return err
			}
		}
	}
	db, err := s.open()
	if err != nil {
		if s.db == nil {
			t.Fatalf("open: %v", err)
		}
		return err
	}
	s.db, s.closed = db, false
	return nil
}

func (s *scenario) run(t *testing.T, td *datadriven.TestData) string {
	ctx := context.Background()
	s.commands++
	db := s.db
	var out strings.Builder
	switch td.Cmd {
	case "put", "put-prefix":
		entries, err := s.parseEntries(t, td, td.Cmd == "put-prefix")
		if err != nil {
			return errString(err)
		}
		return errOr(db.PutBatch(ctx, entries), "ok")

	case "add":
		entries, _ := s.parseEntries(t, td, false)
		added, err := db.AddBatch(ctx, entries)
		if err != nil {
			return errString(err)
		}
		if len(added) != len(entries) {
			t.Fatalf("AddBatch returned %d results for %d entries", len(added), len(entries))
		}
		if len(entries) == 0 {
			return "(none)"
		}
		for i, e := range entries {
			result := "present"
			if added[i] {
				result = "new"
			}
			fmt.Fprintf(&out, "%s: %s\n", formatKey(e.Key()), result)
		}

	case "visit":
		var after time.Duration
		if td.HasArg("after") {
			var a string
			td.ScanArgs(t, "after", &a)
			var err error
			if after, err = time.ParseDuration(a); err != nil {
				t.Fatalf("%s: %v", td.Pos, err)
			}
		}
		entries, _ := s.parseEntries(t, td, false)
		visited, err := db.VisitBatch(ctx, entries, after)
		if err != nil {
			return errString(err)
		}
		if len(visited) != len(entries) {
			t.Fatalf("VisitBatch returned %d results for %d entries", len(visited), len(entries))
		}
		for i, e := range entries {
			result := "seen"
			if visited[i] {
				result = "new"
			}
			fmt.Fprintf(&out, "%s: %s\n", formatKey(e.Key()), result)
		}

	case "advance":
		if len(td.CmdArgs) != 1 {
			t.Fatalf("%s: usage: advance DURATION", td.Pos)
		}
		d, err := time.ParseDuration(td.CmdArgs[0].Key)
		if err != nil {
			t.Fatalf("%s: %v", td.Pos, err)
		}
		return "now=" + formatTime(s.clock.Advance(d))

	case "delete-prefix":
		prefix, bits := parseScanPrefix(t, td)
		full, prefixes, err := db.DeletePrefix(ctx, prefix, bits)
		if err != nil {
			return errString(err)
		}
		fmt.Fprintf(&out, "full=%d prefix=%d\n", full, prefixes)

	case "load":
		entries, _ := s.parseEntries(t, td, false)
		res, err := db.Load(ctx, slices.Values(entries))
		if err != nil {
			return errString(err)
		}
		fmt.Fprintf(&out, "added=%d present=%d\n", res.Added, res.Present)

	case "get":
		for _, h := range parseHashes(t, td) {
			v, err := db.Get(ctx, h)
			fmt.Fprintf(&out, "%s: %s\n", formatKey(h[:]), errOr(err, formatValue(v)))
		}

	case "get-batch":
		hs := parseHashes(t, td)
		vs, found, err := db.GetBatch(ctx, hs)
		if err != nil {
			return errString(err)
		}
		if len(vs) != len(hs) || len(found) != len(hs) {
			t.Fatalf("GetBatch returned %d values and %d answers for %d hashes", len(vs), len(found), len(hs))
		}
		if len(hs) == 0 {
			return "(none)"
		}
		for i, h := range hs {
			result := "absent"
			if found[i] {
				result = formatValue(vs[i])
			} else if !vs[i].IsZero() {
				t.Fatalf("GetBatch: %x is absent with a value: %+v", h, vs[i])
			}
			fmt.Fprintf(&out, "%s: %s\n", formatKey(h[:]), result)
		}

	case "has":
		hs := parseHashes(t, td)
		found, err := db.HasBatch(ctx, hs)
		if err != nil {
			return errString(err)
		}
		if len(found) != len(hs) {
			t.Fatalf("HasBatch returned %d results for %d hashes", len(found), len(hs))
		}
		if len(hs) == 0 {
			return "(none)"
		}
		for i, h := range hs {
			fmt.Fprintf(&out, "%s: %t\n", formatKey(h[:]), found[i])
		}

	case "match":
		for _, h := range parseHashes(t, td) {
			m, ok, err := db.Match(ctx, h)
			var result string
			switch {
			case err != nil:
				result = errString(err)
			case !ok:
				result = "none"
			case m.IsFull():
				result = "full " + formatValue(m.Value)
			default:
				result = "prefix " + formatKey(h[:m.Len]) + " " + formatValue(m.Value)
			}
			fmt.Fprintf(&out, "%s: %s\n", formatKey(h[:]), result)
		}

	case "delete":
		entries, _ := s.parseEntries(t, td, false)
		for _, e := range entries {
			fmt.Fprintf(&out, "%s: %s\n", formatKey(e.Key()), errOr(db.Delete(ctx, e), "ok"))
		}

	case "scan":
		prefix, bits := parseScanPrefix(t, td)
		limit := intArg(t, td, "limit", 0)
		n := 0
		err := db.Scan(ctx, prefix, bits, limit, func(e store.Entry) error {
			kind := "full  "
			if e.IsPrefix() {
				kind = "prefix"
			}
			fmt.Fprintf(&out, "%s %s %s\n", kind, formatKey(e.Key()), formatValue(e.Value))
			n++
			return nil
		})
		if err != nil {
			return out.String() + errString(err)
		}
		if n == 0 {
			return "(none)"
		}

	case "count":
		prefix, bits := parseScanPrefix(t, td)
		full, prefixes, err := db.Count(ctx, prefix, bits)
		if err != nil {
			return errString(err)
		}
		fmt.Fprintf(&out, "full=%d prefix=%d\n", full, prefixes)

	case "stats":
		st, err := db.Stats(ctx)
		if err != nil {
			return errString(err)
		}
		// Only the fields every backend measures alike.
		format := st.FormatVersion
		if s.backend.keyTable {
			if format != 3 {
				t.Fatalf("an index with a key table records format %d, want 3", format)
			}
			format = 1
		}
		fmt.Fprintf(&out, "entries=%d prefix-entries=%d profile=%q format=%d",
			st.Entries, st.PrefixEntries, st.Profile, format)
		if st.Expiring != 0 {
			fmt.Fprintf(&out, " expiring=%d", st.Expiring)
		}
		out.WriteString("\n")

	case "verify":
		return errOr(db.Verify(ctx), "ok")

	case "sync":
		return errOr(db.Sync(ctx), "ok")

	case "profile":
		p, err := db.Profile(ctx)
		return errOr(err, strconv.Quote(p))

	case "set-profile":
		if len(td.CmdArgs) != 1 || len(td.CmdArgs[0].Vals) != 0 {
			t.Fatalf("%s: usage: set-profile NAME", td.Pos)
		}
		name := td.CmdArgs[0].Key
		if strings.HasPrefix(name, `"`) {
			var err error
			if name, err = strconv.Unquote(name); err != nil {
				t.Fatalf("%s: %v", td.Pos, err)
			}
		}
		return errOr(db.SetProfile(ctx, name), "ok")

	case "close":
		s.closed = true
		return errOr(db.Close(), "ok")

	case "reopen":
		return errOr(s.reopen(t), "ok")

	default:
		t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	}
	return out.String()
}

// sentinels are store's sentinel errors, in the order of store/errors.go.
var sentinels = []error{
	store.ErrNotFound,
	store.ErrNoIndex,
	store.ErrLocked,
	store.ErrNeedsRecovery,
	store.ErrFormat,
	store.ErrProfileMismatch,
	store.ErrClosed,
	store.ErrReadOnly,
	store.ErrPrefixLength,
	store.ErrInvalidOptions,
	store.ErrCorrupt,
	store.ErrDiskFull,
	store.ErrNotIndex,
}

// errString prints err as the first store sentinel it wraps. An error that
// wraps none prints its first line, marked, and so cannot match across
// backends.
func errString(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return "error: " + s.Error()
		}
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	return "error (wraps no store sentinel): " + line
}

// errOr returns errString(err), or ok when err is nil.
func errOr(err error, ok string) string {
	if err != nil {
		return errString(err)
	}
	return ok
}

// formatKey writes a key as hex; a full key that ends in zero bytes ends
// in ".." instead.
func formatKey(k []byte) string {
	if len(k) != hashkey.Size {
		return hex.EncodeToString(k)
	}
	n := len(k)
	for n > 1 && k[n-1] == 0 {
		n--
	}
	if n == len(k) {
		return hex.EncodeToString(k)
	}
	return hex.EncodeToString(k[:n]) + ".."
}

// longValue is the length beyond which a value part prints as its length
// and hash.
const longValue = 64

func formatValue(v store.Value) string {
	var parts []string
	switch n := len(v.Text); {
	case n > longValue:
		parts = append(parts, fmt.Sprintf("text=(%d bytes, sha256 %.12x)", n, sha256.Sum256(v.Text)))
	case n > 0:
		parts = append(parts, "text="+strconv.Quote(string(v.Text)))
	}
	switch n := len(v.Data); {
	case n > longValue:
		parts = append(parts, fmt.Sprintf("data=(%d bytes, sha256 %.12x)", n, sha256.Sum256(v.Data)))
	case n > 0:
		parts = append(parts, "data="+hex.EncodeToString(v.Data))
	}
	for _, tm := range []struct {
		name string
		t    time.Time
	}{{"first", v.FirstSeen}, {"last", v.LastSeen}, {"expires", v.Expires}} {
		if !tm.t.IsZero() {
			parts = append(parts, tm.name+"="+formatTime(tm.t))
		}
	}
	if len(parts) == 0 {
		return "(empty)"
	}
	return strings.Join(parts, " ")
}

// formatTime writes t as its offset from clockStart.
func formatTime(t time.Time) string {
	d := t.Sub(fakeclock.Start())
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}

// parseKey reads a key as formatKey writes it and reports whether it is a
// full key.
func parseKey(t testing.TB, pos, s string) (key []byte, full bool) {
	t.Helper()
	digits, fill := strings.CutSuffix(s, "..")
	b, err := hex.DecodeString(digits)
	if err != nil || len(b) == 0 || len(b) > hashkey.Size {
		t.Fatalf("%s: bad key %q: want 2..64 hex digits, optionally followed by ..", pos, s)
	}
	if fill {
		k := make([]byte, hashkey.Size)
		copy(k, b)
		return k, true
	}
	return b, len(b) == hashkey.Size
}

// parseEntries reads the entry lines of td's input. With asPrefix every
// key is a prefix entry's. A 32-byte one cannot be a store.Entry:
// parseEntries returns the error of store.PrefixEntry, and the command
// prints it without calling the backend. Shorter keys reach the backend as
// they are, so that its own check is what refuses 1..3 bytes.
func (s *scenario) parseEntries(t testing.TB, td *datadriven.TestData, asPrefix bool) ([]store.Entry, error) {
	t.Helper()
	var entries []store.Entry
	for line := range strings.Lines(td.Input) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		keyText, rest, _ := strings.Cut(line, " ")
		key, full := parseKey(t, td.Pos, keyText)
		v := parseValue(t, td.Pos, rest, s.clock.Now())
		var e store.Entry
		switch {
		case asPrefix && len(key) == hashkey.Size:
			if _, err := store.PrefixEntry(key, v); err != nil {
				return nil, err
			}
			t.Fatalf("%s: store.PrefixEntry accepted a %d-byte prefix", td.Pos, len(key))
		case full && !asPrefix:
			e = store.FullEntry(hashkey.Hash(key), v)
		default:
			copy(e.Hash[:], key)
			e.Len = len(key)
			e.Value = v
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// parseValue reads [text=TEXT] [data=HEX] [ttl=DURATION].
func parseValue(t testing.TB, pos, s string, now time.Time) store.Value {
	t.Helper()
	var v store.Value
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		switch {
		case strings.HasPrefix(s, "text="):
			s = s[len("text="):]
			var text string
			if strings.HasPrefix(s, `"`) {
				q, err := strconv.QuotedPrefix(s)
				if err != nil {
					t.Fatalf("%s: bad text %s", pos, s)
				}
				text, _ = strconv.Unquote(q)
				s = s[len(q):]
				var n int
				if n, s = parseRepeat(t, pos, s); n >= 0 {
					text = strings.Repeat(text, n)
				}
			} else {
				text, s, _ = strings.Cut(s, " ")
			}
			v.Text = []byte(text)
		case strings.HasPrefix(s, "data="):
			s = s[len("data="):]
			d := s[:len(s)-len(strings.TrimLeft(s, "0123456789abcdefABCDEF"))]
			s = s[len(d):]
			b, err := hex.DecodeString(d)
			if err != nil {
				t.Fatalf("%s: bad data %q: %v", pos, d, err)
			}
			var n int
			if n, s = parseRepeat(t, pos, s); n >= 0 {
				b = bytes.Repeat(b, n)
			}
			v.Data = b
		case strings.HasPrefix(s, "ttl="):
			var d string
			d, s, _ = strings.Cut(s[len("ttl="):], " ")
			ttl, err := time.ParseDuration(d)
			if err != nil {
				t.Fatalf("%s: bad ttl %q: %v", pos, d, err)
			}
			v.Expires = now.Add(ttl)
		default:
			t.Fatalf("%s: want text=TEXT, data=HEX or ttl=DURATION, have %q", pos, s)
		}
	}
	return v
}

// parseRepeat reads an optional *N at the start of s and returns N (-1
// without one) and the rest of s.
func parseRepeat(t testing.TB, pos, s string) (int, string) {
	t.Helper()
	if !strings.HasPrefix(s, "*") {
		return -1, s
	}
	num, rest, _ := strings.Cut(s[1:], " ")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		t.Fatalf("%s: bad repeat count %q", pos, num)
	}
	return n, rest
}

// parseHashes reads the full keys of td's input, one a line.
func parseHashes(t testing.TB, td *datadriven.TestData) []hashkey.Hash {
	t.Helper()
	var hs []hashkey.Hash
	for line := range strings.Lines(td.Input) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, full := parseKey(t, td.Pos, line)
		if !full {
			t.Fatalf("%s: %s takes full keys, have %q", td.Pos, td.Cmd, line)
		}
		hs = append(hs, hashkey.Hash(key))
	}
	return hs
}

// parseScanPrefix reads [prefix=HEX] [bits=N]: the prefix's bytes and its
// length in bits, by default 4 per hex digit.
func parseScanPrefix(t testing.TB, td *datadriven.TestData) ([]byte, int) {
	t.Helper()
	var prefix []byte
	bits := 0
	if td.HasArg("prefix") {
		var s string
		td.ScanArgs(t, "prefix", &s)
		var err error
		if prefix, bits, err = hashkey.ParsePrefix(s); err != nil {
			t.Fatalf("%s: %v", td.Pos, err)
		}
	}
	return prefix, intArg(t, td, "bits", bits)
}

func intArg(t testing.TB, td *datadriven.TestData, key string, def int) int {
	t.Helper()
	if !td.HasArg(key) {
		return def
	}
	var n int
	td.ScanArgs(t, key, &n)
	return n
}
