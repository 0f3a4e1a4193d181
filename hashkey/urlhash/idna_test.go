package urlhash

import "testing"

// TestDomainToASCIIDeviations covers where x/net/idna alone departs from
// the URL Standard: an "xn--" label that decodes to nothing must fail, and
// CheckBidi leaves plain ASCII labels alone.
func TestDomainToASCIIDeviations(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// UTS 46: a label "xn--" decodes to the empty string: an error.
		{"http://a.xn--/", ""},
		{"http://xn--.a/", ""},
		{"http://a.XN--.b/", ""},
		{"http://1.2.3.xn--/", ""},
		{"file://xn--./", ""},
		{"http://a.ｘｎ－－.b/", ""},
		// CheckBidi (WPT toascii.json): an ASCII digit label beside an
		// RTL label is accepted; an RTL label holding a Latin letter is not.
		{"https://1.\u064a/x", "https://1.xn--mhb/x"},
		{"https://\u064aa/x", ""},
		{"https://\u064a./x", "https://xn--mhb./x"},
		{"http://\u06ee.0a0/", ""},
		{"http://a.1.\u064a/", "http://a.1.xn--mhb/"},
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
