package server

import "testing"

// TestBodyClasses: a body gets the smallest class that holds it, classes
// grow by 1.5 and 4/3 in turn, and a class's buffer goes back to it.
func TestBodyClasses(t *testing.T) {
	for _, tc := range []struct{ n, class, size int }{
		{0, 0, 64 << 10},
		{1, 0, 64 << 10},
		{64 << 10, 0, 64 << 10},
		{64<<10 + 1, 1, 96 << 10},
		{96 << 10, 1, 96 << 10},
		{96<<10 + 1, 2, 128 << 10},
		{16384 * 35, 7, 768 << 10},
		{4 << 20, 12, 4 << 20},
		{4<<20 + 1, -1, 0},
	} {
		c := bodyClass(tc.n)
		if c != tc.class || c >= 0 && classSize(c) != tc.size {
			t.Errorf("bodyClass(%d) = %d (%d bytes), want %d (%d bytes)", tc.n, c, classSize(max(c, 0)), tc.class, tc.size)
		}
	}
	var p bodyPool
	b := p.get(1000)
	if len(*b) != 1000 || cap(*b) != 64<<10 {
		t.Fatalf("get(1000): %d of %d bytes", len(*b), cap(*b))
	}
	p.put(b)
	big := p.get(5 << 20)
	if len(*big) != 5<<20 {
		t.Fatalf("get(5 MiB): %d bytes", len(*big))
	}
	p.put(big) // not kept: no class
}
