package store

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
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

// TestValueCheck: every time of a value is zero or within
// MinTime..MaxTime (testdata/value-times.txt), and Entry.Check and
// ParseJSONL refuse the rest with ErrBadValue.
func TestValueCheck(t *testing.T) {
	b, err := os.ReadFile("testdata/value-times.txt")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		s, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || len(f) != 2 {
			t.Fatalf("value-times.txt:%d: %q", i+1, line)
		}
		tm := Unix(s)
		for _, v := range []Value{{FirstSeen: tm}, {LastSeen: tm}, {Expires: tm}} {
			e := FullEntry(hashkey.Hash{1}, v)
			err := e.Check()
			if got := err == nil; got != (f[1] == "ok") {
				t.Errorf("value-times.txt:%d: Check(%+v) = %v, want %s", i+1, v, err, f[1])
			}
			if err != nil && !errors.Is(err, ErrBadValue) {
				t.Errorf("value-times.txt:%d: %v, want ErrBadValue", i+1, err)
			}
		}
		if f[1] == "bad" && tm.Year() >= 0 && tm.Year() <= 9999 {
			line := `{"key":"` + strings.Repeat("01", 32) + `","expires":"` + tm.Format(time.RFC3339) + `"}`
			if _, err := ParseJSONL([]byte(line)); !errors.Is(err, ErrBadValue) || !errors.Is(err, ErrJSONL) {
				t.Errorf("ParseJSONL(%s) = %v, want ErrJSONL and ErrBadValue", line, err)
			}
		}
	}
}
