package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Stats returns the index's counts and sizes.
func (db *DB) Stats() (_ store.Stats, err error) {
	defer db.catch(&err, nil, nil)
	if err := db.begin(); err != nil {
		return store.Stats{}, err
	}
	defer db.mu.RUnlock()
	s := store.Stats{
		Entries:       db.entries.Load(),
		PrefixEntries: db.prefixEntries.Load(),
		FormatVersion: FormatVersion,
		Profile:       db.Profile(),
		Tables:        len(db.bdb.Tables()),
	}
	db.fmu.RLock()
	s.FilterBits = int(db.f.k)
	s.FilterBytes = db.f.sizeBytes()
	s.FilterMemBytes = db.f.full.GetSizeInBytes() + db.f.short.GetSizeInBytes()
	db.fmu.RUnlock()
	if !db.opts.InMemory {
		var err error
		if s.LSMBytes, s.VlogBytes, s.DiskBytes, err = dirBytes(db.path); err != nil {
			return store.Stats{}, err
		}
	}
	return s, nil
}

// dirBytes sums the allocated size of the files in dir (value-log files are
// sparse while open, so their apparent size would mislead).
func dirBytes(dir string) (lsm, vlog, total int64, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n := info.Size()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n = min(n, st.Blocks*512)
		}
		switch {
		case strings.HasSuffix(path, ".sst"):
			lsm += n
		case strings.HasSuffix(path, ".vlog"):
			vlog += n
		}
		total += n
		return nil
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("index: size of %s: %w", dir, err)
	}
	return lsm, vlog, total, nil
}

// Verify checks the index: every key is well formed and in its keyspace,
// every value decodes, the filter covers every key, the counts match, and
// the metadata is consistent. Other operations wait while it runs. It
// returns an error wrapping store.ErrCorrupt when a check fails.
func (db *DB) Verify() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return store.ErrClosed
	}
	var full, prefixes int64
	err := db.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false})
		defer it.Close()
		sawFormat := false
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			key := item.Key()
			switch key[0] {
			case tagFull:
				if len(key) != fullKeyLen {
					return fmt.Errorf("%w: full key %x", store.ErrCorrupt, key)
				}
				h := hashkey.Hash(key[1:])
				if !db.f.mayHaveFull(&h) {
					return fmt.Errorf("%w: filter misses %x", store.ErrCorrupt, key[1:])
				}
				full++
			case tagPrefix:
				if len(key) < 1+store.MinPrefixEntryLen || len(key) > 1+store.MaxPrefixEntryLen {
					return fmt.Errorf("%w: prefix key %x", store.ErrCorrupt, key)
				}
				if !db.f.short.Contains(binary.BigEndian.Uint32(key[1:])) {
					return fmt.Errorf("%w: filter misses prefix %x", store.ErrCorrupt, key[1:])
				}
				prefixes++
			case tagMeta:
				if bytes.Equal(key, metaKey(metaFormat)) {
					sawFormat = true
				}
				continue
			default:
				return fmt.Errorf("%w: key %x outside the keyspaces", store.ErrCorrupt, key)
			}
			if _, err := itemValue(item); err != nil {
				return fmt.Errorf("%w: value of %x: %v", store.ErrCorrupt, key, err)
			}
		}
		if !sawFormat {
			return fmt.Errorf("%w: no format record", store.ErrCorrupt)
		}
		return nil
	})
	if err != nil {
		return translate(err)
	}
	if full != db.entries.Load() || prefixes != db.prefixEntries.Load() {
		return fmt.Errorf("%w: counted %d entries and %d prefix entries, recorded %d and %d",
			store.ErrCorrupt, full, prefixes, db.entries.Load(), db.prefixEntries.Load())
	}
	return nil
}
