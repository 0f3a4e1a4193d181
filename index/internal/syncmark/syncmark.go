package syncmark

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
)

// A Mark is what a sync mark records.
type Mark struct {
	Seg uint64 // the log segment holding write Seq; 0 when the store has none
	Seq uint64 // the last write an fsync made durable
}

// Size is the length of a mark in the current format.
const Size = 28

const (
	magic       = "UHSYNC02"
	magicIndex1 = "UHSYNC01" // Badger's side before: Seq, CRC big-endian, 20 bytes
	magicTable1 = "UHKTSYN1" // the key table's before: Seg, Seq, CRC little-endian, 28 bytes
	sizeIndex1  = 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrDamaged is returned (wrapped, with the file's name) by Read for a
// mark that does not decode.
var ErrDamaged = errors.New("syncmark: damaged sync mark")

// AppendBinary appends the mark's bytes in the current format.
func (m Mark) AppendBinary(b []byte) []byte {
	start := len(b)
	b = append(b, magic...)
	b = binary.BigEndian.AppendUint64(b, m.Seg)
	b = binary.BigEndian.AppendUint64(b, m.Seq)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// Decode decodes a mark in the current format or an earlier one; empty
// bytes are the zero Mark. ok is false for anything else.
func Decode(b []byte) (_ Mark, ok bool) {
	switch {
	case len(b) == 0:
		return Mark{}, true
	case len(b) == Size && string(b[:8]) == magic:
		if crc32.Checksum(b[:24], castagnoli) != binary.BigEndian.Uint32(b[24:]) {
			return Mark{}, false
		}
		return Mark{Seg: binary.BigEndian.Uint64(b[8:]), Seq: binary.BigEndian.Uint64(b[16:])}, true
	case len(b) == Size && string(b[:8]) == magicTable1:
		if crc32.Checksum(b[:24], castagnoli) != binary.LittleEndian.Uint32(b[24:]) {
			return Mark{}, false
		}
		return Mark{Seg: binary.LittleEndian.Uint64(b[8:]), Seq: binary.LittleEndian.Uint64(b[16:])}, true
	case len(b) == sizeIndex1 && string(b[:8]) == magicIndex1:
		if crc32.Checksum(b[:16], castagnoli) != binary.BigEndian.Uint32(b[16:]) {
			return Mark{}, false
		}
		return Mark{Seq: binary.BigEndian.Uint64(b[8:])}, true
	}
	return Mark{}, false
}

// Read returns the mark in the file name: the zero Mark when there is no
// such file or it is empty, an error wrapping ErrDamaged when it does not
// decode.
func Read(name string) (Mark, error) {
	b, err := os.ReadFile(name)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return Mark{}, nil
	case err != nil:
		return Mark{}, err
	}
	m, ok := Decode(b)
	if !ok {
		return Mark{}, fmt.Errorf("%w: %s", ErrDamaged, name)
	}
	return m, nil
}

// A File is a sync mark open for writing.
type File struct{ f *os.File }

// Create opens the mark name for writing, creating it empty (the zero
// Mark) when it does not exist.
func Create(name string) (*File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &File{f: f}, nil
}

// Name returns the file's name.
func (f *File) Name() string { return f.f.Name() }

// Write records m in place, without an fsync: a killed process's write
// stays in the operating system's cache; Sync or Close makes it durable.
func (f *File) Write(m Mark) error {
	var b [Size]byte
	if _, err := f.f.WriteAt(m.AppendBinary(b[:0]), 0); err != nil {
		return err
	}
	return nil
}

// Sync makes the last Write durable.
func (f *File) Sync() error { return f.f.Sync() }

// Close closes the file (without an fsync).
func (f *File) Close() error { return f.f.Close() }
