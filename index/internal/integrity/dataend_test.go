package integrity

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDataEnd: the end of a sparse file's last data extent, where only a
// hole follows (a file system without holes answers the size, which is
// as right: the scan then reads the zeros).
func TestDataEnd(t *testing.T) {
	for _, tc := range []struct {
		name       string
		data, size int64 // bytes written at the start; the file's size
	}{
		{"empty", 0, 0},
		{"all hole", 0, 64 << 20},
		{"data then hole", 10 << 10, 64 << 20},
		{"no hole", 1 << 20, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b := make([]byte, tc.data)
			for i := range b {
				b[i] = 1
			}
			if _, err := f.Write(b); err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(tc.size); err != nil {
				t.Fatal(err)
			}
			got := dataEnd(f, tc.size)
			if got < tc.data || got > tc.size {
				t.Fatalf("dataEnd = %d, want %d..%d", got, tc.data, tc.size)
			}
			if got != tc.size && got > tc.data+1<<20 {
				t.Errorf("dataEnd = %d: most of the hole after %d bytes of data is scanned", got, tc.data)
			}
			t.Logf("data %d, size %d: dataEnd %d", tc.data, tc.size, got)
		})
	}
}
