package hasheduri_test

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey/hasheduri"
)

func ExampleGenerate() {
	// The draft's §4.4 examples.
	u, err := hasheduri.Generate("HTTP://www.Thus.net", hasheduri.MD5, hasheduri.KeepNone, hasheduri.N)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u)
	u, err = hasheduri.Generate("http://www.thus.net#end", hasheduri.SHA1, hasheduri.KeepFrag, hasheduri.N)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u)
	// Output:
	// hashed:md5=be96302a0468481aca954431cf293e05
	// hashed:sha1=31a79a96e0404778a3b95cb426b04b6114a604a5+frag
}

func ExampleParse() {
	u, err := hasheduri.Parse("HASHED:SHA1=87ED28009F511ED7EF630180A229BA257180A481+FRAG")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u.Alg, len(u.Digest), u.Frag, u.Query)
	fmt.Println(u)

	_, err = hasheduri.Parse("hashed:md5=0123+frag")
	fmt.Println(err)
	// Output:
	// sha1 20 true false
	// hashed:sha1=87ed28009f511ed7ef630180a229ba257180a481+frag
	// hasheduri: invalid hashed uri "hashed:md5=0123+frag": wrong digest length: 4 hex digits for md5, want 32
}

func ExampleURI_Match() {
	u, err := hasheduri.Parse("hashed:md5=754a2c63a13aa2e8153d027066e31f8f")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, url := range []string{
		"http://10.20.30.40/a%62c",
		"http://010.020.030.040:80/abc?q#f", // no +query or +frag: both ignored
		"http://10.20.30.40/abd",
	} {
		ok, err := u.Match(url, hasheduri.N)
		fmt.Println(url, ok, err)
	}
	// Output:
	// http://10.20.30.40/a%62c true <nil>
	// http://010.020.030.040:80/abc?q#f true <nil>
	// http://10.20.30.40/abd false <nil>
}

func ExampleCanonical() {
	for _, v := range []hasheduri.Variant{hasheduri.N, hasheduri.P} {
		s, err := hasheduri.Canonical("http://Fred@WWW.Thus.net:0112/Test/index.html", v)
		fmt.Println(v, s, err)
	}
	// Output:
	// N http://Fred@www.thus.net:112/Test/ <nil>
	// P http://fred@www.thus.net:112/test/ <nil>
}
