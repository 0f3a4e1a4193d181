package dedupe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/urlhash/urlhash/internal/filelock"
)

// journal is a file that holds one batch from before it is sent until
// its new inputs have been delivered. A client killed in between leaves
// it behind, and the next client of the index finishes it: every input a
// client stored is delivered at least once, and exactly once while
// nothing crashes.
//
// The file holds one batch (journalMagic, then):
//
//	uvarint len(index), index     the identity of the index written to
//	                              ("" for one without)
//	uvarint len(key), key         the batch's Idempotency-Key
//	varint revisit                the write: -1 add, else visit with this
//	                              revisitAfter in nanoseconds
//	uvarint len(body), body       the entries as sent (wire.AppendEntry)
//	uvarint count, count × (uvarint len, input)   the inputs of the entries
//	CRC-32C of all that
//
// A torn write (a crash while writing it, before anything of the batch was
// sent) fails the checksum and is no batch. Once the batch is answered,
// commit appends which inputs were new (a bitmap and its CRC), so that a
// client killed while delivering is finished exactly. Without that bitmap
// the next client resends the batch with its key to a server, which
// answers what it answered the first time (also while the first request is
// still being applied); other indexes report every input of the batch
// that is stored.
//
// The journal survives the death of the process, not of the machine: it is
// written without an fsync (whoever reads the output dies with the machine
// too).
type journal struct {
	f    *os.File
	path string
	buf  []byte
	end  int64 // length of the batch, where commit appends
}

// pending is a batch a killed client left in its journal.
type pending struct {
	index   string // the identity of the index it was written to
	key     string
	revisit time.Duration // < 0: an add
	body    []byte
	inputs  []string
	isNew   []bool // nil: not committed
	// version is the journal's: 1 (no index, key, write or body), 2 (no
	// index) or 3.
	version int
}

// The journal's magic: the versions differ in their last byte.
const (
	journalMagic = "urlhash-dedupe-journal\x03"
	// journalMagicV2 starts the journal of urlhash before index
	// identities: the layout without the index.
	journalMagicV2 = "urlhash-dedupe-journal\x02"
	// journalMagicV1 starts the journal of urlhash before the
	// Idempotency-Key: the layout without the index, the key, the write
	// and the body (its inputs are all the batch's inputs, valid or not).
	journalMagicV1 = "urlhash-dedupe-journal\x01"
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// openJournal opens (creating) the journal at path and locks it, so that
// two clients never share one. A file removed by its holder between the
// open and the lock (a finished journal) is opened again: a client never
// writes its batch into a file that no name reaches.
func openJournal(path string) (*journal, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("dedupe: journal: %w", err)
		}
		if err := filelock.TryLock(f); err != nil {
			f.Close()
			if errors.Is(err, filelock.ErrLocked) {
				return nil, fmt.Errorf("%w: %s", ErrJournalBusy, path)
			}
			return nil, fmt.Errorf("dedupe: journal %s: %w", path, err)
		}
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("dedupe: journal %s: %w", path, err)
		}
		if named, err := os.Stat(path); err == nil && os.SameFile(held, named) {
			return &journal{f: f, path: path}, nil
		}
		f.Close()
	}
}

// claimJournal returns a journal of dir that no other client holds
// (creating one when all are held) and the other free ones, which killed
// clients left: the caller finishes their batches and releases them. So
// any number of clients share a directory, and a killed client's batch is
// finished by the next one to start.
func claimJournal(dir string) (mine *journal, orphans []*journal, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("dedupe: journal: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("dedupe: journal: %w", err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".journal") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	fail := func(err error) (*journal, []*journal, error) {
		for _, j := range append(orphans, mine) {
			if j != nil {
				j.release()
			}
		}
		return nil, nil, err
	}
	for _, name := range names {
		j, err := openJournal(filepath.Join(dir, name))
		if errors.Is(err, ErrJournalBusy) {
			continue
		}
		if err != nil {
			return fail(err)
		}
		if mine == nil {
			mine = j
		} else {
			orphans = append(orphans, j)
		}
	}
	if mine == nil {
		more, err := claimMore(dir, 1)
		if err != nil {
			return fail(err)
		}
		mine = more[0]
	}
	return mine, orphans, nil
}

// claimMore returns n more journals of dir, new ones that no client
// holds (a client with batches in flight keeps one per batch). A client
// killed with them is finished by the next, as any.
func claimMore(dir string, n int) ([]*journal, error) {
	var out []*journal
	for i := 0; len(out) < n; i++ {
		name := filepath.Join(dir, fmt.Sprintf("run-%d.journal", i))
		if _, err := os.Stat(name); err == nil {
			continue // another client's, or a killed client's the next finishes
		}
		j, err := openJournal(name)
		if errors.Is(err, ErrJournalBusy) {
			continue
		}
		if err != nil {
			for _, j := range out {
				j.release()
			}
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// release gives the journal up: removed when it holds no batch (still
// locked, so that no client takes it meanwhile), so that finished
// clients leave no file behind, else closed, for the next client to
// finish.
func (j *journal) release() error {
	p, err := j.pending()
	remove := err == nil && p == nil
	if remove {
		err = os.Remove(j.path)
	}
	cerr := j.f.Close()
	if remove && err != nil && runtime.GOOS == "windows" {
		// Windows removes no open file: once closed, then (a client
		// that opens it in between finds it removed, and opens anew).
		err = os.Remove(j.path)
	}
	if err == nil {
		err = cerr
	}
	return err
}

// pending returns the batch a killed client left behind (nil when there
// is none).
func (j *journal) pending() (*pending, error) {
	b, err := io.ReadAll(io.NewSectionReader(j.f, 0, 1<<40))
	if err != nil {
		return nil, fmt.Errorf("dedupe: journal %s: %w", j.path, err)
	}
	return parseJournal(b), nil
}

// parseJournal decodes a journal's bytes: nil when they hold no whole
// batch (empty, or torn before anything of the batch was sent).
func parseJournal(b []byte) *pending {
	p := &pending{revisit: -1}
	var rest []byte
	switch {
	case bytes.HasPrefix(b, []byte(journalMagic)):
		rest, p.version = b[len(journalMagic):], 3
	case bytes.HasPrefix(b, []byte(journalMagicV2)):
		rest, p.version = b[len(journalMagicV2):], 2
	case bytes.HasPrefix(b, []byte(journalMagicV1)):
		rest, p.version = b[len(journalMagicV1):], 1
	default:
		return nil
	}
	field := func() ([]byte, bool) {
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			return nil, false
		}
		f := rest[k : k+int(l)]
		rest = rest[k+int(l):]
		return f, true
	}
	if p.version >= 3 {
		index, ok := field()
		if !ok {
			return nil
		}
		p.index = string(index)
	}
	if p.version >= 2 {
		key, ok := field()
		if !ok {
			return nil
		}
		p.key = string(key)
		rv, k := binary.Varint(rest)
		if k <= 0 {
			return nil
		}
		p.revisit, rest = time.Duration(rv), rest[k:]
		if p.body, ok = field(); !ok {
			return nil
		}
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)) {
		return nil
	}
	rest = rest[k:]
	p.inputs = make([]string, 0, n)
	for range n {
		in, ok := field()
		if !ok {
			return nil
		}
		p.inputs = append(p.inputs, string(in))
	}
	end := len(b) - len(rest)
	if len(rest) < 4 || crc32.Checksum(b[:end], crc32c) != binary.BigEndian.Uint32(rest) {
		return nil // torn: written before anything of it was sent
	}
	rest = rest[4:]
	mask := (len(p.inputs) + 7) / 8
	if len(rest) != mask+4 || crc32.Checksum(rest[:mask], crc32c) != binary.BigEndian.Uint32(rest[mask:]) {
		return p // sent, perhaps; which were new is unknown
	}
	p.isNew = make([]bool, len(p.inputs))
	for i := range p.isNew {
		p.isNew[i] = rest[i/8]&(1<<(i%8)) != 0
	}
	return p
}

// begin writes the batch about to be sent to the index of identity
// index: its key, its write (revisit < 0: an add), its entries as sent and
// their inputs.
func (j *journal) begin(index, key string, revisit time.Duration, body []byte, inputs []string) error {
	b := append(j.buf[:0], journalMagic...)
	b = binary.AppendUvarint(b, uint64(len(index)))
	b = append(b, index...)
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
		return fmt.Errorf("dedupe: journal %s: %w", j.path, err)
	}
	if _, err := j.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("dedupe: journal %s: %w", j.path, err)
	}
	return nil
}

// commit writes which inputs of the batch were new, once it is
// answered. Without it the next client finishes the batch from the index.
func (j *journal) commit(isNew []bool) error {
	b := make([]byte, (len(isNew)+7)/8, (len(isNew)+7)/8+4)
	for i, n := range isNew {
		if n {
			b[i/8] |= 1 << (i % 8)
		}
	}
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
	if _, err := j.f.WriteAt(b, j.end); err != nil {
		return fmt.Errorf("dedupe: journal %s: %w", j.path, err)
	}
	return nil
}

// done clears the journal once the batch's new inputs are delivered.
func (j *journal) done() error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("dedupe: journal %s: %w", j.path, err)
	}
	return nil
}
