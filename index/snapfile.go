package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/internal/atomicfile"
	"github.com/urlhash/urlhash/store"
)

// The filter snapshot's file (a version 2 snapshotHeader's encoding). It is
// read with plain reads, never mapped, so that the snapshot leaves no
// pages in the process's resident set once decoded.
//
// The file holds snapshotFileMagic, the State of the header it was written
// for (uint64 big-endian), the filter's encoding (FullLen + ShortLen
// bytes), then the CRC-32C of everything before it. The file is written
// before its header is committed to Badger: a crash between the two leaves
// a file whose State (and CRC and, mostly, size) does not match the header
// on disk, which the next Open takes for a stale snapshot and rebuilds.
const (
	snapshotFileName  = "filter.snapshot"
	snapshotFileMagic = "UHFILT01"
)

// snapshotFileLen is the size of a snapshot file for bitmaps of fullLen
// and shortLen bytes.
func snapshotFileLen(fullLen, shortLen uint64) uint64 {
	return uint64(len(snapshotFileMagic)) + 8 + fullLen + shortLen + 4
}

// writeSnapshotFile replaces dir's snapshot file with the encoding encode
// writes, for state, durably (a temporary file, fsynced, renamed over the
// old one, the directory fsynced), streaming: the encoding (about 210 MB
// at 100M keys) is never whole in memory. It returns the file's CRC and
// the lengths encode returned.
func writeSnapshotFile(dir string, state uint64, encode func(io.Writer) (fullLen, shortLen uint64, err error)) (crc uint32, fullLen, shortLen uint64, err error) {
	err = atomicfile.Write(filepath.Join(dir, snapshotFileName), 0o644, func(f *os.File) error {
		sum := crc32.New(castagnoli)
		bw := bufio.NewWriterSize(io.MultiWriter(f, sum), 256<<10)
		if _, err := bw.Write(binary.BigEndian.AppendUint64([]byte(snapshotFileMagic), state)); err != nil {
			return err
		}
		var err error
		if fullLen, shortLen, err = encode(bw); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		crc = sum.Sum32()
		_, err = f.Write(binary.BigEndian.AppendUint32(nil, crc))
		return err
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("index: %w", err)
	}
	return crc, fullLen, shortLen, nil
}

// errLoadStopped ends a snapshot file's read that Close stopped.
var errLoadStopped = errors.New("index: filter load stopped")

// stoppable is a file whose reads fail once stop is set.
type stoppable struct {
	*os.File
	stop *atomic.Bool
}

func (s stoppable) Read(p []byte) (int, error) {
	if s.stop != nil && s.stop.Load() {
		return 0, errLoadStopped
	}
	return s.File.Read(p)
}

// readSnapshotFile decodes the filter from dir's snapshot file as it is
// read, and checks the file against hdr (a version 2 header): its size,
// magic, State and CRC. A file missing or not matching is an error
// wrapping store.ErrCorrupt or the read's: the caller rebuilds.
//
// Setting stop makes it return errLoadStopped at its next read.
func readSnapshotFile(dir string, hdr *snapshotHeader, stop *atomic.Bool) (*filter.Filter, error) {
	name := filepath.Join(dir, snapshotFileName)
	file, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	defer file.Close()
	f := stoppable{file, stop}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	if uint64(fi.Size()) != hdr.Size {
		return nil, fmt.Errorf("%w: %s is %d bytes, its header says %d", store.ErrCorrupt, name, fi.Size(), hdr.Size)
	}
	crc := crc32.New(castagnoli)
	br := bufio.NewReaderSize(f, 256<<10)
	head := make([]byte, len(snapshotFileMagic)+8)
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", store.ErrCorrupt, name, err)
	}
	if string(head[:len(snapshotFileMagic)]) != snapshotFileMagic {
		return nil, fmt.Errorf("%w: %s: not a filter snapshot", store.ErrCorrupt, name)
	}
	if s := binary.BigEndian.Uint64(head[len(snapshotFileMagic):]); s != hdr.State {
		return nil, fmt.Errorf("%w: %s was written for state %d, its header is for %d", store.ErrCorrupt, name, s, hdr.State)
	}
	crc.Write(head)
	data := &io.LimitedReader{R: io.TeeReader(br, crc), N: int64(hdr.FullLen + hdr.ShortLen)}
	flt, err := filter.Decode(hdr.Bits, data, hdr.FullLen, hdr.ShortLen)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var tail [5]byte
	n, err := io.ReadFull(br, tail[:])
	if data.N != 0 || n != 4 || !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("%w: %s: the filter does not fill the file", store.ErrCorrupt, name)
	}
	if sum := binary.BigEndian.Uint32(tail[:]); sum != crc.Sum32() || sum != hdr.CRC {
		return nil, fmt.Errorf("%w: %s: checksum mismatch", store.ErrCorrupt, name)
	}
	return flt, nil
}
