package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"syscall"
)

// journal is dedupe's record of the batch it is storing, kept in a file
// from before the batch is added until its new inputs have been printed.
// A run killed in between leaves it behind, and the next run prints the
// journal's inputs that are stored: every input a run stored is printed at
// least once, and exactly once while nothing crashes.
//
// The file holds one batch: journalMagic, a uvarint count, each input as a
// uvarint length and its bytes, then the CRC-32C of all that. A torn write
// (a crash while writing it, before anything of the batch was stored)
// fails the checksum and is ignored. Once the batch is stored, commit
// appends which inputs were new (a bitmap and its CRC), so that a run
// killed while printing is finished exactly: without that record the next
// run prints every input of the batch that is stored.
type journal struct {
	f    *os.File
	path string
	buf  []byte
	end  int64 // length of the batch record, where commit appends
}

const journalMagic = "urlhash-dedupe-journal\x01"

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// openJournal opens (creating) the journal at path and locks it, so that
// two dedupe runs never share one.
func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("journal %s is in use by another dedupe (give each its own --journal)", path)
		}
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &journal{f: f, path: path}, nil
}

// pending returns the inputs of a batch a killed run left behind (none
// when there is none) and, when the run recorded it, which were new (nil
// when it did not).
func (j *journal) pending() (inputs []string, isNew []bool, err error) {
	b, err := io.ReadAll(io.NewSectionReader(j.f, 0, 1<<40))
	if err != nil {
		return nil, nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	if !bytes.HasPrefix(b, []byte(journalMagic)) {
		return nil, nil, nil // empty, or torn before the header was whole
	}
	rest := b[len(journalMagic):]
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)) {
		return nil, nil, nil // torn
	}
	rest = rest[k:]
	inputs = make([]string, 0, n)
	for range n {
		l, k := binary.Uvarint(rest)
		if k <= 0 || l > uint64(len(rest)-k) {
			return nil, nil, nil // torn
		}
		inputs = append(inputs, string(rest[k:k+int(l)]))
		rest = rest[k+int(l):]
	}
	end := len(b) - len(rest)
	if len(rest) < 4 || crc32.Checksum(b[:end], crc32c) != binary.BigEndian.Uint32(rest) {
		return nil, nil, nil // torn: written before anything of it was stored
	}
	rest = rest[4:]
	mask := (len(inputs) + 7) / 8
	if len(rest) != mask+4 || crc32.Checksum(rest[:mask], crc32c) != binary.BigEndian.Uint32(rest[mask:]) {
		return inputs, nil, nil // stored, perhaps; which were new is unknown
	}
	isNew = make([]bool, len(inputs))
	for i := range isNew {
		isNew[i] = rest[i/8]&(1<<(i%8)) != 0
	}
	return inputs, isNew, nil
}

// begin durably records the inputs of the batch about to be stored.
func (j *journal) begin(batch []record) error {
	b := append(j.buf[:0], journalMagic...)
	b = binary.AppendUvarint(b, uint64(len(batch)))
	for _, r := range batch {
		b = binary.AppendUvarint(b, uint64(len(r.text)))
		b = append(b, r.text...)
	}
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
	j.buf, j.end = b, int64(len(b))
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if _, err := j.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// commit records which inputs of the batch were new, once they are
// stored. It need not be durable: without it the next run prints every
// stored input of the batch.
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

// done clears the journal once the batch's new inputs are printed. It need
// not be durable: a journal that survives a crash only prints its batch
// again.
func (j *journal) done() error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

func (j *journal) close() error { return j.f.Close() }
