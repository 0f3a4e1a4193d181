package uts46

import (
	"testing"
)

// FuzzToASCII checks that ToASCII never panics, that a result is ASCII,
// and that converting a result again gives it back, for URL and Lookup.
func FuzzToASCII(f *testing.F) {
	for _, tc := range toASCIICases {
		if len(tc.in) < 256 {
			f.Add(tc.in)
		}
	}
	for _, s := range []string{
		"xn--zca.ß", "a.b.c.XN--pokxncvks", "xn--8i7caa", "\u0628\u064b\u200c\u064b\u0644",
		"\u05d0\u0661", "1.\u064a", "\u113c2\u113c2\u113c2", "\u1100\u1161\u11a8", "ｘｎ－－ｚｃａ",
		"a\u0345\u0301\u0308", "\U0001F4A9.\u2615", "xn--ls8h", "xn--a-ecp.ru", "",
	} {
		f.Add(s)
	}
	// Labels at the cap, whose ASCII forms are longer than the cap.
	f.Add(cjkDomain(3*MaxLabelLength+3, 2*MaxLabelLength))
	f.Add(longACE)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []*Profile{URL, Lookup} {
			out, err := p.ToASCII(s)
			if err != nil {
				if out != "" {
					t.Fatalf("%v.ToASCII(%+q) = %+q with error %v", p, s, out, err)
				}
				continue
			}
			if !isASCII(out) {
				t.Fatalf("%v.ToASCII(%+q) = %+q, not ASCII", p, s, out)
			}
			again, err := p.ToASCII(out)
			if err != nil || again != out {
				t.Fatalf("%v.ToASCII(%+q) = %+q, but that gives %+q, %v", p, s, out, again, err)
			}
		}
	})
}
