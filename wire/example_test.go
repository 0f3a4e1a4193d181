package wire_test

import (
	"fmt"

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
