package keytable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/urlhash/urlhash/store"
)

// The MANIFEST names the key files of the table, oldest first, and the
// first log segment still needed (older ones are merged into the files):
//
//	magic "UHKTMANI", version byte, 7 zero bytes, first needed log
//	segment (u64), next file number (u64), file count (u32), the file
//	numbers (u64 each), CRC-32C of all the bytes before (u32)
//
// It is replaced atomically (write, fsync, rename, fsync the directory).
const (
	manifestName    = "MANIFEST"
	manifestMagic   = "UHKTMANI"
	manifestVersion = 1
	maxFiles        = 1 << 16
)

type manifest struct {
	logStart uint64
	nextNum  uint64
	files    []uint64
}

func (m *manifest) appendTo(b []byte) []byte {
	start := len(b)
	b = append(b, manifestMagic...)
	b = append(b, manifestVersion, 0, 0, 0, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, m.logStart)
	b = binary.LittleEndian.AppendUint64(b, m.nextNum)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.files)))
	for _, n := range m.files {
		b = binary.LittleEndian.AppendUint64(b, n)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

func decodeManifest(b []byte) (manifest, error) {
	var m manifest
	const fixed = 8 + 8 + 8 + 8 + 4
	switch {
	case len(b) < fixed+4 || string(b[:8]) != manifestMagic:
		return m, fmt.Errorf("%w: not a key table manifest", store.ErrCorrupt)
	case b[8] > manifestVersion:
		return m, fmt.Errorf("%w: key table manifest version %d, this program reads up to %d", store.ErrFormat, b[8], manifestVersion)
	case crc32.Checksum(b[:len(b)-4], castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]):
		return m, fmt.Errorf("%w: key table manifest checksum mismatch", store.ErrCorrupt)
	}
	m.logStart = binary.LittleEndian.Uint64(b[16:])
	m.nextNum = binary.LittleEndian.Uint64(b[24:])
	n := binary.LittleEndian.Uint32(b[32:])
	if n > maxFiles || uint64(len(b)) != fixed+8*uint64(n)+4 {
		return m, fmt.Errorf("%w: key table manifest of %d bytes lists %d files", store.ErrCorrupt, len(b), n)
	}
	for i := range n {
		f := binary.LittleEndian.Uint64(b[fixed+8*i:])
		if f >= m.nextNum || (i > 0 && f <= m.files[i-1]) {
			return m, fmt.Errorf("%w: key table manifest lists file %d out of order", store.ErrCorrupt, f)
		}
		m.files = append(m.files, f)
	}
	return m, nil
}

// readManifest reads the manifest of dir; ok is false when there is none.
func readManifest(fs fsys, dir string) (m manifest, ok bool, err error) {
	b, err := fs.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("keytable: %w", err)
	}
	m, err = decodeManifest(b)
	if err != nil {
		return m, false, fmt.Errorf("%s: %w", filepath.Join(dir, manifestName), err)
	}
	return m, true, nil
}

// writeManifest replaces the manifest of dir atomically.
func writeManifest(fs fsys, dir string, m *manifest) error {
	return writeFileAtomic(fs, filepath.Join(dir, manifestName), m.appendTo(nil))
}

func syncDir(fs fsys, dir string) error {
	if err := fs.SyncDir(dir); err != nil {
		return fmt.Errorf("keytable: %w", err)
	}
	return nil
}

func fileName(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.keys", num))
}

func valuesName(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.values", num))
}

func logName(dir string, num uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%06d.log", num))
}
