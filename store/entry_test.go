package store

import (
	"errors"
	"testing"
	"time"
)

func TestSeenUnix(t *testing.T) {
	t1, t2 := time.Unix(1000, 0), time.Unix(2000, 0)
	for _, tc := range []struct {
		name        string
		v           Value
		first, last int64
	}{
		{"none", Value{}, 0, 0},
		{"both", Value{FirstSeen: t1, LastSeen: t2}, 1000, 2000},
		{"last alone stands for both", Value{LastSeen: t2}, 2000, 2000},
		{"first alone stands for both", Value{FirstSeen: t1}, 1000, 1000},
		{"last before first", Value{FirstSeen: t2, LastSeen: t1}, 2000, 2000},
	} {
		if f, l := tc.v.SeenUnix(); f != tc.first || l != tc.last {
			t.Errorf("%s: SeenUnix = %d, %d, want %d, %d", tc.name, f, l, tc.first, tc.last)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix []byte
		bits   int
		ok     bool
	}{
		{nil, 0, true},
		{[]byte{1}, 8, true},
		{[]byte{1}, 4, true},
		{[]byte{1}, 9, false},
		{[]byte{1}, -1, false},
		{make([]byte, 33), 257, false},
		{make([]byte, 32), 256, true},
	} {
		if err := CheckPrefix(tc.prefix, tc.bits); (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrPrefixLength) {
			t.Errorf("CheckPrefix(%d bytes, %d bits) = %v", len(tc.prefix), tc.bits, err)
		}
	}
}
