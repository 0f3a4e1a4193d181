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
