package index

import (
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// Default option values.
const (
	// DefaultBlockCacheSize is the default Options.BlockCacheSize (64 MiB)
	// of decompressed table blocks.
	DefaultBlockCacheSize = 64 << 20
	// DefaultIndexCacheSize is the default Options.IndexCacheSize (64 MiB):
	// table indexes and Badger bloom filters beyond it are evicted and
	// re-read, so memory stays bounded however large the index grows.
	DefaultIndexCacheSize = 64 << 20
	// MinValueBlockSize is the smallest Options.ValueBlockSize (1 KiB).
	MinValueBlockSize = 1 << 10
	// MaxValueBlockSize is the largest Options.ValueBlockSize (1 MiB).
	MaxValueBlockSize = 1 << 20
	// DefaultMemTableSize is the default Options.MemTableSize (16 MiB):
	// inserting random keys into a memtable is a walk of cache misses down
	// its skiplist, and a smaller one stays in the processor caches (a
	// dedupe of 1M new URLs spent 17% less CPU than with 64 MiB).
	DefaultMemTableSize = 16 << 20
	// KeyTableMemTableSize is the default Options.MemTableSize of an
	// index with a key table (4 MiB): Badger then holds only entries with
	// values and idempotency records, and a memtable is memory held
	// whole (1.25 x its size, allocated at once) however little it holds.
	KeyTableMemTableSize = 4 << 20
	// DefaultValueLogFileSize is the size of one value-log file (64 MiB):
	// the index keeps entries in its tables, and the value log holds
	// only values over 4 KiB (filter snapshot chunks, rare large values).
	DefaultValueLogFileSize = 64 << 20
)

// Options configures Open. A nil *Options or a zero field means the default
// documented on the field. Open copies the struct; later changes have no
// effect.
type Options struct {
	// InMemory keeps everything in memory; dir is ignored and nothing is
	// persisted. Default false.
	InMemory bool

	// ReadOnly opens an existing index without writing to it. A directory
	// holding no index gives store.ErrNoIndex. Writes return store.ErrReadOnly.
	// Default false.
	ReadOnly bool

	// MustExist makes a writable Open refuse (store.ErrNoIndex) a directory that
	// holds no index instead of creating one. Default false.
	MustExist bool

	// Profile names the hashing profile (and digest) of the identities the
	// index holds, for example "urlhash+sha256;unicode=17.0.0". It is recorded when the
	// index is created (or first opened writable with a non-empty
	// Profile); a later Open with a different non-empty Profile fails with
	// store.ErrProfileMismatch. Empty means "any": nothing is checked or recorded.
	Profile string

	// BlockCacheSize is Badger's cache of decompressed table blocks, in
	// bytes, kept only while a table is compressed (see Compression), and
	// the key table's cache of decoded value blocks (get of a batch keeps
	// the blocks it decoded for the next). Default 64 MiB
	// (DefaultBlockCacheSize); a negative value disables both.
	BlockCacheSize int64

	// ValueBlockSize is the decoded size, in bytes, of the blocks the key
	// table compresses the values of its entries in (their text and
	// data). A read of one value decodes its block: smaller blocks cost
	// less a read of values from random places (a crawl frontier hands
	// out its URLs' records so) and compress less. Blocks already written
	// keep their size. Default 16 KiB (4 KiB for package frontier's index).
	ValueBlockSize int

	// StoredValues keeps the key table's new value blocks uncompressed: a
	// read of one value then costs a pread and a checksum instead of a
	// decode (4 KiB blocks of URLs: 4-5 µs against 22-25 µs), at about
	// twice the bytes on disk. Blocks already written keep their form.
	// Default false (true for package frontier's index, which reads its
	// records one at a time from random blocks).
	StoredValues bool

	// IndexCacheSize bounds the memory Badger spends on table indexes and
	// per-table bloom filters, in bytes. Default 64 MiB
	// (DefaultIndexCacheSize). A negative value keeps every table index in
	// memory (Badger's own default, unbounded).
	IndexCacheSize int64

	// MemTableSize is the size of one Badger memtable in bytes. Default
	// 16 MiB (DefaultMemTableSize), and 4 MiB (KeyTableMemTableSize) for
	// an index with a key table.
	MemTableSize int64

	// SyncWrites makes every write wait for fsync. Default false: writes
	// reach the operating system at once (they survive the process being
	// killed) and reach the disk at Sync, Close or the end of Load.
	SyncWrites bool

	// Compression is the codec of the table blocks the index writes from
	// this Open on (a load's tables, compactions): "none", "snappy" or
	// "zstd". Default "": the codec of the index's newest table (Badger's
	// MANIFEST records each table's), "none" for a new index. Hash keys
	// are random: a codec only shrinks Badger's per-entry overhead (53
	// bytes an entry on disk with none, 42 with snappy, about 40 with
	// zstd) and costs a decompression, and a block cache copy, on every
	// read: BenchmarkIndex and "go run ./bench" measure present lookups
	// about twice as fast without one at 10M entries.
	Compression string

	// LoadMemory bounds the memory Load gathers its input in, in bytes:
	// two chunks of half of it each (32 bytes a key-only full entry), one
	// filling while the other is sorted and written to a temporary run
	// file in the index directory. Default 256 MiB (DefaultLoadMemory):
	// about 4 million keys a chunk. An in-memory index never spills.
	LoadMemory int64

	// Badger, when not nil, replaces the Badger options the index derives
	// from the fields above (expert use: compression, table sizes,
	// logging). Dir, ValueDir, InMemory and ReadOnly are still taken from
	// Open's arguments and the fields above, and block checksums are
	// always verified on read (ChecksumVerificationMode OnBlockRead,
	// VerifyValueChecksum).
	Badger *badger.Options

	// now is the clock of the times the index records (store.Value's
	// FirstSeen and LastSeen, by VisitBatch) and of expiry: an entry whose
	// Expires is now or earlier reads as absent. Default time.Now. Tests
	// set a fake one (export_test.go here; internal/clockhook elsewhere in
	// the module), kept at or after the wall clock, which Badger itself
	// applies to expiry as well.
	now func() time.Time
	// KeyTable upgrades an index without a key table (format 1, every
	// index written before format 2) to one with a key table: its entries
	// stay in Badger, and new key-only entries go to the key table. The
	// index then records format 2, which older programs refuse. A new
	// index gets a key table without it (see NoKeyTable), and an index
	// that has one uses it whatever the options say. Default false.
	//
	// The key table keeps the key-only full entries (no text, data, times
	// or expiry: a seen-set's) beside Badger, in the directory's
	// keytable/: sorted 32-byte key files and a log of its own, about 33
	// bytes an entry on disk and a lookup of one or two reads. Ignored in
	// memory.
	KeyTable bool

	// NoKeyTable creates a new index without a key table: every entry in
	// Badger, format 1, which older programs read. Default false.
	NoKeyTable bool

	// keyTableDelta is the key table's delta size (tests; 0: default).
	keyTableDelta int

	// upgradeCrash, when set, is called by the upgrade to format 3
	// between the new key file and Badger's drop of its copies (tests:
	// an error stands for a crash there).
	upgradeCrash func() error

	// valueThreshold, when set, is Badger's value threshold on disk
	// (tests: values from this size go to the value log).
	valueThreshold int64

	// backgroundRebuild rebuilds the filter in the background whatever
	// the key table's size (tests; see rebuildsInBackground).
	backgroundRebuild bool

	// createCrash, when set, is called by the Open that creates an index
	// before it makes the key table (tests: an error stands for a crash
	// there).
	createCrash func() error

	// beforeFilterLoad, when set, is called by the background load or
	// rebuild of the filter before it starts (tests: it holds it).
	beforeFilterLoad func()

	// noBlockChecksums turns block checksum verification off (tests:
	// Badger's table code then panics on some damage).
	noBlockChecksums bool
}

// Validate reports whether the options are consistent.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.KeyTable && o.NoKeyTable {
		return fmt.Errorf("%w: KeyTable and NoKeyTable together", store.ErrInvalidOptions)
	}
	if o.InMemory && o.ReadOnly {
		return fmt.Errorf("%w: InMemory and ReadOnly together", store.ErrInvalidOptions)
	}
	if _, ok := codecs[o.Compression]; !ok && o.Compression != "" {
		return fmt.Errorf("%w: Compression %q: want none, snappy or zstd", store.ErrInvalidOptions, o.Compression)
	}
	if o.LoadMemory < 0 {
		return fmt.Errorf("%w: negative LoadMemory %d", store.ErrInvalidOptions, o.LoadMemory)
	}
	if o.ValueBlockSize != 0 && (o.ValueBlockSize < MinValueBlockSize || o.ValueBlockSize > MaxValueBlockSize) {
		return fmt.Errorf("%w: ValueBlockSize %d: want 0 (the default) or %d to %d", store.ErrInvalidOptions, o.ValueBlockSize, MinValueBlockSize, MaxValueBlockSize)
	}
	if o.MemTableSize < 0 {
		return fmt.Errorf("%w: negative MemTableSize %d", store.ErrInvalidOptions, o.MemTableSize)
	}
	if len(o.Profile) > 255 {
		return fmt.Errorf("%w: Profile longer than 255 bytes", store.ErrInvalidOptions)
	}
	return nil
}

// withDefaults returns a copy of o with defaults filled in.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.IndexCacheSize == 0 {
		c.IndexCacheSize = DefaultIndexCacheSize
	}
	if c.BlockCacheSize == 0 {
		c.BlockCacheSize = DefaultBlockCacheSize
	}
	if c.MemTableSize == 0 {
		c.MemTableSize = DefaultMemTableSize
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.LoadMemory == 0 {
		c.LoadMemory = DefaultLoadMemory
	}
	return c
}

// badgerOptions derives Badger's options for dir.
func (o *Options) badgerOptions(dir string) badger.Options {
	var bo badger.Options
	if o.Badger != nil {
		bo = *o.Badger
	} else {
		bo = badger.DefaultOptions(dir)
		bo.Logger = nil
		o.setCodec(&bo, codecs[o.Compression], false)
		if o.IndexCacheSize > 0 {
			bo.IndexCacheSize = o.IndexCacheSize
		} else {
			bo.IndexCacheSize = 0
		}
		bo.MemTableSize = o.MemTableSize
		bo.SyncWrites = o.SyncWrites
		// Writers are serialised by the index's own locks.
		bo.DetectConflicts = false
		// Values stay in the tree up to Badger's largest threshold: its
		// tables are synced when written, its memtable logs by the
		// index's sync, while a memtable flush never syncs the value log
		// (a power loss could keep a table whose values it lost). A value
		// above it goes to the value log, in a write ordered against the
		// others (see stores.badgerWrite). In memory there is no value
		// log: such a value is refused (see DB.check).
		bo.ValueThreshold = maxTreeValue(bo.MemTableSize)
		if o.valueThreshold > 0 && !o.InMemory {
			bo.ValueThreshold = o.valueThreshold
		}
		bo.NumVersionsToKeep = 1
		// Badger's StreamWriter builds tables of BaseTableSize x 2^5 in
		// memory (Load): 16 MiB tables, 512 KiB at the base level.
		bo.BaseTableSize = 512 << 10
		// An empty level 0 after Close lets the next Load stream its
		// tables above the existing ones without flattening the tree.
		bo.CompactL0OnClose = true
		bo.MetricsEnabled = false
		// The roaring filter answers most absent lookups; Badger's
		// per-table blooms still help present lookups skip upper levels.
		bo.BloomFalsePositive = 0.01
		// Values above ValueThreshold (rare) go to the value log; small
		// files keep its sparse allocation inside the disk reserve (see
		// space.go).
		bo.ValueLogFileSize = DefaultValueLogFileSize
	}
	// Every table block read from disk is checked against its checksum
	// (one CRC-32C per 4 KiB block loaded into the block cache:
	// BenchmarkBlockChecksums measured a Get at 6.5 against 6.1 us when
	// nearly every read misses a 1 MiB cache, and no difference with the
	// default cache); damaged bytes are never decoded as entries.
	// Badger still answers "absent" for a damaged block: see integrity.Guard.
	// OnTableRead would verify whole tables at Open, inside Badger's
	// goroutines, where a damaged table kills the process.
	bo.ChecksumVerificationMode = options.OnBlockRead
	if o.noBlockChecksums {
		bo.ChecksumVerificationMode = options.NoVerification
	}
	bo.VerifyValueChecksum = true
	bo.Dir, bo.ValueDir = dir, dir
	bo.InMemory = o.InMemory
	if o.InMemory {
		bo.Dir, bo.ValueDir = "", ""
	}
	bo.ReadOnly = o.ReadOnly
	return bo
}

// maxTreeValue is Badger's largest value threshold for memtables of
// memTableSize: its cap (1 MiB), and at most the 15% of a memtable that
// one write batch may take. A value shorter stays in the tree.
func maxTreeValue(memTableSize int64) int64 {
	return min(1<<20, 15*memTableSize/100)
}

// codecs are the values of Options.Compression.
var codecs = map[string]options.CompressionType{"none": options.None, "snappy": options.Snappy, "zstd": options.ZSTD}

// setCodec sets the codec of the tables Badger writes, and its block
// cache, kept while a table is compressed: written with c, or already
// (compressed). Uncompressed blocks are read straight from the mapped
// table files, and a cache would only copy them (a ristretto lookup and,
// on a miss, an allocation per block read).
func (o *Options) setCodec(bo *badger.Options, c options.CompressionType, compressed bool) {
	bo.Compression = c
	bo.BlockCacheSize = 0
	if c != options.None || compressed {
		bo.BlockCacheSize = max(o.BlockCacheSize, 0)
	}
}

// codecOf returns the codec of the newest of tables, or none for no
// tables: Options.Compression's default.
func codecOf(tables []integrity.Table) options.CompressionType {
	if len(tables) == 0 {
		return options.None
	}
	newest := tables[0]
	for _, t := range tables[1:] {
		if t.ID > newest.ID {
			newest = t
		}
	}
	return newest.Compression
}

// anyCompressed reports whether one of tables has compressed blocks.
func anyCompressed(tables []integrity.Table) bool {
	for _, t := range tables {
		if t.Compression != options.None {
			return true
		}
	}
	return false
}
