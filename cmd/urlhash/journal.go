package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// journal is dedupe's record of the batch it is storing, kept in a file
// from before the batch is sent until its new inputs have been printed.
// A run killed in between leaves it behind, and the next run finishes it:
// every input a run stored is printed at least once, and exactly once
// while nothing crashes.
//
// The file holds one batch (journalMagic, then):
//
//	uvarint len(key), key         the batch's Idempotency-Key
//	varint revisit                the write: -1 add, else visit with this
//	                              revisitAfter in nanoseconds
//	uvarint len(body), body       the entries as sent (wire.AppendEntry)
//	uvarint count, count × (uvarint len, input)   the inputs of the entries
//	CRC-32C of all that
//
// A torn write (a crash while writing it, before anything of the batch was
// sent) fails the checksum and is ignored. Once the batch is answered,
// commit appends which inputs were new (a bitmap and its CRC), so that a
// run killed while printing is finished exactly. Without that record the
// next run resends the batch with its key to a server, which answers what
// it answered the first time (also while the first request is still being
// applied); other indexes print every input of the batch that is stored.
//
// The journal survives the death of the process, not of the machine: it is
// written without an fsync (whoever reads the output dies with the machine
// too).
type journal struct {
	f    *os.File
	path string
	buf  []byte
	end  int64 // length of the batch record, where commit appends
}

// pendingBatch is a batch a killed run left in its journal.
type pendingBatch struct {
	key     string
	revisit time.Duration // < 0: an add
	body    []byte
	inputs  []string
	isNew   []bool // nil: not recorded
	v1      bool   // of an older urlhash: no key, write or body
}

const journalMagic = "urlhash-dedupe-journal\x02"

// journalMagicV1 starts the journal of urlhash before the Idempotency-Key:
// the same layout without the key, the write and the body (its inputs are
// all the batch's inputs, valid or not). A run reads it to finish the batch
// an older run left.
const journalMagicV1 = "urlhash-dedupe-journal\x01"

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// errJournalBusy is returned by openJournal for a journal another run
// holds.
var errJournalBusy = errors.New("journal in use by another dedupe")

// openJournal opens (creating) the journal at path and locks it, so that
// two dedupe runs never share one.
func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("journal %s: %w", path, errJournalBusy)
		}
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &journal{f: f, path: path}, nil
}

// journalDir is the default directory of the journals of dedupe runs on a
// shared index (PostgreSQL, a server): one per index, under the user's
// cache directory, named by a digest of id (the location, which may hold a
// password, and a PostgreSQL schema).
func journalDir(id string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("journal: %w (choose one with --journal FILE, or --no-journal)", err)
	}
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(cache, "urlhash", "dedupe", hex.EncodeToString(sum[:8])), nil
}

// claimJournal returns a journal of dir that no other run holds (creating
// one when all are held) and the other free ones, which killed runs left:
// the caller finishes their batches and drops them (dropJournal). So any
// number of runs share a directory without flags, and a killed run's
// batch is finished by the next run to start.
func claimJournal(dir string) (mine *journal, orphans []*journal, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".journal") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, name := range names {
		j, err := openJournal(filepath.Join(dir, name))
		if errors.Is(err, errJournalBusy) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if mine == nil {
			mine = j
		} else {
			orphans = append(orphans, j)
		}
	}
	for i := 0; mine == nil; i++ {
		j, err := openJournal(filepath.Join(dir, fmt.Sprintf("run-%d.journal", i)))
		if errors.Is(err, errJournalBusy) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		mine = j
	}
	return mine, orphans, nil
}

// claimMore returns up to n more journals of dir for this run (a dedupe
// with batches in flight keeps one per batch), new ones that no run
// holds. A run killed with them is finished by the next, as any.
func claimMore(dir string, n int) ([]*journal, error) {
	var out []*journal
	for i := 0; len(out) < n; i++ {
		name := filepath.Join(dir, fmt.Sprintf("run-%d.journal", i))
		if _, err := os.Stat(name); err == nil {
			continue // another run's, or a killed run's the next run finishes
		}
		j, err := openJournal(name)
		if errors.Is(err, errJournalBusy) {
			continue
		}
		if err != nil {
			for _, j := range out {
				j.drop()
			}
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// drop removes a finished orphan journal (still locked, so no run takes
// it meanwhile) and closes it.
func (j *journal) drop() error {
	err := os.Remove(j.path)
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// pending returns the batch a killed run left behind (nil when there is
// none).
func (j *journal) pending() (*pendingBatch, error) {
	b, err := io.ReadAll(io.NewSectionReader(j.f, 0, 1<<40))
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	var rest []byte
	switch {
	case bytes.HasPrefix(b, []byte(journalMagic)):
		rest = b[len(journalMagic):]
	case bytes.HasPrefix(b, []byte(journalMagicV1)):
		rest = b[len(journalMagicV1):]
	default:
		return nil, nil // empty, or torn before the header was whole
	}
	bytesField := func() ([]byte, bool) {
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			return nil, false
		}
		f := rest[k : k+int(l)]
		rest = rest[k+int(l):]
		return f, true
	}
	p := &pendingBatch{revisit: -1, v1: !bytes.HasPrefix(b, []byte(journalMagic))}
	if !p.v1 {
		key, ok := bytesField()
		if !ok {
			return nil, nil // torn
		}
		p.key = string(key)
		rv, k := binary.Varint(rest)
		if k <= 0 {
			return nil, nil
		}
		p.revisit, rest = time.Duration(rv), rest[k:]
		if p.body, ok = bytesField(); !ok {
			return nil, nil
		}
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)) {
		return nil, nil
	}
	rest = rest[k:]
	p.inputs = make([]string, 0, n)
	for range n {
		in, ok := bytesField()
		if !ok {
			return nil, nil
		}
		p.inputs = append(p.inputs, string(in))
	}
	end := len(b) - len(rest)
	if len(rest) < 4 || crc32.Checksum(b[:end], crc32c) != binary.BigEndian.Uint32(rest) {
		return nil, nil // torn: written before anything of it was sent
	}
	rest = rest[4:]
	mask := (len(p.inputs) + 7) / 8
	if len(rest) != mask+4 || crc32.Checksum(rest[:mask], crc32c) != binary.BigEndian.Uint32(rest[mask:]) {
		return p, nil // sent, perhaps; which were new is unknown
	}
	p.isNew = make([]bool, len(p.inputs))
	for i := range p.isNew {
		p.isNew[i] = rest[i/8]&(1<<(i%8)) != 0
	}
	return p, nil
}

// begin records the batch about to be sent: its key, its write (revisit <
// 0: an add), its entries as sent and their inputs.
func (j *journal) begin(key string, revisit time.Duration, body []byte, inputs []string) error {
	b := append(j.buf[:0], journalMagic...)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendVarint(b, int64(revisit))
	b = binary.AppendUvarint(b, uint64(len(body)))
	b = append(b, body...)
	b = binary.AppendUvarint(b, uint64(len(inputs)))
	for _, in := range inputs {
		b = binary.AppendUvarint(b, uint64(len(in)))
		b = append(b, in...)
	}
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
	j.buf, j.end = b, int64(len(b))
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if _, err := j.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// commit records which inputs of the batch were new, once it is
// answered. Without it the next run finishes the batch from the index.
func (j *journal) commit(isNew []bool) error {
	b := make([]byte, (len(isNew)+7)/8, (len(isNew)+7)/8+4)
	for i, n := range isNew {
		if n {
			b[i/8] |= 1 << (i % 8)
		}
	}
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
	if _, err := j.f.WriteAt(b, j.end); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// done clears the journal once the batch's new inputs are printed.
func (j *journal) done() error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

func (j *journal) close() error { return j.f.Close() }
