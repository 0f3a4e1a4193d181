package uts46

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

type toASCIICase struct {
	name    string
	profile *Profile
	in      string
	want    string
	err     error // nil: success
}

var toASCIICases = []toASCIICase{
	// Mapping (UTS #46 section 4, step 1): case, width, dots, ignored.
	{"lowercase", URL, "WWW.Example.COM", "www.example.com", nil},
	{"fullwidth", URL, "ｅｘａｍｐｌｅ．ｃｏｍ", "example.com", nil},
	{"ideographic-stops", URL, "a。b｡c．d", "a.b.c.d", nil},
	{"ignored-soft-hyphen", URL, "ex\u00ADample.com", "example.com", nil},
	{"capital-sharp-s", URL, "ẞ.com", "xn--zca.com", nil},
	{"sharp-s-nontransitional", URL, "faß.de", "xn--fa-hia.de", nil},
	{"final-sigma-nontransitional", URL, "βόλος.com", "xn--nxasmm1c.com", nil},
	{"disallowed", URL, "a\u2488com", "", ErrDisallowed},
	{"replacement-character", URL, "\uFFFD.com", "", ErrDisallowed},
	{"invalid-utf8", URL, "a\xffb", "", ErrInvalidUTF8},

	// Normalization (step 2).
	{"nfc-compose", URL, "bu\u0308cher.de", "xn--bcher-kva.de", nil},
	{"nfc-not-equal-sign", URL, "=\u0338", "xn--1ch", nil},
	{"nfc-reorder", Lookup, "a\u0301\u0327", "xn--1ca87i", nil},

	// Punycode labels (step 4.1).
	{"ace-valid", URL, "xn--bcher-kva.de", "xn--bcher-kva.de", nil},
	{"ace-uppercase", URL, "XN--BCHER-KVA.DE", "xn--bcher-kva.de", nil},
	{"ace-mixed", URL, "Ü.xn--Tda", "xn--tda.xn--tda", nil},
	{"ace-invalid-digit", Lookup, "xn--ls8h=.de", "", ErrPunycode},
	{"ace-overflow", Lookup, "xn--99999999999999.de", "", ErrPunycode},
	{"ace-decodes-to-control", Lookup, "xn--a.de", "", ErrDisallowed},
	{"ace-empty", Lookup, "xn--.de", "", ErrPunycode},
	{"ace-ascii-only", Lookup, "xn--abc-.de", "", ErrPunycode},
	{"ace-leading-delimiter", Lookup, "xn---zca", "", ErrPunycode},
	{"ace-non-ascii", URL, "xn--tešla", "", ErrPunycode},
	{"ace-decodes-to-mapped", Lookup, "xn--8i7caa", "", ErrDisallowed},
	{"ace-not-nfc", Lookup, "xn--u-ccb", "", ErrNotNFC},
	{"ace-prefix-in-decoded", Lookup, "xn--xn--a--gua.pt", "", ErrACEPrefix},
	{"ace-decodes-to-joiner", Lookup, "xn--1ug.example", "", ErrJoiner},

	// URL Standard: ASCII domains are lowercased whatever UTS #46 says
	// (whatwg/url#914), but empty results and forbidden domain code
	// points fail.
	{"url-ascii-invalid-ace", URL, "a.b.c.XN--pokxncvks", "a.b.c.xn--pokxncvks", nil},
	{"url-ascii-ipv4-like", URL, "10.0.0.XN--pokxncvks", "10.0.0.xn--pokxncvks", nil},
	{"url-ascii-empty-ace", URL, "xn--", "xn--", nil},
	{"url-ascii-mapped-ace", URL, "xn--8i7caa", "xn--8i7caa", nil},
	{"url-non-ascii-invalid-ace", URL, "xn--a.ß", "", ErrDisallowed},
	{"url-non-ascii-bad-punycode", URL, "xn--ls8h=.ß", "", ErrPunycode},
	{"url-empty", URL, "", "", ErrEmpty},
	{"url-all-ignored", URL, "\u00AD", "", ErrEmpty},
	{"url-forbidden-ascii", URL, "a b", "", ErrForbidden},
	{"url-forbidden-control", URL, "\x1flookout.net", "", ErrForbidden},
	{"url-forbidden-after-mapping", URL, "www.lookout.net\u2A7480", "", ErrForbidden},
	{"url-nbsp-maps-to-space", URL, "www\u00A0.lookout.net", "", ErrForbidden},
	{"url-underscore", URL, "a_b.münchen.de", "a_b.xn--mnchen-3ya.de", nil},

	// Lookup: plain UTS #46 with STD3 rules off, for every domain.
	{"lookup-underscore", Lookup, "a_b.münchen.de", "a_b.xn--mnchen-3ya.de", nil},
	{"lookup-dollar-fullwidth", Lookup, "ａ$ｂ.münchen.de", "a$b.xn--mnchen-3ya.de", nil},
	{"lookup-space", Lookup, "a b.de", "a b.de", nil},
	{"lookup-ascii", Lookup, "Example.COM", "example.com", nil},
	{"lookup-empty", Lookup, "", "", nil},

	// Validity criteria (section 4.1).
	{"leading-combining-mark", URL, "\u0308a.com", "", ErrLeadingMark},
	{"hyphens-allowed", URL, "-x.ab--c.x-", "-x.ab--c.x-", nil},
	{"hyphens-non-ascii", URL, "a†--", "xn--a---kp0a", nil},

	// CheckJoiners (RFC 5892 Appendix A).
	{"zwnj-after-virama", URL, "a\u094d\u200cb", "xn--ab-fsf604u", nil},
	{"zwj-after-virama", URL, "a\u094d\u200db", "xn--ab-fsf014u", nil},
	{"zwnj-alone", URL, "a\u200cb", "", ErrJoiner},
	{"zwj-alone", URL, "\u200d.example", "", ErrJoiner},
	{"zwnj-arabic-joining", URL, "نامه\u200cای", "xn--mgba3gch31f060k", nil},
	{"zwnj-arabic-transparent", URL, "\u0628\u064b\u200c\u064b\u0644", "xn--ngb0duaa8704a", nil},
	{"zwnj-arabic-right-joining-before", URL, "\u0627\u200c\u0628", "", ErrJoiner},

	// CheckBidi (RFC 5893 section 2), for every label of a Bidi domain.
	{"bidi-rtl", URL, "\u05d0\u05d1.com", "xn--4dbc.com", nil},
	{"bidi-rtl-label-with-l", URL, "يa", "", ErrBidi},
	{"bidi-ltr-ends-rtl", URL, "a\u05d0", "", ErrBidi},
	{"bidi-digit-label", URL, "1.\u064a", "", ErrBidi},
	{"bidi-digit-after", URL, "\u064a.1", "", ErrBidi},
	{"bidi-empty-label", URL, "\u064a.", "xn--mhb.", nil},
	{"bidi-en-an-mixed", URL, "\u05d0\u0661\u0031", "", ErrBidi},
	{"bidi-from-ace", Lookup, "xn--mhb.1", "", ErrBidi},
	{"bidi-from-ace-url-ascii", URL, "xn--mhb.1", "xn--mhb.1", nil},
	{"bidi-nsm-end", URL, "\u05d0\u05b0", "xn--7cb7d", nil},

	// Options of New.
	{"strict-hyphen", New(CheckHyphens(true)), "-x.com", "", ErrHyphen},
	{"strict-hyphen-34", New(CheckHyphens(true)), "ab--c.com", "", ErrHyphen},
	{"strict-hyphen-ace-prefix", New(CheckHyphens(true)), "xn--xn--a--gua.pt", "", ErrHyphen},
	{"std3", New(UseSTD3ASCIIRules(true)), "a_b.com", "", ErrSTD3},
	{"std3-ok", New(UseSTD3ASCIIRules(true)), "A-b.com", "a-b.com", nil},
	{"std3-nfc", New(UseSTD3ASCIIRules(true)), "=\u0338", "xn--1ch", nil},
	{"dns-label", New(VerifyDNSLength(true)), strings.Repeat("a", 64) + ".com", "", ErrDNSLength},
	{"dns-empty-label", New(VerifyDNSLength(true)), "a..com", "", ErrDNSLength},
	{"dns-root", New(VerifyDNSLength(true)), "a.com.", "a.com.", nil},
	{"dns-empty", New(VerifyDNSLength(true)), "", "", ErrDNSLength},

	// Caps.
	{"label-1024", URL, strings.Repeat("ü", 1024), "xn--" + encodeString(strings.Repeat("ü", 1024)), nil},
	{"label-1025", URL, strings.Repeat("ü", 1025), "", ErrLabelTooLong},
	{"label-1025-ascii-url", URL, strings.Repeat("a", 1025), strings.Repeat("a", 1025), nil},
	{"label-1025-ascii-with-idn", URL, strings.Repeat("a", 1025) + ".ü", strings.Repeat("a", 1025) + ".xn--tda", nil},
	{"label-ascii-once-mapped", Lookup, strings.Repeat("ｘ", 5000) + ".ü", strings.Repeat("x", 5000) + ".xn--tda", nil},
	{"label-ignored-do-not-count", URL, "a" + strings.Repeat("\u00AD", 3000) + "ü", "xn--a-eha", nil},
	{"label-mapped-over-4096", URL, strings.Repeat("Ü", 4097) + ".ü", "", ErrLabelTooLong},
	{"label-mapped-over-4096-one-non-ascii", URL, "ü" + strings.Repeat("ｘ", 4096), "", ErrLabelTooLong},
	{"label-nfc-shrinks", URL, strings.Repeat("u\u0308", 1024), "xn--" + encodeString(strings.Repeat("ü", 1024)), nil},
	{"ace-decodes-over-1024", Lookup, "xn--" + encodeString(strings.Repeat("ü", 1025)), "", ErrLabelTooLong},
	{"ace-longer-than-1024-bytes", Lookup, longACE, longACE, nil},
	{"ace-longer-than-1024-bytes-twice", Lookup, longACE + "." + longACE, longACE + "." + longACE, nil},
	{"ace-basic-over-1024", Lookup, "xn--" + strings.Repeat("a", 1025) + "-9ca", "", ErrLabelTooLong},
	{"domain-over-1mib", URL, strings.Repeat("a", MaxDomainLength+1), "", ErrDomainTooLong},
}

// longACE is the "xn--" form of a label of 1024 CJK ideographs: 2,900
// bytes or so, and valid.
var longACE = "xn--" + encodeString(cjkDomain(3*1024+3, 2000))

// encodeString is the Punycode of s, for building test cases.
func encodeString(s string) string {
	b, err := encodePunycode(nil, []rune(s))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestToASCII(t *testing.T) {
	for _, tc := range toASCIICases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.profile.ToASCII(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("%v.ToASCII(%+.40q) = %+.40q, %v; want error %v", tc.profile, tc.in, got, err, tc.err)
				}
				var e *Error
				if !errors.As(err, &e) || e.Domain != tc.in || got != "" {
					t.Fatalf("error %#v, result %q: want an *Error naming the domain, and no result", err, got)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, "uts46: ") || len(msg) > 400 {
					t.Fatalf("error message %q", msg)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%v.ToASCII(%+.40q) = %+.40q, %v; want %+.40q", tc.profile, tc.in, got, err, tc.want)
			}
			// AppendASCII agrees and appends.
			b, err := tc.profile.AppendASCII([]byte("x:"), tc.in)
			if err != nil || string(b) != "x:"+tc.want {
				t.Fatalf("AppendASCII = %+.40q, %v", b, err)
			}
			// Idempotence: the result converts to itself.
			if again, err := tc.profile.ToASCII(got); (err != nil || again != got) && got != "" {
				t.Fatalf("ToASCII(%+.40q) = %+.40q, %v; want it unchanged", got, again, err)
			}
		})
	}
}

func TestAppendASCIIError(t *testing.T) {
	dst := []byte("keep")
	got, err := URL.AppendASCII(dst, "a\u2488com")
	if err == nil || string(got) != "keep" {
		t.Fatalf("AppendASCII = %q, %v; want dst unchanged and an error", got, err)
	}
}

func TestProfileString(t *testing.T) {
	for _, tc := range []struct {
		p    *Profile
		want string
	}{{URL, "url"}, {Lookup, "lookup"}, {New(), "custom"}} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	_, err := ToASCII("a.\u2488")
	if got, want := err.Error(), `uts46: disallowed code point in label "⒈" of "a.⒈"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = ToASCII(strings.Repeat("ü", 2000))
	if got := err.Error(); len(got) > 200 || !strings.Contains(got, "(4000 bytes)") {
		t.Errorf("long domain: message %q", got)
	}
}

func TestTables(t *testing.T) {
	if UnicodeVersion != "17.0.0" {
		t.Errorf("UnicodeVersion = %q", UnicodeVersion)
	}
	for _, tc := range []struct {
		r      rune
		status int
	}{
		{'a', statusValid}, {'A', statusMapped}, {'_', statusValid}, {0xAD, statusIgnored},
		{0xDF, statusDeviation}, {0x1E9E, statusMapped}, {0x2488, statusDisallowed},
		{0x110000 - 1, statusDisallowed}, {-1, statusDisallowed}, {0x7FFFFFFF, statusDisallowed},
	} {
		if got := lookup(tc.r).status(); got != tc.status {
			t.Errorf("status(U+%04X) = %d, want %d", tc.r, got, tc.status)
		}
	}
	if got := mapping(0x1E9E); got != "ß" {
		t.Errorf("mapping(U+1E9E) = %q", got)
	}
	if p := lookup(0x094D); p.ccc() != cccVirama || !p.isMark() {
		t.Errorf("U+094D: ccc %d, mark %t", p.ccc(), p.isMark())
	}
	if p := lookup(0x0628); p.bidi() != bidiAL || p.join() != joinD {
		t.Errorf("U+0628: bidi %d, join %d", p.bidi(), p.join())
	}
	t.Logf("tables: %d bytes", tablesSize)
}

func TestAllocations(t *testing.T) {
	for _, in := range []string{"www.example.com", "a.b.c.xn--pokxncvks"} {
		if n := testing.AllocsPerRun(100, func() { ToASCII(in) }); n != 0 {
			t.Errorf("ToASCII(%q): %v allocations, want 0", in, n)
		}
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { URL.AppendASCII(buf[:0], "WWW.EXAMPLE.COM") }); n != 0 {
		t.Errorf("AppendASCII: %v allocations, want 0", n)
	}
}

// TestCapRoundTrip checks that the label cap is on code points, not on the
// ASCII form: a label at the cap converts, and its output converts to
// itself.
func TestCapRoundTrip(t *testing.T) {
	label := cjkDomain(3*MaxLabelLength+3, 2*MaxLabelLength)
	if got, want := utf8.RuneCountInString(label), MaxLabelLength; got != want {
		t.Fatalf("label has %d code points, want %d", got, want)
	}
	for _, p := range []*Profile{URL, Lookup} {
		got, err := p.ToASCII(label)
		if err != nil || got != longACE {
			t.Fatalf("%v.ToASCII(label) = %.20q..., %v; want %.20q...", p, got, err, longACE)
		}
		if len(got) <= MaxLabelLength {
			t.Errorf("ASCII form is %d bytes, want more than %d", len(got), MaxLabelLength)
		}
		again, err := p.ToASCII(got)
		if err != nil || again != got {
			t.Errorf("%v.ToASCII(ToASCII(label)) = %.20q..., %v; want it unchanged", p, again, err)
		}
	}
}
