package threatlist

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendJSON: AppendJSON writes what encoding/json writes.
func TestAppendJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	v1 := randomList(t, r, 3000)
	v2, _, _ := v1.Apply([]int32{0, 7, 2999}, randomList(t, r, 40))
	one, _ := NewList([][]byte{[]byte("aaaa")})
	for name, resp := range map[string]*DiffResponse{
		"reset rice":   EncodeDiff(nil, v1, []byte("v1"), DiffOptions{Rice: true, Next: time.Unix(1, 5)}),
		"reset raw":    EncodeDiff(nil, v1, []byte("v1"), DiffOptions{}),
		"diff rice":    EncodeDiff(v1, v2, []byte("v2"), DiffOptions{Rice: true}),
		"diff raw":     EncodeDiff(v1, v2, []byte("v2"), DiffOptions{}),
		"no change":    EncodeDiff(v2, v2, []byte("v2"), DiffOptions{Rice: true}),
		"one rice":     EncodeDiff(nil, one, nil, DiffOptions{Rice: true}),
		"empty":        {},
		"empty fields": {Additions: EncodeDiff(nil, one, nil, DiffOptions{}).Additions, Removals: EncodeDiff(v1, one, nil, DiffOptions{Rice: true}).Removals},
	} {
		want, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.AppendJSON(nil, false); !bytes.Equal(got, want) {
			t.Errorf("%s:\ngot  %.300s\nwant %.300s", name, got, want)
		}
		var back DiffResponse
		if err := json.Unmarshal(resp.AppendJSON(nil, true), &back); err != nil {
			t.Errorf("%s with enum numbers: %v", name, err)
		}
	}
}
