package urlhash

import "testing"

// TestDomainToASCII covers the host rules that changed with the URL
// Standard and the project's own UTS 46 tables.
func TestDomainToASCII(t *testing.T) {
	for _, tc := range []struct{ in, want string }{ // want "" means failure
		// whatwg/url#914: an ASCII domain is lowercased, never failed by
		// IDNA, even with "xn--" labels that do not decode.
		{"http://a.xn--/", "http://a.xn--/"},
		{"http://xn--.a/", "http://xn--.a/"},
		{"http://a.XN--.b/", "http://a.xn--.b/"},
		{"http://1.2.3.xn--/", "http://1.2.3.xn--/"},
		{"file://xn--./", "file://xn--./"},
		{"http://a.b.c.XN--pokxncvks/", "http://a.b.c.xn--pokxncvks/"},
		// ... but a non-ASCII domain goes through UTS 46, which fails it.
		{"http://a.ｘｎ－－.b/", ""},
		// UTS 46 CheckBidi: every label of a Bidi domain name obeys RFC
		// 5893 (as whatwg-url, tr46 and ICU do; WPT PR 37993, which would
		// exempt "1" in "1.ي", is not merged).
		{"https://1.\u064a/x", ""},
		{"http://a.1.\u064a/", ""},
		{"https://\u064aa/x", ""},
		{"https://\u064a./x", "https://xn--mhb./x"},
		{"http://\u06ee.0a0/", ""},
		// Unicode 17.0 mappings, whatever the Go toolchain: ẞ is its own
		// letter (IDNA 15.1), no longer mapped to "ss".
		{"https://\u1e9e.com/", "https://xn--zca.com/"},
		{"https://\u04c0.com/", "https://xn--s5a.com/"},
	} {
		got, err := Default.Canonical(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("Canonical(%q) = %q, want failure", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
