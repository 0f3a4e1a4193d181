package rice

import (
	"bufio"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readCases returns the fields of each line of a testdata file that is
// neither blank nor a comment, with its line number.
func readCases(t testing.TB, name string) (cases [][]string, lines []int) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cases = append(cases, strings.Fields(line))
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases, lines
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	if s == "-" {
		return nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var errorNames = map[string]error{
	"parameter": ErrParameter, "count": ErrCount, "truncated": ErrTruncated,
	"overflow": ErrOverflow, "trailing": ErrTrailing,
}

// TestDeltas reads the deltas of the published vectors one by one.
func TestDeltas(t *testing.T) {
	cases, lines := readCases(t, "deltas.txt")
	for i, c := range cases {
		t.Run(strconv.Itoa(lines[i]), func(t *testing.T) {
			k, _ := strconv.Atoi(c[0])
			r := reader{data: mustHex(t, c[1])}
			var want []uint64
			if c[2] != "-" {
				for _, s := range strings.Split(c[2], ",") {
					v, _ := strconv.ParseUint(s, 10, 32)
					want = append(want, v)
				}
			}
			for j, w := range want {
				q, err := r.unary(1 << 32)
				if err != nil {
					t.Fatalf("delta %d: %v", j, err)
				}
				low, err := r.bits64(k)
				if err != nil {
					t.Fatalf("delta %d: %v", j, err)
				}
				if got := q<<uint(k) | low; got != w {
					t.Errorf("delta %d = %d, want %d", j, got, w)
				}
			}
			if err := r.end(); err != nil {
				t.Error(err)
			}
			// The encoder writes the same bytes.
			if len(want) > 0 {
				vals := []uint64{0}
				for _, d := range want {
					vals = append(vals, vals[len(vals)-1]+d)
				}
				_, _, data, err := encode(vals, k, 64)
				if err != nil {
					t.Fatal(err)
				}
				if got := hex.EncodeToString(data); got != c[1] {
					t.Errorf("encoded %s, want %s", got, c[1])
				}
			}
		})
	}
}

// TestDecode decodes whole lists of every width, and refuses the hostile
// ones with the right error.
func TestDecode(t *testing.T) {
	cases, lines := readCases(t, "decode.txt")
	for i, c := range cases {
		t.Run(strconv.Itoa(lines[i]), func(t *testing.T) {
			width, _ := strconv.Atoi(c[0])
			k, _ := strconv.Atoi(c[2])
			count, _ := strconv.Atoi(c[3])
			data := mustHex(t, c[4])
			var got string
			var err error
			switch width {
			case 32, 64:
				var first uint64
				first, err = strconv.ParseUint(c[1], 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				var vs []string
				if width == 32 {
					var out []uint32
					out, err = Decode32(uint32(first), k, count, data)
					for _, v := range out {
						vs = append(vs, strconv.FormatUint(uint64(v), 10))
					}
				} else {
					var out []uint64
					out, err = Decode64(first, k, count, data)
					for _, v := range out {
						vs = append(vs, strconv.FormatUint(v, 10))
					}
				}
				got = strings.Join(vs, ",")
			default:
				var out []byte
				out, err = DecodeWide(width/8, mustHex(t, c[1]), k, count, data)
				var vs []string
				for j := 0; j < len(out); j += width / 8 {
					vs = append(vs, hex.EncodeToString(out[j:j+width/8]))
				}
				got = strings.Join(vs, ",")
			}
			if c[5] == "error" {
				if want := errorNames[c[6]]; !errors.Is(err, want) {
					t.Fatalf("got %q, %v; want error %v", got, err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c[5] {
				t.Errorf("got %s\nwant %s", got, c[5])
			}
		})
	}
}

func TestEncodeRefuses(t *testing.T) {
	if _, _, _, err := Encode32([]uint32{5, 3}, 2); !errors.Is(err, ErrUnsorted) {
		t.Errorf("unsorted: %v", err)
	}
	if _, _, _, err := Encode32(nil, 2); !errors.Is(err, ErrCount) {
		t.Errorf("empty: %v", err)
	}
	if _, _, _, err := Encode32([]uint32{0, 1 << 31}, 1); !errors.Is(err, ErrParameter) {
		t.Errorf("huge quotient: %v", err)
	}
	if _, _, _, err := EncodeWide(16, make([]byte, 17), 99); !errors.Is(err, ErrCount) {
		t.Errorf("ragged: %v", err)
	}
}

func TestParameter(t *testing.T) {
	for _, tc := range []struct {
		n      int
		span   uint64
		lo, hi int
		want   int
	}{
		{0, 0, 2, 28, 2},
		{1000, 1 << 32, 2, 28, 22},
		{10, 1 << 32, 2, 28, 28},
		{1 << 20, 1 << 32, 3, 30, 12},
	} {
		if got := Parameter(tc.n, tc.span, tc.lo, tc.hi); got != tc.want {
			t.Errorf("Parameter(%d, %d, %d, %d) = %d, want %d", tc.n, tc.span, tc.lo, tc.hi, got, tc.want)
		}
	}
}
