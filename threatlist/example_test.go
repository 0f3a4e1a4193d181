package threatlist_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/urlhash/urlhash/threatlist"
)

func ExampleList_Apply() {
	l, _ := threatlist.NewList([][]byte{[]byte("aaaa"), []byte("cccc"), []byte("bbbbbbbb")})
	// Remove the second entry in lexicographic order (bbbbbbbb), add dddd.
	add, _ := threatlist.NewList([][]byte{[]byte("dddd")})
	next, change, err := l.Apply([]int32{1}, add)
	if err != nil {
		panic(err)
	}
	for e := range next.All() {
		fmt.Printf("%s ", e)
	}
	fmt.Println(change.Removed.Len(), change.Added.Len())
	// Output: aaaa cccc dddd 1 1
}

// A list's next version keeps the one before it, so that a client holding
// that one is sent a DIFF.
func ExampleListState_Next() {
	v1, _ := threatlist.NewList([][]byte{[]byte("aaaa"), []byte("bbbb")})
	v2, _ := threatlist.NewList([][]byte{[]byte("aaaa"), []byte("cccc")})
	s := &threatlist.ListState{Name: "webrisk/MALWARE", Version: []byte("v1"), List: v1}
	s = s.Next([]byte("v2"), v2)
	held, kept := s.At([]byte("v1"))
	fmt.Println(string(s.Version), kept, held.Equal(v1), s.History[0].Change.Removed.Len(), s.History[0].Change.Added.Len())
	// Output: v2 true true 1 1
}

// A server encodes the update from the version a client holds; the client
// decodes and applies it, and checks the checksum.
func ExampleEncodeDiff() {
	v1, _ := threatlist.NewList([][]byte{[]byte("aaaa"), []byte("bbbb"), []byte("cccc")})
	v2, _ := threatlist.NewList([][]byte{[]byte("aaaa"), []byte("cccc"), []byte("eeee")})
	resp := threatlist.EncodeDiff(v1, v2, []byte("v2"), threatlist.DiffOptions{Rice: true})
	u, err := resp.Decode()
	if err != nil {
		panic(err)
	}
	got, _, err := v1.Apply(u.Removals, u.Additions)
	if err != nil {
		panic(err)
	}
	sum := got.Checksum()
	fmt.Println(resp.ResponseType, u.Removals, got.Equal(v2), string(sum[:]) == string(u.Checksum))
	// Output: DIFF [1] true true
}

// A client syncs a list from a computeDiff server (here a fake one that
// serves one version) and applies the update to the list it holds.
func ExampleClient_ComputeDiff() {
	list, _ := threatlist.NewList([][]byte{[]byte("aaaa"), []byte("bbbb")})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(threatlist.EncodeDiff(nil, list, []byte("v1"), threatlist.DiffOptions{Rice: true}).AppendJSON(nil, false))
	}))
	defer srv.Close()
	c := &threatlist.Client{Endpoint: srv.URL, Key: "API-KEY"}
	u, err := c.ComputeDiff(context.Background(), threatlist.DiffRequest{ThreatType: "MALWARE"})
	if err != nil {
		panic(err)
	}
	held := &threatlist.List{}
	got, _, _ := held.Apply(u.Removals, u.Additions)
	sum := got.Checksum()
	fmt.Println(u.Reset, string(u.Version), got.Len(), string(sum[:]) == string(u.Checksum))
	// Output: true v1 2 true
}
