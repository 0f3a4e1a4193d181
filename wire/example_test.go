package wire_test

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

func ExampleParseAnswers() {
	body, _ := wire.AppendLines(nil, []string{"https://example.com/", "https://EXAMPLE.com/", ""})
	fmt.Printf("%q\n", body)
	// What /v1/urls/add answers for it:
	answers, _ := wire.ParseAnswers([]byte("new\npresent\ninvalid\tblank line\n"), 3)
	for _, a := range answers {
		if a.Answer == wire.Invalid {
			fmt.Println(a.Answer, a.Reason)
			continue
		}
		fmt.Println(a.Answer)
	}
	// Output:
	// "https://example.com/\nhttps://EXAMPLE.com/\n\n"
	// new
	// present
	// invalid blank line
}

func ExampleDecodeKeys() {
	keys := []hashkey.Hash{hashkey.Sum([]byte("https://example.com/")), hashkey.Sum([]byte("https://example.org/"))}
	var body []byte
	for _, k := range keys {
		e := store.FullEntry(k, store.Value{})
		body = wire.AppendEntry(body, &e)
	}
	got, ok := wire.DecodeKeys(nil, body)
	fmt.Println(len(body), ok, got[1] == keys[1])
	// A key with a value: decode the body with DecodeEntries.
	e := store.FullEntry(keys[0], store.Value{Text: []byte("https://example.com/")})
	_, ok = wire.DecodeKeys(nil, wire.AppendEntry(nil, &e))
	fmt.Println(ok)
	// Output:
	// 70 true true
	// false
}
