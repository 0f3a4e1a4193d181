package frontier

import (
	"errors"
	"strings"
	"testing"
)

// TestPutSizes: a URL, data or metadata larger than a record keeps is
// refused, never stored (its record could not be read back).
func TestPutSizes(t *testing.T) {
	f, _, _ := openTest(t, nil)
	big := strings.Repeat("x", maxFieldLength+1)
	for _, tc := range []struct {
		name string
		info URLInfo
	}{
		{"url", URLInfo{URL: "https://a.example/" + big}},
		{"data", URLInfo{URL: "https://a.example/", Data: []byte(big)}},
		{"metadata", URLInfo{URL: "https://a.example/", Metadata: map[string][]string{"k": {big[:maxFieldLength/2], big[:maxFieldLength/2]}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPut(t, f, []Item{{Info: tc.info}})
			if res[0].Status != PutInvalid || !errors.Is(res[0].Err, ErrInvalid) {
				t.Errorf("got %+v, want invalid", res[0])
			}
		})
	}
	res := mustPut(t, f, []Item{{Info: URLInfo{URL: "https://a.example/", Data: []byte(big[:maxFieldLength])}}})
	if res[0].Status != PutNew {
		t.Fatalf("data of %d bytes: %+v", maxFieldLength, res[0])
	}
	got := mustGet(t, f, GetParams{})
	if len(got) != 1 {
		t.Fatalf("handed out %q", got)
	}
}

// TestIdentityOfOneCanonicalisation: the identity worked out from the
// canonical form the queue key comes from is the profile's Hash, which an
// item with a key of its own gets.
func TestIdentityOfOneCanonicalisation(t *testing.T) {
	f, _, _ := openTest(t, nil)
	for _, u := range []string{"https://a.example/", "HTTPS://Bücher.example:443/a/../b?q#f", "http://[::1]:8080/x y"} {
		a, err := f.prepare(&Item{Info: URLInfo{URL: u}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.prepare(&Item{Info: URLInfo{URL: u, Key: "k"}})
		if err != nil {
			t.Fatal(err)
		}
		if a.u != b.u {
			t.Errorf("%q: id %x without a key, %x with one", u, a.u, b.u)
		}
	}
}
